//! The fingerprint schema: a versioned, serde-serialisable description of a
//! machine's NVIDIA stack in which every fact is an [`Observed`] value that
//! records where it came from, and whether it was found, absent, failed or
//! could not be observed in this mode. Reading files, older schemas included,
//! is the `read` module's job (it builds on this one).

use crate::schema_doc::UNPUBLISHED;
use crate::target::FatbinSummary;
use crate::version::{ComputeCapability, CudaVersion, DriverVersion};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Version of the fingerprint schema written by this gpukb. Schema 2 types
/// versions, adds `unobservable`, PCI devices, installed kernel modules and
/// MIG instances, and records `cuInit` as its own observation.
pub const SCHEMA_VERSION: u32 = 2;

/// Where a fact came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// A file's contents.
    File {
        /// The file's absolute path on the machine (`/proc/driver/nvidia/version`).
        #[schemars(description = UNPUBLISHED)]
        path: String,
    },
    /// A directory listing or the existence of paths.
    Listing {
        /// The directory or path looked at.
        #[schemars(description = UNPUBLISHED)]
        path: String,
    },
    /// A command's output.
    Command {
        /// The command line as run (`nvidia-smi --query-gpu=…`).
        #[schemars(description = UNPUBLISHED)]
        command: String,
    },
    /// An NVML call.
    Nvml {
        /// The NVML function (`nvmlInit_v2`, `nvmlDeviceGetMemoryInfo`).
        #[schemars(description = UNPUBLISHED)]
        call: String,
    },
    /// A CUDA driver API call.
    CudaDriver {
        /// The driver API function (`cuInit`, `cuDriverGetVersion`).
        #[schemars(description = UNPUBLISHED)]
        call: String,
    },
    /// The C library (`gnu_get_libc_version`, `uname`).
    Libc {
        /// The libc function called.
        #[schemars(description = UNPUBLISHED)]
        call: String,
    },
    /// The headers of an ELF file (sonames, RPATH, `.nv_fatbin`).
    Elf {
        /// The ELF file's path.
        #[schemars(description = UNPUBLISHED)]
        path: String,
    },
    /// An environment variable.
    Env {
        /// The variable's name, without `$`.
        #[schemars(description = UNPUBLISHED)]
        var: String,
    },
    /// Worked out from other facts.
    Derived {
        /// The facts it was worked out from, in words.
        #[schemars(description = UNPUBLISHED)]
        from: String,
    },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::File { path } => write!(f, "{path}"),
            Source::Listing { path } => write!(f, "ls {path}"),
            Source::Command { command } => write!(f, "`{command}`"),
            Source::Nvml { call } => write!(f, "NVML {call}"),
            Source::CudaDriver { call } => write!(f, "CUDA driver API {call}"),
            Source::Libc { call } => write!(f, "libc {call}"),
            Source::Elf { path } => write!(f, "ELF {path}"),
            Source::Env { var } => write!(f, "${var}"),
            Source::Derived { from } => write!(f, "derived from {from}"),
        }
    }
}

impl Source {
    /// The contents of the file at `p`.
    pub fn file(p: impl Into<String>) -> Source {
        Source::File { path: p.into() }
    }
}

/// One observation. The four states are different facts and are never
/// merged: `Absent` is a finding (the file is not there), `Failed` means the
/// source was there but could not be read, `Unobservable` means this mode
/// cannot see it at all (`--root` has no NVML, `--quick` skips `cuInit`, an
/// older capture lacks the source).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Observed<T> {
    /// The source was read and holds the fact.
    #[schemars(description = UNPUBLISHED)]
    Found {
        /// The fact.
        #[schemars(description = UNPUBLISHED)]
        value: T,
        /// Where it was read.
        #[schemars(description = UNPUBLISHED)]
        source: Source,
    },
    /// The source was looked at and holds nothing (the file is not there):
    /// a finding in itself.
    #[schemars(description = UNPUBLISHED)]
    Absent {
        /// Where gpukb looked.
        #[schemars(description = UNPUBLISHED)]
        source: Source,
        /// What its absence means (`no os-release file`).
        #[schemars(description = UNPUBLISHED)]
        note: String,
    },
    /// The source is there but reading it failed.
    #[schemars(description = UNPUBLISHED)]
    Failed {
        /// What gpukb tried to read.
        #[schemars(description = UNPUBLISHED)]
        source: Source,
        /// The error, as the source gave it (an errno, a CUresult name).
        #[schemars(description = UNPUBLISHED)]
        error: String,
    },
    /// This mode cannot see the source at all: no conclusion either way.
    #[schemars(description = UNPUBLISHED)]
    Unobservable {
        /// What would have been read.
        #[schemars(description = UNPUBLISHED)]
        source: Source,
        /// Why this mode cannot read it (`--quick`, a `--root` copy, an older capture).
        #[schemars(description = UNPUBLISHED)]
        reason: String,
    },
}

