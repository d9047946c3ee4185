//! Every check the doctor runs, as typed data ([`Check`]): its [`CheckId`],
//! the layer it judges, its `kb/categories.tsv` label, the checks whose
//! finding would explain it (root cause over symptom), whether it only
//! describes the setting (context), a pure function over the [`View`] and the
//! function that computes its fixes. A check finds (one finding per GPU / env
//! / library), clears the machine with a sentence, or is undecided with the
//! reason (a fact this input could not observe is never a finding).
//!
//! One file per layer holds that layer's checks, each a `const` [`Check`]
//! documented with what it looks for and why, next to its function;
//! [`CHECKS`] lists them in the order the doctor runs them.
//!
//! A new check: a variant in `id.rs` (its name is the JSON's, `EXPECT.toml`'s
//! and KB entries'), a `const` [`Check`] and its function in its layer's file
//! (its `fix:` a function of [`super::fixes`], or `fixes::none`), its row in
//! [`CHECKS`] (`kb/doctor/tests/registry.rs` fails until it is there), a fixture, and
//! `GPUKB_BLESS=1 cargo test -p gpukb-kb --test checks format_table` for
//! `kb/FORMAT.md`'s table.

mod container_wsl;
mod cuda_driver;
mod cuda_libraries;
mod framework;
mod hardware;
mod id;
mod jetson;
mod kernel_driver;
mod kernel_image;
mod support;

pub use crate::fixes::FixFn;
pub use id::CheckId;
pub(super) use support::finalize_id;

use super::view::View;
use super::{Finding, Layer};

/// What a check concluded.
pub enum Conclusion {
    /// The check's condition holds: one finding per thing it concerns.
    Found(Vec<Finding>),
    /// The facts show it does not hold (why, in one sentence).
    Clear(String),
    /// The facts needed were not observed (why).
    Undecided(String),
}

/// One check.
pub struct Check {
    pub id: CheckId,
    pub layer: Layer,
    /// A `kb/categories.tsv` label.
    pub category: &'static str,
    /// Checks that, when found, explain this one (first found wins).
    pub explained_by: &'static [CheckId],
    /// True for checks that describe the setting (in a container, on a
    /// Jetson…), never a fault: their info findings still hold, and in search
    /// they only rule entries out.
    pub context: bool,
    /// One line: what it looks for.
    pub meaning: &'static str,
    pub run: fn(&View) -> Conclusion,
    /// Its fixes ([`super::fixes`]; `fixes::none` when there is none to compute).
    pub fix: FixFn,
}

impl Check {
    /// The check `id` names (`None` only for an id missing from [`CHECKS`],
    /// which `kb/doctor/tests/registry.rs` rules out).
    pub fn of(id: CheckId) -> Option<&'static Check> {
        CHECKS.iter().find(|c| c.id == id)
    }
}

/// Causes upstream of "the CUDA driver API does not work".
const CUDA_CAUSES: &[CheckId] = &[
    CheckId::NoNvidiaGpuVisible,
    CheckId::NouveauBound,
    CheckId::SecureBootBlocksModule,
    CheckId::DriverNotBuiltForRunningKernel,
    CheckId::DriverNotInstalled,
    CheckId::DriverNotLoaded,
    CheckId::OpenModuleRequired,
    CheckId::DriverBranchDropsGpu,
    CheckId::DriverUserspaceMismatch,
    CheckId::ContainerShipsDriverLibraries,
    CheckId::ContainerWithoutGpu,
    CheckId::WslLibcudaMissing,
    CheckId::NvidiaUvmNotLoaded,
    CheckId::FabricManagerNotRunning,
    CheckId::CudaVisibleDevicesHidesGpus,
    CheckId::MigWithoutInstances,
    CheckId::GpuMemoryFault,
    CheckId::GpuFellOffBus,
    CheckId::WslLinuxDriverInstalled,
    CheckId::CudaStubLibraryLoaded,
];

