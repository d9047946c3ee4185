//! The driver-branch policy the planner shares: which branch to install for a
//! set of GPUs and a CUDA version (rules in [`crate::compat`]), and the as-of
//! date of the torch build table. It sits below the planner (`plan`) and the
//! driver table (`driver_choice`), which both build on it; the torch build to
//! install is the planner's, for `gpukb plan` and the doctor alike.

use crate::compat;
use crate::version::{ComputeCapability, CudaVersion};

/// As-of date of the torch build table (`data/torch_builds.csv`, parsed by
/// [`crate::builds`]): ISO 8601 `YYYY-MM-DD`.
pub const TORCH_BUILDS_AS_OF: &str = "2026-12-01";

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
    fn the_driver_branch_fits_the_gpu_and_the_cuda_version() {
        assert_eq!(pick_driver_branch(&[cc("9.0")], cuda("13.0")), Ok(580));
        assert_eq!(pick_driver_branch(&[cc("7.0")], cuda("12.6")), Ok(580));
        assert!(
            pick_driver_branch(&[cc("3.7")], cuda("11.4")).is_err(),
            "Kepler ends with R470"
        );
    }
}
