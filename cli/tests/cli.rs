//! The `gpukb` binary as users run it: exit codes, one-line errors, and the
//! fingerprint commands over recorded machines.
#![allow(clippy::disallowed_methods)] // tests run the binary and read fixtures

use std::path::PathBuf;
use std::process::Command;

fn gpukb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gpukb"))
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

#[test]
fn no_driver_machine_exits_zero_and_says_so() {
    let out = gpukb()
        .args(["fingerprint", "--replay"])
        .arg(fixture("no-driver"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("No NVIDIA driver on this machine"), "{text}");
    assert!(!text.contains('\x1b'), "no colour when not a terminal");
}

#[test]
fn json_output_is_the_schema() {
    let out = gpukb()
        .args(["fingerprint", "--json", "--root"])
        .arg(fixture("jetson-nano-jp464"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], 2);
    assert_eq!(v["host"]["os"]["status"], "found");
    assert_eq!(
        v["nvml"]["status"], "unobservable",
        "NVML is not observable under --root: {}",
        v["nvml"]
    );
}

#[test]
fn bad_arguments_give_one_line_and_exit_2() {
    for args in [
        vec!["fingerprint", "--replay", "/nonexistent/gpukb-capture"],
        vec!["fingerprint", "--root", "/nonexistent/gpukb-root"],
    ] {
        let out = gpukb().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.starts_with("gpukb: error: "), "{err}");
    }
}

