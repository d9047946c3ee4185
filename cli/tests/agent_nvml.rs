//! Telemetry through a real `dlopen` of a fake `libnvidia-ml.so.1` built
//! here: two GPUs, GPU 0 answers its temperature, GPU 1 never does. The
//! sample must finish within the deadline, export GPU 0's value, mark GPU 1
//! unresponsive, and declare what the fake library lacks as unsupported
//! (never 0).
#![allow(clippy::disallowed_methods)] // builds a fake driver and runs the binary

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

const FAKE: &str = r#"
#include <unistd.h>
#include <string.h>
typedef void *dev;
int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned *c) { *c = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, dev *d) { *d = (dev)(0x1000 + (long)i); return 0; }
int nvmlDeviceGetTemperature(dev d, int sensor, unsigned *t) {
  (void)sensor;
  if (d == (dev)0x1001) for (;;) pause();
  *t = 41; return 0;
}
int nvmlDeviceGetUUID(dev d, char *buf, unsigned n) {
  strncpy(buf, d == (dev)0x1000 ? "GPU-fake-0" : "GPU-fake-1", n); return 0;
}
int nvmlDeviceGetName(dev d, char *buf, unsigned n) { (void)d; strncpy(buf, "Fake GPU", n); return 0; }
"#;

#[test]
fn a_gpu_that_never_answers_is_marked_unresponsive_and_the_rest_is_exported() {
    let t = tempfile::tempdir().unwrap();
    support::fake_driver_libs(t.path(), FAKE, &["libnvidia-ml.so.1"]);
    let prom = t.path().join("g.prom");
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args([
            "agent",
            "--once",
            "--kernel-log",
            "off",
            "--timeout",
            "1",
            "--db",
        ])
        .arg(t.path().join("a.db"))
        .arg("--textfile")
        .arg(&prom)
        .env("LD_LIBRARY_PATH", t.path())
        .output()
        .unwrap();
    // A hang detector, not a speed assertion.
    assert!(start.elapsed() < Duration::from_secs(120), "gpukb hung");
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&prom).unwrap();
    openmetrics_parser::prometheus::parse_prometheus(&text).expect("valid exposition");
    assert!(
        text.contains("gpukb_gpu_temp{gpu=\"0\",UUID=\"GPU-fake-0\",modelName=\"Fake GPU\"} 41\n"),
        "{text}"
    );
    assert!(!text.contains("gpukb_gpu_temp{gpu=\"1\""), "{text}");
    assert!(text.contains("gpukb_gpu_unresponsive{gpu=\"1\""), "{text}");
    // What the fake lacks is declared, not exported as 0.
    assert!(
        text.contains("gpukb_metric_supported{metric=\"gpukb_power_usage\",gpu=\"0\""),
        "{text}"
    );
    assert!(!text.contains("gpukb_power_usage{"), "{text}");
}

/// A well-behaved fake that logs each `nvmlInit_v2` and `nvmlShutdown` to
/// `$FAKE_NVML_LOG`, and at each shutdown whether the history database
/// (`$FAKE_NVML_DB`) exists yet.
const LOGGING: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
typedef void *dev;
static void note(const char *what) {
  FILE *f = fopen(getenv("FAKE_NVML_LOG"), "a");
  if (!f) return;
  fprintf(f, "%s db=%s\n", what, access(getenv("FAKE_NVML_DB"), F_OK) == 0 ? "present" : "absent");
  fclose(f);
}
int nvmlInit_v2(void) { note("init"); return 0; }
int nvmlShutdown(void) { note("shutdown"); return 0; }
int nvmlSystemGetDriverVersion(char *buf, unsigned n) { strncpy(buf, "999.12.34", n); return 0; }
int nvmlSystemGetCudaDriverVersion(int *v) { *v = 13000; return 0; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 13000; return 0; }
int nvmlDeviceGetCount_v2(unsigned *c) { *c = 1; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, dev *d) { *d = (dev)(0x1000 + (long)i); return 0; }
int nvmlDeviceGetTemperature(dev d, int sensor, unsigned *t) { (void)d; (void)sensor; *t = 37; return 0; }
int nvmlDeviceGetUUID(dev d, char *buf, unsigned n) { (void)d; strncpy(buf, "GPU-fake-0", n); return 0; }
int nvmlDeviceGetName(dev d, char *buf, unsigned n) { (void)d; strncpy(buf, "Fake GPU", n); return 0; }
"#;

/// `agent --once` asks NVML for the fingerprint and the telemetry sample in
/// one session and shuts it down before it opens the history (so NVML's
/// memory and the rest of the snapshot's are never held at once): every
/// `nvmlInit` is matched by a `nvmlShutdown`, all of them before the history
/// database exists; and what NVML said reaches both the snapshot (its driver
/// version, as no kernel-module files say one here) and the textfile.
#[test]
fn once_lets_go_of_nvml_before_it_opens_the_history() {
    let t = tempfile::tempdir().unwrap();
    support::fake_driver_libs(t.path(), LOGGING, &["libnvidia-ml.so.1"]);
    let (db, log, prom) = (
        t.path().join("a.db"),
        t.path().join("nvml.log"),
        t.path().join("g.prom"),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args(["agent", "--once", "--kernel-log", "off", "--db"])
        .arg(&db)
        .arg("--textfile")
        .arg(&prom)
        .env("LD_LIBRARY_PATH", t.path())
        .env("FAKE_NVML_LOG", &log)
        .env("FAKE_NVML_DB", &db)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = std::fs::read_to_string(&log).unwrap();
    let inits = calls.lines().filter(|l| l.starts_with("init ")).count();
    let shutdowns = calls.lines().filter(|l| l.starts_with("shutdown ")).count();
    assert!(inits >= 1, "{calls}");
    assert_eq!(inits, shutdowns, "every nvmlInit is shut down: {calls}");
    assert!(
        calls.lines().all(|l| l.ends_with("db=absent")),
        "NVML was held while the history was open: {calls}"
    );
    assert!(db.exists());
    let text = std::fs::read_to_string(&prom).unwrap();
    openmetrics_parser::prometheus::parse_prometheus(&text).expect("valid exposition");
    assert!(
        text.contains("gpukb_gpu_temp{gpu=\"0\",UUID=\"GPU-fake-0\",modelName=\"Fake GPU\"} 37\n"),
        "{text}"
    );
    let history = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args(["history", "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let h = String::from_utf8_lossy(&history.stdout);
    assert!(
        h.contains("999.12.34"),
        "NVML's driver version in the snapshot: {h}"
    );
}
