//! Telemetry through a real `dlopen` of a fake `libnvidia-ml.so.1` built
//! here: two GPUs, GPU 0 answers its temperature, GPU 1 never does. The
//! sample must finish within the deadline, export GPU 0's value, mark GPU 1
//! unresponsive, and declare what the fake library lacks as unsupported
//! (never 0).
#![allow(clippy::disallowed_methods)] // builds a fake driver and runs the binary

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
    let src = t.path().join("fake.c");
    std::fs::write(&src, FAKE).unwrap();
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(t.path().join("libnvidia-ml.so.1"))
        .arg(&src)
        .status()
        .expect("a C compiler (CI installs one)");
    assert!(st.success());
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