impl<T> Observed<T> {
    /// `value`, read from `source`.
    pub fn found(value: T, source: Source) -> Self {
        Observed::Found { value, source }
    }
    /// Nothing at `source`; `note` says what that means.
    pub fn absent(source: Source, note: impl Into<String>) -> Self {
        Observed::Absent {
            source,
            note: note.into(),
        }
    }
    /// Reading `source` failed with `error`.
    pub fn failed(source: Source, error: impl ToString) -> Self {
        Observed::Failed {
            source,
            error: error.to_string(),
        }
    }
    /// This mode cannot read `source`, for `reason`.
    pub fn unobservable(source: Source, reason: impl Into<String>) -> Self {
        Observed::Unobservable {
            source,
            reason: reason.into(),
        }
    }
    /// The value when found, to change it.
    pub fn value_mut(&mut self) -> Option<&mut T> {
        match self {
            Observed::Found { value, .. } => Some(value),
            _ => None,
        }
    }
    /// The value when found.
    pub fn value(&self) -> Option<&T> {
        match self {
            Observed::Found { value, .. } => Some(value),
            _ => None,
        }
    }
    /// Where the fact was (or would have been) read, in every state.
    pub fn source(&self) -> &Source {
        match self {
            Observed::Found { source, .. }
            | Observed::Absent { source, .. }
            | Observed::Failed { source, .. }
            | Observed::Unobservable { source, .. } => source,
        }
    }
    /// True when the source was seen to hold nothing.
    pub fn is_absent(&self) -> bool {
        matches!(self, Observed::Absent { .. })
    }
    /// True when this mode could not look (or looking failed): no conclusion.
    pub fn is_unknown(&self) -> bool {
        matches!(
            self,
            Observed::Failed { .. } | Observed::Unobservable { .. }
        )
    }
    /// Maps the found value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Observed<U> {
        match self {
            Observed::Found { value, source } => Observed::Found {
                value: f(value),
                source,
            },
            Observed::Absent { source, note } => Observed::Absent { source, note },
            Observed::Failed { source, error } => Observed::Failed { source, error },
            Observed::Unobservable { source, reason } => Observed::Unobservable { source, reason },
        }
    }
    /// Maps the found value through a parse; a failed parse is `Failed`.
    pub fn try_map<U, E: fmt::Display>(self, f: impl FnOnce(T) -> Result<U, E>) -> Observed<U> {
        match self {
            Observed::Found { value, source } => match f(value) {
                Ok(v) => Observed::Found { value: v, source },
                Err(e) => Observed::failed(source, e),
            },
            Observed::Absent { source, note } => Observed::Absent { source, note },
            Observed::Failed { source, error } => Observed::Failed { source, error },
            Observed::Unobservable { source, reason } => Observed::Unobservable { source, reason },
        }
    }
    /// Why there is no value (the note, error or reason), when there is none.
    pub fn why_not(&self) -> Option<&str> {
        match self {
            Observed::Found { .. } => None,
            Observed::Absent { note, .. } => Some(note),
            Observed::Failed { error, .. } => Some(error),
            Observed::Unobservable { reason, .. } => Some(reason),
        }
    }
    /// True when the fact was read.
    pub fn is_found(&self) -> bool {
        matches!(self, Observed::Found { .. })
    }
}

/// Everything gpukb knows about one machine's NVIDIA stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fingerprint {
    /// The schema this fingerprint was written in ([`SCHEMA_VERSION`] when
    /// written by this gpukb; older files are upgraded on read).
    #[schemars(description = UNPUBLISHED)]
    pub schema: u32,
    /// The operating system: distribution, kernel, architecture, glibc,
    /// container and virtualisation.
    #[schemars(description = UNPUBLISHED)]
    pub host: HostFacts,
    /// The NVIDIA kernel driver and its user-space libraries, from sysfs,
    /// procfs and the loader's view.
    #[schemars(description = UNPUBLISHED)]
    pub driver: DriverFacts,
    /// What NVML (`libnvidia-ml.so.1`) reports; unobservable when gpukb did
    /// not load it.
    #[schemars(description = UNPUBLISHED)]
    pub nvml: Observed<NvmlFacts>,
    /// What the CUDA driver API (`libcuda.so.1`) reports; unobservable when
    /// gpukb did not load it.
    #[schemars(description = UNPUBLISHED)]
    pub cuda: Observed<CudaFacts>,
    /// Every CUDA library file and toolkit found on the machine.
    #[schemars(description = UNPUBLISHED)]
    pub libraries: LibraryFacts,
    /// The Python environments found, with their PyTorch, `nvidia-*` wheels
    /// and other CUDA-carrying packages.
    #[schemars(description = UNPUBLISHED)]
    pub python: Vec<PythonEnv>,
    /// JetPack/L4T facts; absent on other machines.
    pub jetson: Observed<gpukb_jetson::JetsonReport>,
    /// Relevant environment variables that are set.
    pub env: Vec<EnvVar>,
    /// PCI devices (NVIDIA ones in full; others by vendor only).
    #[serde(default = "not_in_older_schema")]
    #[schemars(default = "not_in_older_schema::<Vec<PciDevice>>")]
    pub pci: Observed<Vec<PciDevice>>,
    /// What the NVIDIA driver reported in the kernel log of the current boot
    /// (Xid/SXid events, "fallen off the bus"); unobservable where
    /// `kernel.dmesg_restrict` or missing permissions hide the log.
    #[serde(default = "not_in_older_schema")]
    #[schemars(default = "not_in_older_schema::<KernelLog>")]
    pub kernel_log: Observed<KernelLog>,
    /// The platform around the driver: WSL2's GPU paravirtualisation files and
    /// the driver files a container runtime mounted from the host.
    #[serde(default)]
    pub platform: PlatformFacts,
}

