//! GPU frequency/load and `jetson_clocks` state from sysfs.
//!
//! The integrated GPU is a devfreq device. Its node name differs per SoC and
//! release, so it is found by listing `/sys/class/devfreq/` and reading each
//! entry's `device/of_node/name` (`gpu`, as jetson_stats does), falling back to
//! the node name:
//!
//! | SoC / L4T | devfreq node | load |
//! |---|---|---|
//! | tegra210 (Nano, TX1), R32 | `57000000.gpu` | `/sys/devices/gpu.0/load` |
//! | tegra186 (TX2), R32 | `17000000.gp10b` | `/sys/devices/gpu.0/load` |
//! | tegra194 (Xavier), R32–R35 | `17000000.gv11b` | `.../17000000.gv11b/load` |
//! | tegra234 (Orin), R35 | `17000000.ga10b` | `.../17000000.ga10b/load` |
//! | tegra234 (Orin), R36+ | `17000000.gpu` | `.../17000000.gpu/load` |
//! | tegra264 (Thor), R38+ | `gpu-gpc-0` | (NVML) |
//!
//! `load` is in tenths of a percent (0–1000). Frequencies are in Hz for
//! devfreq and kHz for cpufreq. `jetson_clocks` pins every clock's minimum to
//! its maximum, so "locked" means min == max for the GPU and every online CPU.

use serde::{Deserialize, Serialize};

/// Parse a sysfs integer (`"921600000\n"`). `None` on anything else.
pub fn parse_sysfs_u64(text: &str) -> Option<u64> {
    let t = text.trim_matches(|c: char| c.is_whitespace() || c == '\0');
    if t.is_empty() || t.len() > 20 || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// Devfreq node names known to be the integrated GPU.
pub const KNOWN_GPU_DEVFREQ_NAMES: &[&str] = &[
    "57000000.gpu",
    "17000000.gp10b",
    "17000000.gv11b",
    "17000000.ga10b",
    "17000000.gpu",
    "gpu-gpc-0",
];

/// True when a devfreq node name or an `of_node/name` looks like the GPU.
pub fn looks_like_gpu(name: &str) -> bool {
    let n = name.trim().trim_end_matches('\0').to_ascii_lowercase();
    KNOWN_GPU_DEVFREQ_NAMES.contains(&n.as_str())
        || n == "gpu"
        || n.ends_with(".gpu")
        || n.starts_with("gpu-gpc")
        || ["gm20b", "gp10b", "gv11b", "ga10b", "gb10b"]
            .iter()
            .any(|c| n.ends_with(c))
}

/// Min/max/current of one clock domain.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct ClockRange {
    /// Lower limit.
    pub min: Option<u64>,
    /// Upper limit.
    pub max: Option<u64>,
    /// Current.
    pub cur: Option<u64>,
}

impl ClockRange {
    /// `Some(true)` when min == max (pinned), `None` when unknown.
    pub fn pinned(&self) -> Option<bool> {
        Some(self.min? == self.max?)
    }
}

/// `jetson_clocks` state as far as sysfs shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JetsonClocksState {
    /// GPU and every readable CPU have min == max: `jetson_clocks` is on (or
    /// someone pinned the clocks by hand).
    Active,
    /// At least one domain scales (min < max): DVFS is on.
    Inactive,
    /// Not enough files to tell.
    Unknown,
}

/// Decide the `jetson_clocks` state from the GPU and CPU clock ranges.
pub fn jetson_clocks_state(gpu: Option<&ClockRange>, cpus: &[ClockRange]) -> JetsonClocksState {
    let mut known = 0;
    for r in gpu.into_iter().chain(cpus.iter()) {
        match r.pinned() {
            Some(false) => return JetsonClocksState::Inactive,
            Some(true) => known += 1,
            None => {}
        }
    }
    if gpu.and_then(ClockRange::pinned).is_some() && known > 0 {
        JetsonClocksState::Active
    } else {
        JetsonClocksState::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_sysfs_u64("921600000\n"), Some(921_600_000));
        assert_eq!(parse_sysfs_u64(" 0 "), Some(0));
        assert_eq!(parse_sysfs_u64("-1"), None);
        assert_eq!(parse_sysfs_u64(""), None);
        assert_eq!(parse_sysfs_u64("99999999999999999999999"), None);
    }

    #[test]
    fn gpu_names() {
        for n in KNOWN_GPU_DEVFREQ_NAMES {
            assert!(looks_like_gpu(n));
        }
        assert!(looks_like_gpu("gpu\0"));
        assert!(!looks_like_gpu("3d00000.host1x"));
        assert!(!looks_like_gpu("15340000.vic"));
    }

    #[test]
    fn clocks_state() {
        let pinned = ClockRange {
            min: Some(5),
            max: Some(5),
            cur: Some(5),
        };
        let free = ClockRange {
            min: Some(1),
            max: Some(5),
            cur: Some(2),
        };
        assert_eq!(
            jetson_clocks_state(Some(&pinned), &[pinned]),
            JetsonClocksState::Active
        );
        assert_eq!(
            jetson_clocks_state(Some(&pinned), &[free]),
            JetsonClocksState::Inactive
        );
        assert_eq!(jetson_clocks_state(None, &[]), JetsonClocksState::Unknown);
        assert_eq!(
            jetson_clocks_state(Some(&ClockRange::default()), &[pinned]),
            JetsonClocksState::Unknown
        );
    }
}
