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

/// A one-GPU fake for the successors of NVML's deprecated readings. Built with
/// `-DSUCCESSORS=<rc>` it exports `nvmlDeviceGetTemperatureV` (checking the
/// `nvmlTemperature_v1` version word and the sensor) and
/// `nvmlDeviceGetCurrentClocksEventReasons`, which return `<rc>` when it is
/// not 0, else 55 °C and `nvmlClocksEventReasonSwThermalSlowdown` (0x20);
/// without `-DNO_DEPRECATED` it exports the deprecated
/// `nvmlDeviceGetTemperature` and `nvmlDeviceGetCurrentClocksThrottleReasons`,
/// which answer 37 °C and `nvmlClocksThrottleReasonSwPowerCap` (0x4).
const SUCCESSORS: &str = r#"
#include <string.h>
typedef void *dev;
typedef struct { unsigned version; int sensorType; int temperature; } temperature_v1;
int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlSystemGetDriverVersion(char *buf, unsigned n) { strncpy(buf, "999.12.34", n); return 0; }
int nvmlSystemGetCudaDriverVersion(int *v) { *v = 13000; return 0; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 13000; return 0; }
int nvmlDeviceGetCount_v2(unsigned *c) { *c = 1; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, dev *d) { *d = (dev)(0x1000 + (long)i); return 0; }
int nvmlDeviceGetUUID(dev d, char *buf, unsigned n) { (void)d; strncpy(buf, "GPU-fake-0", n); return 0; }
int nvmlDeviceGetName(dev d, char *buf, unsigned n) { (void)d; strncpy(buf, "Fake GPU", n); return 0; }
#ifndef NO_DEPRECATED
int nvmlDeviceGetTemperature(dev d, int sensor, unsigned *t) {
  (void)d; if (sensor != 0) return 2; *t = 37; return 0;
}
int nvmlDeviceGetCurrentClocksThrottleReasons(dev d, unsigned long long *r) {
  (void)d; *r = 0x4ull; return 0;
}
#endif
#ifdef SUCCESSORS
int nvmlDeviceGetTemperatureV(dev d, temperature_v1 *t) {
  (void)d;
  if (SUCCESSORS) return SUCCESSORS;
  if (t->version != ((unsigned)sizeof(temperature_v1) | (1u << 24))) return 25;
  if (t->sensorType != 0) return 2;
  t->temperature = 55; return 0;
}
int nvmlDeviceGetCurrentClocksEventReasons(dev d, unsigned long long *r) {
  (void)d; if (SUCCESSORS) return SUCCESSORS; *r = 0x20ull; return 0;
}
#endif
"#;

/// What gpukb read from a fake built from [`SUCCESSORS`] with `defines`: the
/// fingerprint's NVML GPU 0 and `agent --once`'s textfile.
fn read_through(defines: &str) -> (serde_json::Value, String) {
    let t = tempfile::tempdir().unwrap();
    support::fake_driver_libs(
        t.path(),
        &format!("{defines}\n{SUCCESSORS}"),
        &["libnvidia-ml.so.1"],
    );
    let child = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args(["fingerprint", "--json"])
        .env("LD_LIBRARY_PATH", t.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = support::wait_bounded(child, "fingerprint on a fake NVML");
    assert_eq!(out.status.code(), Some(0), "{defines}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["nvml"]["status"], "found", "{defines}: {}", v["nvml"]);
    let gpu = v["nvml"]["value"]["gpus"][0].clone();

    let prom = t.path().join("g.prom");
    let child = Command::new(env!("CARGO_BIN_EXE_gpukb"))
        .args(["agent", "--once", "--kernel-log", "off", "--db"])
        .arg(t.path().join("a.db"))
        .arg("--textfile")
        .arg(&prom)
        .env("LD_LIBRARY_PATH", t.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = support::wait_bounded(child, "agent --once on a fake NVML");
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3)),
        "{defines}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&prom).unwrap();
    openmetrics_parser::prometheus::parse_prometheus(&text).expect("valid exposition");
    (gpu, text)
}

const LABELS: &str = "{gpu=\"0\",UUID=\"GPU-fake-0\",modelName=\"Fake GPU\"}";

/// An older driver's NVML (no successors, or successors that refuse the way
/// an older driver does): the deprecated functions answer, and the
/// fingerprint says so.
#[test]
fn an_nvml_without_the_successors_is_read_through_the_deprecated_functions() {
    for defines in [
        "",
        "#define SUCCESSORS 13 /* NVML_ERROR_FUNCTION_NOT_FOUND */",
        "#define SUCCESSORS 3 /* NVML_ERROR_NOT_SUPPORTED */",
        "#define SUCCESSORS 25 /* NVML_ERROR_ARGUMENT_VERSION_MISMATCH */",
    ] {
        let (gpu, text) = read_through(defines);
        assert_eq!(gpu["temperature_c"], 37, "{defines}: {gpu}");
        assert_eq!(
            gpu["throttle_reasons"],
            serde_json::json!(["SW_POWER_CAP"]),
            "{defines}: {gpu}"
        );
        assert_eq!(
            gpu["answered_by"],
            serde_json::json!({
                "temperature_c": "nvmlDeviceGetTemperature",
                "throttle_reasons": "nvmlDeviceGetCurrentClocksThrottleReasons",
            }),
            "{defines}: {gpu}"
        );
        assert!(
            text.contains(&format!("gpukb_gpu_temp{LABELS} 37\n")),
            "{defines}: {text}"
        );
        assert!(
            text.contains(&format!("gpukb_clock_throttle_reasons{LABELS} 4\n")),
            "{defines}: {text}"
        );
    }
}

/// A driver with the successors: their answers (55 °C, SW thermal slowdown)
/// are used, not the deprecated functions' (37 °C, SW power cap), also when
/// the deprecated functions are gone (CUDA 14).
#[test]
fn the_successors_answer_where_nvml_has_them() {
    for defines in [
        "#define SUCCESSORS 0",
        "#define SUCCESSORS 0\n#define NO_DEPRECATED",
    ] {
        let (gpu, text) = read_through(defines);
        assert_eq!(gpu["temperature_c"], 55, "{defines}: {gpu}");
        assert_eq!(
            gpu["throttle_reasons"],
            serde_json::json!(["SW_THERMAL_SLOWDOWN"]),
            "{defines}: {gpu}"
        );
        assert_eq!(
            gpu["answered_by"],
            serde_json::json!({
                "temperature_c": "nvmlDeviceGetTemperatureV",
                "throttle_reasons": "nvmlDeviceGetCurrentClocksEventReasons",
            }),
            "{defines}: {gpu}"
        );
        assert!(
            text.contains(&format!("gpukb_gpu_temp{LABELS} 55\n")),
            "{defines}: {text}"
        );
        assert!(
            text.contains(&format!("gpukb_clock_throttle_reasons{LABELS} 32\n")),
            "{defines}: {text}"
        );
    }
}
