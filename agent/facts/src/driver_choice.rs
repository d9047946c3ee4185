//! A GPU's generation and the NVIDIA driver it needs: the generation from
//! the compute capability NVML reports, else from the PCI device id through
//! NVIDIA's own `supported-gpus.json` (`data/nvidia_driver_gpus.csv`, made by
//! `data/regen_driver_gpus.py`), else from the chip code of the id's pci.ids
//! name (GK106 → Kepler), else "unknown" with the command that finds out.
//! From the generations of a machine's GPUs, [`recommend`] types the driver
//! to install: the kernel-module flavour (`-open` only where the GPU supports
//! it, proprietary where it must be), the branch (the legacy branch a GPU
//! ends with, else the newest the CUDA version needs) and the minimum release
//! where NVIDIA names one. No fact, no aggressive default: an unknown
//! generation is an error the caller prints, never `-open` + R580.

use crate::version::{ComputeCapability, CudaVersion};
use serde::Serialize;
use std::sync::OnceLock;

const TABLE_CSV: &str = include_str!("../data/nvidia_driver_gpus.csv");

/// Where the table's columns come from, in full.
pub const TABLE_SOURCE: &str = "NVIDIA supported-gpus.json of driver 590.48.01 (usr/share/nvidia-driver-assistant/supported-gpus/supported-gpus.json of NVIDIA's nvidia-driver-assistant_0.23.48.01-1_all.deb, https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/, built 2025-12-08, file sha256 02fb4c53…d9da); chip codes from the PCI ID Repository pci.ids (pciutils/pciids commit c1c1254, 2026-08-22)";

/// [`TABLE_SOURCE`] in a few words.
pub const TABLE_SOURCE_SHORT: &str =
    "NVIDIA supported-gpus.json of driver 590.48.01 with pci.ids c1c1254";

/// As-of date of the table (the driver release it was read from).
pub const TABLE_AS_OF: &str = "2025-12-08";

/// The command that tells which GPU a machine has when nothing else could.
pub const FIND_OUT: &str = "lspci -nn | grep -i nvidia";

/// An NVIDIA GPU architecture generation, oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Generation {
    /// Fermi and older (Tesla architecture, Curie, Rankine, ...).
    PreKepler,
    /// Compute capability 3.x (GK chips); last driver branch R470.
    Kepler,
    /// Compute capability 5.x (GM chips).
    Maxwell,
    /// Compute capability 6.x (GP chips).
    Pascal,
    /// Compute capability 7.0 and 7.2 (GV100, Xavier).
    Volta,
    /// Compute capability 7.5 (TU chips); the first with a GSP, so the first
    /// the open kernel modules drive.
    Turing,
    /// Compute capability 8.0, 8.6 and 8.7 (GA chips, Orin).
    Ampere,
    /// Compute capability 8.9 (AD chips).
    Ada,
    /// Compute capability 9.0 (GH100).
    Hopper,
    /// Compute capability 10.x to 12.x (GB chips, Thor); open modules only.
    Blackwell,
}

impl Generation {
    /// From a compute capability (NVIDIA "CUDA GPU Compute Capability").
    pub fn from_cc(cc: ComputeCapability) -> Option<Generation> {
        Some(match cc.pair() {
            (1 | 2, _) => Generation::PreKepler,
            (3, _) => Generation::Kepler,
            (5, _) => Generation::Maxwell,
            (6, _) => Generation::Pascal,
            (7, 0) | (7, 2) => Generation::Volta,
            (7, 5) => Generation::Turing,
            (8, 0) | (8, 6) | (8, 7) => Generation::Ampere,
            (8, 9) => Generation::Ada,
            (9, 0) => Generation::Hopper,
            (10..=12, _) => Generation::Blackwell,
            _ => return None,
        })
    }