/// What the kernel log of the current boot says about NVIDIA GPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KernelLog {
    /// This boot's id (`/proc/sys/kernel/random/boot_id`), when readable.
    pub boot_id: Option<String>,
    /// How many records were read in all (only the NVIDIA driver's are kept).
    pub records: u64,
    /// The driver's reports, in order.
    pub events: Vec<KernelEvent>,
}

impl KernelLog {
    /// The events of one kind with one code (`Xid 79`).
    pub fn xids(&self, code: u32) -> impl Iterator<Item = &KernelEvent> {
        self.events
            .iter()
            .filter(move |e| e.kind == KernelEventKind::Xid && e.code == Some(code))
    }
    /// Whether the driver reported a GPU fallen off the bus (Xid 79 or the plain message).
    pub fn fell_off_bus(&self) -> impl Iterator<Item = &KernelEvent> {
        self.events.iter().filter(|e| {
            e.kind == KernelEventKind::FallenOffBus
                || (e.kind == KernelEventKind::Xid && e.code == Some(79))
        })
    }
}

/// One report of the NVIDIA driver in the kernel log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KernelEvent {
    /// What the driver reported (Xid, SXid, fallen off the bus, GSP timeout).
    #[schemars(description = UNPUBLISHED)]
    pub kind: KernelEventKind,
    /// The Xid/SXid number.
    pub code: Option<u32>,
    /// The device as the driver names it (`PCI:0000:3b:00`, `0000:b3:00.0`, `GPU6`), or `unknown`.
    pub gpu: String,
    /// The record's sequence number (or journal timestamp).
    pub seq: u64,
    /// Microseconds since boot.
    pub ts_usec: u64,
    /// The record's text (at most 500 characters).
    pub message: String,
}

/// What kind of driver report a kernel-log record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KernelEventKind {
    /// `NVRM: Xid (PCI:…): N`: a GPU error.
    Xid,
    /// `NVRM: SXid (PCI:…): N`: an NVSwitch error.
    Sxid,
    /// "GPU has fallen off the bus".
    FallenOffBus,
    /// A GSP RPC timeout.
    GspTimeout,
}

impl KernelEventKind {
    /// The name used in JSON (`fallen_off_bus`).
    pub fn as_str(self) -> &'static str {
        match self {
            KernelEventKind::Xid => "xid",
            KernelEventKind::Sxid => "sxid",
            KernelEventKind::FallenOffBus => "fallen_off_bus",
            KernelEventKind::GspTimeout => "gsp_timeout",
        }
    }
}

impl fmt::Display for KernelEventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the NVIDIA driver's files come from, beyond the loader's view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlatformFacts {
    /// WSL2's GPU files; absent on native Linux.
    #[serde(default = "not_in_older_schema")]
    #[schemars(default = "not_in_older_schema::<WslFacts>")]
    pub wsl: Observed<WslFacts>,
    /// NVIDIA driver files and device nodes mounted into this mount namespace
    /// from elsewhere (a container runtime's bind mounts), from `/proc/self/mountinfo`.
    #[serde(default = "not_in_older_schema")]
    #[schemars(default = "not_in_older_schema::<Vec<DriverMount>>")]
    pub driver_mounts: Observed<Vec<DriverMount>>,
}

impl Default for PlatformFacts {
    fn default() -> Self {
        PlatformFacts {
            wsl: not_in_older_schema(),
            driver_mounts: not_in_older_schema(),
        }
    }
}

/// WSL2: the GPU is paravirtualised (`/dev/dxg`); the driver is the Windows
/// one, whose Linux user-space libraries Windows mounts at `/usr/lib/wsl/lib`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WslFacts {
    /// The running kernel's release (`5.15.167.4-microsoft-standard-WSL2`).
    pub kernel: Observed<String>,
    /// The file names in `/usr/lib/wsl/lib` (libcuda.so.1, libnvidia-ml.so.1, libdxcore.so…).
    pub lib_dir: Observed<Vec<String>>,
    /// The directories `/etc/ld.so.conf.d/ld.wsl.conf` adds to the loader's path.
    pub ld_conf: Observed<Vec<String>>,
    /// Linux NVIDIA driver packages installed inside WSL (dpkg/rpm): NVIDIA
    /// says never to install one there.
    pub driver_packages: Observed<Vec<Package>>,
    /// `libcuda.so*` files in the distribution's library directories that are
    /// not (links to) the `/usr/lib/wsl/lib` one: a Linux driver's copy.
    pub foreign_libcuda: Observed<Vec<String>>,
}

/// One mount of an NVIDIA driver file or device node (`/proc/self/mountinfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DriverMount {
    /// Where it is mounted here (`/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04`).
    pub mount_point: String,
    /// The path within the mounted filesystem (the host's file, for a bind mount).
    pub root: String,
    /// The filesystem type (`ext4`, `overlay`, `tmpfs`, `devtmpfs`).
    pub fs_type: String,
}

