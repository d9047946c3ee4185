//! Search uses machine facts honestly: an entry is ruled out only by a check decided on
//! facts observed for it (search's default detection reads files only, so checks that
//! need NVML or cuInit stay undecided), the ruling records its evidence and environment,
//! and a fact the paste states (a loaded library version, a path, an environment
//! setting) that differs from the machine model withholds the checks resting on it.
//! Built from two real failures on an H200 (driver 580.159.04, torch 2.11.0+cu130).

use gpukb_facts::read::fingerprint_from_json;
use gpukb_kb::ruling::{rests_on, Basis};
use gpukb_kb::{Kb, MachineFacts, Ranking, RuleOutcome};
use serde_json::{json, Value};

/// The H200 recorded live (tests/fixtures/healthy/h200-live-2026-12-01: NVML, cuInit, PCI).
const H200: &str =
    include_str!("../../tests/fixtures/healthy/h200-live-2026-12-01/fingerprint.json");

fn h200() -> Value {
    serde_json::from_str(H200).unwrap()
}

/// What search's default detection reads of the H200: neither NVML nor the CUDA driver
/// API (as `cheap_settings` leaves them).
fn files_only(mut v: Value) -> Value {
    for k in ["nvml", "cuda"] {
        v[k] = json!({"status": "unobservable",
            "source": {"kind": "derived", "from": "search's default detection"},
            "reason": "not loaded by search's default detection"});
    }
    v
}

fn with_env(mut v: Value, name: &str, value: &str) -> Value {
    let env = v["env"].as_array_mut().unwrap();
    env.retain(|e| e["name"] != name);
    env.push(json!({"name": name, "value": value}));
    v
}

fn facts(v: &Value) -> MachineFacts {
    let fp = fingerprint_from_json(v.to_string().as_bytes()).unwrap();
    MachineFacts::observe(&fp, "this machine")
}

fn rank(paste: &str, f: &MachineFacts) -> Ranking {
    let kb = Kb::open().unwrap();
    let q = kb.analyze(paste.as_bytes());
    kb.rank(&q, Some(f), 5).unwrap()
}

fn ids(r: &[gpukb_kb::Hit]) -> Vec<&str> {
    r.iter().map(|h| h.id.as_str()).collect()
}

/// The real run: `CUDA_VISIBLE_DEVICES=GPU-<a UUID no GPU has>` in front of torch.
const BOGUS_UUID: &str = "GPU-3f0c1a2b-9d8e-4c7f-a6b5-112233445566";
const BOGUS_UUID_PASTE: &str = r#"$ CUDA_VISIBLE_DEVICES=GPU-3f0c1a2b-9d8e-4c7f-a6b5-112233445566 python -c "import torch; torch.zeros(1).cuda()"
Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/cuda/__init__.py", line 417, in _lazy_init
    torch._C._cuda_init()
RuntimeError: No CUDA GPUs are available
"#;

#[test]
fn a_bogus_uuid_is_not_ruled_out_by_files_only_facts() {
    let f = facts(&with_env(
        files_only(h200()),
        "CUDA_VISIBLE_DEVICES",
        BOGUS_UUID,
    ));
    let r = rank(BOGUS_UUID_PASTE, &f);
    assert!(
        !ids(&r.ruled_out).contains(&"cuda-visible-devices-hides-gpus"),
        "ruled out: {:?}",
        ids(&r.ruled_out)
    );
    let first = &r.results[0];
    assert_eq!(
        first.id,
        "cuda-visible-devices-hides-gpus",
        "{:?}",
        ids(&r.results)
    );
    let m = first.machine.as_ref().unwrap();
    assert_eq!(m.outcome(), RuleOutcome::Unknown);
    assert!(m.because().contains("NVML"), "{}", m.because());
    // The same paste on the full H200 (NVML read): the check finds the UUID names no GPU.
    let f = facts(&with_env(h200(), "CUDA_VISIBLE_DEVICES", BOGUS_UUID));
    let r = rank(BOGUS_UUID_PASTE, &f);
    let m = r.results[0].machine.as_ref().unwrap();
    assert_eq!(r.results[0].id, "cuda-visible-devices-hides-gpus");
    assert_eq!(m.outcome(), RuleOutcome::Confirmed, "{m:?}");
    assert!(!m.evidence().is_empty());
}

