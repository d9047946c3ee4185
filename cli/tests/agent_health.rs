//! The node's verdict over the stack and the hardware: `gpukb agent --once`
//! on the recorded H200 with one recorded kernel-log line per Xid policy
//! class (exit code, `gpukb_health`, the JSON), `--ack`, a newer boot, and
//! `--npd` (Node Problem Detector's custom-plugin protocol).
#![allow(clippy::disallowed_methods)] // tests run the binary and read fixtures

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gpukb() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpukb"));
    c.env("NO_COLOR", "1");
    c
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn kmsg(name: &str) -> PathBuf {
    repo().join("cli/monitor/tests/fixtures").join(name)
}

const H200: &str = "tests/fixtures/healthy/h200-with-pci";

fn once(db: &Path, prom: &Path, kernel_log: &Path, boot: &str, extra: &[&str]) -> Output {
    gpukb()
        .args(["agent", "--once", "--db"])
        .arg(db)
        .arg("--replay")
        .arg(repo().join(H200))
        .arg("--textfile")
        .arg(prom)
        .arg("--kernel-log")
        .arg(kernel_log)
        .args(["--boot-id", boot])
        .args(extra)
        .output()
        .unwrap()
}

fn health(prom: &Path) -> f64 {
    let text = std::fs::read_to_string(prom).unwrap();
    let exp = openmetrics_parser::prometheus::parse_prometheus(&text).expect("valid exposition");
    assert!(exp.families.contains_key("gpukb_health"));
    text.lines()
        .find_map(|l| l.strip_prefix("gpukb_health "))
        .unwrap_or_else(|| panic!("no gpukb_health in {text}"))
        .trim()
        .parse()
        .unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {} / {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

#[test]
fn the_healthy_capture_alone_is_ok() {
    // The baseline the other tests change one thing of: no kernel event, exit 0.
    let dir = tempfile::tempdir().unwrap();
    let (db, prom) = (dir.path().join("a.db"), dir.path().join("g.prom"));
    let o = once(&db, &prom, Path::new("off"), "boot-a", &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(health(&prom), 0.0);
}

#[test]
fn xid_79_fails_the_node_until_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let (db, prom) = (dir.path().join("a.db"), dir.path().join("g.prom"));
    let o = once(
        &db,
        &prom,
        &kmsg("kmsg-fail-xid79.txt"),
        "boot-a",
        &["--json"],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(health(&prom), 2.0);
    let j = json(&o);
    // The stack is fine; the hardware fails the node.
    assert_eq!(j["snapshot"]["verdict"], "ok");
    assert_eq!(j["health"]["stack"], "ok");
    assert_eq!(j["health"]["verdict"], "failure");
    assert_eq!(j["health"]["hardware"]["level"], "failure");
    let ev = &j["kernel_events"][0];
    assert_eq!(
        (ev["code"].as_u64(), ev["class"].as_str()),
        (Some(79), Some("fail"))
    );
    let id = ev["event_id"].as_i64().expect("an event id");
    assert!(std::fs::read_to_string(&prom)
        .unwrap()
        .contains("gpukb_health_layer{layer=\"hardware\"} 2"));

    // The same boot again: still failing (nothing new in the log, the event stays).
    let again = once(&db, &prom, &kmsg("kmsg-fail-xid79.txt"), "boot-a", &[]);
    assert_eq!(again.status.code(), Some(1));

    // An unknown id is exit 2, one line.
    let bad = gpukb()
        .args(["agent", "--ack", "99999", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr).trim().lines().count(),
        1
    );

    let ack = gpukb()
        .args([
            "agent",
            "--ack",
            &id.to_string(),
            "--note",
            "reseated the GPU",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(
        ack.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ack.stderr)
    );
    let after = once(&db, &prom, &kmsg("kmsg-fail-xid79.txt"), "boot-a", &[]);
    assert_eq!(
        after.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&after.stdout)
    );
    assert_eq!(health(&prom), 0.0);

    let h = gpukb()
        .args(["history", "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let h = json(&h);
    let acked = h["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .expect("the acknowledged event");
    assert_eq!(acked["note"], "reseated the GPU");
    assert!(acked["acked_at"].is_string(), "{acked}");
    // The others are not acknowledged.
    assert!(h["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["id"] != id)
        .all(|e| e["acked_at"].is_null() && e["note"].is_null()));
}

#[test]
fn a_newer_boot_clears_a_fail_class_event() {
    let dir = tempfile::tempdir().unwrap();
    let (db, prom) = (dir.path().join("a.db"), dir.path().join("g.prom"));
    let a = once(&db, &prom, &kmsg("kmsg-fail-xid79.txt"), "boot-a", &[]);
    assert_eq!(a.status.code(), Some(1));
    let b = once(&db, &prom, Path::new("off"), "boot-b", &[]);
    assert_eq!(
        b.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&b.stdout)
    );
    assert_eq!(health(&prom), 0.0);
    // The same Xid on the same GPU in a later boot: the reboot did not cure it,
    // a hardware fault.
    let c = once(
        &db,
        &prom,
        &kmsg("kmsg-fail-xid79.txt"),
        "boot-c",
        &["--json"],
    );
    assert_eq!(c.status.code(), Some(1));
    let j = json(&c);
    let r = &j["health"]["hardware"]["reasons"][0];
    assert_eq!(r["class"], "hardware", "{j}");
    assert!(
        r["text"].as_str().unwrap_or("").contains("after a reboot"),
        "{r}"
    );
}

#[test]
fn one_line_per_policy_class() {
    // (fixture, exit code, gpukb_health)
    for (file, code, gauge) in [
        ("kmsg-application-xid13.txt", 0, 0.0),
        ("kmsg-warn-xid63.txt", 0, 1.0),
        ("kmsg-xid154-reset.txt", 1, 2.0),
        ("kmsg-fail-xid79.txt", 1, 2.0),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (db, prom) = (dir.path().join("a.db"), dir.path().join("g.prom"));
        let o = once(&db, &prom, &kmsg(file), "boot-a", &[]);
        assert_eq!(
            o.status.code(),
            Some(code),
            "{file}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert_eq!(health(&prom), gauge, "{file}");
        // --fail-on warning turns the warning into exit 1.
        let w = once(&db, &prom, &kmsg(file), "boot-a", &["--fail-on", "warning"]);
        assert_eq!(w.status.code(), Some(i32::from(gauge >= 1.0)), "{file}");
    }
}

fn npd(rule: &str, kernel_log: &Path, home: &Path) -> Output {
    gpukb()
        .args(["agent", "--once", "--npd", rule, "--replay"])
        .arg(repo().join(H200))
        .arg("--kernel-log")
        .arg(kernel_log)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env_remove("STATE_DIRECTORY")
        .output()
        .unwrap()
}

#[test]
fn npd_speaks_the_custom_plugin_protocol_and_writes_no_history() {
    let home = tempfile::tempdir().unwrap();
    for (rule, log, code) in [
        ("hardware", kmsg("kmsg-fail-xid79.txt"), 1),
        ("hardware", kmsg("kmsg-application-xid13.txt"), 0),
        ("hardware", kmsg("kmsg-warn-xid63.txt"), 0),
        ("stack", kmsg("kmsg-fail-xid79.txt"), 0),
        ("hardware", PathBuf::from("off"), 2),
    ] {
        let o = npd(rule, &log, home.path());
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(code),
            "{rule} {}: {out}",
            log.display()
        );
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(
            out.trim_end().len() <= 80,
            "{} bytes: {out}",
            out.trim_end().len()
        );
        if code == 1 {
            assert!(out.contains("79"), "{out}");
        }
    }
    // No history anywhere under the home it was given.
    let mut left = Vec::new();
    for e in walk(home.path()) {
        left.push(e);
    }
    assert!(left.is_empty(), "--npd wrote {left:?}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn clip_keeps_80_bytes() {
    let long = "é".repeat(100);
    let c = gpukb_cli::agent::clip(&long, 80);
    assert!(c.len() <= 80 && c.len() >= 79);
    assert_eq!(gpukb_cli::agent::clip("a\n b", 80), "a b");
}