fn not_in_older_schema<T>() -> Observed<T> {
    Observed::unobservable(
        Source::Derived {
            from: "fingerprint file".into(),
        },
        "not recorded by the gpukb that wrote this fingerprint",
    )
}

/// One PCI function from `/sys/bus/pci/devices`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PciDevice {
    /// `0000:00:06.0`.
    pub address: String,
    /// `0x10de` for NVIDIA.
    pub vendor: u16,
    /// Device id (NVIDIA devices only).
    pub device: Option<u16>,
    /// Class code, e.g. `0x030200` (3D controller), `0x068000` (NVSwitch bridge).
    pub class: Option<u32>,
    /// The kernel driver bound to it (`nvidia`, `nouveau`, `vfio-pci`), absent when unbound.
    pub driver: Observed<String>,
}

impl PciDevice {
    /// NVIDIA's PCI vendor id.
    pub const NVIDIA: u16 = 0x10de;
    /// True for an NVIDIA display/3D controller (class 0x03xxxx).
    pub fn is_nvidia_gpu(&self) -> bool {
        self.vendor == Self::NVIDIA && self.class.is_some_and(|c| c >> 16 == 0x03)
    }
    /// True for an NVIDIA NVSwitch (a bridge, class 0x0680xx).
    pub fn is_nvswitch(&self) -> bool {
        self.vendor == Self::NVIDIA && self.class.is_some_and(|c| c >> 8 == 0x0680)
    }
}

/// The operating system around the driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostFacts {
    /// The distribution's `PRETTY_NAME` (else `NAME`) from `/etc/os-release`
    /// (`Ubuntu 24.04.3 LTS`).
    #[schemars(description = UNPUBLISHED)]
    pub os: Observed<String>,
    /// The running kernel's release, from `/proc/sys/kernel/osrelease`
    /// (`6.8.0-90-generic`).
    #[schemars(description = UNPUBLISHED)]
    pub kernel: Observed<String>,
    /// The CPU architecture as Rust names it (`x86_64`, `aarch64`): `uname` on
    /// the live machine, the loader cache's entries for a copied root.
    #[schemars(description = UNPUBLISHED)]
    pub arch: Observed<String>,
    /// The C library's version (`2.39`) from `gnu_get_libc_version`; for a
    /// copied root, from `libc.so.6`'s real file name (glibc < 2.34 only).
    #[schemars(description = UNPUBLISHED)]
    pub glibc: Observed<String>,
    /// `docker`, `podman`, `kubernetes`…; absent outside containers.
    pub container: Observed<String>,
    /// `WSL2`; absent on native Linux.
    pub wsl: Observed<String>,
    /// Hypervisor or cloud, when visible.
    pub virtualization: Observed<String>,
    /// UEFI Secure Boot state (an enabled Secure Boot refuses unsigned kernel modules).
    pub secure_boot: Observed<bool>,
}

/// The NVIDIA kernel driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DriverFacts {
    /// The kernel module's version (ordered fallbacks: sysfs, procfs, NVML, nvidia-smi).
    pub version: Observed<DriverVersion>,
    /// `open` or `proprietary` kernel module.
    pub flavor: Observed<String>,
    /// Which of nvidia, nvidia_uvm, nvidia_drm, nvidia_modeset, nouveau are loaded.
    pub modules: Observed<Vec<ModuleState>>,
    /// `/dev/nvidia*` nodes present.
    pub device_nodes: Observed<Vec<String>>,
    /// The user-space driver library (`libcuda.so.1`) the loader would pick.
    pub libcuda: Observed<LibraryFile>,
    /// The NVML library (`libnvidia-ml.so.1`) the loader would pick.
    pub libnvidia_ml: Observed<LibraryFile>,
    /// NVIDIA kernel modules installed for each kernel under `/lib/modules`
    /// (from each kernel's `modules.dep`).
    #[serde(default = "not_in_older_schema")]
    #[schemars(default = "not_in_older_schema::<Vec<InstalledModules>>")]
    pub installed_modules: Observed<Vec<InstalledModules>>,
}

/// The NVIDIA-related modules one installed kernel has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InstalledModules {
    /// Kernel release (`6.8.0-90-generic`).
    pub kernel: String,
    /// Whether this is the running kernel.
    pub running: bool,
    /// Module files, relative to `/lib/modules/<kernel>` (`updates/dkms/nvidia.ko.zst`).
    pub nvidia: Vec<String>,
    /// Whether nouveau is installed for this kernel.
    pub nouveau: bool,
}

/// Whether one kernel module is loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModuleState {
    /// The module's name (`nvidia_uvm`).
    #[schemars(description = UNPUBLISHED)]
    pub name: String,
    /// Whether it is loaded now (listed in `/proc/modules`).
    #[schemars(description = UNPUBLISHED)]
    pub loaded: bool,
}

/// What NVML reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NvmlFacts {
    /// The driver's version as NVML gives it (`nvmlSystemGetDriverVersion`,
    /// `580.159.04`).
    #[schemars(description = UNPUBLISHED)]
    pub driver_version: DriverVersion,
    /// Highest CUDA version the driver supports, e.g. `13.0`.
    pub cuda_driver_version: CudaVersion,
    /// Every GPU NVML enumerates, by NVML index.
    #[schemars(description = UNPUBLISHED)]
    pub gpus: Vec<NvmlGpu>,
}

