//! `gpukb plan` end to end: recorded machines (the H200 capture, a machine
//! without a driver, the Jetson fixtures, a V100 capture) and described ones,
//! through the real command line and the JSON contract (schema_version 1).
//! Each expected answer names the primary source it follows from; "wheel
//! read" means the PyPI wheel's libtorch_cuda.so read by gpukb's fatbin
//! reader (agent/facts/data/torch_builds.csv cites file name and sha256).
#![allow(clippy::disallowed_methods)] // tests read fixtures

use clap::Parser;
use gpukb_tests::fixture;
use serde_json::Value;

/// Runs `gpukb plan ARGS --json`: (exit code, JSON).
fn plan(args: &[&str]) -> (u8, Value) {
    let mut argv = vec!["gpukb", "plan", "--json"];
    argv.extend_from_slice(args);
    let cli = gpukb_cli::Cli::try_parse_from(&argv).expect("arguments parse");
    let mut out = Vec::new();
    let code = gpukb_cli::run(&cli, &mut out).expect("plan runs");
    let code = if code == std::process::ExitCode::SUCCESS {
        0
    } else {
        1
    };
    (code, serde_json::from_slice(&out).expect("JSON"))
}

/// The error `gpukb plan ARGS` fails with (exit 2 in the binary).
fn plan_err(args: &[&str]) -> String {
    let mut argv = vec!["gpukb", "plan"];
    argv.extend_from_slice(args);
    let cli = gpukb_cli::Cli::try_parse_from(&argv).expect("arguments parse");
    let mut out = Vec::new();
    format!(
        "{:#}",
        gpukb_cli::run(&cli, &mut out).expect_err("plan must fail")
    )
}

fn rec(v: &Value) -> (String, String, String) {
    let r = &v["torch"]["recommended"];
    assert!(r.is_object(), "nothing recommended: {r}");
    (
        r["version"].as_str().unwrap().into(),
        r["variant"].as_str().unwrap().into(),
        r["via"].as_str().unwrap().into(),
    )
}

fn cand<'a>(v: &'a Value, version: &str, variant: &str, platform: &str) -> &'a Value {
    v["torch"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["version"] == version && c["variant"] == variant && c["platform"] == platform)
        .unwrap_or_else(|| panic!("no candidate {version}+{variant} {platform}"))
}

