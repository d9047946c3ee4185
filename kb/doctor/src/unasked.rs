//! What a cheap snapshot leaves unasked, and which of the doctor's undecided
//! checks wait on it. `gpukb agent` reads NVML but never calls `cuInit`;
//! `gpukb search` reads files only; `gpukb doctor` asks everything. Each
//! says which checks stay unknown for that, by the words of the checks'
//! reasons, here in one place.

use crate::Diagnosis;

/// The live sources a snapshot did not ask, whose checks then stay undecided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unasked {
    /// `cuInit`, the CUDA driver API (`gpukb agent`: NVML is read).
    Cuinit,
    /// NVML and `cuInit` (`gpukb search`: files only).
    NvmlAndCuinit,
}

impl Unasked {
    /// True when an undecided check's `reason` says it waits on what was left unasked.
    pub fn explains(self, reason: &str) -> bool {
        let words: &[&str] = match self {
            Unasked::Cuinit => &["cuInit", "CUDA driver API"],
            Unasked::NvmlAndCuinit => &["cuInit", "NVML"],
        };
        words.iter().any(|w| reason.contains(w))
    }
}

impl Diagnosis {
    /// The checks left undecided because the snapshot did not ask `unasked`
    /// (`gpukb doctor` runs them), by name.
    pub fn undecided_for_want_of(&self, unasked: Unasked) -> Vec<String> {
        self.undecided
            .iter()
            .filter(|u| unasked.explains(&u.reason))
            .map(|u| u.check.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_and_search_leave_out_different_sources() {
        assert!(Unasked::Cuinit.explains("CUDA driver API: not observed"));
        assert!(!Unasked::Cuinit.explains("GPU names: NVML not observed"));
        assert!(Unasked::NvmlAndCuinit.explains("GPU names: NVML not observed"));
        assert!(Unasked::NvmlAndCuinit.explains("cuInit: not called"));
        assert!(!Unasked::NvmlAndCuinit.explains("the kernel log is not observed"));
    }
}
