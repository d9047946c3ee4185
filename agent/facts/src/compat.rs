//! CUDA binary-compatibility rules, as pure functions: given a device's compute
//! capability, the driver's CUDA version and the images in a fatbin (or one
//! standalone cubin/PTX), decide which image the driver would run, or which
//! `CUresult` loading fails with (209 no kernel image, 222 PTX too new, 218
//! PTX for a newer arch). Used for framework verdicts and to predict every
//! row of the probe's module-load matrix. No GPU, no I/O.
//!
//! Rules (CUDA compatibility guides; confirmed on the H200, see
//! `tests/fixtures/h200-probe/RESULTS.md`):
//! * SASS `sm_XY` runs on CC X.Z with Z ≥ Y (same major only); `sm_XYa` only
//!   on exactly X.Y; `sm_XYf` on the family (same major, Z ≥ Y).
//! * PTX `compute_XY` is JIT-compiled for any CC ≥ X.Y (any later major) if the
//!   driver knows its ISA version, else 222; `compute_XYa` only for exactly
//!   X.Y; `compute_XYf` within the family.
//! * The driver prefers SASS over PTX; with neither: 209.
//! * Compare (major, minor) tuples, never plain integers (sm_100 > sm_90).
//! * Tegra (Jetson) GPUs run only SASS of exactly their arch, and desktop and
//!   Tegra SASS never cross: `sm_80` does not run on Orin (8.7), `sm_87` does
//!   not run on a desktop 8.9 (CUDA Programming Guide, Binary Compatibility;
//!   compat-facts.md errata 2). Tegra is the CC ([`TEGRA_CCS`]) or a Jetson
//!   fingerprint ([`Device::observed`]); only an exact-arch cubin or PTX JIT
//!   runs there.
//!
//! Driver ↔ CUDA rules are further down ([`driver_runs_cuda`]), and which
//! driver branches drive which GPUs ([`branch_supports_gpu`]).

use crate::schema_doc::UNPUBLISHED;
use crate::target::{ArchVariant, FatbinImage, ImageKind};
use crate::version::CudaVersion;
use serde::{Deserialize, Serialize};

/// `CUDA_SUCCESS`.
pub const CUDA_SUCCESS: u32 = 0;
/// `CUDA_ERROR_INVALID_PTX`: a standalone PTX whose `.target` the device cannot run.
pub const CUDA_ERROR_INVALID_PTX: u32 = 218;
/// `CUDA_ERROR_NO_BINARY_FOR_GPU`: "no kernel image is available for execution on the device".
pub const CUDA_ERROR_NO_BINARY_FOR_GPU: u32 = 209;
/// `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`: PTX from a newer toolchain than the driver.
pub const CUDA_ERROR_UNSUPPORTED_PTX_VERSION: u32 = 222;

/// What the driver does with a set of images on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Outcome")]
pub enum ImageOutcome {
    /// Runs compatible machine code as is.
    Sass,
    /// JIT-compiles PTX (slow first start; no arch-specific features).
    PtxJit,
    /// Only PTX newer than the driver understands: 222.
    PtxTooNew,
    /// Nothing usable: 209 "no kernel image is available".
    NoImage,
}

/// A decision about one fatbin (or image list) on one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Verdict")]
pub struct ImageVerdict {
    /// How the device runs the code: SASS, PTX JIT, or not at all.
    #[schemars(description = UNPUBLISHED)]
    pub outcome: ImageOutcome,
    /// The image the driver would use (`sm_90`, `compute_80`), if any.
    pub image: Option<String>,
    /// Other images that would also work (e.g. `sm_90a` beside `sm_90`).
    pub also_usable: Vec<String>,
    /// The `CUresult` a load/launch gives: 0, 209 or 222.
    pub expected_code: u32,
    /// One sentence saying why.
    pub reason: String,
}

/// Highest PTX ISA version (major, minor) a driver of CUDA version `cuda`
/// (as `cuDriverGetVersion` reports it: 13000 = 13.0) can JIT.
/// From the PTX ISA release history in NVIDIA's PTX ISA manual; CUDA 12.9 → 8.8
/// was read from NVRTC 12.9 output and 13.0 → 9.0 from nvcc 13.0 on the H200.
pub fn max_ptx_isa(cuda: u32) -> (u32, u32) {
    let (major, minor) = (cuda / 1000, (cuda % 1000) / 10);
    match (major, minor) {
        (0..=5, _) => (3, 2),
        (6, 0) => (4, 0),
        (6, _) => (4, 1),
        (7, 0) => (4, 2),
        (7, _) => (4, 3),
        (8, _) => (5, 0),
        (9, m) => (6, m.min(2)),
        (10, m) => (6, 3 + m.min(2)),
        (11, m) => (7, m.min(8)),
        (12, m) if m <= 4 => (8, m),
        (12, 5) | (12, 6) => (8, 5),
        (12, 7) => (8, 6),
        (12, m) => (8, m - 1),
        // CUDA 13.0 emits ISA 9.0; later 13.x and 14+ assumed to keep the pattern.
        (m, n) => (m - 4, n),
    }
}

/// The CUDA version (as `major*1000 + minor*10`) that introduced PTX ISA `isa`,
/// i.e. the oldest driver that can JIT it. Inverse of [`max_ptx_isa`].
pub fn cuda_for_ptx_isa(isa: (u32, u32)) -> u32 {
    let mut cuda = 6000;
    while cuda <= 30_000 {
        if max_ptx_isa(cuda) >= isa {
            return cuda;
        }
        cuda += 10;
        if cuda % 1000 > 90 {
            cuda = (cuda / 1000 + 1) * 1000;
        }
    }
    cuda
}

