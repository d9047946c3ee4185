//! Search's default detection loads neither NVML nor the CUDA driver API: the
//! diagnosis then names the GPUs from the PCI bus and gpukb's GPU table and the
//! driver's CUDA from its branch, so machine checks still decide, and the
//! healthy H200 read this way is still ok.

use gpukb_doctor::{diagnose, Severity, Verdict, View};
use gpukb_facts::read::fingerprint_from_json;
use gpukb_facts::{Fingerprint, Source};
use serde_json::{json, Value};

const H200_LIVE: &str =
    include_str!("../../../tests/fixtures/healthy/h200-live-2026-12-01/fingerprint.json");

/// The recorded H200 as search's detection sees it: NVML and CUDA not loaded.
fn cheap_h200() -> Value {
    let mut v: Value = serde_json::from_str(H200_LIVE).unwrap();
    v["nvml"] = json!({"status": "unobservable", "source": {"kind": "nvml", "call": "nvmlInit"},
        "reason": "NVML was not loaded (cheap facts only; `gpukb doctor` loads it)"});
    v["cuda"] = json!({"status": "unobservable", "source": {"kind": "cuda_driver", "call": "cuInit"},
        "reason": "the CUDA driver API was not loaded (cheap facts only; `gpukb doctor` loads it)"});
    v
}

fn fp(v: &Value) -> Fingerprint {
    fingerprint_from_json(v.to_string().as_bytes()).unwrap()
}

#[test]
fn gpus_come_from_the_pci_bus_and_the_gpu_table() {
    let f = fp(&cheap_h200());
    let gpus = View::new(&f).gpus();
    assert_eq!(gpus.len(), 1, "{gpus:?}");
    assert!(gpus[0].name.contains("H200"), "{}", gpus[0].name);
    assert_eq!(gpus[0].cc.map(|c| c.to_string()).as_deref(), Some("9.0"));
    let Source::Derived { from } = &gpus[0].source else {
        panic!("source {:?}", gpus[0].source)
    };
    assert!(
        from.contains("0000:00:06.0") && from.contains("2335"),
        "{from}"
    );
}

#[test]
fn the_driver_cuda_comes_from_the_branch_table() {
    let f = fp(&cheap_h200());
    let (cuda, source) = View::new(&f).driver_cuda().expect("derived from 580");
    assert_eq!(cuda.to_string(), "13.0");
    assert!(source.to_string().contains("580.159.04"), "{source}");
}

#[test]
fn a_loaded_but_failed_nvml_gets_no_table_gpus() {
    let mut v = cheap_h200();
    v["nvml"] = json!({"status": "failed", "source": {"kind": "nvml", "call": "nvmlInit"},
        "error": "Driver/library version mismatch"});
    let f = fp(&v);
    assert!(View::new(&f).gpus().is_empty());
    assert!(View::new(&f).driver_cuda().is_none());
}

#[test]
fn the_cheap_h200_is_still_healthy() {
    let d = diagnose(&fp(&cheap_h200()), "test");
    assert_ne!(d.verdict, Verdict::Failure, "{:#?}", d.findings);
    assert!(
        d.findings.iter().all(|f| f.severity != Severity::Failure),
        "{:#?}",
        d.findings
    );
}

#[test]
fn a_torch_without_the_gpus_arch_fails_without_nvml() {
    let mut v = cheap_h200();
    // keep only the sm_80 image in every torch's kernel summary
    let mut edited = 0;
    for env in v["python"].as_array_mut().unwrap() {
        if let Some(k) = env.pointer_mut("/torch/kernels/value") {
            k["sass"] = json!(["sm_80"]);
            let kept: Vec<Value> = k["targets"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|t| t["arch"] == 80)
                .cloned()
                .collect();
            k["targets"] = Value::Array(kept);
            edited += 1;
        }
    }
    assert!(edited > 0, "the fixture has a torch");
    let d = diagnose(&fp(&v), "test");
    assert!(
        d.findings
            .iter()
            .any(|f| f.severity == Severity::Failure && f.check.name().contains("arch")),
        "{:#?}",
        d.findings
    );
}
