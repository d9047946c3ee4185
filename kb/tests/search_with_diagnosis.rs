//! Search confirms or rules out entries through the doctor's diagnosis: a
//! `--quick` fingerprint leaves the CUDA driver layer unchecked and confirms no
//! `cuda_init_failed`; a Blackwell GPU under an old torch is confirmed. The
//! diagnosis alone is tested in `kb/doctor/tests/diagnose.rs`.

use gpukb_doctor::{diagnose, CheckId, CheckOutcome, Layer, Severity, Status};
use gpukb_facts::read::fingerprint_from_json;
use gpukb_facts::Fingerprint;
use gpukb_kb::Kb;
use serde_json::{json, Value};

const H200: &str = include_str!("../../tests/fixtures/h200/fingerprint.json");

fn h200_json() -> Value {
    serde_json::from_str(H200).unwrap()
}

fn fp(v: &Value) -> Fingerprint {
    fingerprint_from_json(v.to_string().as_bytes()).unwrap()
}

#[test]
fn a_quick_fingerprint_leaves_the_cuda_driver_layer_unchecked_and_cites_no_cuinit() {
    let mut v = h200_json();
    v["cuda"]["value"]["init"] = json!("not called (--quick)");
    v["cuda"]["value"]["devices"] = json!([]);
    let d = diagnose(&fp(&v), "test");
    let cuda = d
        .layers
        .iter()
        .find(|l| l.layer == Layer::CudaDriver)
        .unwrap();
    assert_eq!(cuda.status, Status::CouldNotCheck);
    assert!(!cuda
        .evidence
        .iter()
        .any(|e| e.fact.contains("CUDA_SUCCESS")));
    assert!(matches!(
        d.outcome(CheckId::CudaInitFailed),
        CheckOutcome::Undecided(_)
    ));
    assert!(!d
        .findings
        .iter()
        .any(|f| f.check == CheckId::CudaInitFailed));
    let kb = Kb::open().unwrap();
    let hits = kb
        .search(
            "CUDA error: initialization error cuInit failed",
            Some(&gpukb_kb::MachineFacts::observe(&fp(&v), "test")),
            5,
        )
        .unwrap();
    assert!(
        hits.iter().all(|h| h
            .verdicts
            .iter()
            .all(|x| x.predicate() != "cuda_init_failed")),
        "a --quick fingerprint must not confirm or rule out cuda_init_failed"
    );
}

#[test]
fn a_blackwell_gpu_on_an_old_torch_is_confirmed_by_search() {
    let mut v = h200_json();
    for g in v["nvml"]["value"]["gpus"].as_array_mut().unwrap() {
        g["compute_capability"] = json!("12.0");
        g["name"] = json!("NVIDIA GeForce RTX 5090");
    }
    let t = &mut v["python"][0]["torch"];
    t["version"] = json!("2.0.1+cu117");
    t["cuda"] = json!("11.7");
    t["kernels"]["value"]["targets"] = json!([
        {"kind": "sass", "arch": 80, "variant": "plain", "version": [1, 7], "compressed": false, "count": 1},
        {"kind": "sass", "arch": 86, "variant": "plain", "version": [1, 7], "compressed": false, "count": 1}
    ]);
    let d = diagnose(&fp(&v), "test");
    let f = d
        .findings
        .iter()
        .find(|f| f.check == CheckId::TorchLacksGpuArch)
        .unwrap();
    assert!(f.root_cause && f.severity == Severity::Failure);
    // The fix is a build that has sm_120 and runs on this R580 driver.
    let fix = &f.fixes[0];
    assert!(fix.for_this_machine);
    assert!(fix.commands[0].contains("whl/cu13"), "{:?}", fix.commands);
    let kb = Kb::open().unwrap();
    let hits = kb
        .search(
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
            Some(&gpukb_kb::MachineFacts::with_diagnosis(&fp(&v), d, "test")),
            5,
        )
        .unwrap();
    assert!(
        hits[0]
            .verdicts
            .iter()
            .any(|x| x.outcome() == gpukb_kb::RuleOutcome::Confirmed
                && x.predicate() == "torch_lacks_gpu_arch"),
        "{:?}",
        hits.iter()
            .map(|h| (&h.id, &h.verdicts))
            .collect::<Vec<_>>()
    );
}