    /// From a chip code as pci.ids writes it (`GK106`, `GP102GL`, `TU104`,
    /// `GB20B`), or a pci.ids device name that starts with one
    /// (`GK106 [GeForce GTX 750 Ti]`).
    pub fn from_chip(name: &str) -> Option<Generation> {
        let code = name.split_whitespace().next()?;
        let digit_at = |i: usize| code.as_bytes().get(i).is_some_and(u8::is_ascii_digit);
        let two = code.get(..2)?;
        Some(match two {
            "GK" if digit_at(2) => Generation::Kepler,
            "GM" if digit_at(2) => Generation::Maxwell,
            "GP" if digit_at(2) => Generation::Pascal,
            "GV" if digit_at(2) => Generation::Volta,
            "TU" if digit_at(2) => Generation::Turing,
            "GA" if digit_at(2) => Generation::Ampere,
            "AD" if digit_at(2) => Generation::Ada,
            "GH" if digit_at(2) => Generation::Hopper,
            "GB" if digit_at(2) => Generation::Blackwell,
            "GF" | "GT" | "NV" if digit_at(2) => Generation::PreKepler,
            _ if code.starts_with('G') && digit_at(1) => Generation::PreKepler,
            _ => return None,
        })
    }

    /// Which kernel modules drive it, by generation alone: GSP (Turing and
    /// newer) is what the open modules need (NVIDIA open-gpu-kernel-modules
    /// README: "supports Turing and later GPUs"); Blackwell is open only
    /// (NVIDIA driver installation guide).
    pub fn modules(self) -> Modules {
        match self {
            Generation::Blackwell => Modules::OpenOnly,
            g if g >= Generation::Turing => Modules::Either,
            _ => Modules::ProprietaryOnly,
        }
    }

    /// The last driver branch that drives it: R470 for Kepler, R580 for
    /// Maxwell, Pascal and Volta (NVIDIA's supported-gpus.json of 590.48.01
    /// lists them with `legacybranch` 470.xx and 580.xx); `None` when current
    /// branches do. Pre-Kepler GPUs end with R390 or older.
    pub fn last_branch(self) -> Option<u32> {
        match self {
            Generation::PreKepler => Some(390),
            Generation::Kepler => Some(470),
            Generation::Maxwell | Generation::Pascal | Generation::Volta => Some(580),
            _ => None,
        }
    }

    /// The user's word for it.
    pub fn word(self) -> &'static str {
        match self {
            Generation::PreKepler => "pre-Kepler (Fermi or older)",
            Generation::Kepler => "Kepler",
            Generation::Maxwell => "Maxwell",
            Generation::Pascal => "Pascal",
            Generation::Volta => "Volta",
            Generation::Turing => "Turing",
            Generation::Ampere => "Ampere",
            Generation::Ada => "Ada Lovelace",
            Generation::Hopper => "Hopper",
            Generation::Blackwell => "Blackwell",
        }
    }
}

/// Which NVIDIA kernel-module flavours drive a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Modules {
    /// Only the proprietary modules (no GSP: before Turing).
    ProprietaryOnly,
    /// Both; NVIDIA recommends the open ones from R560.
    Either,
    /// Only the open modules (Blackwell, Grace Hopper).
    OpenOnly,
}

/// One row of NVIDIA's table joined with pci.ids.
#[derive(Debug, Clone, Serialize)]
pub struct DriverGpuRow {
    /// The PCI device id (vendor `10de`), e.g. `0x2335` for the H200.
    pub device: u16,
    /// NVIDIA's name, empty when only pci.ids has the id.
    pub nvidia_name: String,
    /// `kernelopen` in NVIDIA's features; `None` when NVIDIA does not list it.
    pub kernelopen: Option<bool>,
    /// `gsp_proprietary_supported` in NVIDIA's features.
    pub gsp_proprietary: Option<bool>,
    /// NVIDIA's `legacybranch` (`470` of `470.xx`).
    pub legacy_branch: Option<String>,
    /// The device's name in pci.ids (`GH100 [H200 SXM 141GB]`); empty when
    /// pci.ids lacks it.
    pub pci_name: String,
    /// The chip code (`GH100`), from pci.ids.
    pub chip: String,
    /// Which driver's `supported-gpus.json` and which pci.ids the row joins.
    pub source: String,
}

