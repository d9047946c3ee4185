//! Reconciliation: read the Jetson files through a [`JetsonFiles`]
//! implementation, run the parsers, look the results up in the tables, and say
//! which source each fact came from and where the sources disagree.
//!
//! Precedence (first that has an answer wins; every other source that has one
//! is compared with it and a [`Disagreement`] is recorded when they differ):
//!
//! | fact | sources in order |
//! |---|---|
//! | L4T | `/etc/nv_tegra_release`, dpkg `nvidia-l4t-core` |
//! | JetPack | table row of the L4T, dpkg `nvidia-jetpack`, R-major inference |
//! | CUDA | `/usr/local/cuda*/version.json`/`version.txt`, dpkg `cuda-cudart-X-Y`, table |
//! | cuDNN, TensorRT | dpkg (`libcudnn*`, `libnvinfer*`), table |
//! | Ubuntu | `/etc/os-release`, table |
//! | SoC | device-tree `compatible`, module table |
//! | module | device-tree `compatible` + module table |
//! | power mode | `/var/lib/nvpmodel/status`, `PM_CONFIG DEFAULT` of `/etc/nvpmodel.conf` |
//!
//! The JetPack of a known L4T release comes from the table rather than from
//! the `nvidia-jetpack` meta-package because NVIDIA does not always rebuild the
//! meta-package: the r35.6 apt repo pairs `nvidia-l4t-core 35.6.5` (JetPack
//! 5.1.7) with `nvidia-jetpack 5.1.6-b5`. For an L4T release newer than the
//! table, the meta-package is the best answer there is.

use serde::{Deserialize, Serialize};

use crate::cudafiles::{
    cuda_dir_version, parse_cuda_version_json, parse_cuda_version_txt, parse_os_release_version_id,
};
use crate::devicetree::{model_family, parse_compatible, parse_model, Compatible, Soc};
use crate::dpkg::{parse_dpkg_status, stack_from_packages, DpkgStack};
use crate::error::JetsonError;
use crate::nvpmodel::{parse_nvpmodel_conf, parse_nvpmodel_status, PowerModeDef};
use crate::release::{parse_nv_tegra_release, TegraRelease};
use crate::sysfs::{
    jetson_clocks_state, looks_like_gpu, parse_sysfs_u64, ClockRange, JetsonClocksState,
};
use crate::tables::{lookup_l4t, lookup_module, JetpackRow, L4tLookup, ModuleRow};
use crate::version::{cmp_dotted, major_minor, L4tVersion};

/// Read-only access to the machine's files, by absolute path
/// (`/etc/nv_tegra_release`). The agent implements it over its host seam
/// (a root directory or a replayed capture).
pub trait JetsonFiles {
    /// The bytes of a file: `Ok(None)` when it does not exist, `Err` when it
    /// exists but cannot be read.
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, String>;
    /// The entry names of a directory: `Ok(None)` when it does not exist.
    fn list(&self, dir: &str) -> Result<Option<Vec<String>>, String>;
}

/// Where a fact came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FactSource {
    /// `/etc/nv_tegra_release`.
    ReleaseFile,
    /// dpkg `nvidia-l4t-core` version.
    DpkgL4tCore,
    /// dpkg `nvidia-jetpack` meta-package version.
    DpkgJetpack,
    /// A dpkg component package (`cuda-cudart-12-6`, `libcudnn8`, `libnvinfer10`).
    DpkgPackage,
    /// `/usr/local/cuda*/version.json` or `version.txt` (or the directory name).
    CudaVersionFile,
    /// `/proc/device-tree/compatible`.
    DeviceTreeCompatible,
    /// `/proc/device-tree/model`.
    DeviceTreeModel,
    /// `jetson/data/modules.csv`.
    ModuleTable,
    /// The SoC → compute-capability table.
    SocTable,
    /// The exact row of `jetson/data/jetpack.csv` for this L4T release.
    JetpackTable,
    /// The nearest older row of `jetpack.csv` (this L4T release is not in it).
    JetpackTableNearest,
    /// JetPack major inferred from the L4T R-major (R32→4, R35→5, R36→6, R38+→7).
    RMajorInference,
    /// `/etc/os-release`.
    OsRelease,
    /// `/var/lib/nvpmodel/status`.
    NvpmodelStatus,
    /// `PM_CONFIG DEFAULT` of `/etc/nvpmodel.conf`.
    NvpmodelConfDefault,
    /// `/sys` files.
    Sysfs,
}

/// A value with the source it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Where it came from.
    pub source: FactSource,
    /// Path, package or table row that said so.
    pub detail: String,
}

impl<T> Sourced<T> {
    fn new(value: T, source: FactSource, detail: impl Into<String>) -> Self {
        Self {
            value,
            source,
            detail: detail.into(),
        }
    }
}

/// The module on the carrier board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModuleInfo {
    /// Normalised part number (`p3767-0005`).
    pub part_number: String,
    /// As written in the device tree (`p3448-0000-b00`).
    pub part_number_raw: String,
    /// Module name from the table (`Jetson Orin Nano 8GB (developer kit module)`).
    pub name: Option<String>,
    /// Family (`Orin Nano`).
    pub family: Option<String>,
    /// RAM in GB from the table.
    pub ram_gb: Option<u32>,
    /// True when the device tree selects the Orin "Super" configuration.
    pub super_variant: bool,
    /// False when the part number is not in `modules.csv`.
    pub in_table: bool,
    /// Source of the table row, when there is one.
    pub table_source: Option<String>,
}

/// The L4T release and how sure we are of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct L4tInfo {
    /// The release.
    pub version: L4tVersion,
    /// Release file or dpkg.
    pub source: FactSource,
    /// Path or package version.
    pub detail: String,
    /// False when `jetpack.csv` has no row for it.
    pub in_table: bool,
    /// True when it is newer than every row of `jetpack.csv`.
    pub newer_than_table: bool,
}