/// Formats a CUDA version number: 13000 → "13.0".
pub fn cuda_version_string(cuda: u32) -> String {
    format!("{}.{}", cuda / 1000, (cuda % 1000) / 10)
}

fn cc_of(arch: u32) -> (u32, u32) {
    (arch / 10, arch % 10)
}

/// Compute capabilities of Tegra (Jetson/DRIVE) integrated GPUs: TX1/Nano 5.3,
/// TX2 6.2, Xavier 7.2, Orin 8.7, Thor 10.1 (renamed 11.0 in CUDA 13).
pub const TEGRA_CCS: &[(u32, u32)] = &[(5, 3), (6, 2), (7, 2), (8, 7), (10, 1), (11, 0)];

/// True for a Tegra integrated GPU's compute capability.
pub fn is_tegra(cc: (u32, u32)) -> bool {
    TEGRA_CCS.contains(&cc)
}

/// The device side of a compatibility question: its compute capability and
/// whether it is a Tegra (Jetson/DRIVE) integrated GPU. Tegra is known from
/// the CC ([`TEGRA_CCS`]) or from the machine (a Jetson fingerprint: L4T
/// release, device tree); CUDA's `integrated` attribute alone does not say
/// Tegra, so callers pass what they observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Device {
    /// The compute capability as (major, minor).
    pub cc: (u32, u32),
    /// Whether it is a Tegra integrated GPU (Jetson, DRIVE).
    pub tegra: bool,
}

impl Device {
    /// A device known only by its compute capability (Tegra when the CC is).
    pub fn from_cc(cc: (u32, u32)) -> Self {
        Device {
            cc,
            tegra: is_tegra(cc),
        }
    }

    /// A device the machine identified as a Tegra integrated GPU (or whose CC is one).
    pub fn observed(cc: (u32, u32), on_jetson: bool) -> Self {
        Device {
            cc,
            tegra: on_jetson || is_tegra(cc),
        }
    }
}

/// Can SASS `img` run on `dev`? The one place the SASS rule lives:
/// desktop `sm_XY` runs on X.Z with Z >= Y; on Tegra only exactly its own
/// arch ("Binary compatibility is supported only for the desktop. It is not
/// supported for Tegra. Also, the binary compatibility between desktop and
/// Tegra is not supported.", CUDA C++ Programming Guide, Binary
/// Compatibility), so Tegra SASS never runs on a desktop GPU either.
pub fn sass_runs_on(dev: Device, img: &FatbinImage) -> bool {
    let a = cc_of(img.arch);
    if dev.tegra || is_tegra(a) {
        return a == dev.cc;
    }
    match img.variant {
        ArchVariant::A => a == dev.cc,
        ArchVariant::Plain | ArchVariant::F => a.0 == dev.cc.0 && a.1 <= dev.cc.1,
    }
}

/// [`sass_runs_on`] for a device known only by its compute capability.
pub fn sass_runs(dev: (u32, u32), img: &FatbinImage) -> bool {
    sass_runs_on(Device::from_cc(dev), img)
}

/// Can PTX `img` be compiled for `dev` (ignoring the ISA version)?
pub fn ptx_targets(dev: (u32, u32), img: &FatbinImage) -> bool {
    let a = cc_of(img.arch);
    match img.variant {
        ArchVariant::A => a == dev,
        ArchVariant::F => a.0 == dev.0 && a.1 <= dev.1,
        ArchVariant::Plain => a <= dev,
    }
}

fn isa_of(img: &FatbinImage) -> (u32, u32) {
    (u32::from(img.version.0), u32::from(img.version.1))
}

fn variant_rank(v: ArchVariant) -> u8 {
    // At equal arch prefer the plain image: it covers the whole library,
    // `a`/`f` images usually carry only a few specialised kernels.
    match v {
        ArchVariant::Plain => 2,
        ArchVariant::F => 1,
        ArchVariant::A => 0,
    }
}

/// Decides what the driver runs from `images` (all images of one fatbin or
/// library) on a device of compute capability `dev` under a driver of CUDA
/// version `driver_cuda` (e.g. 13000).
pub fn decide(dev: (u32, u32), driver_cuda: u32, images: &[FatbinImage]) -> ImageVerdict {
    decide_on(Device::from_cc(dev), driver_cuda, images)
}