/// One GPU as NVML sees it. `None` fields were not supported or failed
/// (listed in `unavailable`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NvmlGpu {
    /// NVML's index (`nvmlDeviceGetHandleByIndex`); not necessarily the CUDA
    /// ordinal, which follows `CUDA_DEVICE_ORDER`.
    #[schemars(description = UNPUBLISHED)]
    pub index: u32,
    /// The product name (`NVIDIA H200`), from `nvmlDeviceGetName`.
    #[schemars(description = UNPUBLISHED)]
    pub name: String,
    /// The GPU's UUID (`GPU-…`), from `nvmlDeviceGetUUID`.
    #[schemars(description = UNPUBLISHED)]
    pub uuid: String,
    /// From `nvmlDeviceGetCudaComputeCapability`.
    #[schemars(description = UNPUBLISHED)]
    pub compute_capability: Option<ComputeCapability>,
    /// Total memory in MiB, from `nvmlDeviceGetMemoryInfo`.
    #[schemars(description = UNPUBLISHED)]
    pub memory_total_mib: Option<u64>,
    /// The PCI address as NVML writes it (`00000000:3B:00.0`).
    #[schemars(description = UNPUBLISHED)]
    pub pci_bus_id: Option<String>,
    /// The PCIe generation the link runs at now (it drops when idle).
    #[schemars(description = UNPUBLISHED)]
    pub pcie_gen_current: Option<u32>,
    /// The highest PCIe generation the GPU and its slot support.
    #[schemars(description = UNPUBLISHED)]
    pub pcie_gen_max: Option<u32>,
    /// The PCIe lanes the link runs at now (`16` for x16).
    #[schemars(description = UNPUBLISHED)]
    pub pcie_width_current: Option<u32>,
    /// The most PCIe lanes the link supports.
    #[schemars(description = UNPUBLISHED)]
    pub pcie_width_max: Option<u32>,
    /// Whether ECC is on now (`nvmlDeviceGetEccMode`).
    #[schemars(description = UNPUBLISHED)]
    pub ecc_enabled: Option<bool>,
    /// Uncorrected ECC errors over the GPU's life (aggregate counter); read
    /// only when ECC is on.
    #[schemars(description = UNPUBLISHED)]
    pub ecc_uncorrected_aggregate: Option<u64>,
    /// Corrected ECC errors over the GPU's life (aggregate counter); read
    /// only when ECC is on.
    #[schemars(description = UNPUBLISHED)]
    pub ecc_corrected_aggregate: Option<u64>,
    /// Memory pages retired for double-bit ECC errors (GPUs before A100).
    #[schemars(description = UNPUBLISHED)]
    pub retired_pages_double_bit: Option<u32>,
    /// Whether a page retirement waits for the next driver reload or reset.
    #[schemars(description = UNPUBLISHED)]
    pub retired_pages_pending: Option<bool>,
    /// Row remapping state (A100 and later; `nvmlDeviceGetRemappedRows`).
    #[schemars(description = UNPUBLISHED)]
    pub remapped_rows: Option<RemappedRows>,
    /// Whether MIG mode is on now.
    #[schemars(description = UNPUBLISHED)]
    pub mig_enabled: Option<bool>,
    /// MIG GPU instances created (when MIG is enabled).
    #[serde(default)]
    pub mig_instances: Option<u32>,
    /// Whether persistence mode keeps the driver loaded with no client.
    #[schemars(description = UNPUBLISHED)]
    pub persistence_mode: Option<bool>,
    /// GPU core temperature in °C (a reading below 0 is recorded as 0).
    #[schemars(description = UNPUBLISHED)]
    pub temperature_c: Option<u32>,
    /// Power draw in watts when read (`nvmlDeviceGetPowerUsage`).
    #[schemars(description = UNPUBLISHED)]
    pub power_w: Option<f64>,
    /// The power limit the driver enforces, in watts.
    #[schemars(description = UNPUBLISHED)]
    pub power_limit_w: Option<f64>,
    /// Why the clocks are held down now, by NVML's reason names, sorted
    /// (`GPU_IDLE`, `SW_POWER_CAP`); empty when nothing does.
    #[schemars(description = UNPUBLISHED)]
    pub throttle_reasons: Option<Vec<String>>,
    /// For readings NVML has a successor function for (`temperature_c`,
    /// `throttle_reasons`), the NVML function that answered: the successor
    /// (`nvmlDeviceGetTemperatureV`, `nvmlDeviceGetCurrentClocksEventReasons`)
    /// or, on a driver whose NVML lacks it, the deprecated one
    /// (`nvmlDeviceGetTemperature`, `nvmlDeviceGetCurrentClocksThrottleReasons`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub answered_by: std::collections::BTreeMap<String, String>,
    /// NVML calls that failed for this GPU, with the error.
    pub unavailable: Vec<String>,
}