/// The JetPack release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JetpackInfo {
    /// `6.2.1`, `7.2`, or `7.x` when only the major is known.
    pub version: String,
    /// JetPack major.
    pub major: Option<u32>,
    /// True when `version` is an exact release, false for `N.x`.
    pub exact: bool,
    /// Where it came from.
    pub source: FactSource,
    /// Table row, package version or rule.
    pub detail: String,
    /// For an L4T release missing from the table: the newest older row of the
    /// same R-major (`7.2 (R39.2.0)`).
    pub nearest_known: Option<String>,
}

/// Power mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PowerModeInfo {
    /// Active mode id.
    pub id: Option<u32>,
    /// Active mode name.
    pub name: Option<String>,
    /// Status file, or the configuration's default when there is no status.
    pub source: FactSource,
    /// Boot default id.
    pub default_id: Option<u32>,
    /// Boot default name.
    pub default_name: Option<String>,
    /// All modes declared by the configuration.
    pub modes: Vec<PowerModeDef>,
    /// Fan mode from the status file.
    pub fan_mode: Option<String>,
}

/// GPU clocks and load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GpuInfo {
    /// devfreq directory that was read (`/sys/class/devfreq/17000000.gpu`).
    pub devfreq_path: String,
    /// Min/max/current frequency in Hz.
    pub freq_hz: ClockRange,
    /// Load in tenths of a percent (0–1000), as the kernel reports it.
    pub load_permille: Option<u32>,
    /// File the load came from.
    pub load_path: Option<String>,
}

/// CPU and GPU clock pinning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClocksInfo {
    /// `jetson_clocks` state.
    pub state: JetsonClocksState,
    /// CPUs whose cpufreq limits could be read.
    pub cpus_read: usize,
    /// Of those, CPUs with min == max.
    pub cpus_pinned: usize,
}

/// One source's value in a disagreement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SourceValue {
    /// Which source.
    pub source: FactSource,
    /// What it says.
    pub value: String,
    /// Path / package / row.
    pub detail: String,
}

/// Two or more sources say different things about one fact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Disagreement {
    /// `l4t`, `jetpack`, `cuda`, `cudnn`, `tensorrt`, `ubuntu`, `soc`,
    /// `module`, `board`, `power_mode`.
    pub fact: String,
    /// The values, the one the report uses first.
    pub values: Vec<SourceValue>,
    /// What it means and which value the report uses.
    pub explanation: String,
    /// True when the difference is expected (e.g. `BOARD: t186ref` on an Orin
    /// with JetPack 5) and needs no action.
    pub benign: bool,
}

/// Everything gpukb knows about a Jetson.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JetsonReport {
    /// Device-tree `model` (marketing text).
    pub model: Option<String>,
    /// Module from the device tree and the module table.
    pub module: Option<ModuleInfo>,
    /// Carrier board part number (`p3768-0000`).
    pub carrier: Option<String>,
    /// Device-tree `compatible` entries.
    pub compatible: Vec<String>,
    /// SoC.
    pub soc: Option<Sourced<Soc>>,
    /// GPU compute capability (`8.7`).
    pub compute_capability: Option<Sourced<String>>,
    /// GPU architecture (`Ampere`).
    pub gpu_architecture: Option<String>,
    /// L4T release.
    pub l4t: Option<L4tInfo>,
    /// Parsed `/etc/nv_tegra_release`.
    pub release_file: Option<TegraRelease>,
    /// JetPack release.
    pub jetpack: Option<JetpackInfo>,
    /// Ubuntu release.
    pub ubuntu: Option<Sourced<String>>,
    /// CUDA toolkit.
    pub cuda: Option<Sourced<String>>,
    /// cuDNN.
    pub cudnn: Option<Sourced<String>>,
    /// TensorRT.
    pub tensorrt: Option<Sourced<String>>,
    /// The upgradable CUDA's forward-compatibility package (`cuda-compat-X-Y`,
    /// JetPack 5.0+), when installed: it lets a newer CUDA than the JetPack's
    /// run without reflashing.
    #[serde(default)]
    pub cuda_compat: Option<Sourced<String>>,
    /// Power mode.
    pub power_mode: Option<PowerModeInfo>,
    /// `jetson_clocks` state.
    pub clocks: ClocksInfo,
    /// GPU frequency and load.
    pub gpu: Option<GpuInfo>,
    /// Where the sources disagree.
    pub disagreements: Vec<Disagreement>,
    /// Unreadable or unparsable files and other remarks.
    pub notes: Vec<String>,
}

impl JetsonReport {
    /// Disagreements that need attention (not benign).
    pub fn real_disagreements(&self) -> impl Iterator<Item = &Disagreement> {
        self.disagreements.iter().filter(|d| !d.benign)
    }
}

struct Reader<'a> {
    files: &'a dyn JetsonFiles,
    notes: Vec<String>,
    unreadable: Vec<(String, String)>,
}

impl Reader<'_> {
    fn read(&mut self, path: &str) -> Option<Vec<u8>> {
        match self.files.read(path) {
            Ok(v) => v,
            Err(e) => {
                self.notes.push(format!("{path}: unreadable: {e}"));
                self.unreadable.push((path.to_string(), e));
                None
            }
        }
    }
    fn read_text(&mut self, path: &str) -> Option<String> {
        self.read(path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }
    fn first_of(&mut self, paths: &[&str]) -> Option<(String, Vec<u8>)> {
        paths
            .iter()
            .find_map(|p| self.read(p).map(|b| (p.to_string(), b)))
    }
    fn list(&mut self, dir: &str) -> Vec<String> {
        match self.files.list(dir) {
            Ok(Some(mut v)) => {
                v.sort();
                v
            }
            Ok(None) => Vec::new(),
            Err(e) => {
                self.notes.push(format!("{dir}: unlistable: {e}"));
                Vec::new()
            }
        }
    }
    fn u64_at(&mut self, path: &str) -> Option<u64> {
        self.read_text(path).and_then(|t| parse_sysfs_u64(&t))
    }
}

