//! `gpukb agent`, `gpukb history` and `gpukb diff` as users run them, over
//! recorded machines: exit codes (doctor's and `--fail-on`), the textfile,
//! the JSON shapes, and one-line errors that leave a bad history untouched.
#![allow(clippy::disallowed_methods)] // tests run the binary and read fixtures

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gpukb() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpukb"));
    c.env("NO_COLOR", "1");
    c
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

fn once(db: &Path, capture: &str, extra: &[&str]) -> Output {
    gpukb()
        .args(["agent", "--once", "--db"])
        .arg(db)
        .arg("--replay")
        .arg(fixture(capture))
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn once_sequence_exit_codes_textfile_and_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agent.db");
    let prom = dir.path().join("gpukb.prom");
    let p = prom.to_str().unwrap();
    let a = once(&db, "healthy/h200-with-pci", &["--textfile", p]);
    assert_eq!(
        a.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&a.stderr)
    );
    let b = once(
        &db,
        "broken/driver-userspace-upgraded-reboot-pending",
        &["--textfile", p, "--json"],
    );
    assert_eq!(b.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&b.stdout).unwrap();
    assert_eq!(j["snapshot"]["verdict"], "failure");
    assert_eq!(j["previous"], 1);
    let changes = j["changes"].as_array().unwrap();
    let drv = changes
        .iter()
        .find(|c| c["what"] == "driver.version")
        .expect("driver.version");
    assert_eq!(drv["before"], "580.159.04");
    assert_eq!(drv["after"], "580.95.05");
    let text = std::fs::read_to_string(&prom).unwrap();
    let exp = openmetrics_parser::prometheus::parse_prometheus(&text).expect("valid exposition");
    assert!(exp.families.contains_key("gpukb_health"));
    assert!(text.contains("gpukb_health 2\n"), "{text}");
    // --fail-on picks the levels that fail; a failure not named passes.
    let c = once(
        &db,
        "broken/driver-userspace-upgraded-reboot-pending",
        &["--fail-on", "unknown"],
    );
    assert_eq!(c.status.code(), Some(0));
    let d = once(&db, "broken/thermal-throttle", &["--fail-on", "warning"]);
    let verdict = {
        let h = gpukb()
            .args(["history", "--json", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        assert_eq!(h.status.code(), Some(0));
        let v: serde_json::Value = serde_json::from_slice(&h.stdout).unwrap();
        assert_eq!(v["snapshots"].as_array().unwrap().len(), 4);
        for e in v["events"].as_array().unwrap() {
            for k in ["at", "kind", "what", "before", "after", "meaning"] {
                assert!(e.get(k).is_some(), "{k} in {e}");
            }
        }
        v["snapshots"][3]["verdict"].as_str().unwrap().to_string()
    };
    let expect = if verdict == "ok" || verdict == "unknown" {
        0
    } else {
        1
    };
    assert_eq!(d.status.code(), Some(expect), "verdict {verdict}");
}

#[test]
fn corrupt_history_is_one_line_exit_2_and_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agent.db");
    std::fs::write(&db, b"not sqlite at all\n").unwrap();
    let out = once(&db, "healthy/h200-with-pci", &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("left untouched"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), b"not sqlite at all\n");
    let h = gpukb()
        .args(["history", "--db"])
        .arg(dir.path().join("missing.db"))
        .output()
        .unwrap();
    assert_eq!(h.status.code(), Some(2));
    assert!(
        !dir.path().join("missing.db").exists(),
        "history never creates a database"
    );
}

#[test]
fn diff_says_what_changed_and_exits_0_1_2() {
    let same = gpukb()
        .args(["diff", "--json"])
        .arg(fixture("healthy/h200-with-pci"))
        .arg(fixture("healthy/h200-with-pci"))
        .output()
        .unwrap();
    assert_eq!(same.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&same.stdout).unwrap();
    assert_eq!(v["changes"].as_array().unwrap().len(), 0);

    let out = gpukb()
        .args(["diff", "--json"])
        .arg(fixture("healthy/h200-with-pci"))
        .arg(fixture("broken/torch-drops-volta"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = v["changes"].as_array().unwrap();
    for k in ["what", "label", "before", "after", "meaning"] {
        assert!(c[0].get(k).is_some(), "{k}");
    }
    assert!(c
        .iter()
        .any(|x| x["what"] == "gpu[0].compute_capability" && x["after"] == "7.0"));

    // A fingerprint file against a capture works too.
    let fp = gpukb()
        .args(["diff"])
        .arg(fixture("h200/fingerprint.json"))
        .arg(fixture("broken/driver-userspace-upgraded-reboot-pending"))
        .output()
        .unwrap();
    assert_eq!(
        fp.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&fp.stderr)
    );
    assert!(String::from_utf8_lossy(&fp.stdout).contains("driver.version"));

    let bad = gpukb()
        .args(["diff", "/nonexistent/a", "@x"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr).trim().lines().count(),
        1
    );
}

#[test]
fn diff_of_stored_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agent.db");
    once(&db, "healthy/h200-with-pci", &[]);
    once(&db, "broken/driver-userspace-upgraded-reboot-pending", &[]);
    let out = gpukb()
        .args(["diff", "@1", "@2", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("driver.version"));
    let missing = gpukb()
        .args(["diff", "@1", "@9", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no snapshot @9"));
}

#[test]
fn bad_flags_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agent.db");
    for extra in [
        &["--interval", "soon"][..],
        &["--textfile", "/tmp/metrics.txt"][..],
        &["--keep", "0s"][..],
        // The canary runs kernels on this machine: never on a recording, never too often.
        &["--canary", "1m"][..],
        &["--canary", "5s"][..],
    ] {
        let out = once(&db, "healthy/h200-with-pci", extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim().lines().count(),
            1,
            "{extra:?}"
        );
    }
}

#[test]
fn canary_without_a_gpu_says_why_and_the_child_reports_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let prom = dir.path().join("gpukb.prom");
    let out = gpukb()
        .args([
            "agent",
            "--once",
            "--kernel-log",
            "off",
            "--canary",
            "1m",
            "--json",
            "--db",
        ])
        .arg(dir.path().join("a.db"))
        .arg("--textfile")
        .arg(&prom)
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let text = std::fs::read_to_string(&prom).unwrap();
    if let Some(why) = j["canary"]["unavailable"].as_str() {
        // This machine has no NVIDIA driver: no canary, and the textfile says why.
        assert!(why.contains("NVML"), "{why}");
        assert!(
            text.contains(r#"gpukb_metric_supported{metric="gpukb_canary_ok",gpu="all""#),
            "{text}"
        );
        assert!(!text.contains("gpukb_canary_ok{"));
    } else {
        // A GPU machine: every GPU has a result, run or skipped.
        let results = j["canary"].as_array().expect("canary results");
        assert!(!results.is_empty());
        assert!(text.contains("gpukb_canary_ok{") || text.contains("gpukb_canary_skipped{"));
    }
    let child = gpukb().args(["agent", "--canary-child"]).output().unwrap();
    assert_eq!(child.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&child.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let report: serde_json::Value =
        serde_json::from_str(last.strip_prefix("result ").expect("a result line")).unwrap();
    assert!(
        report["kind"] == "ran" || report["kind"] == "error",
        "{report}"
    );
}