/// [`decide`] for a device whose Tegra-ness the machine observed.
pub fn decide_on(device: Device, driver_cuda: u32, images: &[FatbinImage]) -> ImageVerdict {
    let dev = device.cc;
    let ccs = format!("{}.{}", dev.0, dev.1);
    let mut sass: Vec<&FatbinImage> = images
        .iter()
        .filter(|i| i.kind == ImageKind::Sass && sass_runs_on(device, i))
        .collect();
    // Plain/family images first (they cover the whole library; an `a` image
    // usually carries a few specialised kernels), then the highest arch.
    sass.sort_by_key(|i| {
        (
            i.variant == ArchVariant::A,
            std::cmp::Reverse(i.arch),
            std::cmp::Reverse(variant_rank(i.variant)),
        )
    });
    sass.dedup_by_key(|i| (i.arch, i.variant));
    let max_isa = max_ptx_isa(driver_cuda);
    let mut ptx: Vec<&FatbinImage> = images
        .iter()
        .filter(|i| i.kind == ImageKind::Ptx && ptx_targets(dev, i))
        .collect();
    ptx.sort_by_key(|i| {
        (
            std::cmp::Reverse(i.arch),
            std::cmp::Reverse(variant_rank(i.variant)),
        )
    });
    ptx.dedup_by_key(|i| (i.arch, i.variant));
    let jit: Vec<&FatbinImage> = ptx
        .iter()
        .copied()
        .filter(|i| isa_of(i) <= max_isa)
        .collect();

    if let Some(best) = sass.first() {
        let also: Vec<String> = sass[1..]
            .iter()
            .chain(jit.iter())
            .map(|i| i.target())
            .collect();
        return ImageVerdict {
            outcome: ImageOutcome::Sass,
            image: Some(best.target()),
            also_usable: also,
            expected_code: CUDA_SUCCESS,
            reason: if device.tegra {
                format!(
                    "{} machine code runs on compute capability {ccs} (a Tegra GPU runs only its own arch's SASS)",
                    best.target()
                )
            } else {
                format!(
                    "{} machine code runs on compute capability {ccs} (same major, minor {} <= {})",
                    best.target(),
                    best.arch % 10,
                    dev.1
                )
            },
        };
    }
    if let Some(best) = jit.first() {
        let isa = isa_of(best);
        return ImageVerdict {
            outcome: ImageOutcome::PtxJit,
            image: Some(best.target()),
            also_usable: jit[1..].iter().map(|i| i.target()).collect(),
            expected_code: CUDA_SUCCESS,
            reason: format!(
                "no sm_{}x machine code; the driver JIT-compiles {} PTX (ISA {}.{}) at first use",
                dev.0,
                best.target(),
                isa.0,
                isa.1
            ),
        };
    }
    if let Some(best) = ptx.first() {
        let isa = isa_of(best);
        return ImageVerdict {
            outcome: ImageOutcome::PtxTooNew,
            image: Some(best.target()),
            also_usable: Vec::new(),
            expected_code: CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
            reason: format!(
                "only {} PTX (ISA {}.{}, needs a CUDA {} driver) fits; this driver is CUDA {} (ISA <= {}.{}): 222",
                best.target(),
                isa.0,
                isa.1,
                cuda_version_string(cuda_for_ptx_isa(isa)),
                cuda_version_string(driver_cuda),
                max_isa.0,
                max_isa.1
            ),
        };
    }
    let mut present: Vec<String> = images
        .iter()
        .filter(|i| matches!(i.kind, ImageKind::Sass | ImageKind::Ptx))
        .map(|i| i.target())
        .collect();
    present.sort();
    present.dedup();
    let sass_rule = if device.tegra {
        format!(
            "no sm_{}{} machine code (a Tegra GPU runs only SASS of exactly its arch)",
            dev.0, dev.1
        )
    } else {
        format!("no sm_{}x machine code with minor <= {}", dev.0, dev.1)
    };
    ImageVerdict {
        outcome: ImageOutcome::NoImage,
        image: None,
        also_usable: Vec::new(),
        expected_code: CUDA_ERROR_NO_BINARY_FOR_GPU,
        reason: format!(
            "{sass_rule} and no PTX <= compute_{}{} among [{}]: 209 no kernel image is available",
            dev.0,
            dev.1,
            present.join(", ")
        ),
    }
}

/// The `CUresult` `cuModuleLoadData` gives for one standalone image (a bare
/// cubin or PTX text, not a fatbin). Same rules as [`decide`] except that a
/// PTX whose `.target` is newer than the device is rejected as invalid PTX
/// (218), as measured on the H200 for `.target sm_100a`.
pub fn predict_standalone(dev: (u32, u32), driver_cuda: u32, img: &FatbinImage) -> u32 {
    predict_standalone_on(Device::from_cc(dev), driver_cuda, img)
}

/// [`predict_standalone`] for a device whose Tegra-ness the machine observed.
pub fn predict_standalone_on(device: Device, driver_cuda: u32, img: &FatbinImage) -> u32 {
    let dev = device.cc;
    match img.kind {
        ImageKind::Sass if sass_runs_on(device, img) => CUDA_SUCCESS,
        ImageKind::Sass => CUDA_ERROR_NO_BINARY_FOR_GPU,
        ImageKind::Ptx if isa_of(img) > max_ptx_isa(driver_cuda) => {
            CUDA_ERROR_UNSUPPORTED_PTX_VERSION
        }
        ImageKind::Ptx if ptx_targets(dev, img) => CUDA_SUCCESS,
        ImageKind::Ptx => CUDA_ERROR_INVALID_PTX,
        ImageKind::Other(_) => CUDA_ERROR_NO_BINARY_FOR_GPU,
    }
}

/// Builds a [`FatbinImage`] from a target name like `sm_90a`, `compute_80`,
/// `sm_100f`, with `version` as the PTX ISA (PTX) or cubin ABI (SASS).
/// Returns `None` for anything else.
pub fn image_from_target(target: &str, version: (u16, u16)) -> Option<FatbinImage> {
    let (kind, rest) = if let Some(r) = target.strip_prefix("sm_") {
        (ImageKind::Sass, r)
    } else if let Some(r) = target.strip_prefix("compute_") {
        (ImageKind::Ptx, r)
    } else {
        return None;
    };
    let (digits, variant) = match rest.as_bytes().last()? {
        b'a' => (&rest[..rest.len() - 1], ArchVariant::A),
        b'f' => (&rest[..rest.len() - 1], ArchVariant::F),
        _ => (rest, ArchVariant::Plain),
    };
    let arch: u32 = digits.parse().ok()?;
    Some(FatbinImage {
        kind,
        arch,
        variant,
        version,
        compressed: false,
    })
}