/// Every row, by device id.
pub fn driver_gpu_table() -> &'static [DriverGpuRow] {
    static T: OnceLock<Vec<DriverGpuRow>> = OnceLock::new();
    T.get_or_init(|| parse_table(TABLE_CSV))
}

/// The table's rows, read as rows under one header (`gpukb_jetson::csv::table`), not as a
/// map per row (2.0 ms → 0.7 ms in-process on the build VM, measured before the reader
/// lent its fields). Search no longer reads it for the planner's minimum releases
/// ([`row_alone`]); the doctor's GPU lookups still do.
fn parse_table(csv: &str) -> Vec<DriverGpuRow> {
    gpukb_jetson::csv::table(csv)
        .records()
        .filter_map(|r| row_of(|k| r.get(k).map_or("", str::trim)))
        .collect()
}

/// One row from its fields by column name (an absent column reads as empty).
fn row_of<'a>(get: impl Fn(&str) -> &'a str) -> Option<DriverGpuRow> {
    let yes_no = |k: &str| match get(k) {
        "yes" => Some(true),
        "no" => Some(false),
        _ => None,
    };
    Some(DriverGpuRow {
        device: u16::from_str_radix(get("pci_id").strip_prefix("10de:")?, 16).ok()?,
        nvidia_name: get("nvidia_name").to_string(),
        kernelopen: yes_no("kernelopen"),
        gsp_proprietary: yes_no("gsp_proprietary"),
        legacy_branch: Some(get("legacybranch").to_string()).filter(|s| !s.is_empty()),
        pci_name: get("pci_name").to_string(),
        chip: get("chip").to_string(),
        source: get("source").to_string(),
    })
}

/// The row for one device id, read from its own line of the table (with the header)
/// instead of from the whole table: the planner asks for [`MIN_RELEASES`]' three rows on
/// every search with machine facts, where nothing else needs the other 1,529.
fn row_alone(csv: &str, device: u16) -> Option<DriverGpuRow> {
    let header = csv.lines().next()?;
    let key = format!("\n10de:{device:04x},");
    let at = csv.find(&key)? + 1;
    let line = csv[at..].lines().next()?;
    let text = format!("{header}\n{line}\n");
    let t = gpukb_jetson::csv::table(&text);
    let r = t.records().next()?;
    row_of(|k| r.get(k).map_or("", str::trim))
}

/// The row for a PCI device id.
pub fn lookup_device(device: u16) -> Option<&'static DriverGpuRow> {
    let t = driver_gpu_table();
    t.binary_search_by_key(&device, |r| r.device)
        .ok()
        .map(|i| &t[i])
}

/// What is known of one GPU: any of its compute capability, PCI device id
/// and pci.ids name (a paste's `lspci` line).
#[derive(Debug, Clone, Default)]
pub struct GpuIdentity {
    /// The compute capability, when observed or named.
    pub cc: Option<ComputeCapability>,
    /// The PCI device id (vendor `10de`), when known.
    pub pci_device: Option<u16>,
    /// The device's name as `lspci` (pci.ids) writes it, when known.
    pub pci_name: Option<String>,
}

/// A GPU's generation and the driver facts that follow, with how they were learnt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct GpuGeneration {
    /// The architecture generation.
    pub generation: Generation,
    /// Which kernel-module flavours drive it.
    pub modules: Modules,
    /// The last branch that drives it; `None` when current branches do.
    pub last_branch: Option<u32>,
    /// The product name where a table gave one.
    pub name: Option<String>,
    /// How this was learnt ("compute capability 6.1 (NVML)", "PCI device 1b06 in
    /// NVIDIA's supported-gpus.json of 590.48.01").
    pub basis: String,
}

