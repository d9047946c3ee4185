//! JetPack/L4T knowledge and pure parsers; this crate reads nothing itself.
//!
//! Every parser takes `&str` or `&[u8]` and never panics on garbage. The
//! machine's files come in through the [`JetsonFiles`] trait, which the agent
//! implements over its host seam; [`observe`] reconciles them into a
//! [`JetsonReport`] that says which source each fact came from and where the
//! sources disagree. [`check_torch_wheel`] judges a torch install against it.
//!
//! Data tables with sources: `jetson/data/jetpack.csv` (L4T → JetPack →
//! Ubuntu/CUDA/cuDNN/TensorRT) and `jetson/data/modules.csv` (part number →
//! module, RAM, SoC).
#![forbid(unsafe_code)]
// Only the `gpukb` binary prints (cli); libraries return what they found.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod csv;
pub mod cudafiles;
pub mod devicetree;
pub mod dpkg;
pub mod error;
pub mod nvpmodel;
pub mod release;
pub mod report;
pub mod sysfs;
pub mod tables;
pub mod torch;
pub mod version;

pub use cudafiles::{
    cuda_dir_version, parse_cuda_version_json, parse_cuda_version_txt, parse_os_release_id,
    parse_os_release_version_id,
};
pub use devicetree::{
    model_family, normalize_part_number, parse_compatible, parse_model, Compatible, Soc,
};
pub use dpkg::{
    jetpack_from_meta_version, l4t_from_core_version, parse_dpkg_status, stack_from_packages,
    DpkgPackage, DpkgStack, PackageVersion,
};
pub use error::JetsonError;
pub use nvpmodel::{
    parse_nvpmodel_conf, parse_nvpmodel_status, NvpModelConf, NvpModelStatus, PowerModeDef,
};
pub use release::{parse_nv_tegra_release, TegraRelease};
pub use report::{
    observe, ClocksInfo, Disagreement, FactSource, GpuInfo, JetpackInfo, JetsonFiles, JetsonReport,
    L4tInfo, ModuleInfo, PowerModeInfo, SourceValue, Sourced, LISTED_DIRS, READ_PATHS,
};
pub use sysfs::{jetson_clocks_state, parse_sysfs_u64, ClockRange, JetsonClocksState};
pub use tables::{
    jetpack_table, latest_known_l4t, lookup_l4t, lookup_module, module_table, JetpackRow,
    L4tLookup, ModuleRow,
};
pub use torch::{check_torch_wheel, TorchBuild, TorchStatus, TorchVerdict};
pub use version::{jetpack_major_for_r, L4tVersion};