/// The CUDA driver (`libcuda`) side of a CUDA version check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DriverCompat {
    /// The driver natively supports this CUDA version or a later one.
    Native,
    /// Same major version, older minor: runs under minor-version
    /// compatibility (no JIT of the newer PTX, some newer APIs fail).
    MinorVersion,
    /// Too old: `cudaErrorInsufficientDriver` (35) / "CUDA driver version is
    /// insufficient for CUDA runtime version". A forward-compatibility package
    /// (`cuda-compat`) helps only on datacenter GPUs, select NGC Server Ready
    /// RTX SKUs and Jetson; elsewhere it fails with 804.
    TooOld,
}

/// As-of date of the driver rules below ([`MINOR_COMPAT_FLOOR`],
/// [`branch_supports_gpu`], [`needs_open_modules`]).
pub const DRIVER_TABLE_AS_OF: &str = "2026-12-01";

/// The oldest Linux driver of each CUDA major that runs every minor release of
/// that major under minor-version compatibility (CUDA 13.2 Update 2 release
/// notes, Table 2; CUDA Compatibility guide, Minor Version Compatibility).
pub const MINOR_COMPAT_FLOOR: &[(u32, &str)] =
    &[(11, "450.80.02"), (12, "525.60.13"), (13, "580.65.06")];

/// Whether a driver that supports CUDA `driver_cuda` (`cuDriverGetVersion`,
/// NVML's `cuda_driver_version`) runs an application built with CUDA `app`.
pub fn driver_runs_cuda(driver_cuda: CudaVersion, app: CudaVersion) -> DriverCompat {
    if driver_cuda >= app {
        DriverCompat::Native
    } else if driver_cuda.major == app.major && app.major >= 11 {
        DriverCompat::MinorVersion
    } else {
        DriverCompat::TooOld
    }
}

/// The oldest driver branch that runs CUDA `app` (natively or under
/// minor-version compatibility): the branch a fix should install at least.
pub fn min_driver_branch_for(app: CudaVersion) -> Option<u32> {
    MINOR_COMPAT_FLOOR
        .iter()
        .find(|(m, _)| *m == app.major)
        .and_then(|(_, v)| v.split('.').next()?.parse().ok())
}

/// Whether a driver branch supports a GPU, as far as the legacy cut-offs go:
/// R470 is the last branch for Kepler, R580 the last for Maxwell, Pascal and
/// Volta (NVIDIA's legacy GPU list and deprecation notice, secondary for the
/// R580 cut-off: compat-facts.md §R580); Blackwell (10.x, 12.x) needs R570+.
pub fn branch_supports_gpu(branch: u32, cc: (u32, u32)) -> Result<(), String> {
    match cc {
        (3, _) if branch > 470 => Err(format!(
            "R{branch} no longer supports Kepler (CC {}.{}): the last branch is R470",
            cc.0, cc.1
        )),
        (5, _) | (6, _) | (7, 0) if branch > 580 => Err(format!(
            "R{branch} no longer supports Maxwell/Pascal/Volta (CC {}.{}): the last branch is R580",
            cc.0, cc.1
        )),
        (10, _) | (12, _) if branch < 570 => Err(format!(
            "R{branch} predates Blackwell (CC {}.{}): it needs R570 or later",
            cc.0, cc.1
        )),
        _ => Ok(()),
    }
}

/// Whether a GPU needs NVIDIA's open kernel modules (Blackwell and Grace
/// Hopper, NVIDIA driver installation guide; compat-facts.md errata 7).
pub fn needs_open_modules(cc: (u32, u32), name: &str) -> bool {
    matches!(cc, (10, _) | (12, _)) || name.contains("GH200")
}

/// Driver branch → the highest CUDA version it runs natively (the
/// `nvidia-smi` header): each branch is the driver bundled with one CUDA
/// minor release. Derived from the CUDA 13.2 Update 2 release notes, Table 3
/// (compat-facts.md §1c); R565 reports 12.7 although no 12.7 toolkit exists.
/// R610 = CUDA 13.3: NVIDIA's CUDA 13.3 GA Linux runfile bundles driver
/// 610.43.02 (`https://developer.download.nvidia.com/compute/cuda/13.3.0/local_installers/cuda_13.3.0_610.43.02_linux.run`),
/// the "Toolkit Driver Version" the CUDA 13.3 release notes' table gives for
/// 13.3 GA and Update 1 (https://docs.nvidia.com/cuda/archive/13.3.0/cuda-toolkit-release-notes/index.html,
/// read through copies of the table; kb-audit doubt 7).
/// CUDA 13.4 and 13.5 are left out: from 13.4 on the Linux runfile bundles no
/// driver (`cuda_13.4.1_linux.run`) and no table row for them was read (a
/// `[[doubts]]` in kb/entries/cuda-driver-insufficient-for-runtime.toml).
pub const BRANCH_CUDA: &[(u32, (u32, u32))] = &[
    (384, (9, 0)),
    (390, (9, 1)),
    (396, (9, 2)),
    (410, (10, 0)),
    (418, (10, 1)),
    (440, (10, 2)),
    (450, (11, 0)),
    (455, (11, 1)),
    (460, (11, 2)),
    (465, (11, 3)),
    (470, (11, 4)),
    (495, (11, 5)),
    (510, (11, 6)),
    (515, (11, 7)),
    (520, (11, 8)),
    (525, (12, 0)),
    (530, (12, 1)),
    (535, (12, 2)),
    (545, (12, 3)),
    (550, (12, 4)),
    (555, (12, 5)),
    (560, (12, 6)),
    (565, (12, 7)),
    (570, (12, 8)),
    (575, (12, 9)),
    (580, (13, 0)),
    (590, (13, 1)),
    (595, (13, 2)),
    (610, (13, 3)),
];