/// A GPU whose generation nothing tells.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, schemars::JsonSchema)]
#[error("the GPU's generation is unknown ({why}); find out with `{find_out}`")]
pub struct GenerationUnknown {
    /// What was known of the GPU and why it did not tell the generation.
    pub why: String,
    /// The command that tells (`lspci -nn | grep -i nvidia`).
    pub find_out: String,
}

/// The generation of one GPU: compute capability first, NVIDIA's table for
/// the module flavour and legacy branch, pci.ids' chip code when NVIDIA does
/// not list the id.
pub fn generation_of(g: &GpuIdentity) -> Result<GpuGeneration, GenerationUnknown> {
    let row = g.pci_device.and_then(lookup_device);
    let by_cc = g.cc.and_then(Generation::from_cc);
    let by_chip = row
        .map(|r| r.chip.as_str())
        .filter(|c| !c.is_empty())
        .or(g.pci_name.as_deref())
        .and_then(Generation::from_chip);
    let Some(generation) = by_cc.or(by_chip) else {
        return Err(GenerationUnknown {
            why: match (g.cc, g.pci_device) {
                (Some(cc), _) => format!("compute capability {cc} is newer than gpukb's table"),
                (None, Some(d)) => format!("PCI device {d:04x} is in neither NVIDIA's supported-gpus.json of 590.48.01 nor pci.ids"),
                (None, None) => "neither a compute capability nor a PCI device id was observed".into(),
            },
            find_out: FIND_OUT.into(),
        });
    };
    let mut basis = match (g.cc, by_cc) {
        (Some(cc), Some(_)) => format!("compute capability {cc}"),
        _ => match row {
            Some(r) if !r.chip.is_empty() => {
                format!("PCI device {:04x} is a {} ({})", r.device, r.chip, r.source)
            }
            _ => format!(
                "pci.ids name {:?}",
                g.pci_name.as_deref().unwrap_or_default()
            ),
        },
    };
    let listed = row.filter(|r| r.kernelopen.is_some());
    let modules = match listed {
        // NVIDIA's features: open-only GPUs have `kernelopen` without
        // `gsp_proprietary_supported` (Blackwell, GH200). Its 590 table marks
        // the 580.xx-legacy Maxwell/Pascal/Volta ids `kernelopen` too; the open
        // modules need GSP (Turing+), so a legacy id is proprietary-only.
        Some(r) if r.legacy_branch.is_some() || r.kernelopen == Some(false) => {
            Modules::ProprietaryOnly
        }
        Some(r) if r.gsp_proprietary == Some(false) => Modules::OpenOnly,
        Some(_) => Modules::Either,
        None => generation.modules(),
    };
    let last_branch = match listed {
        Some(r) => r
            .legacy_branch
            .as_deref()
            .and_then(|b| b.split('.').next()?.parse().ok()),
        None => generation.last_branch(),
    };
    if let Some(r) = listed {
        basis.push_str(&format!(
            "; NVIDIA's supported-gpus.json of 590.48.01 lists {:04x} ({}){}",
            r.device,
            r.nvidia_name,
            r.legacy_branch
                .as_deref()
                .map(|b| format!(" with legacy branch {b}.xx"))
                .unwrap_or_default()
        ));
    }
    Ok(GpuGeneration {
        generation,
        modules,
        last_branch,
        name: listed.map(|r| r.nvidia_name.clone()),
        basis,
    })
}

/// The kernel-module flavour to install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Flavour {
    /// The open kernel modules (`nvidia-driver-580-open`).
    Open,
    /// The proprietary kernel modules (`nvidia-driver-470`).
    Proprietary,
}

/// A release NVIDIA names as the least a GPU needs, beyond its branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct MinRelease {
    /// NVIDIA's name of the GPU (`HGX B200`).
    pub gpu: String,
    /// The first driver release that drives it (`570.133.20`).
    pub version: String,
    /// The NVIDIA document that names that release.
    pub source: String,
}