/// Row remapping state (A100/H100 and later).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RemappedRows {
    /// Rows remapped for correctable errors.
    #[schemars(description = UNPUBLISHED)]
    pub correctable: u32,
    /// Rows remapped for uncorrectable errors.
    #[schemars(description = UNPUBLISHED)]
    pub uncorrectable: u32,
    /// Whether a remapping waits for the next GPU reset.
    #[schemars(description = UNPUBLISHED)]
    pub pending: bool,
    /// Whether a row remapping failed.
    #[schemars(description = UNPUBLISHED)]
    pub failed: bool,
}

/// What the CUDA driver API reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CudaFacts {
    /// `cuDriverGetVersion`, e.g. `13.0`.
    pub driver_version: CudaVersion,
    /// The exact CUresult name `cuInit(0)` returned (unobservable with `--quick`).
    pub init: Observed<String>,
    /// Devices `cuDeviceGet` enumerates after a successful `cuInit`.
    pub devices: Vec<CudaDevice>,
    /// The `libcuda` file gpukb's own `cuInit` ran in (its real path, from gpukb's
    /// `/proc/self/maps`): gpukb's search for libcuda is not the user's process's.
    #[serde(default = "not_recorded_cuda::<String>")]
    pub loaded: Observed<String>,
    /// `cuInit` in the copy the user's process would load (`torch.loads[]`'s
    /// `libcuda.so.1`, else `driver.libcuda`): run in a child process with a
    /// deadline when that copy is not [`CudaFacts::loaded`], taken from `init`
    /// when it is.
    #[serde(default = "not_recorded_cuda::<ProcessInit>")]
    pub process: Observed<ProcessInit>,
}

/// `cuInit` as the user's process would see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProcessInit {
    /// The real path of the `libcuda.so.1` the process loads.
    pub library: String,
    /// The exact CUresult name `cuInit(0)` returned there, e.g.
    /// `CUDA_ERROR_STUB_LIBRARY`.
    pub init: String,
    /// Whether a child process loaded that copy (it is not the one gpukb loaded).
    pub in_child: bool,
}

/// What a fingerprint written before a field existed holds in it.
fn not_recorded_cuda<T>() -> Observed<T> {
    Observed::unobservable(
        Source::CudaDriver {
            call: "cuInit".into(),
        },
        "not recorded (the fingerprint or capture predates this fact)",
    )
}

/// One device as the CUDA driver API sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CudaDevice {
    /// The CUDA device ordinal (`cuDeviceGet`), as `CUDA_VISIBLE_DEVICES` and
    /// `CUDA_DEVICE_ORDER` make it.
    #[schemars(description = UNPUBLISHED)]
    pub ordinal: u32,
    /// The device name from `cuDeviceGetName`.
    #[schemars(description = UNPUBLISHED)]
    pub name: String,
    /// From the compute capability major/minor device attributes.
    #[schemars(description = UNPUBLISHED)]
    pub compute_capability: ComputeCapability,
    /// Total memory in MiB, from `cuDeviceTotalMem`.
    #[schemars(description = UNPUBLISHED)]
    pub total_memory_mib: u64,
    /// Streaming multiprocessors (SMs).
    #[schemars(description = UNPUBLISHED)]
    pub multiprocessors: u32,
    /// Peak SM clock in MHz.
    #[schemars(description = UNPUBLISHED)]
    pub clock_mhz: u32,
    /// Peak memory clock in MHz.
    #[schemars(description = UNPUBLISHED)]
    pub memory_clock_mhz: u32,
    /// Global memory bus width in bits.
    #[schemars(description = UNPUBLISHED)]
    pub memory_bus_bits: u32,
    /// Whether the GPU is integrated and shares the host's memory (Jetson).
    #[schemars(description = UNPUBLISHED)]
    pub integrated: bool,
    /// The PCI address from `cuDeviceGetPCIBusId` (`0000:3B:00.0`).
    #[schemars(description = UNPUBLISHED)]
    pub pci_bus_id: String,
}

/// A CUDA library file found on the machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LibraryFile {
    /// `libcudart`, `libcudnn`, `libcublasLt`…
    pub family: String,
    /// The name the loader asks for (`libcudart.so.13`): the file name found.
    #[schemars(description = UNPUBLISHED)]
    pub soname: String,
    /// The path found, and the real file behind its symlinks.
    pub path: String,
    /// The real file behind `path`'s symlinks.
    #[schemars(description = UNPUBLISHED)]
    pub real_path: String,
    /// The library's version (`13.0.96`): the toolkit's or wheel's, else the
    /// one in the real file's name; `None` when neither says.
    #[schemars(description = UNPUBLISHED)]
    pub version: Option<String>,
    /// How it was found: `ld.so.cache`, `LD_LIBRARY_PATH`, `CUDA toolkit 13.0`, `pip nvidia-cudnn-cu13`…
    pub found_via: String,
    /// What it was found in (`/etc/ld.so.cache`, a directory listing).
    #[schemars(description = UNPUBLISHED)]
    pub source: Source,
}