/// The Linux driver bundled with each CUDA minor release's GA toolkit (CUDA
/// 13.2 Update 2 release notes, Table 3, "Toolkit Driver Version"): the
/// oldest driver that runs that toolkit natively, JIT of its PTX included.
/// 13.3: 610.43.02, the driver NVIDIA's CUDA 13.3.0 runfile bundles (see
/// [`BRANCH_CUDA`]).
pub const TOOLKIT_DRIVER: &[((u32, u32), &str)] = &[
    ((9, 0), "384.81"),
    ((9, 1), "390.46"),
    ((9, 2), "396.26"),
    ((10, 0), "410.48"),
    ((10, 1), "418.39"),
    ((10, 2), "440.33"),
    ((11, 0), "450.51.05"),
    ((11, 1), "455.23"),
    ((11, 2), "460.27.03"),
    ((11, 3), "465.19.01"),
    ((11, 4), "470.42.01"),
    ((11, 5), "495.29.05"),
    ((11, 6), "510.39.01"),
    ((11, 7), "515.43.04"),
    ((11, 8), "520.61.05"),
    ((12, 0), "525.60.13"),
    ((12, 1), "530.30.02"),
    ((12, 2), "535.54.03"),
    ((12, 3), "545.23.06"),
    ((12, 4), "550.54.14"),
    ((12, 5), "555.42.02"),
    ((12, 6), "560.28.03"),
    ((12, 8), "570.26"),
    ((12, 9), "575.51.03"),
    ((13, 0), "580.65.06"),
    ((13, 1), "590.44.01"),
    ((13, 2), "595.45.04"),
    ((13, 3), "610.43.02"),
];

/// What the tables say about a driver branch's CUDA version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BranchCuda {
    /// The highest CUDA it runs natively.
    Known(CudaVersion),
    /// Newer than every branch in [`BRANCH_CUDA`]: taken to run every CUDA
    /// the tables know (drivers are backward compatible).
    NewerThanData {
        /// The newest branch the table knows.
        newest: u32,
    },
    /// Older than every branch in the table.
    OlderThanData,
}

/// The highest CUDA a driver branch runs natively (a branch between two rows,
/// e.g. a Jetson R540, gets the row below it).
pub fn branch_cuda(branch: u32) -> BranchCuda {
    let newest = BRANCH_CUDA.last().map_or(0, |r| r.0);
    if branch > newest {
        return BranchCuda::NewerThanData { newest };
    }
    match BRANCH_CUDA.iter().rev().find(|(b, _)| *b <= branch) {
        Some((_, (a, b))) => BranchCuda::Known(CudaVersion::new(*a, *b)),
        None => BranchCuda::OlderThanData,
    }
}

/// The first release of a branch that the tables know (its GA toolkit
/// driver in Table 3), for a bare `--driver 535`.
pub fn first_release_of_branch(branch: u32) -> Option<&'static str> {
    TOOLKIT_DRIVER
        .iter()
        .map(|(_, d)| *d)
        .find(|d| d.split('.').next().and_then(|b| b.parse::<u32>().ok()) == Some(branch))
}

/// The GA toolkit driver of CUDA `cuda` (exact minor, else the next minor up).
pub fn toolkit_driver(cuda: CudaVersion) -> Option<&'static str> {
    TOOLKIT_DRIVER
        .iter()
        .find(|((a, b), _)| CudaVersion::new(*a, *b) >= cuda)
        .map(|(_, d)| *d)
}

/// The oldest Linux driver that runs an application built with CUDA `app`:
/// the major's minor-version-compatibility floor from CUDA 11 on, the
/// toolkit driver before (no minor-version compatibility before CUDA 11).
pub fn min_driver_for(app: CudaVersion) -> Option<&'static str> {
    MINOR_COMPAT_FLOOR
        .iter()
        .find(|(m, _)| *m == app.major)
        .map(|(_, v)| *v)
        .or_else(|| toolkit_driver(app))
}

/// The first CUDA release whose toolkit can target compute capability `cc`
/// (compat-facts.md §1d, from the CUDA release notes: 8.0 in 11.0, 8.6 in
/// 11.1, 8.7 in 11.4, 8.9 and 9.0 in 11.8, 10.0/12.0 in 12.8, 10.3/12.1 in
/// 12.9, Thor's 11.0 in 13.0 (sm_101 before)).
///
/// 7.5 (Turing) in 10.0: NVIDIA's Turing Compatibility Guide builds Turing
/// cubins "Using CUDA Toolkit 10.0" and has 9.x applications reach Turing only
/// through Volta cubins or PTX (https://docs.nvidia.com/cuda/turing-compatibility-guide/index.html
/// §1.4–1.5); Turing shipped with the R410 driver of CUDA 10.0. 7.2 (Xavier)
/// in 9.1: PTX ISA 6.1 (CUDA 9.1) added the sm_72 target (NVIDIA PTX ISA
/// manual, release history; clang's `MinVersionForCudaArch`: SM_72 →
/// CUDA_91, SM_75 → CUDA_100, llvm/llvm-project clang/lib/Basic/Cuda.cpp).
/// kb-audit doubt 8: both were 9.0 before.
pub fn first_cuda_for_cc(cc: (u32, u32)) -> CudaVersion {
    let (a, b) = match cc {
        (7, 5) => (10, 0),
        (7, 2) => (9, 1),
        (8, 0) => (11, 0),
        (8, 6) => (11, 1),
        (8, 7) => (11, 4),
        (8, 9) | (9, 0) => (11, 8),
        (10, 0) | (10, 1) | (12, 0) => (12, 8),
        (10, 3) | (12, 1) => (12, 9),
        (11, 0) => (13, 0),
        (m, _) if m < 8 => (9, 0),
        _ => (99, 0),
    };
    CudaVersion::new(a, b)
}