/// Device ids with a minimum release (not only a branch) NVIDIA names.
///
/// B300 SXM6 AC and GB300 (CC 10.3): the first release whose list of
/// compatible GPUs in NVIDIA's open-gpu-kernel-modules README (Blackwell runs
/// only the open modules) names them is 580.82.07 (2025-09-02); no R575
/// release, nor 580.65.06 or 580.76.05, lists them (kb-audit doubt 1). GB10
/// (CC 12.1) is left out: the README lists it only from 580.119.02 on the R580
/// line, after DGX Spark shipped, so the list is no lower bound there (a
/// `[[doubts]]` in kb/entries/blackwell-requires-open-kernel-modules.toml).
const MIN_RELEASES: &[(u16, &str, &str, &str)] = &[
    (
        0x2901,
        "HGX B200",
        "570.133.20",
        "NVIDIA GPU Operator platform support: \"HGX B200 requires a driver container version of 570.133.20 or later\" (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/platform-support.html, NVIDIA/cloud-native-docs#184, 2025-06-02)",
    ),
    (
        0x3182,
        "NVIDIA B300 SXM6 AC",
        "580.82.07",
        "NVIDIA open-gpu-kernel-modules README, compatible GPUs: \"NVIDIA B300 SXM6 AC | 3182 10DE 20E6\" is listed from release 580.82.07 on and in no R575 release nor 580.65.06/580.76.05 (https://github.com/NVIDIA/open-gpu-kernel-modules/blob/580.82.07/README.md)",
    ),
    (
        0x31c2,
        "NVIDIA GB300",
        "580.82.07",
        "NVIDIA open-gpu-kernel-modules README, compatible GPUs: \"NVIDIA GB300 | 31C2 10DE 21F1\" is listed from release 580.82.07 on and in no R575 release nor 580.65.06/580.76.05 (https://github.com/NVIDIA/open-gpu-kernel-modules/blob/580.82.07/README.md)",
    ),
];

/// The minimum release NVIDIA names for a GPU known only by its name (`B200`,
/// `NVIDIA B200`, as `gpukb plan --gpu` or NVML gives it): the name, less a
/// leading `NVIDIA`, equals NVIDIA's name of a device id in [`MIN_RELEASES`]
/// or is its first words (`B300` of `NVIDIA B300 SXM6 AC`).
pub fn min_release_by_name(name: &str) -> Option<MinRelease> {
    let want = normalized_gpu_name(name);
    if want.is_empty() {
        return None;
    }
    min_releases().iter().find_map(|(have, min)| {
        let same = have == &want
            || have
                .strip_prefix(want.as_str())
                .is_some_and(|rest| rest.starts_with(' '));
        same.then(|| min.clone())
    })
}

/// Reads the minimum-release rows now (see [`crate::load_tables`]).
pub(crate) fn load_min_releases() {
    let _ = min_releases();
}

/// The rows of [`MIN_RELEASES`], each with NVIDIA's name of the GPU normalised once (the
/// planner asks once per build).
fn min_releases() -> &'static [(String, MinRelease)] {
    static NAMED: OnceLock<Vec<(String, MinRelease)>> = OnceLock::new();
    NAMED.get_or_init(|| {
        MIN_RELEASES
            .iter()
            .filter_map(|(device, gpu, version, source)| {
                let row = row_alone(TABLE_CSV, *device)?;
                Some((
                    normalized_gpu_name(&row.nvidia_name),
                    MinRelease {
                        gpu: gpu.to_string(),
                        version: version.to_string(),
                        source: source.to_string(),
                    },
                ))
            })
            .collect()
    })
}

/// A GPU name as [`min_release_by_name`] compares it: trimmed, lower case, without a
/// leading `nvidia `.
fn normalized_gpu_name(s: &str) -> String {
    let s = s.trim().to_ascii_lowercase();
    s.strip_prefix("nvidia ").unwrap_or(&s).trim().to_string()
}

