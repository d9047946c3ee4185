//! Machine facts the rules read: a plain serde struct, filled by the cli from a fingerprint
//! (detected, a fingerprint file or a replayed capture). Every field is optional or
//! defaulted, so an empty `{}` is valid and means "nothing known".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What is known about the machine the error came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MachineFacts {
    /// Driver version, e.g. "580.159.04".
    pub driver_version: Option<String>,
    /// Highest CUDA version the driver supports, e.g. (13, 0).
    pub driver_cuda: Option<(u32, u32)>,
    /// Whether the `nvidia` kernel module is loaded.
    pub kernel_module_loaded: Option<bool>,
    /// Whether `nouveau` is loaded.
    pub nouveau_loaded: Option<bool>,
    /// Whether `nvidia_uvm` is loaded.
    pub uvm_loaded: Option<bool>,
    /// GPUs, in PCI order.
    pub gpus: Vec<GpuFacts>,
    /// PyTorch installs found.
    pub torch: Vec<TorchFacts>,
    /// CUDA-related shared libraries found (one row per file).
    pub libraries: Vec<LibFacts>,
    /// Relevant environment variables (CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH, ...).
    pub env: BTreeMap<String, String>,
    /// Container runtime, e.g. "docker", when running in one.
    pub container: Option<String>,
    /// Running under WSL2.
    pub wsl: bool,
    /// Jetson details when on a Jetson.
    pub jetson: Option<JetsonFacts>,
    /// NVML initialisation error, e.g. "Driver/library version mismatch".
    pub nvml_error: Option<String>,
    /// Result of cuInit as a CUresult name; "CUDA_SUCCESS" when fine.
    pub cuda_init: Option<String>,
    /// Secure Boot state when known.
    pub secure_boot: Option<bool>,
}

/// One GPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GpuFacts {
    /// Marketing name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability, e.g. (9, 0).
    pub cc: Option<(u32, u32)>,
    /// Current PCIe generation.
    pub pcie_gen_current: Option<u32>,
    /// Maximum PCIe generation (of the link: min of GPU and slot when known).
    pub pcie_gen_max: Option<u32>,
    /// Current PCIe width.
    pub pcie_width_current: Option<u32>,
    /// Maximum PCIe width.
    pub pcie_width_max: Option<u32>,
    /// Uncorrected ECC errors (volatile or aggregate).
    pub ecc_uncorrected: Option<u64>,
    /// Row remapping failed.
    pub remapped_rows_failed: Option<bool>,
    /// MIG mode enabled.
    pub mig_enabled: Option<bool>,
    /// Active clock-throttle reasons, e.g. "hw_thermal_slowdown", "sw_power_cap".
    pub throttle_reasons: Vec<String>,
}

/// One PyTorch install.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TorchFacts {
    /// e.g. "2.0.1+cu117".
    pub version: String,
    /// `torch.version.cuda`, None for CPU-only builds.
    pub cuda: Option<String>,
    /// SASS targets, e.g. "sm_90a".
    pub sass: Vec<String>,
    /// PTX targets, e.g. "compute_80".
    pub ptx: Vec<String>,
}

/// One shared library file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LibFacts {
    /// Library name without version, e.g. "libcudnn".
    pub name: String,
    /// Version, e.g. "9.1.0".
    pub version: Option<String>,
    /// File path.
    pub path: String,
}

/// Jetson details.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JetsonFacts {
    /// L4T release, e.g. "36.4.3".
    pub l4t: Option<String>,
    /// JetPack release, e.g. "6.2".
    pub jetpack: Option<String>,
    /// Module name, e.g. "Jetson AGX Orin".
    pub module: Option<String>,
    /// nvpmodel mode name when known.
    pub power_mode: Option<String>,
}