/// A CUDA toolkit installed under `/usr/local/cuda*` or `/opt`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Toolkit {
    /// The toolkit's real directory (symlinks resolved).
    pub path: String,
    /// The toolkit's version, from its `version.json` (or `version.txt`).
    #[schemars(description = UNPUBLISHED)]
    pub version: Observed<String>,
    /// Whether `bin/nvcc` is there (a runtime-only install has none).
    #[schemars(description = UNPUBLISHED)]
    pub nvcc: bool,
    /// Every name gpukb reached it by, as written: `/usr/local/cuda`, or the value of
    /// `CUDA_HOME`/`CUDA_PATH`, through any chain of symlinks (update-alternatives).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reached_as: Vec<String>,
}

/// Every CUDA library found, toolkits, and conflicting copies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LibraryFacts {
    /// Every CUDA library file found (loader cache, library path, toolkits,
    /// Python wheels), one entry per real file.
    #[schemars(description = UNPUBLISHED)]
    pub files: Vec<LibraryFile>,
    /// The CUDA toolkits installed.
    #[schemars(description = UNPUBLISHED)]
    pub toolkits: Vec<Toolkit>,
    /// Same library, different versions visible at once.
    pub conflicts: Vec<String>,
    /// Places that could not be searched, and why.
    pub problems: Vec<String>,
}

/// How a Python environment was installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PythonEnvKind {
    /// A virtual environment (`VIRTUAL_ENV`, `.venv`, `/opt/*`).
    Venv,
    /// A conda environment or install.
    Conda,
    /// The system's Python (`/usr`, `/usr/local`).
    System,
    /// Per-user packages (`~/.local`).
    User,
}

impl PythonEnvKind {
    /// The name used in JSON (`venv`).
    pub fn as_str(self) -> &'static str {
        match self {
            PythonEnvKind::Venv => "venv",
            PythonEnvKind::Conda => "conda",
            PythonEnvKind::System => "system",
            PythonEnvKind::User => "user",
        }
    }
}

impl fmt::Display for PythonEnvKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One Python environment (its site-packages directory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PythonEnv {
    /// The environment's `site-packages` (or `dist-packages`) directory.
    #[schemars(description = UNPUBLISHED)]
    pub site_packages: String,
    /// `venv`, `conda`, `system`, `user`.
    #[schemars(with = "String")]
    pub kind: PythonEnvKind,
    /// Python version from the directory name or `pyvenv.cfg`.
    pub python: Option<String>,
    /// The PyTorch installed here; `None` when there is none.
    #[schemars(description = UNPUBLISHED)]
    pub torch: Option<TorchInstall>,
    /// `nvidia-*` wheels (name, version).
    pub nvidia_wheels: Vec<Package>,
    /// Other CUDA-carrying packages: vllm, xformers, flash_attn, triton…
    pub cuda_packages: Vec<Package>,
    /// The CUDA extension libraries of those packages, with their GPU code.
    #[serde(default)]
    pub extensions: Vec<CudaExtension>,
    /// Frameworks other than torch that carry CUDA code (JAX's CUDA plugin,
    /// CuPy, TensorFlow, ONNX Runtime's CUDA provider, TensorRT), each with
    /// the CUDA release it was built for.
    #[serde(default)]
    pub frameworks: Vec<FrameworkBuild>,
}

/// A framework's CUDA build, read without importing it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FrameworkBuild {
    /// `jax`, `cupy`, `tensorflow`, `onnxruntime-gpu` or `tensorrt`.
    pub framework: String,
    /// The distribution that carries the CUDA code (`jax-cuda13-plugin`,
    /// `cupy-cuda12x`, `onnxruntime-gpu`).
    pub distribution: String,
    /// That distribution's version.
    pub version: String,
    /// The CUDA release it was built for, and what that was read from.
    pub cuda: Observed<FrameworkCuda>,
    /// Distributions that must be one release for the framework to use its
    /// GPU (JAX: jaxlib, jax-cudaNN-plugin, jax-cudaNN-pjrt), as installed.
    #[serde(default)]
    pub same_release: Vec<Package>,
    /// The CUDA library the framework loads for the GPU, when it has one to
    /// read (`onnxruntime/capi/libonnxruntime_providers_cuda.so`).
    #[serde(default)]
    pub cuda_library: Option<String>,
    /// Where each CUDA library that library needs resolves, like the dynamic loader.
    #[serde(default)]
    pub loads: Vec<ResolvedLibrary>,
}

/// The CUDA (and cuDNN) release a framework build targets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FrameworkCuda {
    /// The CUDA major the build targets (`12`).
    #[schemars(description = UNPUBLISHED)]
    pub major: u32,
    /// `None` when the source names only the major (`cupy-cuda12x`, `libcudart.so.12`).
    pub minor: Option<u32>,
    /// cuDNN major, when the source names it.
    pub cudnn_major: Option<u32>,
    /// What it was read from, in words (`distribution name jax-cuda13-plugin`,
    /// `cuda_version '12.5.1' in build_info.py`, `NEEDED libcudart.so.12`).
    pub read_from: String,
}

impl FrameworkCuda {
    /// As a CUDA version (`12.0` when only the major is known: under
    /// minor-version compatibility a driver of that major runs every minor).
    pub fn version(&self) -> CudaVersion {
        CudaVersion::new(self.major, self.minor.unwrap_or(0))
    }
}

impl fmt::Display for FrameworkCuda {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.minor {
            Some(m) => write!(f, "{}.{m}", self.major),
            None => write!(f, "{}.x", self.major),
        }
    }
}