fn codes(c: &Value) -> Vec<(String, Option<u64>)> {
    c["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["code"].as_str().unwrap().to_string(), r["gpu"].as_u64()))
        .collect()
}

fn has(c: &Value, code: &str, gpu: Option<u64>) -> bool {
    codes(c)
        .iter()
        .any(|(k, g)| k == code && (gpu.is_none() || *g == gpu))
}

const X86: &str = "linux-x86_64";

#[test]
fn h200_capture_gets_the_newest_build_and_the_contract_keys() {
    // H200 = CC 9.0 (NVIDIA CUDA GPU Compute Capability); driver 580.159.04 =
    // CUDA 13.0 (NVML, recorded); 2.15.0+cu132 (wheel read: sm_75…sm_120, the
    // PyPI default) runs on R580 under minor-version compatibility (CUDA 13.2
    // Update 2 release notes, Table 2: 13.x needs >= 580).
    let (code, v) = plan(&[
        "--replay",
        fixture("healthy/h200-live-2026-12-01").to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["as_of"], "2026-12-01");
    let m = &v["machine"];
    assert_eq!(m["gpus"][0]["cc"], "9.0");
    assert_eq!(m["driver"], "580.159.04");
    assert_eq!(m["driver_cuda"], "13.0");
    assert_eq!(m["arch"], "x86_64");
    assert_eq!(m["python"], "3.12");
    assert!(m["jetpack"].is_null());
    assert_eq!(rec(&v), ("2.15.0".into(), "cu132".into(), "sass".into()));
    let r = &v["torch"]["recommended"];
    assert_eq!(r["index_url"], "https://download.pytorch.org/whl/cu132");
    assert!(r["command"]
        .as_str()
        .unwrap()
        .starts_with("pip install torch==2.15.0 "));
    assert_eq!(v["driver"]["branch"], 580);
    assert_eq!(v["driver"]["open_modules_required"], false);
    assert_eq!(v["toolkit"]["version"], "13.2");
    // The installed 2.11.0+cu130 (wheel read) runs; its cu126 sibling too (sm_90).
    assert_eq!(cand(&v, "2.11.0", "cu130", X86)["runs"], true);
    // 2.0.1+cu117 has no sm_90 (pytorch/builder release/2.0 build_cuda.sh: 3.7…8.6).
    let old = cand(&v, "2.0.1", "cu117", X86);
    assert_eq!(old["runs"], false);
    assert!(has(old, "arch", Some(0)), "{old}");
    // Every candidate has the contract's keys, every reason a source.
    for c in v["torch"]["candidates"].as_array().unwrap() {
        for k in ["version", "variant", "runs", "certain", "reasons"] {
            assert!(c.get(k).is_some(), "{k} missing in {c}");
        }
        for r in c["reasons"].as_array().unwrap() {
            assert!(!r["source"].as_str().unwrap().is_empty(), "{r}");
        }
    }
    for c in v["containers"].as_array().unwrap() {
        for k in ["image", "cuda", "min_driver", "runs", "reasons"] {
            assert!(c.get(k).is_some(), "{k} missing in {c}");
        }
    }
}

#[test]
fn the_uv_alternative_names_the_backend_and_no_cuda_version_as_a_driver_version() {
    // kb-audit E3: `UV_CUDA_DRIVER_VERSION=13.0 uv pip install ... --torch-backend=cu132`.
    // uv reads that variable as a driver version (550.144.03), and only with
    // --torch-backend=auto (astral-sh/uv#12070).
    let (_, v) = plan(&["--gpu", "H100", "--driver", "580.65.06"]);
    let alts = v["torch"]["recommended"]["alternatives"]
        .as_array()
        .unwrap();
    let uv = alts.iter().find(|a| a["tool"] == "uv").unwrap()["command"]
        .as_str()
        .unwrap();
    assert!(!uv.contains("UV_CUDA_DRIVER_VERSION"), "{uv}");
    let variant = rec(&v).1;
    assert!(uv.ends_with(&format!("--torch-backend={variant}")), "{uv}");
}

#[test]
fn pascal_is_dropped_by_recent_wheels() {
    // uv#14742: a GTX 1080 Ti (CC 6.1) on a CUDA 12.8 driver. cu128 from 2.7
    // and every cu13x wheel start at sm_70/sm_75 (wheel read; PR #147607);
    // cu126 keeps sm_50/sm_60 (.ci/manywheel/build_cuda.sh, 12.6), and sm_60
    // SASS runs on 6.1 (CUDA Programming Guide, binary compatibility).
    let (code, v) = plan(&["--gpu", "GTX 1080 Ti", "--driver", "570.124.06"]);
    assert_eq!(code, 0);
    assert_eq!(rec(&v), ("2.14.1".into(), "cu126".into(), "sass".into()));
    let c = cand(&v, "2.15.0", "cu132", X86);
    assert_eq!(c["runs"], false);
    assert!(has(c, "arch", Some(0)));
    assert!(!cand(&v, "2.10.0", "cu128", X86)["runs"].as_bool().unwrap());
    // R580 is the last branch for Pascal (NVIDIA legacy branch notice, compat-facts §1c).
    assert_eq!(v["driver"]["branch"], 580);
}

#[test]
fn volta_gets_cu128_only_in_2_8_to_2_10() {
    // sm_70 in cu128 of 2.8–2.10 (build_cuda.sh @00c7a380 "7.0;7.5;…;12.0"; wheel
    // read of 2.10.0), absent from cu13x (CUDA 13 dropped Volta, RN 13.2 §2.6).
    let (_, v) = plan(&[
        "--gpu",
        "Tesla V100-SXM2-32GB",
        "--driver",
        "580.95.05",
        "--torch",
        "<2.11",
    ]);
    assert_eq!(v["machine"]["gpus"][0]["cc"], "7.0");
    assert_eq!(rec(&v), ("2.10.0".into(), "cu128".into(), "sass".into()));
    assert!(has(cand(&v, "2.10.0", "cu130", X86), "arch", Some(0)));
    // Every candidate is within --torch.
    let minor = |c: &Value| {
        let v = c["version"].as_str().unwrap();
        let p: Vec<u32> = v
            .split('.')
            .take(2)
            .map(|x| {
                x.trim_end_matches(|c: char| !c.is_ascii_digit())
                    .parse()
                    .unwrap()
            })
            .collect();
        (p[0], p[1])
    };
    assert!(v["torch"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| minor(c) < (2, 11)));
}

#[test]
fn blackwell_needs_the_newest_variants_and_a_570_driver() {
    // RTX 5090 = CC 12.0: SASS only in cu128+ (wheel read; pytorch#182250 for
    // 2.11 cu128). Driver 570.124.06 = CUDA 12.8 (RN Table 3): cu13x need >= 580.
    let (code, v) = plan(&["--gpu", "RTX 5090", "--driver", "570.124.06"]);
    assert_eq!(code, 0);
    assert_eq!(rec(&v), ("2.11.0".into(), "cu128".into(), "sass".into()));
    assert!(has(cand(&v, "2.14.1", "cu130", X86), "driver", None));
    assert!(has(cand(&v, "2.14.1", "cu126", X86), "arch", Some(0)));
    // On R560 nothing runs: Blackwell needs R570+ (CUDA 12.8 release notes).
    let (code, v) = plan(&["--gpu", "RTX 5090", "--driver", "560.35.03"]);
    assert_eq!(code, 1);
    assert!(v["torch"]["recommended"].is_null());
    assert!(has(cand(&v, "2.8.0", "cu129", X86), "driver", Some(0)));
}

#[test]
fn ptx_only_coverage_depends_on_the_driver_jitting_it() {
    // A GPU newer than every table (CC 13.0): only PTX counts. compute_120 PTX is
    // in 2.8.0+cu129 (build_cuda.sh @00c7a380: "…;12.0+PTX") and 2.9/2.10 cu130
    // (RELEASE.md "+PTX"). PTX JITs for any higher CC if the driver knows its ISA
    // (PTX ISA manual: CUDA 12.9 → ISA 8.8, 13.0 → 9.0).
    let (code, v) = plan(&["--gpu", "13.0", "--driver", "595.45.04"]);
    assert_eq!(code, 0);
    assert_eq!(rec(&v), ("2.10.0".into(), "cu130".into(), "ptx_jit".into()));
    assert!(v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["code"] == "newer_than_data"));
    assert!(has(cand(&v, "2.10.0", "cu130", X86), "ptx_jit", Some(0)));
    // A 12.9 driver cannot run CUDA 13 builds but JITs 12.9 PTX.
    let (_, v) = plan(&["--gpu", "13.0", "--driver", "575.51.03"]);
    assert_eq!(rec(&v), ("2.8.0".into(), "cu129".into(), "ptx_jit".into()));
    // A 12.8 driver runs cu129 under minor-version compatibility but cannot JIT
    // its ISA 8.8 PTX (222: MVC guide): nothing runs.
    let (code, v) = plan(&["--gpu", "13.0", "--driver", "570.124.06"]);
    assert_eq!(code, 1);
    assert!(has(cand(&v, "2.8.0", "cu129", X86), "driver", Some(0)));
}

#[test]
fn drivers_below_a_variants_minimum_and_forward_compat() {
    // R470 = CUDA 11.4 (RN Table 3): cu118 runs under minor-version compatibility
    // (11.x needs >= 450.80.02), cu12x need >= 525.60.13 (RN Table 2). The A100 is a
    // datacenter GPU, so cuda-compat would work (CUDA Compatibility guide). (An H100
    // arrived with CUDA 11.8: R470 does not drive it at all.)
    let (_, v) = plan(&["--gpu", "H100", "--driver", "470.82.01"]);
    assert_eq!(v["torch"]["recommended"], Value::Null);
    assert_eq!(
        cand(&v, "2.7.1", "cu118", X86)["reasons"][0]["code"],
        "driver"
    );
    let (_, v) = plan(&["--gpu", "A100", "--driver", "470.82.01"]);
    assert_eq!(rec(&v), ("2.7.1".into(), "cu118".into(), "sass".into()));
    let c = cand(&v, "2.7.1", "cu126", X86);
    assert!(
        has(c, "driver", None) && has(c, "forward_compat", None),
        "{c}"
    );
    assert_eq!(c["runs"], false);
    // A GeForce gets no forward-compat escape (804 on non-datacenter GPUs).
    let (_, v) = plan(&["--gpu", "RTX 4090", "--driver", "470.82.01"]);
    assert!(!has(
        cand(&v, "2.7.1", "cu126", X86),
        "forward_compat",
        None
    ));
    // A bare branch means its first release in the tables, and the plan says so.
    let (_, v) = plan(&["--gpu", "RTX 4060 Ti", "--driver", "535"]);
    assert_eq!(v["machine"]["driver"], "535.54.03");
    assert_eq!(v["machine"]["driver_cuda"], "12.2");
    assert!(v["notes"][0]["text"]
        .as_str()
        .unwrap()
        .contains("535.54.03"));
}

#[test]
fn heterogeneous_gpus_get_one_build_for_both_and_say_which_loses() {
    // V100 (7.0) + RTX 5090 (12.0): only cu128 of 2.8–2.10 has sm_70 and sm_120
    // (wheel read of 2.10.0: sm_70…sm_120).
    let (_, v) = plan(&["--gpu", "7.0", "--gpu", "RTX 5090", "--driver", "580.95.05"]);
    assert_eq!(rec(&v), ("2.10.0".into(), "cu128".into(), "sass".into()));
    assert!(has(cand(&v, "2.14.1", "cu126", X86), "arch", Some(1)));
    assert!(has(cand(&v, "2.14.1", "cu130", X86), "arch", Some(0)));
}

#[test]
fn python_outside_a_releases_range() {
    // torch 2.9+ wheels are cp310 and up; 2.15.0 needs Python >= 3.11
    // (Requires-Python in the wheel METADATA).
    let (_, v) = plan(&[
        "--gpu",
        "RTX 4060 Ti",
        "--driver",
        "580.95.05",
        "--python",
        "3.9",
    ]);
    assert_eq!(rec(&v).0, "2.8.0");
    assert!(has(cand(&v, "2.9.0", "cu128", X86), "python", None));
    let (_, v) = plan(&[
        "--gpu",
        "RTX 4060 Ti",
        "--driver",
        "580.95.05",
        "--python",
        "3.10",
    ]);
    assert_eq!(rec(&v).0, "2.14.1");
    assert!(has(cand(&v, "2.15.0", "cu132", X86), "python", None));
}

#[test]
fn sbsa_and_jetson_per_jetpack_and_thor() {
    // GH200 = CC 9.0 aarch64 SBSA: the aarch64 cu132 wheel (wheel read: sm_80,
    // sm_90, …); Grace Hopper needs the open kernel modules (compat-facts errata 7).
    let (_, v) = plan(&["--gpu", "GH200", "--driver", "580.95.05"]);
    assert_eq!(rec(&v).0, "2.15.0");
    assert_eq!(
        v["torch"]["recommended"]["index_url"],
        "https://download.pytorch.org/whl/cu132"
    );
    assert_eq!(cand(&v, "2.15.0", "cu132", "linux-aarch64")["runs"], true);
    assert_eq!(v["driver"]["open_modules_required"], true);
    // Orin NX on JetPack 6.2 (L4T 36.4.3, recorded): NVIDIA's JetPack 6.1 wheel
    // (jp/v61, JetPack 6.1/6.2 share CUDA 12.6); SBSA wheels are refused there.
    for f in [
        "healthy/jetson-orin-nx-jp62",
        "broken/jetson-generic-pypi-wheel",
    ] {
        let (code, v) = plan(&["--root", fixture(f).to_str().unwrap()]);
        assert_eq!(code, 0, "{f}");
        assert_eq!(
            rec(&v),
            ("2.5.0a0".into(), "nv24.08".into(), "sass".into()),
            "{f}"
        );
        assert_eq!(v["machine"]["jetpack"], "6.2");
        assert!(has(
            cand(&v, "2.15.0", "cu132", "linux-aarch64"),
            "jetpack",
            None
        ));
        assert!(v["driver"]["branch"].is_null());
    }
    // JetPack 5.1.2 = L4T 35.4.1 (jetson_stats): the jp/v512 wheel, Python 3.8.
    let (_, v) = plan(&[
        "--gpu",
        "Jetson Orin NX",
        "--l4t",
        "35.4.1",
        "--python",
        "3.8",
    ]);
    assert_eq!(rec(&v), ("2.1.0a0".into(), "nv23.06".into(), "sass".into()));
    assert!(has(
        cand(&v, "2.5.0a0", "nv24.08", "jetson-jetpack-6.1"),
        "jetpack",
        None
    ));
    // Thor (CC 11.0) on JetPack 7 is SBSA: the official aarch64 wheels with sm_110
    // (wheel read of 2.11+), not a Jetson wheel.
    let (_, v) = plan(&[
        "--gpu",
        "Jetson AGX Thor",
        "--jetpack",
        "7.0",
        "--python",
        "3.12",
    ]);
    let (ver, var, _) = rec(&v);
    assert!(var.starts_with("cu13"), "{ver}+{var}");
    assert!(v["torch"]["recommended"]["alternatives"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["command"].as_str().unwrap().contains("sbsa/cu13")));
    assert!(has(
        cand(&v, "2.10.0", "cu130", "linux-aarch64"),
        "ok",
        Some(0)
    ));
}

#[test]
fn names_resolve_and_unknown_ones_fail_with_the_nearest() {
    // NVIDIA CUDA GPU Compute Capability pages; PCI ID Repository (10de:2684).
    let (_, v) = plan(&[
        "--gpu",
        "10de:2684",
        "--gpu",
        "Tesla V100-SXM2-32GB",
        "--gpu",
        "RTX 4060 Ti",
    ]);
    let g = &v["machine"]["gpus"];
    assert_eq!(
        (g[0]["name"].as_str(), g[0]["cc"].as_str()),
        (Some("GeForce RTX 4090"), Some("8.9"))
    );
    assert_eq!(g[1]["cc"], "7.0");
    assert_eq!(g[2]["cc"], "8.9");
    let e = plan_err(&["--gpu", "RTX 4070 Tie"]);
    assert!(e.contains("unknown GPU") && e.contains("RTX 4070"), "{e}");
    assert!(plan_err(&["--gpu", "9.0", "--torch", "two"]).contains("--torch"));
    assert!(plan_err(&["--gpu", "9.0", "--driver", "abc"]).contains("--driver"));
}

#[test]
fn data_older_than_the_machine_says_so() {
    // A branch above the driver table (it ends at R610, CUDA 13.3): newer_than_data,
    // taken to run every CUDA the tables know.
    let (code, v) = plan(&["--gpu", "H200", "--driver", "999.10"]);
    assert_eq!(code, 0);
    assert!(v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["code"] == "newer_than_data" && n["text"].as_str().unwrap().contains("999")));
    assert!(has(
        cand(&v, "2.15.0", "cu132", X86),
        "newer_than_data",
        None
    ));
    // An L4T newer than the JetPack table (jetson/data/jetpack.csv ends at 36.5.2 for R36).
    let (_, v) = plan(&[
        "--gpu",
        "Jetson Orin NX",
        "--l4t",
        "36.6.0",
        "--python",
        "3.10",
    ]);
    assert!(v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["code"] == "newer_than_data"));
    let c = cand(&v, "2.5.0a0", "nv24.08", "jetson-jetpack-6.1");
    assert_eq!(c["certain"], false);
    // A torch newer than the table: nothing to recommend, and the plan says why.
    let (code, v) = plan(&["--gpu", "H200", "--torch", "2.16"]);
    assert_eq!(code, 1);
    assert!(v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["code"] == "newer_than_data"));
}