/// Every check, in the order the doctor runs them (the order of [`CheckId::ALL`]).
pub const CHECKS: &[Check] = &[
    hardware::NO_NVIDIA_GPU_VISIBLE,
    hardware::GPU_MEMORY_FAULT,
    hardware::THERMAL_OR_POWER_THROTTLING,
    hardware::PCIE_LINK_DEGRADED,
    hardware::GPU_FELL_OFF_BUS,
    kernel_driver::NOUVEAU_BOUND,
    kernel_driver::SECURE_BOOT_BLOCKS_MODULE,
    kernel_driver::DRIVER_NOT_BUILT_FOR_RUNNING_KERNEL,
    kernel_driver::DRIVER_NOT_INSTALLED,
    kernel_driver::DRIVER_NOT_LOADED,
    kernel_driver::OPEN_MODULE_REQUIRED,
    kernel_driver::DRIVER_BRANCH_DROPS_GPU,
    kernel_driver::DRIVER_USERSPACE_MISMATCH,
    kernel_driver::NVIDIA_UVM_NOT_LOADED,
    kernel_driver::FABRIC_MANAGER_NOT_RUNNING,
    kernel_driver::SECURE_BOOT_ENABLED,
    container_wsl::IN_CONTAINER,
    container_wsl::WSL,
    container_wsl::CONTAINER_WITHOUT_GPU,
    container_wsl::CONTAINER_SHIPS_DRIVER_LIBRARIES,
    container_wsl::WSL_LIBCUDA_MISSING,
    container_wsl::WSL_LINUX_DRIVER_INSTALLED,
    cuda_driver::CUDA_VISIBLE_DEVICES_HIDES_GPUS,
    cuda_driver::CUDA_STUB_LIBRARY_LOADED,
    cuda_driver::MIG_WITHOUT_INSTANCES,
    cuda_driver::MIG_ENABLED,
    cuda_driver::CUDA_INIT_FAILED,
    cuda_driver::DRIVER_OLDER_THAN_TORCH_CUDA,
    cuda_driver::DRIVER_OLDER_THAN_FRAMEWORK_CUDA,
    cuda_libraries::TORCH_LIBRARY_MISSING,
    cuda_libraries::LIBRARY_SHADOWED_BY_LD_LIBRARY_PATH,
    cuda_libraries::ONNXRUNTIME_CUDA_LIBRARY_MISSING,
    cuda_libraries::CUDA_HOME_OLDER_THAN_TORCH,
    cuda_libraries::DUPLICATE_LIBRARY_VERSIONS,
    framework::TORCH_CPU_ONLY,
    framework::JETSON_TORCH_WHEEL_MISMATCH,
    framework::JETSON_GENERIC_AARCH64_WHEEL,
    framework::TORCH_PIN_MISMATCH,
    framework::JAX_PLUGIN_VERSION_MISMATCH,
    kernel_image::TORCH_LACKS_GPU_ARCH,
    kernel_image::EXTENSION_LACKS_GPU_ARCH,
    cuda_driver::PROBE_KERNELS_FAIL,
    kernel_image::PROBE_LOADS_DISAGREE,
    hardware::PROBE_THROUGHPUT_LOW,
    jetson::ON_JETSON,
    jetson::JETSON_PARTIAL_UPGRADE,
];

impl CheckId {
    /// Whether this check describes the setting, never a fault.
    pub fn is_context(self) -> bool {
        Check::of(self).is_some_and(|c| c.context)
    }
}

impl std::fmt::Display for CheckId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl std::str::FromStr for CheckId {
    type Err = UnknownCheck;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CheckId::from_name(s).ok_or_else(|| UnknownCheck(s.to_string()))
    }
}

/// A name that is no doctor check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("\"{0}\" is not a doctor check (kb/FORMAT.md lists them)")]
pub struct UnknownCheck(pub String);

impl serde::Serialize for CheckId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for CheckId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