/// Strip decorations from a table JetPack name for comparison
/// (`5.0.2 GA` → `5.0.2`, `6.1 (rev1)` → `6.1`).
fn jetpack_core(name: &str) -> &str {
    name.split_whitespace().next().unwrap_or(name)
}

fn sv(source: FactSource, value: impl Into<String>, detail: impl Into<String>) -> SourceValue {
    SourceValue {
        source,
        value: value.into(),
        detail: detail.into(),
    }
}

/// Fixed paths [`observe`] may read (a capture for replay should include
/// them). Besides these it reads, under the directories of [`LISTED_DIRS`]:
/// `/usr/local/cuda-X.Y/version.{json,txt}`,
/// `/sys/class/devfreq/<node>/{min,max,cur}_freq`,
/// `/sys/class/devfreq/<node>/device/{load,of_node/name}` and
/// `/sys/devices/system/cpu/cpu<N>/cpufreq/scaling_{min,max,cur}_freq`.
pub const READ_PATHS: &[&str] = &[
    "/etc/nv_tegra_release",
    "/proc/device-tree/model",
    "/proc/device-tree/compatible",
    "/sys/firmware/devicetree/base/model",
    "/sys/firmware/devicetree/base/compatible",
    "/var/lib/dpkg/status",
    "/etc/os-release",
    "/usr/local/cuda/version.json",
    "/usr/local/cuda/version.txt",
    "/etc/nvpmodel.conf",
    "/var/lib/nvpmodel/status",
    "/sys/devices/gpu.0/load",
    "/sys/devices/platform/gpu.0/load",
    "/sys/devices/17000000.gv11b/load",
    "/sys/devices/17000000.ga10b/load",
    "/sys/devices/platform/bus@0/17000000.gpu/load",
    "/sys/devices/platform/17000000.gpu/load",
];

/// Directories [`observe`] lists.
pub const LISTED_DIRS: &[&str] = &[
    "/usr/local",
    "/sys/class/devfreq",
    "/sys/devices/system/cpu",
];

const RELEASE_FILE: &str = "/etc/nv_tegra_release";
const DPKG_STATUS: &str = "/var/lib/dpkg/status";

/// Build the Jetson report. `Ok(None)` when this is not a Jetson (no release
/// file, no `nvidia-l4t-core`, no `nvidia,tegra*` device tree). `Err` only when
/// both the release file and the device tree exist but cannot be read; other
/// unreadable files become [`JetsonReport::notes`].
pub fn observe(files: &dyn JetsonFiles) -> Result<Option<JetsonReport>, JetsonError> {
    let mut r = Reader {
        files,
        notes: Vec::new(),
        unreadable: Vec::new(),
    };
    let raw = read_raw_sources(&mut r);
    if !raw.is_jetson() {
        return not_a_jetson(&r);
    }
    let mut disagreements = Vec::new();
    let l4t = observe_l4t(&mut r, raw.release.as_ref(), &raw.dpkg, &mut disagreements);
    let jetpack = observe_jetpack(&l4t, &raw.dpkg, &mut disagreements);
    let comp_row = component_row(&l4t);
    let ubuntu = observe_ubuntu(&mut r, comp_row, &mut disagreements);
    let libraries = observe_libraries(
        &mut r,
        &raw.dpkg,
        comp_row,
        l4t.info.as_ref(),
        &mut disagreements,
    );
    let hardware = observe_hardware(&mut r, &raw, l4t.info.as_ref(), &mut disagreements);
    let power_mode = observe_power_mode(&mut r);
    let gpu = find_gpu(&mut r);
    let clocks = observe_clocks(&mut r, gpu.as_ref());

    Ok(Some(JetsonReport {
        model: raw.model,
        module: hardware.module,
        carrier: raw.compat.carrier,
        compatible: raw.compat.entries,
        soc: hardware.soc,
        compute_capability: hardware.compute_capability,
        gpu_architecture: hardware.gpu_architecture,
        l4t: l4t.info,
        release_file: raw.release,
        jetpack,
        ubuntu,
        cuda: libraries.cuda,
        cudnn: libraries.cudnn,
        tensorrt: libraries.tensorrt,
        cuda_compat: libraries.cuda_compat,
        power_mode,
        clocks,
        gpu,
        disagreements,
        notes: r.notes,
    }))
}

/// The files every other fact is reconciled from.
struct RawSources {
    /// Whether `/etc/nv_tegra_release` exists, parsable or not.
    release_present: bool,
    /// The parsed release file.
    release: Option<TegraRelease>,
    /// Device-tree `model`.
    model: Option<String>,
    /// Device-tree `compatible`.
    compat: Compatible,
    /// The NVIDIA stack as dpkg lists it.
    dpkg: DpkgStack,
}

impl RawSources {
    /// A release file, `nvidia-l4t-core` or an `nvidia,tegra*` device tree.
    fn is_jetson(&self) -> bool {
        self.release_present || self.dpkg.l4t_core.is_some() || self.compat.soc.is_some()
    }
}

/// Reads the release file, the device tree's `model` and `compatible`, and the dpkg status.
fn read_raw_sources(r: &mut Reader<'_>) -> RawSources {
    let release_text = r.read_text(RELEASE_FILE);
    let release_present = release_text.is_some();
    let release = match release_text.as_deref().map(parse_nv_tegra_release) {
        Some(Ok(rel)) => Some(rel),
        Some(Err(e)) => {
            r.notes.push(format!("{RELEASE_FILE}: {e}"));
            None
        }
        None => None,
    };
    let model = r
        .first_of(&[
            "/proc/device-tree/model",
            "/sys/firmware/devicetree/base/model",
        ])
        .and_then(|(_, b)| parse_model(&b));
    let compat: Compatible = r
        .first_of(&[
            "/proc/device-tree/compatible",
            "/sys/firmware/devicetree/base/compatible",
        ])
        .map(|(_, b)| parse_compatible(&b))
        .unwrap_or_default();
    let dpkg: DpkgStack = r
        .read_text(DPKG_STATUS)
        .map(|t| stack_from_packages(&parse_dpkg_status(&t)))
        .unwrap_or_default();
    RawSources {
        release_present,
        release,
        model,
        compat,
        dpkg,
    }
}