/// The oldest branch that drives a GPU of compute capability `cc` at all
/// (Blackwell needs R570: [`branch_supports_gpu`]).
pub fn min_branch_for_gpu(cc: (u32, u32)) -> u32 {
    match cc {
        (10, _) | (12, _) => 570,
        _ => 0,
    }
}

/// The dotted number prefix of a PEP 440 version (`0.4.38.dev20260317` →
/// `[0, 4, 38]`, `0.12.0+cuda12` → `[0, 12, 0]`).
pub fn release_numbers(version: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in version.split('.') {
        let n: String = part.chars().take_while(char::is_ascii_digit).collect();
        let Ok(v) = n.parse() else { break };
        out.push(v);
        if n.len() != part.len() {
            break;
        }
    }
    out
}

/// Whether jaxlib uses a CUDA plugin (`jax-cudaNN-plugin`, its `-pjrt`) of
/// version `plugin`: only when the dotted number prefixes of both versions are
/// equal, else it warns "JAX plugin … is not compatible with the installed
/// jaxlib version …, so it will not be used" and JAX runs on the CPU
/// (`jaxlib/plugin_support.py`, `check_plugin_version`).
pub fn jax_plugin_usable(jaxlib: &str, plugin: &str) -> bool {
    let a = release_numbers(jaxlib);
    !a.is_empty() && a == release_numbers(plugin)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUDA_13_0: u32 = 13000;

    fn imgs(targets: &[&str]) -> Vec<FatbinImage> {
        targets
            .iter()
            .map(|t| {
                let v = if t.starts_with("sm_") { (1, 8) } else { (9, 0) };
                image_from_target(t, v).unwrap()
            })
            .collect()
    }

    #[test]
    fn isa_table() {
        assert_eq!(max_ptx_isa(13000), (9, 0));
        assert_eq!(max_ptx_isa(12090), (8, 8));
        assert_eq!(max_ptx_isa(12080), (8, 7));
        assert_eq!(max_ptx_isa(12060), (8, 5));
        assert_eq!(max_ptx_isa(12040), (8, 4));
        assert_eq!(max_ptx_isa(11080), (7, 8));
        assert_eq!(max_ptx_isa(10020), (6, 5));
        assert_eq!(max_ptx_isa(8000), (5, 0));
        assert_eq!(cuda_for_ptx_isa((9, 0)), 13000);
        assert_eq!(cuda_for_ptx_isa((8, 8)), 12090);
        assert_eq!(cuda_for_ptx_isa((5, 0)), 8000);
        assert_eq!(cuda_version_string(cuda_for_ptx_isa((9, 9))), "13.9");
    }

    #[test]
    fn h200_torch_2_11_cu130_runs_sm_90_sass() {
        // cuobjdump --list-elf of libtorch_cuda.so on the H200 (no PTX at all).
        let torch = imgs(&[
            "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_103a",
            "sm_120", "sm_120a", "sm_121a",
        ]);
        let v = decide((9, 0), CUDA_13_0, &torch);
        assert_eq!(v.outcome, ImageOutcome::Sass);
        assert_eq!(v.image.as_deref(), Some("sm_90"));
        assert_eq!(v.also_usable, vec!["sm_90a".to_string()]);
        assert_eq!(v.expected_code, 0);
        // The same wheel on an RTX 5090 / DGX Spark / V100 / B300.
        assert_eq!(
            decide((12, 0), CUDA_13_0, &torch).image.as_deref(),
            Some("sm_120")
        );
        let spark = decide((12, 1), CUDA_13_0, &torch);
        assert_eq!(spark.image.as_deref(), Some("sm_120"));
        assert_eq!(spark.also_usable, vec!["sm_121a".to_string()]);
        assert_eq!(
            decide((10, 3), CUDA_13_0, &torch).image.as_deref(),
            Some("sm_100")
        );
        assert_eq!(decide((7, 0), CUDA_13_0, &torch).expected_code, 209);
        assert_eq!(decide((11, 0), CUDA_13_0, &torch).expected_code, 209);
    }

    #[test]
    fn sm_120_gpu_with_torch_2_0_1_cu117_has_no_kernel_image() {
        // data/torch_wheels.csv: 2.0.x cu117 = sm_37;sm_50;sm_60;sm_70;sm_75;sm_80;sm_86, no PTX.
        let torch = imgs(&[
            "sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86",
        ]);
        let v = decide((12, 0), CUDA_13_0, &torch);
        assert_eq!(v.outcome, ImageOutcome::NoImage);
        assert_eq!(v.expected_code, CUDA_ERROR_NO_BINARY_FOR_GPU);
        assert!(v.image.is_none());
        // The same wheel on an H100/H200 (no sm_90 in cu117): also 209.
        assert_eq!(decide((9, 0), CUDA_13_0, &torch).expected_code, 209);
        // ... but an RTX 4090 (8.9) runs its sm_86 code.
        assert_eq!(
            decide((8, 9), CUDA_13_0, &torch).image.as_deref(),
            Some("sm_86")
        );
    }

    #[test]
    fn sm_80_sm_86_only_fatbin_on_sm_90_is_209() {
        let fat = imgs(&["sm_80", "sm_86"]);
        let v = decide((9, 0), CUDA_13_0, &fat);
        assert_eq!(v.outcome, ImageOutcome::NoImage);
        assert_eq!(v.expected_code, 209);
        assert!(v.reason.contains("sm_80, sm_86"), "{}", v.reason);
        // With compute_80 PTX added, the H200 JITs it.
        let mut with_ptx = fat.clone();
        with_ptx.extend(imgs(&["compute_80"]));
        let v = decide((9, 0), CUDA_13_0, &with_ptx);
        assert_eq!(v.outcome, ImageOutcome::PtxJit);
        assert_eq!(v.image.as_deref(), Some("compute_80"));
    }

    #[test]
    fn sm_89_runs_an_sm_86_build_but_sm_80_does_not() {
        let fat = imgs(&["sm_86"]);
        let v = decide((8, 9), CUDA_13_0, &fat);
        assert_eq!(v.outcome, ImageOutcome::Sass);
        assert_eq!(v.image.as_deref(), Some("sm_86"));
        assert_eq!(decide((8, 0), CUDA_13_0, &fat).expected_code, 209);
        // Highest compatible minor wins.
        let fat = imgs(&["sm_80", "sm_86"]);
        assert_eq!(
            decide((8, 9), CUDA_13_0, &fat).image.as_deref(),
            Some("sm_86")
        );
        // Orin (8.7) is Tegra: desktop sm_80/sm_86 SASS does not run there (errata 2).
        assert_eq!(decide((8, 7), CUDA_13_0, &fat).expected_code, 209);
    }

    #[test]
    fn arch_specific_and_family_variants() {
        // sm_90a only on exactly 9.0; sm_100a not on 10.3; sm_100f on 10.3.
        assert_eq!(
            decide((9, 0), CUDA_13_0, &imgs(&["sm_90a"]))
                .image
                .as_deref(),
            Some("sm_90a")
        );
        assert_eq!(
            decide((10, 3), CUDA_13_0, &imgs(&["sm_100a"])).expected_code,
            209
        );
        assert_eq!(
            decide((10, 3), CUDA_13_0, &imgs(&["sm_100f"]))
                .image
                .as_deref(),
            Some("sm_100f")
        );
        assert_eq!(
            decide((10, 0), CUDA_13_0, &imgs(&["sm_103f"])).expected_code,
            209
        );
        // compute_90a PTX does not JIT for 10.0; plain compute_90 does.
        assert_eq!(
            decide((10, 0), CUDA_13_0, &imgs(&["compute_90a"])).expected_code,
            209
        );
        assert_eq!(
            decide((10, 0), CUDA_13_0, &imgs(&["compute_90"])).outcome,
            ImageOutcome::PtxJit
        );
    }

    #[test]
    fn ptx_newer_than_the_driver_is_222() {
        // CUDA 13.0 PTX (ISA 9.0) under a 12.4 driver (ISA <= 8.4).
        let v = decide((9, 0), 12040, &imgs(&["compute_90"]));
        assert_eq!(v.outcome, ImageOutcome::PtxTooNew);
        assert_eq!(v.expected_code, 222);
        assert!(
            v.reason.contains("needs a CUDA 13.0 driver"),
            "{}",
            v.reason
        );
        // SASS still wins even when the PTX is too new.
        let v = decide((9, 0), 12040, &imgs(&["sm_90", "compute_90"]));
        assert_eq!(v.outcome, ImageOutcome::Sass);
    }

    #[test]
    fn standalone_predictions_match_what_the_h200_measured() {
        // module-load-probe.txt, H200 sm_90, driver CUDA 13.0.
        let dev = (9, 0);
        for (t, v, code) in [
            ("sm_100", (1, 8), 209),
            ("sm_120", (1, 8), 209),
            ("sm_75", (1, 7), 209),
            ("sm_80", (1, 7), 209),
            ("sm_86", (1, 7), 209),
            ("sm_89", (1, 7), 209),
            ("sm_90a", (1, 7), 0),
            ("sm_90", (1, 7), 0),
            ("compute_80", (9, 0), 0),
            ("compute_90", (9, 0), 0),
            ("compute_80", (9, 9), 222),
            ("compute_100a", (9, 0), 218),
        ] {
            let img = image_from_target(t, v).unwrap();
            assert_eq!(predict_standalone(dev, CUDA_13_0, &img), code, "{t} {v:?}");
        }
    }

    #[test]
    fn target_names_parse() {
        let i = image_from_target("sm_100a", (1, 8)).unwrap();
        assert_eq!(
            (i.kind, i.arch, i.variant),
            (ImageKind::Sass, 100, ArchVariant::A)
        );
        assert_eq!(i.target(), "sm_100a");
        assert_eq!(
            image_from_target("compute_120f", (9, 0)).unwrap().target(),
            "compute_120f"
        );
        assert!(image_from_target("gfx90a", (0, 0)).is_none());
        assert!(image_from_target("sm_", (0, 0)).is_none());
    }

    #[test]
    fn tegra_runs_only_its_own_sass_and_desktop_never_runs_tegra_sass() {
        // compat-facts.md errata 2: sm_80 does not run on Orin.
        let desktop = imgs(&["sm_80", "sm_86"]);
        assert_eq!(decide((8, 7), CUDA_13_0, &desktop).expected_code, 209);
        let orin = imgs(&["sm_87"]);
        assert_eq!(
            decide((8, 7), CUDA_13_0, &orin).image.as_deref(),
            Some("sm_87")
        );
        // An RTX 4090 (8.9) does not run Orin SASS even though 7 <= 9.
        assert_eq!(decide((8, 9), CUDA_13_0, &orin).expected_code, 209);
        // PTX still JITs on Tegra.
        let ptx = imgs(&["compute_80"]);
        assert_eq!(
            decide((8, 7), CUDA_13_0, &ptx).outcome,
            ImageOutcome::PtxJit
        );
    }

    #[test]
    fn sm_80_only_build_needs_ptx_on_orin_but_runs_on_an_a10() {
        // kb-audit E13: an sm_80-only build on Orin (8.7) has no kernel image...
        let sm80 = imgs(&["sm_80"]);
        let orin = decide((8, 7), CUDA_13_0, &sm80);
        assert_eq!(orin.outcome, ImageOutcome::NoImage);
        assert!(orin.reason.contains("Tegra"), "{}", orin.reason);
        // ... unless it carries PTX, which the driver JITs.
        let sm80_ptx = imgs(&["sm_80", "compute_80"]);
        assert_eq!(
            decide((8, 7), CUDA_13_0, &sm80_ptx).outcome,
            ImageOutcome::PtxJit
        );
        // An sm_87 build runs on Orin.
        let sm87 = decide((8, 7), CUDA_13_0, &imgs(&["sm_80", "sm_87"]));
        assert_eq!(sm87.image.as_deref(), Some("sm_87"));
        // The sm_80 build runs on an A10 (8.6, desktop).
        assert_eq!(
            decide((8, 6), CUDA_13_0, &sm80).image.as_deref(),
            Some("sm_80")
        );
        // Thor: CUDA 12.8/12.9 sm_101 cubins do not run as 11.0 (CUDA 13's name).
        assert_eq!(
            decide((11, 0), CUDA_13_0, &imgs(&["sm_101"])).expected_code,
            209
        );
    }

    #[test]
    fn a_jetson_fingerprint_makes_any_cc_tegra() {
        // A future Tegra CC not yet in TEGRA_CCS: the machine said Jetson.
        let dev = Device::observed((9, 9), true);
        assert!(dev.tegra);
        let img = image_from_target("sm_90", (1, 8)).unwrap();
        assert!(!sass_runs_on(dev, &img));
        assert!(sass_runs_on(Device::observed((9, 9), false), &img));
        assert_eq!(predict_standalone_on(dev, CUDA_13_0, &img), 209);
        assert!(Device::observed((8, 7), false).tegra);
    }

    #[test]
    fn driver_cuda_rules_follow_minor_version_compatibility() {
        let v = |s: &str| s.parse::<CudaVersion>().unwrap();
        assert_eq!(driver_runs_cuda(v("13.0"), v("13.0")), DriverCompat::Native);
        assert_eq!(
            driver_runs_cuda(v("12.4"), v("12.8")),
            DriverCompat::MinorVersion
        );
        assert_eq!(driver_runs_cuda(v("12.9"), v("13.0")), DriverCompat::TooOld);
        assert_eq!(min_driver_branch_for(v("13.0")), Some(580));
        assert_eq!(min_driver_branch_for(v("12.6")), Some(525));
        assert!(branch_supports_gpu(590, (7, 0)).is_err());
        assert!(branch_supports_gpu(580, (7, 0)).is_ok());
        assert!(branch_supports_gpu(550, (12, 0)).is_err());
        assert!(needs_open_modules((10, 0), "NVIDIA B200"));
        // compat-facts.md §1c: R535 = CUDA 12.2, R580 = 13.0, R610 = 13.3; R615 is newer than the table.
        assert_eq!(branch_cuda(535), BranchCuda::Known(v("12.2")));
        assert_eq!(branch_cuda(540), BranchCuda::Known(v("12.2")));
        assert_eq!(branch_cuda(580), BranchCuda::Known(v("13.0")));
        assert!(matches!(
            branch_cuda(615),
            BranchCuda::NewerThanData { newest: 610 }
        ));
        assert_eq!(first_release_of_branch(535), Some("535.54.03"));
        assert_eq!(min_driver_for(v("12.4")), Some("525.60.13"));
        assert_eq!(min_driver_for(v("10.2")), Some("440.33"));
        assert_eq!(toolkit_driver(v("12.7")), Some("570.26"));
        assert!(!needs_open_modules((9, 0), "NVIDIA H200"));
    }

    #[test]
    fn cuda_13_3_and_first_toolkits_of_turing_and_xavier() {
        let v = |s: &str| s.parse::<CudaVersion>().unwrap();
        // kb-audit doubt 7: the tables stopped at 13.2/R595. NVIDIA's CUDA 13.3.0
        // runfile bundles 610.43.02.
        assert_eq!(branch_cuda(610), BranchCuda::Known(v("13.3")));
        assert_eq!(toolkit_driver(v("13.3")), Some("610.43.02"));
        assert_eq!(first_release_of_branch(610), Some("610.43.02"));
        // 13.4/13.5: no table row read; a newer driver stays newer than data.
        assert_eq!(toolkit_driver(v("13.4")), None);
        // kb-audit doubt 8: sm_75 came with CUDA 10.0, sm_72 with 9.1 (both were 9.0).
        assert_eq!(first_cuda_for_cc((7, 5)), v("10.0"));
        assert_eq!(first_cuda_for_cc((7, 2)), v("9.1"));
        assert_eq!(first_cuda_for_cc((7, 0)), v("9.0"));
        assert_eq!(first_cuda_for_cc((6, 1)), v("9.0"));
    }
}