/// The real run: `LD_LIBRARY_PATH=/lib/x86_64-linux-gnu` (the system cuDNN 9.14) in front
/// of torch, whose wheel pins cuDNN 9.19; gpukb's loader model still says 9.19.0.
const CUDNN_PASTE: &str = r#"Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1779, in _wrapped_call_impl
    return self._call_impl(*args, **kwargs)
  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/conv.py", line 548, in forward
    return self._conv_forward(input, self.weight, self.bias)
  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/conv.py", line 543, in _conv_forward
    return F.conv2d(
RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (9, 19, 0) but found runtime version (9, 14, 0). PyTorch already comes bundled with cuDNN. One option to resolving this error is to ensure PyTorch can find the bundled cuDNN. Looks like your LD_LIBRARY_PATH contains incompatible version of cudnn. Please either remove it from the path or install cudnn (9, 19, 0)
"#;

#[test]
fn a_loaded_version_the_paste_states_beats_the_loader_model() {
    let v = with_env(
        files_only(h200()),
        "LD_LIBRARY_PATH",
        "/lib/x86_64-linux-gnu",
    );
    let f = facts(&v);
    // The model is wrong on purpose: it has torch load the wheel's 9.19.0.
    assert!(f.fingerprint().python[0]
        .torch
        .as_ref()
        .unwrap()
        .loads
        .iter()
        .any(|l| l.soname == "libcudnn.so.9" && l.version.as_deref() == Some("9.19.0")));
    let r = rank(CUDNN_PASTE, &f);
    assert!(
        !ids(&r.ruled_out).contains(&"cudnn-version-incompatibility-ld-library-path"),
        "ruled out: {:?}",
        ids(&r.ruled_out)
    );
    assert_eq!(
        r.results[0].id,
        "cudnn-version-incompatibility-ld-library-path",
        "{:?}",
        ids(&r.results)
    );
    let d = r
        .differs
        .iter()
        .find(|d| !d.is_identity())
        .expect("a process difference");
    assert_eq!(d.paste, "9.14.0");
    assert!(d.machine.contains("9.19.0"), "{d:?}");
    let m = r.results[0].machine.as_ref().unwrap();
    assert_eq!(m.outcome(), RuleOutcome::Unknown);
    assert!(
        m.because().contains("failing process differs"),
        "{}",
        m.because()
    );
    // When the paste agrees with the model, the check's clear verdict does rule it out.
    let agreeing = CUDNN_PASTE.replace("(9, 14, 0)", "(9, 19, 0)");
    let r = rank(&agreeing, &f);
    assert!(
        ids(&r.ruled_out).contains(&"cudnn-version-incompatibility-ld-library-path"),
        "{:?} / {:?}",
        ids(&r.results),
        ids(&r.ruled_out)
    );
}

#[test]
fn every_ruling_out_names_its_evidence_and_environment() {
    let pastes = [
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "RuntimeError: No CUDA GPUs are available",
        "Failed to initialize NVML: Driver/library version mismatch",
        "RuntimeError: CUDA error: out of memory",
        "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory",
        "CUDA_ERROR_NO_DEVICE",
        "Xid 79: GPU has fallen off the bus",
    ];
    let mut seen = 0;
    for (view, v) in [("files only", files_only(h200())), ("full", h200())] {
        let f = facts(&v);
        for p in pastes {
            for h in rank(p, &f).ruled_out {
                let m = h.machine.as_ref().unwrap();
                assert_eq!(m.outcome(), RuleOutcome::RuledOut);
                assert!(!m.evidence().is_empty(), "{}: {p}", h.id);
                let env = m.environment().expect("an environment");
                assert_eq!(env.process, "this machine");
                assert_eq!(env.view.nvml, view == "full");
                if view == "files only" {
                    let b = rests_on(m.check().unwrap().parse().expect("a check name"));
                    assert!(
                        !b.contains(&Basis::Nvml) && !b.contains(&Basis::CudaApi),
                        "{} ruled out by {:?} without NVML",
                        h.id,
                        m.check()
                    );
                }
                seen += 1;
            }
        }
    }
    assert!(
        seen > 0,
        "no ruling out at all: the test would prove nothing"
    );
}
