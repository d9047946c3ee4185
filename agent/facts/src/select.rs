//! The selection policy, shared by the doctor's fixes and the planner: which
//! torch build to install for a set of GPUs under a driver, and which driver
//! branch to install for a set of GPUs and a CUDA version. The torch pick is
//! the planner's ([`crate::plan`]) over the sourced, dated build table in
//! [`crate::builds`]; the branch rules are in [`crate::compat`].

use crate::compat;
use crate::version::{ComputeCapability, CudaVersion};

/// As-of date of the torch build table ([`crate::builds`]).
pub const TORCH_BUILDS_AS_OF: &str = "2026-12-01";

/// One downloadable torch build for Linux x86-64, as the doctor's fixes name it.
#[derive(Debug, Clone)]
pub struct TorchBuild {
    pub torch: &'static str,
    pub variant: &'static str,
    pub cuda: (u32, u32),
    /// SASS of its arch list.
    pub sass: Vec<&'static str>,
    /// The pinned install command (`pip install torch==… torchvision==… --index-url …`).
    pub command: String,
}

/// Every Linux x86-64 CUDA build with verified targets, from the sourced
/// table in [`crate::builds`] (`data/torch_builds.csv`).
pub fn torch_builds() -> &'static [TorchBuild] {
    static T: std::sync::OnceLock<Vec<TorchBuild>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        crate::builds::torch_wheels()
            .iter()
            .filter(|w| w.arch == crate::builds::Arch::X86_64)
            .filter_map(|w| {
                let cuda = w.cuda?;
                let crate::builds::Targets::Known(sass) = &w.sass else {
                    return None;
                };
                Some(TorchBuild {
                    torch: &w.release.text,
                    variant: &w.variant,
                    cuda: (cuda.major, cuda.minor),
                    sass: sass.iter().map(String::as_str).collect(),
                    command: crate::plan::pip_command(w),
                })
            })
            .collect()
    })
}

/// The build to install for these GPUs under a driver of CUDA `driver_cuda`
/// on Linux x86-64: the planner's recommendation ([`crate::plan`], issue 10
/// §4), so the doctor and `gpukb plan` never disagree.
pub fn pick_torch(
    ccs: &[ComputeCapability],
    driver_cuda: Option<CudaVersion>,
) -> Option<&'static TorchBuild> {
    use crate::plan::{DriverFact, GpuFact, MachineFacts, TorchSpec};
    let machine = MachineFacts {
        label: "this machine".into(),
        gpus: ccs
            .iter()
            .map(|cc| GpuFact {
                name: format!("compute capability {cc}"),
                cc: *cc,
                class: crate::gpus::GpuClass::Unknown,
                in_table: true,
                source: "the doctor's GPU facts".into(),
            })
            .collect(),
        gpus_unknown: None,
        driver: DriverFact::Unknown("only its CUDA version is given".into()),
        driver_cuda,
        arch: Some(crate::builds::Arch::X86_64),
        python: None,
        jetson: None,
    };
    let plan = crate::plan::plan(&[machine], &TorchSpec::default());
    let r = plan.torch.recommended?;
    torch_builds()
        .iter()
        .find(|b| b.torch == r.version && b.variant == r.variant)
}

/// The branch proposed when nothing needs a newer one (as of
/// [`TORCH_BUILDS_AS_OF`]): R580 runs CUDA 12.x and 13.0, drives every GPU from
/// Maxwell to Blackwell, and is the last branch for Maxwell, Pascal and Volta
/// (compat-facts.md §R580), so one answer fits mixed fleets.
pub const PROPOSED_BRANCH: u32 = 580;

/// The driver branch to install for these GPUs so that CUDA `need` runs.
pub fn pick_driver_branch(
    ccs: &[ComputeCapability],
    need: Option<CudaVersion>,
) -> Result<u32, String> {
    let branch = need
        .and_then(compat::min_driver_branch_for)
        .unwrap_or(PROPOSED_BRANCH)
        .max(PROPOSED_BRANCH);
    for cc in ccs {
        compat::branch_supports_gpu(branch, cc.pair())?;
    }
    Ok(branch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc(s: &str) -> ComputeCapability {
        s.parse().unwrap()
    }
    fn cuda(s: &str) -> Option<CudaVersion> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn the_build_covers_the_gpu_and_runs_on_the_driver() {
        // Blackwell on R580: the newest release, 2.15.0+cu132 (wheel read: sm_120),
        // runs under minor-version compatibility (RN 13.2 Table 2: 13.x needs >= 580).
        let b = pick_torch(&[cc("12.0")], cuda("13.0")).unwrap();
        assert_eq!((b.torch, b.variant), ("2.15.0", "cu132"));
        assert!(b
            .command
            .contains("--index-url https://download.pytorch.org/whl/cu132"));
        // Volta on R580: only cu126 still has sm_70 in current releases.
        assert_eq!(
            pick_torch(&[cc("7.0")], cuda("13.0")).unwrap().variant,
            "cu126"
        );
        // H200 on R570 (CUDA 12.8): not a CUDA 13 build.
        assert_eq!(
            pick_torch(&[cc("9.0")], cuda("12.8")).unwrap().variant,
            "cu126"
        );
        // Blackwell on R570: 2.11.0+cu128 is the last release with a cu128 build
        // (pytorch#182250: sm_120); later ones need R580 or lack sm_120.
        let b = pick_torch(&[cc("12.0")], cuda("12.8")).unwrap();
        assert_eq!((b.torch, b.variant), ("2.11.0", "cu128"));
        // A mixed box picks one build for both.
        assert_eq!(
            pick_torch(&[cc("7.0"), cc("9.0")], cuda("13.0"))
                .unwrap()
                .variant,
            "cu126"
        );
    }

    #[test]
    fn the_driver_branch_fits_the_gpu_and_the_cuda_version() {
        assert_eq!(pick_driver_branch(&[cc("9.0")], cuda("13.0")), Ok(580));
        assert_eq!(pick_driver_branch(&[cc("7.0")], cuda("12.6")), Ok(580));
        assert!(
            pick_driver_branch(&[cc("3.7")], cuda("11.4")).is_err(),
            "Kepler ends with R470"
        );
    }
}