#[test]
fn machine_without_a_driver_still_gets_a_plan_marked_uncertain() {
    // driver-not-installed: two H200s seen on PCI (10de:2335, pci.ids), no driver.
    let (code, v) = plan(&[
        "--replay",
        fixture("broken/driver-not-installed").to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["machine"]["driver_status"], "absent");
    assert!(v["machine"]["driver"].is_null() && v["machine"]["driver_cuda"].is_null());
    assert_eq!(v["machine"]["gpus"][0]["cc"], "9.0");
    assert_eq!(v["torch"]["recommended"]["certain"], false);
    assert_eq!(v["driver"]["branch"], 580);
    // "What if I install driver 580?": the flag overrides the machine.
    let (_, v) = plan(&[
        "--replay",
        fixture("broken/driver-not-installed").to_str().unwrap(),
        "--driver",
        "580.95.05",
    ]);
    assert_eq!(v["torch"]["recommended"]["certain"], true);
}

#[test]
fn several_machines_must_all_run_the_build() {
    // H200 capture + V100 capture (both R580): V100 has no sm_7x in cu13x.
    let h200 = fixture("healthy/h200-live-2026-12-01");
    let v100 = fixture("broken/torch-drops-volta");
    let (_, v) = plan(&[
        "--replay",
        h200.to_str().unwrap(),
        "--replay",
        v100.to_str().unwrap(),
    ]);
    assert_eq!(v["machines"].as_array().unwrap().len(), 2);
    let (ver, var, _) = rec(&v);
    assert_eq!(var, "cu126", "{ver}+{var}");
    let c = cand(&v, "2.15.0", "cu132", X86);
    let loser = c["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["code"] == "arch")
        .unwrap();
    assert!(
        loser["text"]
            .as_str()
            .unwrap()
            .contains("torch-drops-volta"),
        "{loser}"
    );
}

#[test]
fn support_table_of_a_build() {
    // 2.5.1+cu124: sm_50…sm_90 SASS, no PTX (pytorch/builder release/2.5 build_cuda.sh).
    let cli = gpukb_cli::Cli::try_parse_from([
        "gpukb",
        "plan",
        "--torch",
        "2.5.1+cu124",
        "--support-table",
        "--json",
    ])
    .unwrap();
    let mut out = Vec::new();
    gpukb_cli::run(&cli, &mut out).unwrap();
    let rows: Value = serde_json::from_slice(&out).unwrap();
    let row = |cc: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["cc"] == cc)
            .unwrap()
            .clone()
    };
    assert_eq!(row("8.9")["support"], "sass"); // Ada runs the sm_86 cubin
    assert_eq!(row("9.0")["support"], "sass");
    assert_eq!(row("9.0")["min_driver"], "525.60.13");
    assert_eq!(row("12.0")["support"], "no");
    assert_eq!(row("3.7")["support"], "no");
    assert_eq!(row("8.7")["support"], "no"); // Tegra runs only its own SASS
    for r in rows.as_array().unwrap() {
        assert!(r["family"].is_string() && r.get("min_driver").is_some());
    }
}