#[test]
fn capture_refuses_a_non_empty_directory() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("x"), b"x").unwrap();
    let out = gpukb()
        .args(["capture", "-o"])
        .arg(t.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn doctor_names_the_broken_link() {
    let run = |args: &[&str], dir: PathBuf| {
        let out = gpukb()
            .args(args)
            .arg(dir)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    // A container without GPU, driver or CUDA framework: nothing to judge.
    let (code, text) = run(&["doctor", "--replay"], fixture("no-driver"));
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("unknown: No NVIDIA GPU visible"), "{text}");
    assert!(!text.contains("root cause"), "{text}");
    // The healthy H200: ok, exit 0, the unused system cuDNN is context only.
    let (code, text) = run(&["doctor", "--replay"], fixture("h200"));
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("✓ ok: No broken link"), "{text}");
    assert!(text.contains("nothing loads the others"), "{text}");
    // An empty root is not a root filesystem: refused in one line (not ok, not a
    // verdict on nothing).
    let empty = tempfile::tempdir().unwrap();
    let out = gpukb()
        .args(["doctor", "--root"])
        .arg(empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("looks empty"));
    // A capture given to --root is refused in one line naming --replay.
    let out = gpukb()
        .args(["doctor", "--root"])
        .arg(fixture("h200"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("use --replay"));
    let out = gpukb()
        .args(["doctor", "--root"])
        .arg(fixture("h200").join("root"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A Jetson's iGPU has no nvidia.ko: that is not a missing driver.
    let (code, text) = run(&["doctor", "--root"], fixture("jetson-nano-jp464"));
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("NVIDIA Jetson"), "{text}");
}

#[test]
fn a_closed_pipe_ends_quietly_with_the_commands_own_status() {
    use std::process::Stdio;
    // `gpukb kb list --json | head -c 1`.
    for _ in 0..5 {
        let mut child = gpukb()
            .args(["kb", "list", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Like `head -c 1` that already left: the read end is closed before gpukb writes.
        drop(child.stdout.take().unwrap());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn errors_say_what_is_wrong_with_which_value() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["fingerprint", "--root", "/nonexistent/gpukb-root"],
            "no such directory",
        ),
        (
            &["fingerprint", "--timeout", "0"],
            "--timeout 0: must be at least 0.1 s",
        ),
        (
            &["explain", "CUDA error: out of memory"],
            "try `gpukb search",
        ),
    ];
    for (args, want) in cases {
        let out = gpukb().args(*args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("afile");
    std::fs::write(&file, b"x").unwrap();
    let out = gpukb().args(["capture", "-o"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists and is not a directory"));
    let link = t.path().join("dangling");
    std::os::unix::fs::symlink("/nonexistent/gpukb-target", &link).unwrap();
    let out = gpukb().args(["capture", "-o"]).arg(&link).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("dangling link"));
    // An empty JSON array is not a capture: said so, not "expected struct Journal".
    let cap = t.path().join("cap");
    std::fs::create_dir(&cap).unwrap();
    std::fs::write(cap.join("capture.json"), "[]").unwrap();
    let out = gpukb()
        .args(["doctor", "--replay"])
        .arg(&cap)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a capture written by `gpukb capture`")
    );
}

#[test]
fn a_failed_capture_leaves_nothing_behind() {
    // /proc is read-only: the capture cannot be written, and no partial directory stays.
    let out = gpukb()
        .args(["capture", "-o", "/proc/gpukb-capture-test"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!std::path::Path::new("/proc/gpukb-capture-test").exists());
    // A capture that dies half-way (here: a 1-block file-size limit, so its
    // first large file write fails or kills it) leaves no target directory,
    // so the retry is not refused with "exists and is not empty".
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("cap");
    let bin = env!("CARGO_BIN_EXE_gpukb");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -f 1; exec '{bin}' capture -o '{}'",
            target.display()
        ))
        .output()
        .unwrap();
    assert_ne!(
        out.status.code(),
        Some(0),
        "the limited capture should not succeed"
    );
    assert!(!target.exists(), "a partial capture was left at the target");
    let out = gpukb()
        .args(["capture", "-o"])
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(target.join("capture.json").is_file());
}

#[test]
fn search_says_whose_machine_facts_it_used() {
    let fixture = fixture("broken").join("cuda-visible-devices-empty");
    let out = gpukb()
        .args(["search", "--json", "--replay"])
        .arg(&fixture)
        .arg("RuntimeError: No CUDA GPUs are available")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["facts"]["from"], "capture");
    assert_eq!(v["facts"]["applied"], true);
    let path = v["facts"]["path"].as_str().unwrap_or("");
    assert!(path.contains("cuda-visible-devices-empty"), "{path}");
    assert_eq!(v["results"][0]["id"], "cuda-visible-devices-hides-gpus");
    assert_eq!(v["results"][0]["machine"]["outcome"], "confirmed");
    // What the capture rules out is shown, after the results, with the reason.
    let ruled = v["ruled_out"].as_array().unwrap();
    assert!(!ruled.is_empty());
    assert!(ruled.iter().all(|h| h["machine"]["outcome"] == "ruled_out"
        && !h["machine"]["because"].as_str().unwrap_or("").is_empty()));
    let conf: Vec<f64> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["confidence"].as_f64().unwrap())
        .collect();
    assert!(conf.windows(2).all(|w| w[0] >= w[1]), "{conf:?}");
    let text = gpukb()
        .args(["search", "--replay"])
        .arg(&fixture)
        .arg("RuntimeError: No CUDA GPUs are available")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Ruled out by the facts of the capture"),
        "{text}"
    );

    let out = gpukb()
        .args([
            "search",
            "--json",
            "--no-detect",
            "RuntimeError: No CUDA GPUs are available",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["facts"]["from"], "none");
    assert_eq!(v["facts"]["applied"], false);
    assert!(v["results"][0]["machine"].is_null());
}

#[test]
fn search_json_names_the_native_source_an_error_is_reported_from() {
    let out = gpukb()
        .args(["search", "--no-detect", "--json"])
        .arg("CUDA error at src/conv_kernels.cu:138 code=209(cudaErrorNoKernelImageForDevice) \"launch()\"")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["signals"]["native_source"], "conv_kernels.cu:138");
    assert_ne!(v["results"][0]["category"], "arch_mismatch_wheel");
    // Absent, not null, when the paste shows no such location.
    let out = gpukb()
        .args(["search", "--no-detect", "--json"])
        .arg("RuntimeError: CUDA error: no kernel image is available for execution on the device")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["signals"].get("native_source").is_none(),
        "{}",
        v["signals"]
    );
}

