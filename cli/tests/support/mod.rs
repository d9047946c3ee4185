//! Shared by the tests that run gpukb against a fake NVIDIA driver: building
//! the fake libraries from C source, and waiting for gpukb with a hang detector.
#![allow(clippy::disallowed_methods)] // builds fake drivers and runs the binary
#![allow(dead_code)] // each test file uses its part

use std::path::Path;
use std::process::{Child, Command, Output};
use std::time::Duration;

/// Compiles `source` into each of `names` (`libnvidia-ml.so.1`, `libcuda.so.1`)
/// in `dir`, for `LD_LIBRARY_PATH=dir`.
pub(crate) fn fake_driver_libs(dir: &Path, source: &str, names: &[&str]) {
    let src = dir.join("fake.c");
    std::fs::write(&src, source).unwrap();
    for name in names {
        let st = Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(dir.join(name))
            .arg(&src)
            .status()
            .expect("a C compiler (CI installs one)");
        assert!(st.success(), "cc failed for {name}");
    }
}

/// Waits for `child`, failing the test if it runs past two minutes: a hang
/// detector, not a speed assertion (the deadlines involved are seconds).
pub(crate) fn wait_bounded(mut child: Child, what: &str) -> Output {
    let mut waited = Duration::ZERO;
    while child.try_wait().unwrap().is_none() {
        assert!(waited < Duration::from_secs(120), "gpukb hung: {what}");
        std::thread::sleep(Duration::from_millis(100));
        waited += Duration::from_millis(100);
    }
    child.wait_with_output().unwrap()
}