/// The answer for a machine that is not a Jetson: `Err` when both the release file and
/// the device tree exist but could not be read, else `Ok(None)`.
fn not_a_jetson(r: &Reader<'_>) -> Result<Option<JetsonReport>, JetsonError> {
    let release_err = r
        .unreadable
        .iter()
        .find(|(p, _)| p == RELEASE_FILE)
        .cloned();
    let dt_err = r
        .unreadable
        .iter()
        .any(|(p, _)| p.ends_with("/compatible") || p.ends_with("/model"));
    if let (Some((path, message)), true) = (release_err, dt_err) {
        return Err(JetsonError::Unreadable { path, message });
    }
    Ok(None)
}

/// The L4T release with its `jetpack.csv` row: the exact one, or the nearest older one.
struct L4tPart {
    /// The release and its source.
    info: Option<L4tInfo>,
    /// The table row of exactly this release.
    row: Option<JetpackRow>,
    /// For a release missing from the table: the nearest older row.
    nearest: Option<JetpackRow>,
}

/// The L4T release: the release file, else dpkg `nvidia-l4t-core`; records where the two
/// disagree and notes a release missing from the table.
fn observe_l4t(
    r: &mut Reader<'_>,
    release: Option<&TegraRelease>,
    dpkg: &DpkgStack,
    disagreements: &mut Vec<Disagreement>,
) -> L4tPart {
    let core = dpkg.l4t_core.as_ref();
    let l4t_pick: Option<(L4tVersion, FactSource, String)> = match (release, core) {
        (Some(rel), _) => Some((rel.l4t, FactSource::ReleaseFile, RELEASE_FILE.to_string())),
        (None, Some((v, raw))) => Some((
            *v,
            FactSource::DpkgL4tCore,
            format!("nvidia-l4t-core {raw}"),
        )),
        (None, None) => None,
    };
    let lookup = l4t_pick.as_ref().map(|(v, _, _)| lookup_l4t(*v));
    let row: Option<JetpackRow> = match &lookup {
        Some(L4tLookup::Known(row)) => Some(row.clone()),
        _ => None,
    };
    let nearest: Option<JetpackRow> = match &lookup {
        Some(L4tLookup::Unknown { nearest_older, .. }) => nearest_older.clone(),
        _ => None,
    };
    let info = l4t_pick.map(|(version, source, detail)| L4tInfo {
        version,
        source,
        detail,
        in_table: row.is_some(),
        newer_than_table: matches!(
            lookup,
            Some(L4tLookup::Unknown {
                newer_than_table: true,
                ..
            })
        ),
    });
    if let (Some(rel), Some((core_v, core_raw))) = (release, core) {
        if rel.l4t != *core_v {
            disagreements.push(l4t_disagreement(rel.l4t, *core_v, core_raw));
        }
    }
    if let Some(info) = &info {
        if !info.in_table {
            r.notes.push(format!(
                "L4T R{} is not in jetson/data/jetpack.csv (newest known: R{}); JetPack is inferred",
                info.version,
                crate::tables::latest_known_l4t()
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            ));
        }
    }
    L4tPart { info, row, nearest }
}

/// The release file says `file` but the installed `nvidia-l4t-core` is `core`.
fn l4t_disagreement(file: L4tVersion, core: L4tVersion, core_raw: &str) -> Disagreement {
    let jp_of = |v: L4tVersion| match lookup_l4t(v) {
        L4tLookup::Known(row) => format!("JetPack {}", row.jetpack),
        L4tLookup::Unknown { .. } => "a release missing from the table".to_string(),
    };
    Disagreement {
        fact: "l4t".into(),
        values: vec![
            sv(FactSource::ReleaseFile, file.to_string(), RELEASE_FILE),
            sv(
                FactSource::DpkgL4tCore,
                core.to_string(),
                format!("nvidia-l4t-core {core_raw}"),
            ),
        ],
        explanation: format!(
            "{RELEASE_FILE} says R{} ({}) but the installed nvidia-l4t-core package is {} ({}): \
             a partial or interrupted upgrade, or a root filesystem copied from another image. \
             The report uses the release file; run `sudo apt update && sudo apt full-upgrade` \
             (or reflash) so that both match.",
            file,
            jp_of(file),
            core,
            jp_of(core)
        ),
        benign: false,
    }
}

/// The JetPack release: the L4T's table row, else the `nvidia-jetpack` meta-package, else
/// the R-major inference; records where the meta-package disagrees.
fn observe_jetpack(
    l4t: &L4tPart,
    dpkg: &DpkgStack,
    disagreements: &mut Vec<Disagreement>,
) -> Option<JetpackInfo> {
    if let Some(row) = &l4t.row {
        return Some(jetpack_from_table(
            row,
            dpkg.jetpack.as_ref(),
            disagreements,
        ));
    }
    let info = l4t.info.as_ref();
    let nearest_known = l4t
        .nearest
        .as_ref()
        .map(|n| format!("{} (R{})", n.jetpack, n.l4t));
    if let Some((jp, raw)) = &dpkg.jetpack {
        return Some(jetpack_from_dpkg(
            jp,
            raw,
            info,
            nearest_known,
            disagreements,
        ));
    }
    info.and_then(|i| i.version.jetpack_major())
        .map(|m| JetpackInfo {
            version: format!("{m}.x"),
            major: Some(m),
            exact: false,
            source: FactSource::RMajorInference,
            detail: format!(
                "R{} is not in jetpack.csv; R{} belongs to JetPack {m}",
                info.map(|i| i.version.to_string()).unwrap_or_default(),
                info.map(|i| i.version.major).unwrap_or_default()
            ),
            nearest_known,
        })
}

