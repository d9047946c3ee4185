//! Tests over the real H200 probe reports recorded in
//! `tests/fixtures/h200-probe/` (no GPU needed): they deserialize, round-trip,
//! and the verdict rules reproduce every recorded module-load result and the
//! recorded torch verdict.

use super::verdict::{self, image_from_target, predict_standalone, ImageOutcome};
use super::{ProbeReport, PROBE_REPORT_VERSION};
use crate::fatbin::{ArchVariant, FatbinImage, ImageKind};

const H200: &str = include_str!("../../../tests/fixtures/h200-probe/probe.json");
const H200_X2: &str = include_str!("../../../tests/fixtures/h200-probe/probe-x2.json");

fn reports() -> Vec<ProbeReport> {
    [H200, H200_X2]
        .iter()
        .map(|t| ProbeReport::from_json(t).expect("fixture parses"))
        .collect()
}

fn row_image(
    kind: gpukb_kernels::ProbeImageKind,
    arch: u32,
    isa: Option<(u32, u32)>,
) -> FatbinImage {
    FatbinImage {
        kind: match kind {
            gpukb_kernels::ProbeImageKind::Ptx => ImageKind::Ptx,
            gpukb_kernels::ProbeImageKind::Cubin => ImageKind::Sass,
        },
        arch,
        variant: ArchVariant::Plain,
        version: isa.map(|(a, b)| (a as u16, b as u16)).unwrap_or((0, 0)),
        compressed: false,
    }
}

#[test]
fn fixtures_deserialize_and_round_trip() {
    for r in reports() {
        assert_eq!(r.version, PROBE_REPORT_VERSION);
        assert_eq!(r.driver_cuda_version, 13000);
        let again = ProbeReport::from_json(&r.to_json()).unwrap();
        assert_eq!(again, r);
        for g in &r.gpus {
            assert_eq!(g.name, "NVIDIA H200");
            assert_eq!(g.cc, (9, 0));
            assert_eq!(g.sm_count, 132);
        }
    }
    let newer = H200.replacen("\"version\": 1", "\"version\": 99", 1);
    assert!(ProbeReport::from_json(&newer)
        .unwrap_err()
        .contains("newer"));
}

#[test]
fn rules_reproduce_every_recorded_load_result() {
    for r in reports() {
        for g in &r.gpus {
            assert!(g.rules_agree_with_loads);
            assert_eq!(g.module_loads.len(), gpukb_kernels::images().len());
            for m in &g.module_loads {
                let img = row_image(m.kind, m.arch, m.ptx_isa);
                assert_eq!(
                    predict_standalone(g.cc, r.driver_cuda_version, &img),
                    m.code,
                    "{} on GPU {}",
                    m.image,
                    g.ordinal
                );
                assert_eq!(m.code, m.predicted);
                assert_eq!(m.kernels_found, m.code == 0, "{}", m.image);
            }
        }
    }
}

#[test]
fn h200_matrix_matches_module_load_probe_txt() {
    // shared/fixtures/h200-live/module-load-probe.txt: sm_90 loads; sm_75/80/86/89/100/120
    // cubins 209; PTX JITs; PTX from a newer toolchain than the driver 222.
    let r = ProbeReport::from_json(H200).unwrap();
    let g = &r.gpus[0];
    let code = |name: &str| {
        g.module_loads
            .iter()
            .find(|m| m.image == name)
            .unwrap()
            .code
    };
    assert_eq!(code("gpukb_probe.sm_90.cubin"), 0);
    for a in [53, 62, 72, 75, 80, 86, 87, 89, 100, 120] {
        assert_eq!(code(&format!("gpukb_probe.sm_{a}.cubin")), 209, "sm_{a}");
    }
    for a in [53, 62, 72, 75, 80, 86, 87, 89, 90] {
        assert_eq!(
            code(&format!("gpukb_probe.compute_{a}.ptx")),
            0,
            "compute_{a}"
        );
    }
    // PTX for an arch above the device is invalid PTX there, not "no binary".
    assert_eq!(code("gpukb_probe.compute_100.ptx"), 218);
    assert_eq!(code("gpukb_probe.compute_120.ptx"), 218);
    assert_eq!(code("gpukb_probe.future.ptx"), 222);
    let future = g
        .module_loads
        .iter()
        .find(|m| m.image == "gpukb_probe.future.ptx")
        .unwrap();
    assert_eq!(future.code_name, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
    assert!(g.smoke.iter().all(|s| s.passed));
    assert_eq!(g.smoke.len(), 2, "SASS and the JIT-compiled low-ISA PTX");
}

#[test]
fn recorded_torch_verdict_is_what_the_rules_decide() {
    let r = ProbeReport::from_json(H200).unwrap();
    let g = &r.gpus[0];
    let torch = g
        .frameworks
        .iter()
        .find(|f| f.path.ends_with("libtorch_cuda.so"))
        .expect("libtorch_cuda.so was judged");
    // The fatbin of torch 2.11.0+cu130 as the fatbin reader listed it on the H200.
    for t in [
        "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_120",
    ] {
        assert!(
            torch.targets.iter().any(|x| x == t),
            "{t} in {:?}",
            torch.targets
        );
    }
    assert!(
        torch.targets.iter().all(|t| t.starts_with("sm_")),
        "no PTX in torch 2.11 cu130"
    );
    let images: Vec<FatbinImage> = torch
        .targets
        .iter()
        .map(|t| image_from_target(t, (1, 8)).unwrap())
        .collect();
    let v = verdict::decide(g.cc, r.driver_cuda_version, &images);
    assert_eq!(v, torch.verdict);
    assert_eq!(v.outcome, ImageOutcome::Sass);
    assert_eq!(v.image.as_deref(), Some("sm_90"));
    // And the same library on other GPUs, under the same driver.
    assert_eq!(verdict::decide((7, 0), 13000, &images).expected_code, 209);
    assert_eq!(
        verdict::decide((12, 1), 13000, &images).image.as_deref(),
        Some("sm_120")
    );
}

#[test]
fn h200_throughput_beside_references() {
    let r = ProbeReport::from_json(H200).unwrap();
    let g = &r.gpus[0];
    let t = |k: &str| g.throughput.iter().find(|t| t.name == k).unwrap();
    // Whole probe within 5 s, cold JIT cache included.
    assert!(r.total_ms < 5000.0, "{}", r.total_ms);
    assert!(t("fp32_fma").percent.unwrap() >= 90.0);
    assert!(t("copy_kernel").percent.unwrap() >= 90.0);
    let gemm = t("gemm_bf16");
    assert!(gemm.measured >= 0.9 * 780.0, "{}", gemm.measured);
    assert_eq!(gemm.expected.as_ref().unwrap().value, 989.5);
    for k in ["h2d_pinned", "d2h_pinned"] {
        assert!(!t(k).far_below, "{k}");
    }
    let link = g.pcie.as_ref().unwrap();
    assert_eq!((link.current_gen, link.current_width), (Some(5), Some(16)));
    assert!(g.errors.is_empty(), "{:?}", g.errors);
}

#[test]
fn x2_report_has_both_gpus_and_p2p() {
    let r = ProbeReport::from_json(H200_X2).unwrap();
    assert_eq!(r.gpus.len(), 2);
    assert_eq!(r.p2p.len(), 2);
    assert!(r.p2p.iter().all(|p| p.can_access && p.gbps.is_some()));
}