#[test]
fn jetson_wheels_install_by_nvidias_download_url_per_jetpack() {
    // NVIDIA 'Installing PyTorch for Jetson Platform' / forum 'PyTorch for Jetson':
    // JetPack 4.6.x (L4T 32.6.1-32.7.x, Python 3.6) -> redist jp/v461
    // torch-1.11.0a0+17540c5+nv22.01; JetPack 5.0.2 (L4T 35.1) -> jp/v502
    // 1.13.0a0+d0d6b1f2.nv22.10; JetPack 5.1 (L4T 35.2.1) -> 2.0.0+nv23.05.
    for (gpu, flag, value, version, url) in [
        ("Jetson Xavier NX", "--jetpack", "4.6", "1.11.0a0", "/compute/redist/jp/v461/pytorch/torch-1.11.0a0+17540c5+nv22.01-cp36-cp36m-linux_aarch64.whl"),
        ("Jetson Nano", "--l4t", "32.7.4", "1.11.0a0", "/jp/v461/pytorch/"),
        ("Jetson AGX Xavier", "--jetpack", "5.0.2", "1.13.0a0", "/jp/v502/pytorch/torch-1.13.0a0+d0d6b1f2.nv22.10-cp38-cp38-linux_aarch64.whl"),
        ("Jetson Orin NX", "--jetpack", "5.1", "2.0.0", "torch-2.0.0+nv23.05-cp38-cp38-linux_aarch64.whl"),
    ] {
        let (code, v) = plan(&["--gpu", gpu, flag, value]);
        assert_eq!(code, 0, "{gpu} {value}");
        let r = &v["torch"]["recommended"];
        assert_eq!(r["version"], version, "{gpu} {value}: {r}");
        let cmd = r["command"].as_str().unwrap();
        assert!(
            cmd.starts_with("pip install https://developer.download.nvidia.com/") && cmd.contains(url),
            "{gpu} {value}: {cmd}"
        );
    }
    // JetPack 5.0 DP (L4T 34.1.1): the same jp/v502 1.13.0 wheel (the forum lists
    // it for JetPack 5.0 / 5.0.2 / 5.1 / 5.1.1); on 5.1 the newer 2.0.0 wins.
    let (_, v) = plan(&["--gpu", "Jetson AGX Orin", "--l4t", "34.1.1"]);
    assert_eq!(v["torch"]["recommended"]["version"], "1.13.0a0");
    // JetPack 4.4-4.5 (L4T 32.4.3-32.5.x): the forum's 1.10.0 wheel, on nvidia.box.com,
    // saved under its wheel name first (pip refuses other file names).
    let (code, v) = plan(&["--gpu", "Jetson Nano", "--jetpack", "4.5"]);
    assert_eq!(code, 0);
    let cmd = v["torch"]["recommended"]["command"].as_str().unwrap();
    assert!(
        cmd.starts_with(
            "wget -O torch-1.10.0-cp36-cp36m-linux_aarch64.whl https://nvidia.box.com/"
        ) && cmd.ends_with("pip3 install torch-1.10.0-cp36-cp36m-linux_aarch64.whl"),
        "{cmd}"
    );
    // No JetPack row installs PyPI's `torch==X` (the CPU-only aarch64 wheel): every
    // row has NVIDIA's download URL.
    for w in gpukb_facts::builds::jetson_wheels() {
        assert!(
            w.wheel_url
                .starts_with("https://developer.download.nvidia.com/compute/redist/jp/")
                || (w.wheel_url.starts_with("https://nvidia.box.com/")
                    && w.wheel_file.ends_with(".whl")),
            "{}",
            w.jetpack
        );
    }
}

