//! The data the monitor's parts hand each other, owned by none of them: a
//! telemetry sample ([`Telemetry`], per GPU [`GpuSample`], board-level
//! [`Extra`]) that the NVML sampler and the Jetson reader produce and the
//! exporter and the daemon read; what NVML says about a GPU for the canary
//! ([`GpuFacts`], [`ComputeMode`]); and the metric type ([`MetricType`]). It
//! depends on no other module of the crate, so that every module can use it.

use serde::{Deserialize, Serialize};

/// The metric type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricType {
    Gauge,
    Counter,
}

/// A telemetry metric (names follow dcgm-exporter's `DCGM_FI_DEV_*` fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Metric {
    GpuTemp,
    PowerUsage,
    SmClock,
    MemClock,
    GpuUtil,
    MemCopyUtil,
    FbUsed,
    FbFree,
    EccSbeTotal,
    EccDbeTotal,
    PcieReplay,
    CorrectableRemappedRows,
    UncorrectableRemappedRows,
    ClockThrottleReasons,
}

impl Metric {
    pub const ALL: [Metric; 14] = [
        Metric::GpuTemp,
        Metric::PowerUsage,
        Metric::SmClock,
        Metric::MemClock,
        Metric::GpuUtil,
        Metric::MemCopyUtil,
        Metric::FbUsed,
        Metric::FbFree,
        Metric::EccSbeTotal,
        Metric::EccDbeTotal,
        Metric::PcieReplay,
        Metric::CorrectableRemappedRows,
        Metric::UncorrectableRemappedRows,
        Metric::ClockThrottleReasons,
    ];
    /// The exported name.
    pub fn name(self) -> &'static str {
        match self {
            Metric::GpuTemp => "gpukb_gpu_temp",
            Metric::PowerUsage => "gpukb_power_usage",
            Metric::SmClock => "gpukb_sm_clock",
            Metric::MemClock => "gpukb_mem_clock",
            Metric::GpuUtil => "gpukb_gpu_util",
            Metric::MemCopyUtil => "gpukb_mem_copy_util",
            Metric::FbUsed => "gpukb_fb_used",
            Metric::FbFree => "gpukb_fb_free",
            Metric::EccSbeTotal => "gpukb_ecc_sbe_agg_total",
            Metric::EccDbeTotal => "gpukb_ecc_dbe_agg_total",
            Metric::PcieReplay => "gpukb_pcie_replay_counter",
            Metric::CorrectableRemappedRows => "gpukb_correctable_remapped_rows",
            Metric::UncorrectableRemappedRows => "gpukb_uncorrectable_remapped_rows",
            Metric::ClockThrottleReasons => "gpukb_clock_throttle_reasons",
        }
    }
    pub fn help(self) -> &'static str {
        match self {
            Metric::GpuTemp => "GPU temperature (C), as DCGM_FI_DEV_GPU_TEMP.",
            Metric::PowerUsage => "Power draw (W), as DCGM_FI_DEV_POWER_USAGE.",
            Metric::SmClock => "SM clock (MHz), as DCGM_FI_DEV_SM_CLOCK.",
            Metric::MemClock => "Memory clock (MHz), as DCGM_FI_DEV_MEM_CLOCK.",
            Metric::GpuUtil => "GPU utilisation (%), as DCGM_FI_DEV_GPU_UTIL.",
            Metric::MemCopyUtil => "Memory utilisation (%), as DCGM_FI_DEV_MEM_COPY_UTIL.",
            Metric::FbUsed => "Frame buffer used (MiB), as DCGM_FI_DEV_FB_USED.",
            Metric::FbFree => "Frame buffer free (MiB), as DCGM_FI_DEV_FB_FREE.",
            Metric::EccSbeTotal => "Corrected (single-bit) ECC errors, lifetime aggregate.",
            Metric::EccDbeTotal => "Uncorrected (double-bit) ECC errors, lifetime aggregate.",
            Metric::PcieReplay => "PCIe replay counter, as DCGM_FI_DEV_PCIE_REPLAY_COUNTER.",
            Metric::CorrectableRemappedRows => "Rows remapped for correctable errors.",
            Metric::UncorrectableRemappedRows => "Rows remapped for uncorrectable errors.",
            Metric::ClockThrottleReasons => "Clock throttle reasons bitmask (nvmlClocksEventReasons), as DCGM_FI_DEV_CLOCK_THROTTLE_REASONS.",
        }
    }
    pub fn kind(self) -> MetricType {
        MetricType::Gauge
    }
}

/// One value.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    Value(f64),
    /// Why this GPU does not give it (`not supported`, `needs root` ...).
    Unsupported(String),
}

/// One GPU's sample.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSample {
    pub index: u32,
    pub uuid: String,
    pub model: String,
    pub readings: Vec<(Metric, Reading)>,
    /// Set when the GPU did not answer within the deadline.
    pub unresponsive: Option<String>,
}

/// A board-level reading outside the per-GPU set (Jetson thermal zones, power rails).
#[derive(Debug, Clone, PartialEq)]
pub struct Extra {
    pub metric: &'static str,
    pub help: &'static str,
    pub labels: Vec<(String, String)>,
    pub reading: Reading,
}

/// One telemetry sample of the machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Telemetry {
    /// Unix seconds.
    pub at: i64,
    /// Per GPU, or why telemetry cannot be read at all.
    pub gpus: Result<Vec<GpuSample>, String>,
    /// Board-level readings.
    pub extra: Vec<Extra>,
}

/// A GPU's compute mode (`nvmlComputeMode_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComputeMode {
    Default,
    ExclusiveThread,
    Prohibited,
    ExclusiveProcess,
}

impl ComputeMode {
    /// Reads nvidia-smi's and NVML's spellings (`Default`, `Exclusive_Process`,
    /// `E. Process`, `Prohibited`, `Exclusive_Thread`).
    pub fn parse(s: &str) -> Option<ComputeMode> {
        let t = s.trim().to_ascii_lowercase().replace([' ', '.', '-'], "_");
        Some(match t.as_str() {
            "default" => ComputeMode::Default,
            "exclusive_process" | "e__process" | "e_process" => ComputeMode::ExclusiveProcess,
            "exclusive_thread" | "e__thread" | "e_thread" => ComputeMode::ExclusiveThread,
            "prohibited" => ComputeMode::Prohibited,
            _ => return None,
        })
    }
}

/// What NVML says about one GPU, as far as the canary cares. `Err` holds why
/// a fact could not be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuFacts {
    /// NVML index.
    pub index: u32,
    pub uuid: String,
    pub model: String,
    pub compute_mode: Result<ComputeMode, String>,
    /// MIG mode currently enabled.
    pub mig_enabled: Result<bool, String>,
    /// Compute processes running on the GPU now.
    pub compute_processes: Result<u32, String>,
    /// Set when NVML did not answer for this GPU in time.
    pub unresponsive: Option<String>,
}
