//! The selection policy, shared by the doctor's fixes and the planner: which
//! torch build to install for a set of GPUs under a driver, and which driver
//! branch to install for a set of GPUs and a CUDA version. Over the sourced,
//! dated wheel table below and the rules in [`crate::compat`].

use crate::compat::{self, DriverCompat};
use crate::target::FatbinImage;
use crate::version::{ComputeCapability, CudaVersion};

/// As-of date of [`TORCH_BUILDS`].
pub const TORCH_BUILDS_AS_OF: &str = "2026-12-01";

/// One downloadable torch build for Linux x86-64.
pub struct TorchBuild {
    pub torch: &'static str,
    pub variant: &'static str,
    pub cuda: (u32, u32),
    /// SASS compiled in (no PTX in these release wheels).
    pub sass: &'static [&'static str],
}

/// The newest release's Linux x86-64 CUDA builds, newest CUDA first. Source:
/// the PyPI / download.pytorch.org wheels read with gpukb's fatbin reader
/// (compat-facts.md errata 4: 2.11.0–2.14.1 cu130 sm_75…sm_120, no PTX) and
/// `../shared/research/data/torch_wheels.csv` rows 2.14.0/2.14.1 (cu126
/// sm_50…sm_90, from `.ci/manywheel/build_cuda.sh`). 2.15.0 (cu132) needs
/// Python ≥ 3.11 and is not proposed here.
pub const TORCH_BUILDS: &[TorchBuild] = &[
    TorchBuild {
        torch: "2.14.1",
        variant: "cu132",
        cuda: (13, 2),
        sass: &["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
    },
    TorchBuild {
        torch: "2.14.1",
        variant: "cu130",
        cuda: (13, 0),
        sass: &["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
    },
    TorchBuild {
        torch: "2.14.1",
        variant: "cu126",
        cuda: (12, 6),
        sass: &[
            "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90",
        ],
    },
];

fn images(b: &TorchBuild) -> Vec<FatbinImage> {
    b.sass
        .iter()
        .filter_map(|t| compat::image_from_target(t, (1, 8)))
        .collect()
}

/// The build to install: every GPU runs its SASS, the driver runs its CUDA
/// (natively or under minor-version compatibility). Newest CUDA first, but a
/// native match beats minor-version compatibility.
pub fn pick_torch(
    ccs: &[ComputeCapability],
    driver_cuda: Option<CudaVersion>,
) -> Option<&'static TorchBuild> {
    let fits = |b: &TorchBuild| {
        let imgs = images(b);
        ccs.iter()
            .all(|cc| compat::decide(cc.pair(), 13000, &imgs).expected_code == 0)
    };
    let runs = |b: &TorchBuild, want: DriverCompat| match driver_cuda {
        None => true,
        Some(d) => compat::driver_runs_cuda(d, CudaVersion::new(b.cuda.0, b.cuda.1)) == want,
    };
    TORCH_BUILDS
        .iter()
        .find(|b| fits(b) && runs(b, DriverCompat::Native))
        .or_else(|| {
            TORCH_BUILDS
                .iter()
                .find(|b| fits(b) && runs(b, DriverCompat::MinorVersion))
        })
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
        // Blackwell on R580: a CUDA 13 build (cu126 has no sm_100/sm_120).
        let b = pick_torch(&[cc("12.0")], cuda("13.0")).unwrap();
        assert_eq!(
            b.variant, "cu130",
            "native CUDA 13.0 beats 13.2 under minor-version compatibility"
        );
        // Volta on R580: only cu126 still has sm_70.
        assert_eq!(
            pick_torch(&[cc("7.0")], cuda("13.0")).unwrap().variant,
            "cu126"
        );
        // H200 on R570 (CUDA 12.8): not a CUDA 13 build.
        assert_eq!(
            pick_torch(&[cc("9.0")], cuda("12.8")).unwrap().variant,
            "cu126"
        );
        // Blackwell on R570: nothing in the table runs; the driver must move first.
        assert!(pick_torch(&[cc("12.0")], cuda("12.8")).is_none());
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
