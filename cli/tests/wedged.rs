//! A wedged driver never hangs gpukb (issue 12 §3): a fake `libnvidia-ml.so.1`
//! and `libcuda.so.1`, built here, block forever in `nvmlInit_v2` and
//! `cuInit`/`cuDriverGetVersion`. `gpukb fingerprint` must still finish, with
//! NVML and the CUDA driver API reported as failed ("did not answer within").
#![allow(clippy::disallowed_methods)] // builds a fake driver and runs the binary

use std::process::Command;
use std::time::Duration;

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
    let src = t.path().join("fake.c");
    std::fs::write(&src, FAKE).unwrap();
    for name in ["libnvidia-ml.so.1", "libcuda.so.1"] {
        let st = Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(t.path().join(name))
            .arg(&src)
            .status()
            .expect("a C compiler (CI installs one)");
        assert!(st.success());
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args(["fingerprint", "--json", "--timeout", "1"])
        .env("LD_LIBRARY_PATH", t.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A hang detector, not a speed assertion: the deadlines are a few seconds.
    let mut waited = Duration::ZERO;
    while child.try_wait().unwrap().is_none() {
        assert!(
            waited < Duration::from_secs(120),
            "gpukb hung on a wedged driver"
        );
        std::thread::sleep(Duration::from_millis(100));
        waited += Duration::from_millis(100);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for part in ["nvml", "cuda"] {
        assert_eq!(v[part]["status"], "failed", "{part}: {}", v[part]);
        let err = v[part]["error"].as_str().unwrap_or("");
        assert!(err.contains("did not answer within"), "{part}: {err}");
    }
}