/// The driver to install on a machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DriverRecommendation {
    /// The driver branch to install (`580` for R580).
    pub branch: u32,
    /// The kernel-module flavour to install.
    pub flavour: Flavour,
    /// True when `branch` is the last one some GPU here gets (a legacy branch).
    pub legacy: bool,
    /// The least release within the branch, where NVIDIA names one for a GPU
    /// here.
    pub min_release: Option<MinRelease>,
    /// Why: one line per GPU generation, with its basis.
    pub reasons: Vec<String>,
}

impl DriverRecommendation {
    /// The Ubuntu/Debian (CUDA repository) package: `nvidia-driver-580-open`,
    /// `nvidia-driver-470`.
    pub fn apt_package(&self) -> String {
        format!(
            "nvidia-driver-{}{}",
            self.branch,
            if self.flavour == Flavour::Open {
                "-open"
            } else {
                ""
            }
        )
    }
}

/// Why no driver fits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, schemars::JsonSchema)]
pub enum NoDriver {
    /// A GPU's generation is unknown.
    #[error("{0}")]
    GenerationUnknown(GenerationUnknown),
    /// No GPU was seen.
    #[error("no GPU was seen to choose a driver for; find out with `{FIND_OUT}`")]
    NoGpu,
    /// No one driver fits every GPU and the CUDA asked for (a GPU needs the
    /// open modules and another the proprietary ones, or a GPU's last branch
    /// cannot run that CUDA); the text says which.
    #[error("{0}")]
    Conflict(String),
}

/// The branch proposed when nothing needs another one (R580 drives Maxwell
/// to Blackwell and runs CUDA 12.x and 13.0): [`crate::select::PROPOSED_BRANCH`].
const PROPOSED: u32 = crate::select::PROPOSED_BRANCH;

