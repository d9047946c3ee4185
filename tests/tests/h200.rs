//! The fingerprint of a real H200 host, replayed from its capture, against
//! the machine's own answers (nvidia-smi, cuobjdump) recorded the same day.
#![allow(clippy::disallowed_methods)] // tests read fixtures

use gpukb_agent::host::Host;
use gpukb_agent::{fingerprint, Fingerprint, Settings};
use gpukb_tests::fixture;
use std::collections::BTreeSet;
use std::sync::Arc;

fn h200() -> Fingerprint {
    fingerprint(
        Arc::new(Host::replay(fixture("h200")).unwrap()),
        &Settings::default(),
    )
}

#[test]
fn driver_nvml_and_cuda_match_the_machine() {
    let fp = h200();
    assert_eq!(
        fp.driver.version.value().map(|v| v.as_str()),
        Some("580.159.04")
    );
    assert_eq!(fp.driver.flavor.value().map(String::as_str), Some("open"));
    let nvml = fp.nvml.value().expect("NVML answered");
    assert_eq!(nvml.cuda_driver_version.to_string(), "13.0");
    assert_eq!(nvml.gpus.len(), 2);
    for g in &nvml.gpus {
        assert_eq!(g.name, "NVIDIA H200");
        assert_eq!(
            g.compute_capability.map(|c| c.to_string()).as_deref(),
            Some("9.0")
        );
        assert_eq!((g.pcie_gen_max, g.pcie_width_max), (Some(5), Some(16)));
        assert_eq!(
            (g.pcie_gen_current, g.pcie_width_current),
            (Some(5), Some(16))
        );
    }
    let cuda = fp.cuda.value().expect("CUDA answered");
    assert_eq!(cuda.init.value().map(String::as_str), Some("CUDA_SUCCESS"));
    assert_eq!(cuda.driver_version.to_string(), "13.0");
    assert_eq!(cuda.devices[0].multiprocessors, 132);
}

#[test]
fn torch_fatbin_targets_equal_cuobjdump() {
    let fp = h200();
    let torch = fp
        .python
        .iter()
        .find_map(|e| e.torch.as_ref())
        .expect("torch found");
    assert_eq!(torch.version, "2.11.0+cu130");
    assert_eq!(torch.cuda.map(|c| c.to_string()).as_deref(), Some("13.0"));
    let ours: BTreeSet<String> = torch
        .kernels
        .value()
        .unwrap()
        .sass
        .iter()
        .cloned()
        .collect();
    let cuobjdump: BTreeSet<String> =
        std::fs::read_to_string(fixture("h200").join("cuobjdump-list-elf.txt"))
            .unwrap()
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1).map(String::from))
            .collect();
    assert_eq!(ours, cuobjdump);
    assert!(
        torch.kernels.value().unwrap().ptx.is_empty(),
        "cuobjdump found no PTX"
    );
    // Per-target counts match too.
    let counts: Vec<(String, u32)> = torch
        .kernels
        .value()
        .unwrap()
        .targets
        .iter()
        .map(|t| (t.image.target(), t.count))
        .collect();
    assert!(counts.contains(&("sm_90".into(), 444)), "{counts:?}");
    assert!(counts.contains(&("sm_90a".into(), 4)), "{counts:?}");
}

#[test]
fn torch_loads_the_pip_cudnn_not_the_system_one() {
    let fp = h200();
    let torch = fp.python.iter().find_map(|e| e.torch.as_ref()).unwrap();
    let cudnn = torch
        .loads
        .iter()
        .find(|l| l.soname == "libcudnn.so.9")
        .unwrap_or_else(|| panic!("cuDNN resolved: {:?}", torch.loads));
    assert_eq!(cudnn.version.as_deref(), Some("9.19.0"));
    assert!(cudnn.via.starts_with("RPATH"), "{}", cudnn.via);
    assert!(cudnn
        .path
        .as_deref()
        .unwrap()
        .contains("site-packages/nvidia/cudnn/lib"));
    // The system copy is still seen, and the two versions are flagged.
    assert!(fp
        .libraries
        .files
        .iter()
        .any(|f| f.soname == "libcudnn.so.9" && f.version.as_deref() == Some("9.14.0")));
    assert!(
        fp.libraries
            .conflicts
            .iter()
            .any(|c| c.starts_with("libcudnn.so.9")),
        "{:?}",
        fp.libraries.conflicts
    );
}
