//! A wedged driver never hangs gpukb (issue 12 §3): a fake `libnvidia-ml.so.1`
//! and `libcuda.so.1`, built here, block forever in `nvmlInit_v2` and
//! `cuInit`/`cuDriverGetVersion`. `gpukb fingerprint` must still finish, with
//! NVML and the CUDA driver API reported as failed ("did not answer within").
#![allow(clippy::disallowed_methods)] // builds a fake driver and runs the binary

mod support;

use std::process::Command;

const FAKE: &str = r#"
#include <unistd.h>
int nvmlInit_v2(void) { for (;;) pause(); return 0; }
int nvmlInit(void) { for (;;) pause(); return 0; }
int nvmlInitWithFlags(unsigned f) { (void)f; for (;;) pause(); return 0; }
int cuInit(unsigned f) { (void)f; for (;;) pause(); return 0; }
int cuDriverGetVersion(int *v) { (void)v; for (;;) pause(); return 0; }
"#;

#[test]
fn a_driver_that_never_answers_is_a_failed_observation_and_gpukb_exits() {
    let t = tempfile::tempdir().unwrap();
    support::fake_driver_libs(t.path(), FAKE, &["libnvidia-ml.so.1", "libcuda.so.1"]);
    let child = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args(["fingerprint", "--json", "--timeout", "1"])
        .env("LD_LIBRARY_PATH", t.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = support::wait_bounded(child, "fingerprint on a wedged driver");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for part in ["nvml", "cuda"] {
        assert_eq!(v[part]["status"], "failed", "{part}: {}", v[part]);
        let err = v[part]["error"].as_str().unwrap_or("");
        assert!(err.contains("did not answer within"), "{part}: {err}");
    }
}

/// The same wedged driver, noting each `nvmlInit_v2` in `$FAKE_NVML_LOG` first.
const LOGGING_FAKE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int nvmlInit_v2(void) {
  FILE *f = fopen(getenv("FAKE_NVML_LOG"), "a");
  if (f) { fputs("nvmlInit_v2\n", f); fclose(f); }
  for (;;) pause();
  return 0;
}
int cuInit(unsigned f) { (void)f; for (;;) pause(); return 0; }
int cuDriverGetVersion(int *v) { (void)v; for (;;) pause(); return 0; }
"#;

/// `gpukb agent --once` on a wedged driver: NVML is asked once, under its
/// deadline, and not again for the fingerprint (a call that missed its
/// deadline is not retried until the next snapshot); the snapshot is still
/// taken, judged and stored, and the textfile says why there is no telemetry
/// instead of exporting zeros.
#[test]
fn agent_once_on_a_wedged_driver_still_takes_and_stores_its_snapshot() {
    let t = tempfile::tempdir().unwrap();
    support::fake_driver_libs(
        t.path(),
        LOGGING_FAKE,
        &["libnvidia-ml.so.1", "libcuda.so.1"],
    );
    let (db, prom, log) = (
        t.path().join("a.db"),
        t.path().join("g.prom"),
        t.path().join("nvml.log"),
    );
    let child = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args([
            "agent",
            "--once",
            "--kernel-log",
            "off",
            "--timeout",
            "1",
            "--db",
        ])
        .arg(&db)
        .arg("--textfile")
        .arg(&prom)
        .env("LD_LIBRARY_PATH", t.path())
        .env("FAKE_NVML_LOG", &log)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = support::wait_bounded(child, "agent --once on a wedged driver");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3)),
        "a verdict, not trouble: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("snapshot @1"), "{stdout}");
    let text = std::fs::read_to_string(&prom).unwrap();
    openmetrics_parser::prometheus::parse_prometheus(&text).expect("valid exposition");
    let why = text
        .lines()
        .find(|l| l.starts_with("gpukb_metric_supported{metric=\"telemetry\""))
        .unwrap_or_else(|| panic!("no telemetry reason: {text}"));
    assert!(why.contains("did not answer within"), "{why}");
    assert!(!text.contains("gpukb_gpu_temp{"), "{text}");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(calls.lines().count(), 1, "NVML asked again: {calls}");
}
