//! A pasted environment report is the failing machine's facts when no machine's facts are
//! given: `collect_env` and `nvidia-smi` show its driver, GPUs and torch build, and the
//! checks resting on those alone decide among the causes the text supports. The reports are
//! the H200's verbatim ones (`env_reports/`), some with the GPU, driver or torch build
//! replaced to make the machine of another user.

use gpukb_kb::{Kb, Ranking, RuleOutcome};

const COLLECT_ENV: &str = include_str!("env_reports/collect_env-h200.txt");
const NVIDIA_SMI: &str = include_str!("env_reports/nvidia-smi-h200.txt");
const NO_KERNEL_IMAGE: &str =
    "RuntimeError: CUDA error: no kernel image is available for execution on the device";

/// The H200's collect_env with its GPU, driver and torch build replaced.
fn collect_env(gpu: &str, driver: &str, torch: &str, cuda: &str) -> String {
    let r = COLLECT_ENV
        .replace("NVIDIA H200", gpu)
        .replace("580.159.04", driver)
        .replace("2.11.0+cu130", torch)
        .replace(
            "CUDA used to build PyTorch: 13.0",
            &format!("CUDA used to build PyTorch: {cuda}"),
        );
    assert_ne!(r, COLLECT_ENV);
    r
}

fn rank(kb: &Kb, paste: &str) -> Ranking {
    kb.rank(&kb.analyze(paste.as_bytes()), None, 5).unwrap()
}

fn confirmed(r: &Ranking) -> bool {
    r.results.first().is_some_and(|h| {
        h.machine
            .as_ref()
            .is_some_and(|m| m.outcome() == RuleOutcome::Confirmed)
    })
}

#[test]
fn a_pascal_gpu_on_a_cu128_build_is_the_dropped_architecture() {
    let kb = Kb::open().unwrap();
    let report = collect_env(
        "NVIDIA GeForce GTX 1080",
        "570.133.07",
        "2.8.0+cu128",
        "12.8",
    );
    let r = rank(&kb, &format!("{NO_KERNEL_IMAGE}\n\n{report}"));
    let (report, shows) = r.reported.clone().unwrap();
    assert_eq!(report, "the pasted collect_env report");
    assert_eq!(shows, "the driver release, the GPUs and the torch build");
    assert_eq!(
        r.results[0].category, "gpu_arch_dropped",
        "{:?}",
        r.results[0].id
    );
    assert!(confirmed(&r));
    // Without the report the text alone cannot tell (the wheel's own entry comes first).
    let bare = rank(&kb, NO_KERNEL_IMAGE);
    assert!(bare.reported.is_none());
    assert_ne!(bare.results[0].category, "gpu_arch_dropped");
}

#[test]
fn a_gpu_the_build_covers_rules_the_wheel_out() {
    let kb = Kb::open().unwrap();
    let r = rank(&kb, &format!("{NO_KERNEL_IMAGE}\n\n{COLLECT_ENV}"));
    assert!(
        r.ruled_out
            .iter()
            .any(|h| h.id == "torch-wheel-missing-gpu-arch"),
        "{:?}",
        r.ruled_out.iter().map(|h| &h.id).collect::<Vec<_>>()
    );
    assert_ne!(r.results[0].category, "arch_mismatch_wheel");
}

#[test]
fn an_nvidia_smi_table_shows_no_torch_build_and_decides_no_torch_check() {
    let kb = Kb::open().unwrap();
    let r = rank(&kb, &format!("{NVIDIA_SMI}\n{NO_KERNEL_IMAGE}"));
    let (report, shows) = r.reported.clone().unwrap();
    assert_eq!(report, "the pasted nvidia-smi report");
    assert_eq!(shows, "the driver release and the GPUs");
    assert!(
        r.ruled_out.is_empty(),
        "{:?}",
        r.ruled_out.iter().map(|h| &h.id).collect::<Vec<_>>()
    );
    let bare = rank(&kb, NO_KERNEL_IMAGE);
    assert_eq!(r.results[0].id, bare.results[0].id);
    assert!(r
        .undecided
        .iter()
        .any(|(c, why)| c == "torch_lacks_gpu_arch" && why.contains("nvidia-smi")));
}

#[test]
fn a_driver_older_than_the_torch_build_is_confirmed() {
    let kb = Kb::open().unwrap();
    let report = collect_env(
        "NVIDIA GeForce RTX 3090",
        "470.82.01",
        "2.5.1+cu121",
        "12.1",
    );
    let r = rank(
        &kb,
        &format!("RuntimeError: The NVIDIA driver on your system is too old (found version 11040).\n\n{report}"),
    );
    assert_eq!(r.results[0].category, "driver_too_old");
    assert!(confirmed(&r));
}

#[test]
fn a_cpu_build_next_to_a_gpu_is_confirmed() {
    let kb = Kb::open().unwrap();
    let report = collect_env("NVIDIA GeForce RTX 4090", "550.54.14", "2.5.1+cpu", "None");
    let r = rank(
        &kb,
        &format!("AssertionError: Torch not compiled with CUDA enabled\n\n{report}"),
    );
    assert_eq!(r.results[0].category, "cpu_only_wheel");
    assert!(confirmed(&r));
}

#[test]
fn an_nvidia_smi_table_and_a_pip_freeze_together_show_gpu_and_build() {
    let kb = Kb::open().unwrap();
    let smi = NVIDIA_SMI.replace("NVIDIA H200         ", "NVIDIA GeForce GTX 1080");
    assert_ne!(smi, NVIDIA_SMI);
    let freeze = "numpy==2.1.0\ntorch==2.8.0+cu128\ntorchvision==0.23.0+cu128\ntriton==3.4.0\n";
    let r = rank(
        &kb,
        &format!("$ nvidia-smi\n{smi}\n$ pip freeze\n{freeze}{NO_KERNEL_IMAGE}\n"),
    );
    assert_eq!(
        r.reported.as_ref().map(|r| r.0.as_str()),
        Some("the pasted nvidia-smi and package list reports")
    );
    assert_eq!(r.results[0].category, "gpu_arch_dropped");
    assert!(confirmed(&r));
}

#[test]
fn a_windows_nvidia_smi_leaves_the_torch_check_undecided() {
    // The same GTX 1080 machine on Windows: nvidia-smi prints the driver model (WDDM) where
    // Linux prints persistence mode, and no arch list of a Windows build is recorded, so
    // the Linux wheel's list does not decide it.
    let kb = Kb::open().unwrap();
    let smi = NVIDIA_SMI.replace(
        "NVIDIA H200                    On ",
        "NVIDIA GeForce GTX 1080      WDDM ",
    );
    assert_ne!(smi, NVIDIA_SMI);
    let freeze = "torch==2.8.0+cu128\n";
    let r = rank(&kb, &format!("{smi}\n{freeze}{NO_KERNEL_IMAGE}\n"));
    assert!(r.reported.is_some());
    assert!(!confirmed(&r), "{:?}", r.results[0].id);
    assert!(r.undecided.iter().any(|(c, _)| c == "torch_lacks_gpu_arch"));
}