/// A CUDA extension library of a Python package (flash-attn's
/// `flash_attn_2_cuda*.so`, `xformers/_C.so`, `vllm/_C.abi3.so`…).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CudaExtension {
    /// The distribution (`flash-attn`).
    pub package: String,
    /// The distribution's installed version.
    #[schemars(description = UNPUBLISHED)]
    pub version: String,
    /// The library's path.
    pub path: String,
    /// The GPU code compiled into it.
    pub kernels: Observed<FatbinSummary>,
}

/// An installed Python distribution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Package {
    /// The distribution's name as its metadata writes it (`nvidia-cudnn-cu12`).
    #[schemars(description = UNPUBLISHED)]
    pub name: String,
    /// The installed version (`9.1.0.70`).
    #[schemars(description = UNPUBLISHED)]
    pub version: String,
}

/// A PyTorch install, read without importing it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TorchInstall {
    /// The version in `torch/version.py` (`2.11.0+cu130`).
    #[schemars(description = UNPUBLISHED)]
    pub version: String,
    /// CUDA version the build targets (`None`: CPU or ROCm build).
    pub cuda: Option<CudaVersion>,
    /// The commit the build was made from (`git_version` in `torch/version.py`).
    #[schemars(description = UNPUBLISHED)]
    pub git_version: Option<String>,
    /// The file the version was read from (`torch/version.py`).
    #[schemars(description = UNPUBLISHED)]
    pub source: Source,
    /// GPU code compiled into `torch/lib/libtorch_cuda.so`.
    pub kernels: Observed<FatbinSummary>,
    /// Which CUDA libraries this torch would load, resolved like the dynamic loader.
    pub loads: Vec<ResolvedLibrary>,
    /// Pinned `nvidia-*` requirements that the installed wheels do not satisfy.
    pub pin_mismatches: Vec<String>,
}

/// Where one `NEEDED` library of torch (or a framework's CUDA library) resolves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResolvedLibrary {
    /// The name asked for (`libcudnn.so.9`).
    #[schemars(description = UNPUBLISHED)]
    pub soname: String,
    /// `None`: the loader would not find it.
    pub path: Option<String>,
    /// The version of the file it resolves to (the wheel's, else the one in
    /// the file's name), when known.
    #[schemars(description = UNPUBLISHED)]
    pub version: Option<String>,
    /// `RPATH $ORIGIN/../../nvidia/cudnn/lib`, `LD_LIBRARY_PATH`, `ld.so.cache`…
    pub via: String,
    /// Which step of the dynamic loader's search found it (`None` in
    /// fingerprints written before the loader model, and when not found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<LoadRule>,
    /// The directory, cache entry or preload element that matched, in the
    /// loader's words (`/usr/lib/x86_64-linux-gnu/`, `ld.so.cache libcudnn.so.9`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The object whose `NEEDED` entry or `dlopen` asked for it (`None`: a
    /// preload, or not recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_by: Option<String>,
}

/// The step of glibc's `ld.so` search (elf/dl-load.c `_dl_map_object`) that
/// found a library, or why no search was needed.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LoadRule {
    /// Named by `LD_PRELOAD` or `/etc/ld.so.preload`.
    Preload,
    /// A `DT_RPATH` of the requesting object, its loaders, or the executable.
    Rpath,
    /// An element of `LD_LIBRARY_PATH`.
    LdLibraryPath,
    /// The requesting object's own `DT_RUNPATH`.
    Runpath,
    /// An entry of `/etc/ld.so.cache`.
    Cache,
    /// One of the loader's default directories.
    Default,
    /// An object already loaded under that name or `DT_SONAME`.
    AlreadyLoaded,
    /// A name containing `/`, opened as given (a `NEEDED` path or `dlopen` of a path).
    Path,
    /// Loaded by the framework itself by path (torch's ctypes preloads).
    Framework,
}

impl LoadRule {
    /// Every rule, in the loader's order.
    pub const ALL: [LoadRule; 9] = [
        LoadRule::Preload,
        LoadRule::Rpath,
        LoadRule::LdLibraryPath,
        LoadRule::Runpath,
        LoadRule::Cache,
        LoadRule::Default,
        LoadRule::AlreadyLoaded,
        LoadRule::Path,
        LoadRule::Framework,
    ];

    /// The name used in JSON (`ld_library_path`).
    pub fn name(self) -> &'static str {
        match self {
            LoadRule::Preload => "preload",
            LoadRule::Rpath => "rpath",
            LoadRule::LdLibraryPath => "ld_library_path",
            LoadRule::Runpath => "runpath",
            LoadRule::Cache => "cache",
            LoadRule::Default => "default",
            LoadRule::AlreadyLoaded => "already_loaded",
            LoadRule::Path => "path",
            LoadRule::Framework => "framework",
        }
    }
}

/// A set environment variable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EnvVar {
    /// The variable's name (`CUDA_VISIBLE_DEVICES`).
    #[schemars(description = UNPUBLISHED)]
    pub name: String,
    /// Its value, as set in gpukb's environment.
    #[schemars(description = UNPUBLISHED)]
    pub value: String,
}
