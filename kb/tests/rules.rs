//! Rules over hand-built machine facts.

use gpukb_kb::facts::{GpuFacts, LibFacts, MachineFacts, TorchFacts};
use gpukb_kb::rules::{evaluate, parse_target, ptx_runs_on, sass_runs_on, Verdict};
use gpukb_kb::Kb;

fn gpu(name: &str, cc: (u32, u32)) -> GpuFacts {
    GpuFacts {
        name: name.into(),
        cc: Some(cc),
        ..Default::default()
    }
}

fn torch(v: &str, cuda: &str, sass: &[&str], ptx: &[&str]) -> TorchFacts {
    TorchFacts {
        version: v.into(),
        cuda: Some(cuda.into()),
        sass: sass.iter().map(|s| s.to_string()).collect(),
        ptx: ptx.iter().map(|s| s.to_string()).collect(),
    }
}

fn blackwell_cu117() -> MachineFacts {
    MachineFacts {
        driver_version: Some("575.51.03".into()),
        driver_cuda: Some((12, 9)),
        gpus: vec![gpu("NVIDIA GeForce RTX 5090", (12, 0))],
        torch: vec![torch(
            "2.0.1+cu117",
            "11.7",
            &[
                "sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86",
            ],
            &[],
        )],
        ..Default::default()
    }
}

#[test]
fn binary_compat_rules() {
    let t = |s| parse_target(s).unwrap();
    assert!(sass_runs_on(t("sm_86"), (8, 9)));
    assert!(!sass_runs_on(t("sm_86"), (8, 0)));
    assert!(!sass_runs_on(t("sm_80"), (9, 0)));
    assert!(sass_runs_on(t("sm_90a"), (9, 0)));
    assert!(!sass_runs_on(t("sm_90a"), (10, 0)));
    assert!(sass_runs_on(t("sm_120"), (12, 0)));
    assert!(ptx_runs_on(t("compute_80"), (12, 0)));
    assert!(!ptx_runs_on(t("compute_90"), (8, 9)));
    assert_eq!(t("8.6").minor, 6);
}

#[test]
fn sm120_with_cu117_torch_is_confirmed() {
    let v = evaluate("torch_lacks_gpu_arch", &blackwell_cu117());
    let Verdict::Confirmed(s) = v else {
        panic!("expected confirmed, got {v:?}")
    };
    assert_eq!(
        s,
        "torch 2.0.1+cu117 has no kernels for sm_120 (NVIDIA GeForce RTX 5090) (it carries sm_37..sm_86, no PTX)"
    );
}

#[test]
fn h200_with_torch_2_11_is_ruled_out() {
    let f = MachineFacts {
        driver_version: Some("580.159.04".into()),
        driver_cuda: Some((13, 0)),
        gpus: vec![gpu("NVIDIA H200", (9, 0))],
        torch: vec![torch(
            "2.11.0+cu130",
            "13.0",
            &["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
            &[],
        )],
        ..Default::default()
    };
    assert!(matches!(
        evaluate("torch_lacks_gpu_arch", &f),
        Verdict::RuledOut(_)
    ));
    assert!(matches!(
        evaluate("driver_older_than_torch_cuda", &f),
        Verdict::RuledOut(_)
    ));
    assert!(matches!(evaluate("no_driver", &f), Verdict::RuledOut(_)));
}

#[test]
fn sm90a_only_build_does_not_cover_sm100() {
    let f = MachineFacts {
        gpus: vec![gpu("NVIDIA B200", (10, 0))],
        torch: vec![torch("x", "12.8", &["sm_90a"], &[])],
        ..Default::default()
    };
    assert!(matches!(
        evaluate("torch_lacks_gpu_arch", &f),
        Verdict::Confirmed(_)
    ));
    let f = MachineFacts {
        gpus: vec![gpu("NVIDIA B200", (10, 0))],
        torch: vec![torch("x", "12.8", &["sm_90a"], &["compute_90"])],
        ..Default::default()
    };
    assert!(matches!(
        evaluate("torch_lacks_gpu_arch", &f),
        Verdict::RuledOut(_)
    ));
}

#[test]
fn driver_and_env_predicates() {
    let mut f = MachineFacts {
        driver_version: Some("470.57.02".into()),
        driver_cuda: Some((11, 4)),
        torch: vec![torch("2.4.0+cu121", "12.1", &["sm_80"], &[])],
        ..Default::default()
    };
    assert!(matches!(
        evaluate("driver_older_than_torch_cuda", &f),
        Verdict::Confirmed(_)
    ));
    f.env.insert("CUDA_VISIBLE_DEVICES".into(), "".into());
    assert!(matches!(
        evaluate("cuda_visible_devices_hides_gpus", &f),
        Verdict::Confirmed(_)
    ));
    f.gpus = vec![gpu("A", (8, 0)), gpu("B", (8, 0))];
    f.env.insert("CUDA_VISIBLE_DEVICES".into(), "3".into());
    assert!(matches!(
        evaluate("cuda_visible_devices_hides_gpus", &f),
        Verdict::Confirmed(_)
    ));
    f.env.insert("CUDA_VISIBLE_DEVICES".into(), "1".into());
    assert!(matches!(
        evaluate("cuda_visible_devices_hides_gpus", &f),
        Verdict::RuledOut(_)
    ));
    f.libraries = vec![
        LibFacts {
            name: "libcudnn".into(),
            version: Some("8.9.2".into()),
            path: "/usr/lib/x86_64-linux-gnu/libcudnn.so.8".into(),
        },
        LibFacts {
            name: "libcudnn".into(),
            version: Some("9.1.0".into()),
            path: "/venv/nvidia/cudnn/lib/libcudnn.so.9".into(),
        },
    ];
    assert!(matches!(
        evaluate("duplicate_library_versions", &f),
        Verdict::Confirmed(_)
    ));
    f.gpus[0].pcie_width_current = Some(8);
    f.gpus[0].pcie_width_max = Some(16);
    assert!(matches!(
        evaluate("pcie_link_downtrained", &f),
        Verdict::Confirmed(_)
    ));
    assert_eq!(evaluate("no_such_predicate", &f), Verdict::Unknown);
    assert_eq!(
        evaluate("torch_lacks_gpu_arch", &MachineFacts::default()),
        Verdict::Unknown
    );
}

#[test]
fn facts_change_the_answer() {
    let kb = Kb::open().unwrap();
    let text = "RuntimeError: CUDA error: no kernel image is available for execution on the device";
    let f = blackwell_cu117();
    let hits = kb.search(text, Some(&f), 5).unwrap();
    let top = &hits[0];
    assert!(
        top.verdicts
            .iter()
            .any(|v| v.outcome == "confirmed" && v.because.contains("sm_120")),
        "{:?}",
        hits.iter()
            .map(|h| (&h.id, &h.verdicts))
            .collect::<Vec<_>>()
    );
    assert!(top.confidence >= 0.9);
}

#[test]
fn empty_facts_json_parses() {
    let f: MachineFacts = serde_json::from_str("{}").unwrap();
    assert_eq!(f, MachineFacts::default());
}
