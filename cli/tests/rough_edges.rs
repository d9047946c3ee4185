//! A new user's rough edges (issue 25 §6, newcomer.md): each one line and the
//! right exit code, never a hang, a panic or a silent side effect.
#![allow(clippy::disallowed_methods)] // tests make files, pipes and directories

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn gpukb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gpukb"))
}

/// Runs and returns (exit code, stderr), failing the test past `limit`.
fn run(cmd: &mut Command, limit: Duration) -> (i32, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            return (
                st.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            );
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{cmd:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn one_line(e: &str) -> bool {
    e.trim().lines().count() == 1 && e.starts_with("gpukb: error:")
}

#[test]
fn a_missing_fingerprint_or_capture_given_to_search_is_exit_2() {
    for flag in ["--fingerprint", "--replay"] {
        let (code, err) = run(
            gpukb().args([
                "search",
                flag,
                "/nonexistent/x",
                "CUDA error: out of memory",
            ]),
            Duration::from_secs(20),
        );
        assert_eq!(code, 2, "{flag}: {err}");
        assert!(one_line(&err) && err.contains("/nonexistent/x"), "{err}");
    }
}

#[test]
fn a_fifo_with_no_writer_fails_in_one_line_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let ok = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo");
    let f = fifo.to_str().unwrap();
    for args in [
        // A paste whose candidates name checks, so the facts are read.
        vec![
            "search",
            "--fingerprint",
            f,
            "CUDA error: no kernel image is available for execution on the device",
        ],
        vec!["diff", f, f],
        vec!["doctor", "--fingerprint", f],
    ] {
        let start = Instant::now();
        let (code, err) = run(gpukb().args(&args), Duration::from_secs(10));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(one_line(&err), "{args:?}: {err}");
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "{args:?} took {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn unknown_category_and_empty_code_are_exit_2() {
    let (code, err) = run(
        gpukb().args(["kb", "list", "--category", "no_such"]),
        Duration::from_secs(20),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        one_line(&err) && err.contains("arch_mismatch_wheel"),
        "{err}"
    );
    let (code, err) = run(gpukb().args(["explain", ""]), Duration::from_secs(20));
    assert_eq!(code, 2, "{err}");
    assert!(one_line(&err), "{err}");
}

#[test]
fn completions_to_a_full_disk_is_exit_2_not_a_panic() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = gpukb()
        .args(["completions", "bash"])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(one_line(&err), "{err}");
}

#[test]
fn utf16_input_is_decoded() {
    let text = "CUDA error: no kernel image is available for execution on the device\n";
    for bytes in [
        [
            &[0xFFu8, 0xFE][..],
            &text
                .encode_utf16()
                .flat_map(u16::to_le_bytes)
                .collect::<Vec<_>>(),
        ]
        .concat(),
        text.encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect::<Vec<_>>(),
        [
            &[0xFEu8, 0xFF][..],
            &text
                .encode_utf16()
                .flat_map(u16::to_be_bytes)
                .collect::<Vec<_>>(),
        ]
        .concat(),
    ] {
        let mut child = gpukb()
            .args(["search", "--no-detect", "--json"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&bytes).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["results"][0]["category"], "arch_mismatch_wheel", "{v}");
    }
}

#[test]
fn agent_db_in_a_missing_directory_is_refused_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("typo/nested/h.db");
    let fp = env!("CARGO_MANIFEST_DIR").to_string() + "/../tests/fixtures/healthy/h200-with-pci";
    let (code, err) = run(
        gpukb().args([
            "agent",
            "--once",
            "--replay",
            &fp,
            "--db",
            db.to_str().unwrap(),
        ]),
        Duration::from_secs(30),
    );
    assert_eq!(code, 2, "{err}");
    assert!(one_line(&err) && err.contains("does not exist"), "{err}");
    assert!(!dir.path().join("typo").exists());
}

#[test]
fn an_empty_root_says_it_looks_empty() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = run(
        gpukb().args(["doctor", "--root", dir.path().to_str().unwrap()]),
        Duration::from_secs(20),
    );
    assert_eq!(code, 2, "{err}");
    assert!(one_line(&err) && err.contains("looks empty"), "{err}");
}

#[test]
fn a_dash_reads_the_paste_from_stdin_like_no_argument() {
    let text = b"CUDA error: no kernel image is available for execution on the device\n";
    let mut answers = Vec::new();
    for args in [
        &["search", "--no-detect", "--json", "-"][..],
        &["search", "--no-detect", "--json"][..],
    ] {
        let mut child = gpukb()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(text).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            v["results"][0]["category"], "arch_mismatch_wheel",
            "{args:?}: {v}"
        );
        answers.push(v["query"].clone());
    }
    assert_eq!(
        answers[0], answers[1],
        "`-` is the paste on stdin, not the text \"-\""
    );
}