/// The JetPack of a known L4T release, from its table row; records a disagreeing
/// `nvidia-jetpack` meta-package.
fn jetpack_from_table(
    row: &JetpackRow,
    dpkg_jp: Option<&(String, String)>,
    disagreements: &mut Vec<Disagreement>,
) -> JetpackInfo {
    let info = JetpackInfo {
        version: jetpack_core(&row.jetpack).to_string(),
        major: major_minor(&row.jetpack).map(|(m, _)| m),
        exact: true,
        source: FactSource::JetpackTable,
        detail: format!("jetpack.csv row R{} = JetPack {}", row.l4t, row.jetpack),
        nearest_known: None,
    };
    if let Some((jp, raw)) = dpkg_jp {
        if jp != &info.version {
            disagreements.push(Disagreement {
                fact: "jetpack".into(),
                values: vec![
                    sv(FactSource::JetpackTable, info.version.clone(), info.detail.clone()),
                    sv(FactSource::DpkgJetpack, jp.clone(), format!("nvidia-jetpack {raw}")),
                ],
                explanation: format!(
                    "L4T R{} is JetPack {} but the nvidia-jetpack meta-package is {raw}. \
                     NVIDIA does not always rebuild the meta-package for a BSP update, and a held or \
                     partial upgrade leaves it behind; the report trusts the L4T release.",
                    row.l4t, row.jetpack
                ),
                benign: false,
            });
        }
    }
    info
}

/// The JetPack of an L4T release missing from the table, from the `nvidia-jetpack`
/// meta-package; records a major that does not fit the L4T's R-major.
fn jetpack_from_dpkg(
    jp: &str,
    raw: &str,
    l4t: Option<&L4tInfo>,
    nearest_known: Option<String>,
    disagreements: &mut Vec<Disagreement>,
) -> JetpackInfo {
    let major = major_minor(jp).map(|(m, _)| m);
    let inferred_major = l4t.and_then(|i| i.version.jetpack_major());
    if let (Some(m), Some(inf)) = (major, inferred_major) {
        if m != inf {
            disagreements.push(Disagreement {
                fact: "jetpack".into(),
                values: vec![
                    sv(FactSource::DpkgJetpack, jp, format!("nvidia-jetpack {raw}")),
                    sv(
                        FactSource::RMajorInference,
                        format!("{inf}.x"),
                        l4t.map(|i| format!("R{}", i.version)).unwrap_or_default(),
                    ),
                ],
                explanation: format!(
                    "the nvidia-jetpack meta-package says {jp} but the L4T release belongs to JetPack {inf}"
                ),
                benign: false,
            });
        }
    }
    JetpackInfo {
        version: jp.to_string(),
        major,
        exact: true,
        source: FactSource::DpkgJetpack,
        detail: format!("nvidia-jetpack {raw}"),
        nearest_known,
    }
}

/// The table row the components are compared with: the exact row, else the nearest older one.
fn component_row(l4t: &L4tPart) -> Option<(&JetpackRow, FactSource)> {
    l4t.row
        .as_ref()
        .map(|r| (r, FactSource::JetpackTable))
        .or_else(|| {
            l4t.nearest
                .as_ref()
                .map(|r| (r, FactSource::JetpackTableNearest))
        })
}

/// How a table row is named as a source.
fn row_detail(r: &JetpackRow) -> String {
    format!("jetpack.csv row R{} (JetPack {})", r.l4t, r.jetpack)
}

/// A dpkg package's version, sourced to the package.
fn dpkg_sourced(p: &crate::dpkg::PackageVersion) -> Sourced<String> {
    Sourced::new(
        p.version.clone(),
        FactSource::DpkgPackage,
        format!("{} {}", p.package, p.dpkg_version),
    )
}

/// A component's version from the table row, sourced to that row.
fn from_row(
    comp_row: Option<(&JetpackRow, FactSource)>,
    value: fn(&JetpackRow) -> Option<&String>,
) -> Option<Sourced<String>> {
    comp_row
        .and_then(|(row, src)| value(row).map(|c| Sourced::new(c.clone(), src, row_detail(row))))
}

/// The Ubuntu release: `/etc/os-release`, else the table row; records where they disagree.
fn observe_ubuntu(
    r: &mut Reader<'_>,
    comp_row: Option<(&JetpackRow, FactSource)>,
    disagreements: &mut Vec<Disagreement>,
) -> Option<Sourced<String>> {
    let os_version = r
        .read_text("/etc/os-release")
        .and_then(|t| parse_os_release_version_id(&t));
    match (&os_version, comp_row) {
        (Some(v), row) => {
            if let Some((row, src)) = row {
                if !row.ubuntu.is_empty() && &row.ubuntu != v {
                    disagreements.push(Disagreement {
                        fact: "ubuntu".into(),
                        values: vec![
                            sv(FactSource::OsRelease, v.clone(), "/etc/os-release"),
                            sv(src, row.ubuntu.clone(), row_detail(row)),
                        ],
                        explanation: format!(
                            "JetPack {} ships Ubuntu {} but /etc/os-release says {v}: a do-release-upgrade on a \
                             Jetson is unsupported and breaks the L4T userspace",
                            row.jetpack, row.ubuntu
                        ),
                        benign: false,
                    });
                }
            }
            Some(Sourced::new(
                v.clone(),
                FactSource::OsRelease,
                "/etc/os-release",
            ))
        }
        (None, Some((row, src))) if !row.ubuntu.is_empty() => {
            Some(Sourced::new(row.ubuntu.clone(), src, row_detail(row)))
        }
        _ => None,
    }
}

/// CUDA, cuDNN, TensorRT and the CUDA forward-compatibility package.
struct Libraries {
    cuda: Option<Sourced<String>>,
    cudnn: Option<Sourced<String>>,
    tensorrt: Option<Sourced<String>>,
    cuda_compat: Option<Sourced<String>>,
}

