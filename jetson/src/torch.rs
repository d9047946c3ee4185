//! Does the installed PyTorch fit this JetPack?
//!
//! On JetPack ≤ 6 the GPU is driven by the Jetson (non-SBSA) CUDA stack, and
//! PyTorch must come from NVIDIA's Jetson wheels (`torch-2.1.0a0+41361538.nv23.06`,
//! `torch-2.0.0+nv23.05`, ...) or an index built for that JetPack (e.g. the
//! `jp6/cu126` index). The generic aarch64 wheel from PyPI has no CUDA at all
//! (`torch.version.cuda` is `None`), which is the most common "CUDA not
//! available" report on Jetson. From JetPack 7 (CUDA 13, SBSA) the official
//! aarch64 `cu130` wheels are the intended ones.
//!
//! The JetPack's CUDA is fixed only on JetPack 4: from JetPack 5.0, CUDA 11.8
//! and later install without reflashing, with the `cuda-compat-X-Y` package
//! (NVIDIA blog "Simplifying CUDA Upgrades for NVIDIA Jetson Users",
//! https://developer.nvidia.com/blog/simplifying-cuda-upgrades-for-nvidia-jetson-users/),
//! so a CUDA 12 wheel on JetPack 5 is judged by whether that package is there.

use serde::{Deserialize, Serialize};

use crate::devicetree::Soc;
use crate::report::JetsonReport;
use crate::version::major_minor;

/// How well torch fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TorchStatus {
    /// Fits.
    Ok,
    /// Probably works, with a caveat.
    Warning,
    /// Cannot use the GPU.
    Broken,
    /// Not enough information.
    Unknown,
}

/// Where the torch build comes from, judged by its version string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TorchBuild {
    /// NVIDIA's Jetson wheel (`+nv23.05`, `.nv24.08`).
    NvidiaJetson,
    /// A generic wheel built without CUDA (`torch.version.cuda` is None, or `+cpu`).
    CpuOnly,
    /// A generic CUDA wheel from download.pytorch.org (`+cu126`, `+cu130`).
    GenericCuda,
    /// Built with CUDA but with no local version tag (community Jetson
    /// indexes such as jp6/cu126, or a source build).
    OtherCuda,
}

/// The verdict of [`check_torch_wheel`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TorchVerdict {
    /// Overall.
    pub status: TorchStatus,
    /// Build kind.
    pub build: TorchBuild,
    /// CUDA torch was built with.
    pub torch_cuda: Option<String>,
    /// CUDA of the JetPack (report's CUDA).
    pub system_cuda: Option<String>,
    /// Human explanation with the fix.
    pub message: String,
}

fn classify(torch_version: &str, torch_cuda: Option<&str>) -> TorchBuild {
    let v = torch_version.trim().to_ascii_lowercase();
    let local = v.split_once('+').map(|(_, l)| l).unwrap_or("");
    if v.contains(".nv") || local.starts_with("nv") {
        TorchBuild::NvidiaJetson
    } else if torch_cuda.is_none() || local.starts_with("cpu") {
        TorchBuild::CpuOnly
    } else if local.starts_with("cu") {
        TorchBuild::GenericCuda
    } else {
        TorchBuild::OtherCuda
    }
}

/// The status and message for a torch whose CUDA major differs from the
/// JetPack's.
struct Judged(TorchStatus, String);

impl Judged {
    fn into_verdict(self, f: impl Fn(TorchStatus, String) -> TorchVerdict) -> TorchVerdict {
        f(self.0, self.1)
    }
}

/// A torch built for another CUDA major than the JetPack's CUDA. JetPack 4
/// fixes CUDA to the L4T release; from JetPack 5.0 a newer CUDA (11.8 on)
/// can be installed without reflashing, with its `cuda-compat-X-Y` package
/// (NVIDIA blog "Simplifying CUDA Upgrades for NVIDIA Jetson Users"). CUDA 13
/// on Jetson is the SBSA toolkit of JetPack 7, not an upgrade package for the
/// JetPack 5/6 (non-SBSA) stack.
fn major_mismatch(
    torch_version: &str,
    tc: &str,
    (tmaj, tmin): (u32, u32),
    (sys, smaj): (&str, u32),
    report: &JetsonReport,
    jp_name: &str,
    fix: &str,
) -> Judged {
    let jp_major = report.jetpack.as_ref().and_then(|j| j.major).or_else(|| {
        match report.l4t.as_ref().map(|l| l.version.major) {
            Some(32) => Some(4),
            Some(34 | 35) => Some(5),
            _ => None,
        }
    });
    let compat = report
        .cuda_compat
        .as_ref()
        .and_then(|c| major_minor(&c.value).map(|v| (v, c.detail.clone())));
    let head =
        format!("torch {torch_version} is built for CUDA {tc} but {jp_name} provides CUDA {sys}");
    if let Some(((cmaj, cmin), pkg)) = compat.filter(|((m, _), _)| *m == tmaj) {
        let (status, how) = if (cmaj, cmin) >= (tmaj, tmin) {
            (TorchStatus::Ok, "runs it natively".to_string())
        } else {
            (
                TorchStatus::Warning,
                "runs it under minor-version compatibility (kernels that need PTX JIT of the newer CUDA fail)"
                    .to_string(),
            )
        };
        return Judged(
            status,
            format!(
                "{head}; {pkg} (the upgradable CUDA {cmaj}.{cmin} driver, JetPack 5.0 and later) {how}; \
                 load it first: LD_LIBRARY_PATH=/usr/local/cuda-{cmaj}.{cmin}/compat"
            ),
        );
    }
    match jp_major {
        Some(m) if m <= 4 => Judged(
            TorchStatus::Broken,
            format!(
                "{head}; on JetPack 4 the CUDA release is fixed by L4T (no upgradable CUDA before JetPack 5.0), \
                 so the wheel's CUDA libraries will not load; {fix}"
            ),
        ),
        Some(m) if (5..=6).contains(&m) && tmaj > smaj && tmaj < 13 => Judged(
            TorchStatus::Broken,
            format!(
                "{head} and no cuda-compat-{tmaj}-{tmin} package is installed, so the CUDA {tmaj} libraries \
                 cannot use the JetPack's driver. JetPack 5.0 and later can upgrade CUDA without reflashing: \
                 install CUDA {tmaj}.{tmin} for Jetson and its compat package from NVIDIA's CUDA repository \
                 (`sudo apt-get install cuda-toolkit-{tmaj}-{tmin} cuda-compat-{tmaj}-{tmin}`), then \
                 LD_LIBRARY_PATH=/usr/local/cuda-{tmaj}.{tmin}/compat; or {fix}"
            ),
        ),
        Some(m) if m <= 6 && tmaj >= 13 => Judged(
            TorchStatus::Broken,
            format!(
                "{head}; CUDA {tmaj} on Jetson is the SBSA toolkit of JetPack 7 and has no upgrade package for \
                 {jp_name}'s CUDA {smaj} stack; {fix}"
            ),
        ),
        _ => Judged(
            TorchStatus::Broken,
            format!("{head}, a different CUDA major, so the wheel's CUDA libraries will not load; {fix}"),
        ),
    }
}