/// The driver for these GPUs that runs CUDA `need` (when given).
pub fn recommend(
    gpus: &[GpuIdentity],
    need: Option<CudaVersion>,
) -> Result<DriverRecommendation, NoDriver> {
    if gpus.is_empty() {
        return Err(NoDriver::NoGpu);
    }
    let gens = gpus
        .iter()
        .map(generation_of)
        .collect::<Result<Vec<_>, _>>()
        .map_err(NoDriver::GenerationUnknown)?;
    let reasons: Vec<String> = gens
        .iter()
        .map(|g| {
            format!(
                "{} ({})",
                g.name.clone().unwrap_or_else(|| g.generation.word().into()),
                g.basis
            )
        })
        .collect();
    let open_only = gens.iter().any(|g| g.modules == Modules::OpenOnly);
    let proprietary_only = gens.iter().any(|g| g.modules == Modules::ProprietaryOnly);
    if open_only && proprietary_only {
        return Err(NoDriver::Conflict(format!(
            "no one driver flavour drives every GPU here: some need the open kernel modules, others the proprietary ones ({})",
            reasons.join("; ")
        )));
    }
    let flavour = if proprietary_only {
        Flavour::Proprietary
    } else {
        Flavour::Open
    };
    let wanted = need
        .and_then(crate::compat::min_driver_branch_for)
        .unwrap_or(PROPOSED)
        .max(PROPOSED);
    let cap = gens.iter().filter_map(|g| g.last_branch).min();
    let branch = cap.map_or(wanted, |c| c.min(wanted));
    if let (Some(n), Some(floor)) = (need, need.and_then(crate::compat::min_driver_branch_for)) {
        if branch < floor {
            return Err(NoDriver::Conflict(format!(
                "CUDA {n} needs R{floor} or later, but R{branch} is the last branch for a GPU here ({})",
                reasons.join("; ")
            )));
        }
    }
    let min_release = gpus
        .iter()
        .filter_map(|g| g.pci_device)
        .find_map(|d| MIN_RELEASES.iter().find(|m| m.0 == d))
        .map(|(_, gpu, version, source)| MinRelease {
            gpu: gpu.to_string(),
            version: version.to_string(),
            source: source.to_string(),
        });
    Ok(DriverRecommendation {
        branch,
        flavour,
        legacy: cap.is_some_and(|c| c <= wanted),
        min_release,
        reasons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row read from its own line is the table's row, for every device id in the table
    /// (so the planner's shortcut can never see another row than the lookup would).
    #[test]
    fn a_row_read_alone_is_the_tables_row() {
        let table = driver_gpu_table();
        for row in table {
            let alone = row_alone(TABLE_CSV, row.device);
            assert_eq!(
                format!("{alone:?}"),
                format!("{:?}", Some(row)),
                "device {:04x}",
                row.device
            );
        }
        for (device, ..) in MIN_RELEASES {
            assert!(row_alone(TABLE_CSV, *device).is_some(), "{device:04x}");
        }
        assert!(row_alone(TABLE_CSV, 0xffff).is_none());
    }

    /// The rows read as rows give what a map per row gives, row for row, and they are
    /// sorted by device id (the lookup is a binary search).
    #[test]
    fn the_table_reads_the_same_through_both_readers() {
        let fast = parse_table(TABLE_CSV);
        let general: Vec<DriverGpuRow> = gpukb_jetson::csv::parse(TABLE_CSV)
            .into_iter()
            .filter_map(|r| row_of(|k| r.get(k).map_or("", |s| s.trim())))
            .collect();
        assert!(fast.len() > 1000, "{} rows", fast.len());
        assert_eq!(fast.len(), general.len());
        for (a, b) in fast.iter().zip(&general) {
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
        assert!(fast.windows(2).all(|w| w[0].device < w[1].device));
        let h200 = lookup_device(0x2335).expect("the H200's id is in the table");
        assert!(h200.pci_name.contains("H200"), "{h200:?}");
    }

    fn pci(d: u16) -> GpuIdentity {
        GpuIdentity {
            pci_device: Some(d),
            ..Default::default()
        }
    }
    fn cc(s: &str) -> GpuIdentity {
        GpuIdentity {
            cc: Some(s.parse().unwrap()),
            ..Default::default()
        }
    }

    #[test]
    fn with_no_compute_capability_the_pci_id_decides() {
        // kb-audit E2: 10de:1b06 (GTX 1080 Ti, Pascal) and 10de:102d (Tesla K80,
        // Kepler) both got nvidia-driver-580-open.
        let r = recommend(&[pci(0x1b06)], None).unwrap();
        assert_eq!(
            (r.apt_package(), r.legacy),
            ("nvidia-driver-580".into(), true)
        );
        let r = recommend(&[pci(0x102d)], None).unwrap();
        assert_eq!(r.apt_package(), "nvidia-driver-470");
        // Turing+: open; Blackwell and GH200 open only.
        assert_eq!(
            recommend(&[pci(0x1e04)], None).unwrap().apt_package(),
            "nvidia-driver-580-open"
        );
        assert_eq!(
            generation_of(&pci(0x2b85)).unwrap().modules,
            Modules::OpenOnly
        );
        assert_eq!(
            generation_of(&pci(0x2342)).unwrap().modules,
            Modules::OpenOnly
        );
        assert_eq!(
            generation_of(&pci(0x2335)).unwrap().modules,
            Modules::Either
        );
    }

    #[test]
    fn the_pci_ids_chip_code_decides_when_nvidia_does_not_list_the_id() {
        // 10de:11c7 "GK106 [GeForce GTX 750 Ti]" is not in NVIDIA's table: GK106 is Kepler.
        let g = generation_of(&pci(0x11c7)).unwrap();
        assert_eq!(
            (g.generation, g.modules, g.last_branch),
            (Generation::Kepler, Modules::ProprietaryOnly, Some(470))
        );
        let g = generation_of(&GpuIdentity {
            pci_name: Some("GP104 [GeForce GTX 1080]".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(g.generation, Generation::Pascal);
        assert_eq!(
            Generation::from_chip("GB20B [GB10]"),
            Some(Generation::Blackwell)
        );
        assert_eq!(Generation::from_chip("AR-TK242"), None);
    }

    #[test]
    fn nothing_known_is_an_error_that_says_how_to_find_out() {
        let e = recommend(&[GpuIdentity::default()], None).unwrap_err();
        assert!(e.to_string().contains("lspci -nn"), "{e}");
        assert!(matches!(
            recommend(&[pci(0xfffe)], None),
            Err(NoDriver::GenerationUnknown(_))
        ));
        assert_eq!(recommend(&[], None), Err(NoDriver::NoGpu));
    }

    #[test]
    fn branches_follow_the_cuda_need_and_the_legacy_cut_offs() {
        assert_eq!(
            recommend(&[cc("9.0")], Some("13.0".parse().unwrap()))
                .unwrap()
                .branch,
            580
        );
        // Kepler's last branch R470 cannot run CUDA 12.
        assert!(matches!(
            recommend(&[cc("3.7")], Some("12.4".parse().unwrap())),
            Err(NoDriver::Conflict(_))
        ));
        assert_eq!(
            recommend(&[cc("3.7")], Some("11.4".parse().unwrap()))
                .unwrap()
                .branch,
            470
        );
        // A Pascal + Blackwell box has no one flavour.
        assert!(matches!(
            recommend(&[cc("6.1"), cc("12.0")], None),
            Err(NoDriver::Conflict(_))
        ));
        // HGX B200: NVIDIA names 570.133.20.
        let r = recommend(&[pci(0x2901)], None).unwrap();
        assert_eq!(r.min_release.map(|m| m.version), Some("570.133.20".into()));
        assert_eq!(r.flavour, Flavour::Open);
    }

    #[test]
    fn b300_and_gb300_name_the_first_release_that_lists_them() {
        // kb-audit doubt 1: "Blackwell needs R570+" was all a B300 got.
        for d in [0x3182, 0x31c2] {
            let r = recommend(&[pci(d)], None).unwrap();
            assert_eq!(r.apt_package(), "nvidia-driver-580-open");
            let m = r.min_release.unwrap();
            assert_eq!(m.version, "580.82.07");
            assert!(m.source.contains("open-gpu-kernel-modules"), "{}", m.source);
        }
        // GB10: no minimum release is claimed (a doubt in the KB).
        assert_eq!(recommend(&[pci(0x2e12)], None).unwrap().min_release, None);
        // By name, as plan --gpu and NVML give it.
        let v = |n: &str| min_release_by_name(n).map(|m| m.version);
        assert_eq!(v("B200"), Some("570.133.20".into()));
        assert_eq!(v("NVIDIA B200"), Some("570.133.20".into()));
        assert_eq!(v("B300"), Some("580.82.07".into()));
        assert_eq!(v("GB300"), Some("580.82.07".into()));
        assert_eq!(v("GB200"), None);
        assert_eq!(v("NVIDIA GB10"), None);
        assert_eq!(v(""), None);
    }

    #[test]
    fn the_table_agrees_with_itself() {
        // NVIDIA's legacy branches match the generation of pci.ids' chip code:
        // 470.xx is Kepler, 580.xx Maxwell/Pascal/Volta, none Turing or newer.
        let t = driver_gpu_table();
        assert!(t.len() > 1000);
        assert!(
            t.windows(2).all(|w| w[0].device < w[1].device),
            "sorted, unique"
        );
        for r in t
            .iter()
            .filter(|r| r.kernelopen.is_some() && !r.chip.is_empty())
        {
            let g = Generation::from_chip(&r.chip).unwrap_or_else(|| panic!("{r:?}"));
            let want = match r.legacy_branch.as_deref() {
                None => g >= Generation::Turing,
                Some("580") => matches!(
                    g,
                    Generation::Maxwell | Generation::Pascal | Generation::Volta
                ),
                Some("470") | Some("367") => g == Generation::Kepler,
                Some(_) => g == Generation::PreKepler,
            };
            assert!(want, "{r:?} is a {g:?}");
        }
    }
}