/// The libraries: the CUDA toolkit directory, dpkg and the table row, reconciled per library.
fn observe_libraries(
    r: &mut Reader<'_>,
    dpkg: &DpkgStack,
    comp_row: Option<(&JetpackRow, FactSource)>,
    l4t: Option<&L4tInfo>,
    disagreements: &mut Vec<Disagreement>,
) -> Libraries {
    let cuda_file = find_cuda_file(r);
    let cuda = reconcile_component(
        "cuda",
        "CUDA",
        cuda_file.map(|(v, p)| Sourced::new(v, FactSource::CudaVersionFile, p)),
        dpkg.cuda.as_ref().map(dpkg_sourced),
        from_row(comp_row, |row| row.cuda.as_ref()),
        disagreements,
    );
    let cuda_compat = dpkg.cuda_compat.as_ref().map(dpkg_sourced);
    if let Some(c) = &cuda_compat {
        excuse_upgradable_cuda(c, l4t, disagreements);
    }
    let cudnn = reconcile_component(
        "cudnn",
        "cuDNN",
        None,
        dpkg.cudnn.as_ref().map(dpkg_sourced),
        from_row(comp_row, |row| row.cudnn.as_ref()),
        disagreements,
    );
    let tensorrt = reconcile_component(
        "tensorrt",
        "TensorRT",
        None,
        dpkg.tensorrt.as_ref().map(dpkg_sourced),
        from_row(comp_row, |row| row.tensorrt.as_ref()),
        disagreements,
    );
    Libraries {
        cuda,
        cudnn,
        tensorrt,
        cuda_compat,
    }
}

/// Marks the CUDA disagreements benign that the installed compat package `c` explains.
fn excuse_upgradable_cuda(
    c: &Sourced<String>,
    l4t: Option<&L4tInfo>,
    disagreements: &mut [Disagreement],
) {
    // A newer CUDA than the JetPack's, with its compat package, is the
    // supported upgrade path from JetPack 5.0 on (NVIDIA blog "Simplifying
    // CUDA Upgrades for NVIDIA Jetson Users"), not a partial upgrade.
    let jp5_or_later = l4t.is_some_and(|i| i.version.major >= 35);
    for d in disagreements.iter_mut().filter(|d| d.fact == "cuda") {
        let matches_compat = d
            .values
            .first()
            .is_some_and(|v| major_minor(&v.value) == major_minor(&c.value));
        if jp5_or_later && matches_compat {
            d.benign = true;
            d.explanation = format!(
                "{}; {} is installed, NVIDIA's upgradable CUDA path for JetPack 5.0 and later",
                d.explanation, c.detail
            );
        }
    }
}

/// The module, SoC and GPU.
struct Hardware {
    module: Option<ModuleInfo>,
    soc: Option<Sourced<Soc>>,
    compute_capability: Option<Sourced<String>>,
    gpu_architecture: Option<String>,
}

/// The module, SoC and compute capability from the device tree and the module table;
/// records where the model text, the release file's board or the L4T release do not fit.
fn observe_hardware(
    r: &mut Reader<'_>,
    raw: &RawSources,
    l4t: Option<&L4tInfo>,
    disagreements: &mut Vec<Disagreement>,
) -> Hardware {
    let compat = &raw.compat;
    let table_module = compat.module.as_deref().and_then(lookup_module);
    let module = compat.module.as_ref().map(|pn| ModuleInfo {
        part_number: pn.clone(),
        part_number_raw: compat.module_raw.clone().unwrap_or_else(|| pn.clone()),
        name: table_module.map(|m| m.module.clone()),
        family: table_module.map(|m| m.family.clone()),
        ram_gb: table_module.and_then(|m| m.ram_gb),
        super_variant: compat.super_variant,
        in_table: table_module.is_some(),
        table_source: table_module.map(|m| m.source.clone()),
    });
    if let (Some(m), None) = (&module, table_module) {
        r.notes.push(format!(
            "module {} is not in jetson/data/modules.csv",
            m.part_number_raw
        ));
    }
    let soc = reconcile_soc(compat, table_module, disagreements);
    if let (Some(fam_model), Some(m)) = (raw.model.as_deref().and_then(model_family), table_module)
    {
        if fam_model != m.family {
            disagreements.push(module_family_disagreement(
                fam_model,
                raw.model.as_deref(),
                m,
            ));
        }
    }
    if let (Some(rel), Some(s)) = (&raw.release, &soc) {
        if let Some(board) = rel.board.as_deref() {
            disagreements.extend(board_disagreement(board, s.value));
        }
    }
    if let (Some(s), Some(info)) = (&soc, l4t) {
        if !s.value.supported_by_r_major(info.version.major) {
            disagreements.push(soc_release_disagreement(s, info));
        }
    }
    let compute_capability = soc.as_ref().map(|s| {
        Sourced::new(
            s.value.compute_capability().to_string(),
            FactSource::SocTable,
            format!("{} → {}", s.value.name(), s.value.gpu_architecture()),
        )
    });
    let gpu_architecture = soc.as_ref().map(|s| s.value.gpu_architecture().to_string());
    Hardware {
        module,
        soc,
        compute_capability,
        gpu_architecture,
    }
}