#[test]
fn a_jetpack_or_l4t_newer_than_the_tables_recommends_nothing() {
    // jetson/data/jetpack.csv ends at JetPack 7.2 / L4T 39.2.0 (newcomer #7: JetPack
    // 9.9 was given the JetPack 6.1 wheel).
    for args in [
        ["--gpu", "Jetson Orin NX", "--jetpack", "9.9"],
        ["--gpu", "Jetson Orin NX", "--l4t", "40.0.0"],
    ] {
        let (code, v) = plan(&args);
        assert_eq!(code, 1, "{args:?}");
        assert!(v["torch"]["recommended"].is_null(), "{args:?}");
        let note = v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["code"] == "newer_than_data")
            .unwrap_or_else(|| panic!("{args:?}: {}", v["notes"]));
        let text = note["text"].as_str().unwrap();
        assert!(text.contains("as of 20"), "{text}");
        let c = cand(&v, "2.5.0a0", "nv24.08", "jetson-jetpack-6.1");
        assert!(has(c, "newer_than_data", None) && c["runs"] == false, "{c}");
        let c = cand(&v, "2.15.0", "cu132", "linux-aarch64");
        assert_eq!(c["runs"], false, "{c}");
    }
}

#[test]
fn a_desktop_gpu_with_a_jetpack_is_refused() {
    // newcomer #8: "--gpu RTX 4090 --jetpack 6.2" was silently an aarch64 Jetson with a 4090.
    let e = plan_err(&["--gpu", "RTX 4090", "--jetpack", "6.2"]);
    assert!(e.contains("not a Jetson GPU") && !e.contains('\n'), "{e}");
    let e = plan_err(&["--gpu", "H100", "--l4t", "36.4.3"]);
    assert!(e.contains("not a Jetson GPU"), "{e}");
}