/// Check a torch install (`torch.__version__`, `torch.version.cuda`) against
/// the Jetson report.
pub fn check_torch_wheel(
    torch_version: &str,
    torch_cuda: Option<&str>,
    report: &JetsonReport,
) -> TorchVerdict {
    let torch_cuda = torch_cuda.map(str::trim).filter(|c| !c.is_empty());
    let build = classify(torch_version, torch_cuda);
    let system_cuda = report.cuda.as_ref().map(|c| c.value.clone());
    let jp_major = report.jetpack.as_ref().and_then(|j| j.major);
    let jp_name = report
        .jetpack
        .as_ref()
        .map(|j| format!("JetPack {}", j.version))
        .unwrap_or_else(|| "this JetPack".into());
    let fix = match jp_major {
        Some(m) if m >= 7 => "install the official aarch64 CUDA wheel (e.g. `pip install torch --index-url https://download.pytorch.org/whl/cu130`)".to_string(),
        _ => format!(
            "install NVIDIA's PyTorch wheel for {jp_name} (docs.nvidia.com 'Installing PyTorch for Jetson Platform', \
             developer.download.nvidia.com/compute/redist/jp/)"
        ),
    };
    let verdict = |status, message: String| TorchVerdict {
        status,
        build,
        torch_cuda: torch_cuda.map(str::to_string),
        system_cuda: system_cuda.clone(),
        message,
    };

    let Some(tc) = torch_cuda else {
        return verdict(
            TorchStatus::Broken,
            format!(
                "torch {torch_version} was built without CUDA (the generic aarch64 wheel from PyPI is CPU-only on \
                 Jetson), so torch.cuda.is_available() is False; {fix}"
            ),
        );
    };
    if build == TorchBuild::CpuOnly {
        return verdict(
            TorchStatus::Broken,
            format!("torch {torch_version} is a CPU-only build; {fix}"),
        );
    }
    let Some(sys) = system_cuda.as_deref() else {
        return verdict(
            TorchStatus::Unknown,
            format!(
                "torch {torch_version} is built for CUDA {tc} but the JetPack's CUDA is unknown"
            ),
        );
    };
    let (Some((tmaj, tmin)), Some((smaj, smin))) = (major_minor(tc), major_minor(sys)) else {
        return verdict(
            TorchStatus::Unknown,
            format!("cannot compare CUDA versions {tc:?} and {sys:?}"),
        );
    };
    if tmaj != smaj {
        return major_mismatch(
            torch_version,
            tc,
            (tmaj, tmin),
            (sys, smaj),
            report,
            &jp_name,
            &fix,
        )
        .into_verdict(verdict);
    }
    if let Some(soc) = report.soc.as_ref().map(|s| s.value) {
        if soc == Soc::Tegra264 && tmaj < 13 {
            return verdict(
                TorchStatus::Broken,
                "Jetson Thor is sm_110 from CUDA 13 on; a CUDA 12 build has no kernels for it"
                    .to_string(),
            );
        }
    }
    if build == TorchBuild::GenericCuda && jp_major.is_some_and(|m| m <= 6) {
        return verdict(
            TorchStatus::Warning,
            format!(
                "torch {torch_version} is a generic SBSA CUDA wheel; on {jp_name} the Jetson GPU uses the \
                 non-SBSA CUDA stack and NVIDIA's Jetson wheels are the supported ones; {fix}"
            ),
        );
    }
    if tmin > smin {
        return verdict(
            TorchStatus::Warning,
            format!(
                "torch is built for CUDA {tc}, newer than the JetPack's CUDA {sys}: it relies on CUDA minor-version \
                 compatibility, and kernels that need PTX JIT will fail"
            ),
        );
    }
    verdict(
        TorchStatus::Ok,
        format!("torch {torch_version} (CUDA {tc}) matches {jp_name} (CUDA {sys})"),
    )
}