/// The SoC: the device tree, else the module table; records where they disagree.
fn reconcile_soc(
    compat: &Compatible,
    table_module: Option<&ModuleRow>,
    disagreements: &mut Vec<Disagreement>,
) -> Option<Sourced<Soc>> {
    match (compat.soc, table_module.and_then(|m| m.soc)) {
        (Some(s), tm) => {
            if let Some(t) = tm {
                if t != s {
                    disagreements.push(Disagreement {
                        fact: "soc".into(),
                        values: vec![
                            sv(FactSource::DeviceTreeCompatible, s.name(), "/proc/device-tree/compatible"),
                            sv(
                                FactSource::ModuleTable,
                                t.name(),
                                compat.module.clone().unwrap_or_default(),
                            ),
                        ],
                        explanation: "the device tree's SoC does not match the module's; the report uses the device tree".into(),
                        benign: false,
                    });
                }
            }
            Some(Sourced::new(
                s,
                FactSource::DeviceTreeCompatible,
                "/proc/device-tree/compatible",
            ))
        }
        (None, Some(t)) => Some(Sourced::new(
            t,
            FactSource::ModuleTable,
            compat.module.clone().unwrap_or_default(),
        )),
        (None, None) => None,
    }
}

/// The model text names family `fam_model` but the module's part number is of another.
fn module_family_disagreement(fam_model: &str, model: Option<&str>, m: &ModuleRow) -> Disagreement {
    Disagreement {
        fact: "module".into(),
        values: vec![
            sv(FactSource::DeviceTreeCompatible, m.family.clone(), m.part_number.clone()),
            sv(FactSource::DeviceTreeModel, fam_model, model.unwrap_or_default()),
        ],
        explanation: format!(
            "the model string names a {fam_model} but the module part number {} is a {}: the board was \
             flashed with another board's configuration (or the model text was customised). The report \
             uses the part number.",
            m.part_number, m.family
        ),
        benign: false,
    }
}

/// The release file's `BOARD` against the device tree's SoC: a disagreement (benign for
/// the BSP build target `t186ref` on a later SoC) when the board names another SoC.
fn board_disagreement(board: &str, soc: Soc) -> Option<Disagreement> {
    let expected_ok = match board {
        "t210ref" => Some(soc == Soc::Tegra210),
        "t186ref" => Some(matches!(soc, Soc::Tegra186 | Soc::Tegra194 | Soc::Tegra234)),
        _ => None,
    };
    let lies = match board {
        "t186ref" => soc != Soc::Tegra186,
        "t210ref" => soc != Soc::Tegra210,
        _ => false,
    };
    if !lies {
        return None;
    }
    Some(Disagreement {
        fact: "board".into(),
        values: vec![
            sv(FactSource::ReleaseFile, board, RELEASE_FILE),
            sv(
                FactSource::DeviceTreeCompatible,
                soc.name(),
                "/proc/device-tree/compatible",
            ),
        ],
        explanation: if expected_ok == Some(true) {
            format!(
                "BOARD: {board} is the BSP's build target, not the SoC: NVIDIA's R32–R35 BSPs write \
                 t186ref on TX2, Xavier and Orin alike. The device tree ({}) is used.",
                soc.name()
            )
        } else {
            format!(
                "BOARD: {board} does not fit a {} device: the release file comes from another \
                 board's image. The device tree is used.",
                soc.name()
            )
        },
        benign: expected_ok == Some(true),
    })
}

/// The L4T release does not support the SoC: the files come from different machines.
fn soc_release_disagreement(s: &Sourced<Soc>, info: &L4tInfo) -> Disagreement {
    Disagreement {
        fact: "soc".into(),
        values: vec![
            sv(s.source, s.value.name(), s.detail.clone()),
            sv(
                info.source,
                format!("R{}", info.version),
                info.detail.clone(),
            ),
        ],
        explanation: format!(
            "L4T R{} does not support {} ({}): the files come from different machines or images",
            info.version.major,
            s.value.name(),
            s.value.gpu_architecture()
        ),
        benign: false,
    }
}

/// The power mode: `/var/lib/nvpmodel/status`, else the configuration's default; notes a
/// mode the configuration does not declare.
fn observe_power_mode(r: &mut Reader<'_>) -> Option<PowerModeInfo> {
    let conf = r
        .read_text("/etc/nvpmodel.conf")
        .map(|t| parse_nvpmodel_conf(&t));
    let status = r
        .read_text("/var/lib/nvpmodel/status")
        .and_then(|t| parse_nvpmodel_status(&t));
    if conf.is_none() && status.is_none() {
        return None;
    }
    let conf = conf.unwrap_or_default();
    let (id, source) = match &status {
        Some(s) => (Some(s.pmode), FactSource::NvpmodelStatus),
        None => (conf.default_mode, FactSource::NvpmodelConfDefault),
    };
    if let Some(i) = id {
        if !conf.modes.is_empty() && conf.name_of(i).is_none() {
            r.notes.push(format!(
                "nvpmodel mode {i} is not declared in /etc/nvpmodel.conf"
            ));
        }
    }
    Some(PowerModeInfo {
        id,
        name: id.and_then(|i| conf.name_of(i).map(str::to_string)),
        source,
        default_id: conf.default_mode,
        default_name: conf
            .default_mode
            .and_then(|i| conf.name_of(i).map(str::to_string)),
        modes: conf.modes.clone(),
        fan_mode: status.and_then(|s| s.fmode),
    })
}

/// The `jetson_clocks` state from the GPU's clocks and every readable CPU's cpufreq limits.
fn observe_clocks(r: &mut Reader<'_>, gpu: Option<&GpuInfo>) -> ClocksInfo {
    let mut cpus = Vec::new();
    for name in r.list("/sys/devices/system/cpu") {
        let is_cpu = name
            .strip_prefix("cpu")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !is_cpu {
            continue;
        }
        let base = format!("/sys/devices/system/cpu/{name}/cpufreq");
        let range = ClockRange {
            min: r.u64_at(&format!("{base}/scaling_min_freq")),
            max: r.u64_at(&format!("{base}/scaling_max_freq")),
            cur: r.u64_at(&format!("{base}/scaling_cur_freq")),
        };
        if range.pinned().is_some() {
            cpus.push(range);
        }
    }
    ClocksInfo {
        state: jetson_clocks_state(gpu.map(|g| &g.freq_hz), &cpus),
        cpus_read: cpus.len(),
        cpus_pinned: cpus.iter().filter(|c| c.pinned() == Some(true)).count(),
    }
}