#[test]
fn search_takes_a_pasted_collect_env_as_the_failing_machines_facts() {
    let report = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../kb/tests/env_reports/collect_env-h200.txt"),
    )
    .unwrap()
    .replace("NVIDIA H200", "NVIDIA GeForce GTX 1080")
    .replace("2.11.0+cu130", "2.8.0+cu128")
    .replace(
        "CUDA used to build PyTorch: 13.0",
        "CUDA used to build PyTorch: 12.8",
    );
    let paste = format!(
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n\n{report}"
    );
    let run = |json: bool| {
        let mut c = gpukb();
        c.args(["search", "--no-detect"]);
        if json {
            c.arg("--json");
        }
        c.arg(&paste).output().unwrap()
    };
    let out = run(true);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["facts"]["from"], "pasted_report");
    assert_eq!(v["facts"]["path"], "the pasted collect_env report");
    assert_eq!(
        v["results"][0]["id"],
        "pascal-volta-dropped-from-cu128-wheel"
    );
    assert_eq!(v["results"][0]["machine"]["outcome"], "confirmed");
    let text = String::from_utf8_lossy(&run(false).stdout).into_owned();
    assert!(
        text.contains("(facts of the pasted collect_env report: it shows the driver release, the GPUs and the torch build; checks resting on anything else stay undecided; no machine's facts were used: --no-detect)"),
        "{text}"
    );
}

#[test]
fn search_reports_a_paste_that_contradicts_the_chosen_machine() {
    let fixture = fixture("healthy").join("h200-live-2026-12-01");
    let out = gpukb()
        .args(["search", "--json", "--replay"])
        .arg(&fixture)
        .arg("NVIDIA GeForce RTX 3060, driver 470.82.01: no kernel image is available for execution on the device")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The user chose the machine: its facts apply, and the differences are reported.
    assert_eq!(v["facts"]["applied"], true);
    let c = v["facts"]["contradicts"].as_array().unwrap();
    assert_eq!(c.len(), 2, "{c:?}");
    assert!(v["facts"]["reason"]
        .as_str()
        .unwrap()
        .contains("differs from the paste"));
}

#[test]
fn colour_follows_color_no_color_and_term_dumb() {
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = gpukb();
        c.args(["search", "--no-detect"])
            .args(args)
            .arg("CUDA error: out of memory");
        c.env_remove("NO_COLOR");
        for (k, v) in env {
            c.env(k, v);
        }
        String::from_utf8_lossy(&c.output().unwrap().stdout).contains('\x1b')
    };
    assert!(run(&["--color", "always"], &[]));
    assert!(!run(&["--color", "never"], &[]));
    assert!(!run(&[], &[("TERM", "dumb")]), "not a terminal, and dumb");
}

#[test]
fn a_closed_stdout_is_an_error_and_probe_errors_are_one_line() {
    let bin = env!("CARGO_BIN_EXE_gpukb");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("exec '{bin}' explain 209 >&-"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("standard output is closed"));
    // No GPU here (CI): the probe says why in one line on stderr, nothing on stdout.
    let out = gpukb().args(["probe", "--json"]).output().unwrap();
    if out.status.code() == Some(2) {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("gpukb: error: probe:"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn kb_lint_eval_fails_on_a_planted_copy_and_passes_clean_pastes() {
    let example = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../kb/examples/vllm-kv-cache-budget-too-small/1.txt"),
    )
    .unwrap();
    // The KB strips the `# source:` line; quote 90 characters of the error text.
    let body: String = example
        .lines()
        .filter(|l| !l.starts_with("# source:"))
        .collect::<Vec<_>>()
        .join("\n");
    let planted: String = body.chars().skip(20).take(90).collect();
    let dir = tempfile::tempdir().unwrap();
    let case = |id: &str, error: &str| {
        serde_json::json!({"id": id, "source": format!("https://example.org/{id}"),
            "error": error, "root_cause": "oom"})
        .to_string()
    };
    std::fs::write(
        dir.path().join("planted.jsonl"),
        case("planted-1", &planted),
    )
    .unwrap();
    let out = gpukb()
        .args(["kb", "lint", "--eval"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("kb/examples/vllm-kv-cache-budget-too-small/1.txt")
            && text.contains("planted-1"),
        "{text}"
    );

    std::fs::write(
        dir.path().join("planted.jsonl"),
        case(
            "clean-1",
            "zzq unrelated words that no knowledge-base example contains",
        ),
    )
    .unwrap();
    let out = gpukb()
        .args(["kb", "lint", "--eval"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let empty = tempfile::tempdir().unwrap();
    let out = gpukb()
        .args(["kb", "lint", "--eval"])
        .arg(empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