#[test]
fn aarch64_servers_see_the_cuda_builds_on_pytorchs_own_index() {
    // pytorch/test-infra generate_binary_build_matrix.py: CUDA_AARCH64_ARCHES
    // ["12.6-aarch64", "12.8-aarch64", "13.0-aarch64"] for 2.9-2.11; pytorch
    // .ci/aarch64_linux/aarch64_ci_build.sh: 12.8 -> 8.0;9.0;10.0;12.0. GH200 on
    // R550 (CUDA 12.4) runs 12.x builds under minor-version compatibility.
    let (code, v) = plan(&[
        "--gpu",
        "NVIDIA GH200 480GB",
        "--driver",
        "550.127.05",
        "--arch",
        "aarch64",
    ]);
    assert_eq!(code, 0);
    assert_eq!(rec(&v), ("2.10.0".into(), "cu128".into(), "sass".into()));
    let r = &v["torch"]["recommended"];
    assert_eq!(r["index_url"], "https://download.pytorch.org/whl/cu128");
    // Targets from the build script, not read from a wheel: not certain.
    assert_eq!(r["certain"], false);
    let c = cand(&v, "2.10.0", "cu128", "linux-aarch64");
    assert_eq!(c["known_from"], "build_script");
    assert_eq!(c["certain"], false);
    assert_eq!(cand(&v, "2.9.0", "cu126", "linux-aarch64")["runs"], true);
    // A variant known only from the matrix: listed, never recommended.
    let c = cand(&v, "2.12.0", "cu126", "linux-aarch64");
    assert_eq!(
        (
            c["known_from"].as_str(),
            c["runs"].as_bool(),
            c["certain"].as_bool()
        ),
        (Some("release_matrix"), Some(false), Some(false))
    );
    // GB200 (CC 10.0) on R570 (CUDA 12.8): the index's cu128 aarch64 build (sm_100).
    let (_, v) = plan(&["--gpu", "NVIDIA GB200", "--driver", "570.133.20"]);
    assert_eq!(v["machine"]["arch"], "aarch64");
    assert_eq!(rec(&v).1, "cu128");
    // DGX Spark (GB10, CC 12.1) on R580: the PyPI cu132 aarch64 wheel, read (sm_120).
    let (_, v) = plan(&["--gpu", "NVIDIA GB10", "--driver", "580.95.05"]);
    assert_eq!(rec(&v).0, "2.15.0");
    let c = cand(&v, "2.15.0", "cu132", "linux-aarch64");
    assert_eq!(
        (c["known_from"].as_str(), c["certain"].as_bool()),
        (Some("wheel_read"), Some(true))
    );
}