/// Installed-file > dpkg > table, with disagreements on major.minor.
fn reconcile_component(
    fact: &str,
    label: &str,
    file: Option<Sourced<String>>,
    dpkg: Option<Sourced<String>>,
    table: Option<Sourced<String>>,
    disagreements: &mut Vec<Disagreement>,
) -> Option<Sourced<String>> {
    let installed: Vec<&Sourced<String>> = file.iter().chain(dpkg.iter()).collect();
    if let (Some(f), Some(d)) = (&file, &dpkg) {
        if major_minor(&f.value) != major_minor(&d.value) {
            disagreements.push(Disagreement {
                fact: fact.into(),
                values: vec![
                    sv(f.source, f.value.clone(), f.detail.clone()),
                    sv(d.source, d.value.clone(), d.detail.clone()),
                ],
                explanation: format!(
                    "two {label} installs: the toolkit directory and the newest dpkg package differ; \
                     the report uses the toolkit directory"
                ),
                benign: false,
            });
        }
    }
    if let (Some(first), Some(t)) = (installed.first(), &table) {
        if major_minor(&first.value) != major_minor(&t.value) {
            let newer = cmp_dotted(&first.value, &t.value).is_gt();
            disagreements.push(Disagreement {
                fact: fact.into(),
                values: vec![
                    sv(first.source, first.value.clone(), first.detail.clone()),
                    sv(t.source, t.value.clone(), t.detail.clone()),
                ],
                explanation: format!(
                    "this JetPack ships {label} {} but {label} {} is installed ({}); {}",
                    t.value,
                    first.value,
                    first.detail,
                    if newer {
                        "a newer install on top of JetPack works only where NVIDIA supports it (e.g. cuda-compat on JetPack 5)"
                    } else {
                        "an older install than the JetPack's own is unusual: check for leftovers of a previous JetPack"
                    }
                ),
                benign: false,
            });
        }
    }
    file.or(dpkg).or(table)
}

fn find_cuda_file(r: &mut Reader<'_>) -> Option<(String, String)> {
    let try_dir = |r: &mut Reader<'_>, dir: &str| -> Option<(String, String)> {
        let json = format!("{dir}/version.json");
        if let Some(t) = r.read_text(&json) {
            match parse_cuda_version_json(&t) {
                Ok(v) => return Some((v, json)),
                Err(e) => r.notes.push(format!("{json}: {e}")),
            }
        }
        let txt = format!("{dir}/version.txt");
        if let Some(v) = r.read_text(&txt).and_then(|t| parse_cuda_version_txt(&t)) {
            return Some((v, txt));
        }
        None
    };
    if let Some(found) = try_dir(r, "/usr/local/cuda") {
        return Some(found);
    }
    let mut dirs: Vec<(String, String)> = r
        .list("/usr/local")
        .into_iter()
        .filter_map(|n| cuda_dir_version(&n).map(|v| (v, n)))
        .collect();
    dirs.sort_by(|a, b| cmp_dotted(&b.0, &a.0));
    for (_, name) in &dirs {
        let dir = format!("/usr/local/{name}");
        if let Some(found) = try_dir(r, &dir) {
            return Some(found);
        }
    }
    // A toolkit directory without a version file still names its X.Y.
    dirs.first()
        .map(|(v, n)| (v.clone(), format!("/usr/local/{n} (directory name)")))
}

const DEVFREQ_FALLBACKS: &[&str] = &[
    "/sys/devices/gpu.0/devfreq/57000000.gpu",
    "/sys/devices/57000000.gpu/devfreq/57000000.gpu",
    "/sys/devices/gpu.0/devfreq/17000000.gp10b",
    "/sys/devices/gpu.0/devfreq/17000000.gv11b",
    "/sys/devices/17000000.gv11b/devfreq/17000000.gv11b",
    "/sys/devices/17000000.ga10b/devfreq/17000000.ga10b",
    "/sys/devices/platform/bus@0/17000000.gpu/devfreq/17000000.gpu",
];

const LOAD_FALLBACKS: &[&str] = &[
    "/sys/devices/gpu.0/load",
    "/sys/devices/platform/gpu.0/load",
    "/sys/devices/17000000.gv11b/load",
    "/sys/devices/17000000.ga10b/load",
    "/sys/devices/platform/bus@0/17000000.gpu/load",
    "/sys/devices/platform/17000000.gpu/load",
];

fn find_gpu(r: &mut Reader<'_>) -> Option<GpuInfo> {
    let mut candidates: Vec<String> = Vec::new();
    for name in r.list("/sys/class/devfreq") {
        let base = format!("/sys/class/devfreq/{name}");
        let of_name = r.read_text(&format!("{base}/device/of_node/name"));
        let is_gpu = match of_name {
            Some(n) => looks_like_gpu(&n),
            None => looks_like_gpu(&name),
        };
        if is_gpu {
            candidates.push(base);
        }
    }
    candidates.extend(DEVFREQ_FALLBACKS.iter().map(|s| s.to_string()));
    for base in candidates {
        let freq = ClockRange {
            min: r.u64_at(&format!("{base}/min_freq")),
            max: r.u64_at(&format!("{base}/max_freq")),
            cur: r.u64_at(&format!("{base}/cur_freq")),
        };
        if freq == ClockRange::default() {
            continue;
        }
        let mut load_paths = vec![format!("{base}/device/load")];
        load_paths.extend(LOAD_FALLBACKS.iter().map(|s| s.to_string()));
        let (load_permille, load_path) = load_paths
            .into_iter()
            .find_map(|p| {
                r.u64_at(&p)
                    .and_then(|v| u32::try_from(v).ok())
                    .map(|v| (Some(v), Some(p)))
            })
            .unwrap_or((None, None));
        return Some(GpuInfo {
            devfreq_path: base,
            freq_hz: freq,
            load_permille,
            load_path,
        });
    }
    None
}