#[test]
fn containers_that_run_are_only_those_that_run_on_the_machine() {
    // newcomer #11: NGC images were listed on H100 + driver 390.48 (R390 runs CUDA
    // 9.1; H100 arrived with CUDA 11.8), on a machine without a driver, and next to
    // "no CUDA build of torch runs".
    let runs = |v: &Value| -> Vec<String> {
        v["containers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["runs"] == true)
            .map(|c| c["image"].as_str().unwrap().to_string())
            .collect()
    };
    let (code, v) = plan(&["--gpu", "H100", "--driver", "390.48"]);
    assert_eq!(code, 1);
    assert!(runs(&v).is_empty(), "{:?}", runs(&v));
    let (_, v) = plan(&[
        "--replay",
        fixture("broken/driver-not-installed").to_str().unwrap(),
    ]);
    assert!(runs(&v).is_empty(), "{:?}", runs(&v));
    let (code, v) = plan(&["--gpu", "Jetson Orin NX", "--jetpack", "9.9"]);
    assert_eq!(code, 1);
    assert!(runs(&v).is_empty(), "{:?}", runs(&v));
    // Where a CUDA build runs, images that run still show.
    let (_, v) = plan(&["--gpu", "H200", "--driver", "580.95.05"]);
    assert!(!runs(&v).is_empty());
}

#[test]
fn a_candidate_shows_its_decisive_reason_first() {
    // newcomer #12: GTX 1080 Ti + R535: 2.15.0+cu130's targets are not verified, but
    // CUDA 13.0 needs driver >= 580 (RN 13.2 Table 2/3): the driver failure decides.
    let (_, v) = plan(&["--gpu", "GTX 1080 Ti", "--driver", "535"]);
    let c = cand(&v, "2.15.0", "cu130", X86);
    assert_eq!(c["runs"], false);
    assert_eq!(c["reasons"][0]["code"], "driver", "{c}");
    assert!(has(c, "unknown", None));
    // The text plan prints that reason.
    let cli = gpukb_cli::Cli::try_parse_from([
        "gpukb",
        "plan",
        "--gpu",
        "GTX 1080 Ti",
        "--driver",
        "535",
    ])
    .unwrap();
    let mut out = Vec::new();
    gpukb_cli::run(&cli, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("2.15.0") && l.contains("cu130"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("driver:") && !line.contains("not verified"),
        "{line}"
    );
}

#[test]
fn jetson_alternatives_name_the_indexes_that_exist() {
    // newcomer #13: the KB's Jetson entries name pypi.jetson-ai-lab.io/jp6/cu126 for
    // JetPack 6.1/6.2; plan names NVIDIA's jp/v61 wheel and, as an alternative, that index.
    let (_, v) = plan(&["--gpu", "Jetson Orin NX", "--jetpack", "6.2"]);
    let alts = v["torch"]["recommended"]["alternatives"].to_string();
    assert!(alts.contains("pypi.jetson-ai-lab.io/jp6/cu126"), "{alts}");
    // Thor: only the SBSA indexes seen to exist (sbsa/cu129, sbsa/cu130; kb-audit
    // doubtful 2), never sbsa/cu132.
    let (_, v) = plan(&["--gpu", "Jetson AGX Thor", "--jetpack", "7.0"]);
    let alts = v["torch"]["recommended"]["alternatives"].to_string();
    assert!(
        alts.contains("sbsa/cu130") && !alts.contains("sbsa/cu132"),
        "{alts}"
    );
}
