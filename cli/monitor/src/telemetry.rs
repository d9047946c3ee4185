//! Telemetry, read-only: per GPU from an NVML handle kept open between
//! samples (temperature, power, clocks, utilisation, memory, ECC and
//! row-remap counters, throttle reasons, PCIe replays). Every NVML call runs
//! under a deadline; a GPU whose sample does not answer in time is marked
//! unresponsive and not asked again until [`NvmlSampler::forgive`] (the next
//! stack snapshot). A value NVML does not give on this GPU is
//! [`Reading::Unsupported`] with the reason, never 0. Without NVML at all
//! (no driver, a Jetson before JetPack 7) the whole sample is `Err(reason)`.

use crate::model::GpuFacts;
pub use crate::model::{Extra, GpuSample, Metric, Reading, Telemetry};
use gpukb_agent::host::{with_deadline, HostError};
use gpukb_agent::nvml_successors;
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{Clock, EccCounter, MemoryError};
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Nvml;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// An NVML handle kept open between samples.
pub struct NvmlSampler {
    nvml: Result<Arc<Nvml>, String>,
    /// Set when `nvmlInit` itself missed its deadline (a wedged driver).
    init_timed_out: bool,
    deadline: Duration,
    /// GPU index → why it was marked unresponsive.
    unresponsive: BTreeMap<u32, String>,
    /// Names and UUIDs, read once.
    identity: BTreeMap<u32, (String, String)>,
}

fn why(e: &NvmlError) -> String {
    match e {
        NvmlError::NotSupported => "not supported on this GPU".into(),
        NvmlError::NoPermission => "unsupported: needs root".into(),
        NvmlError::LibloadingError(_) => {
            "NVML not found (libnvidia-ml.so.1): no NVIDIA driver user-space".into()
        }
        e => e.to_string(),
    }
}

impl NvmlSampler {
    /// Initialises NVML under `deadline`; failure is kept as the reason
    /// every sample reports.
    pub fn open(deadline: Duration) -> NvmlSampler {
        let answer = with_deadline("nvmlInit", deadline, || Ok(Some(Nvml::init())));
        let init_timed_out = matches!(answer, Err(HostError::Timeout { .. }));
        let nvml = match answer {
            Ok(Some(Ok(n))) => Ok(Arc::new(n)),
            Ok(Some(Err(e))) => Err(format!("NVML: {}", why(&e))),
            Ok(None) => Err("NVML: no answer".into()),
            Err(e) => Err(format!("NVML: {e}")),
        };
        NvmlSampler {
            nvml,
            init_timed_out,
            deadline,
            unresponsive: BTreeMap::new(),
            identity: BTreeMap::new(),
        }
    }

    /// A sampler that never had NVML (the reason is reported).
    pub fn unavailable(reason: impl Into<String>) -> NvmlSampler {
        NvmlSampler {
            nvml: Err(reason.into()),
            init_timed_out: false,
            deadline: Duration::from_secs(1),
            unresponsive: BTreeMap::new(),
            identity: BTreeMap::new(),
        }
    }

    /// Whether NVML is held open.
    pub fn is_open(&self) -> bool {
        self.nvml.is_ok()
    }

    /// Why NVML is not open, when `nvmlInit` did not answer within the
    /// deadline: the driver is wedged, and asking it again now (for the
    /// snapshot) would only wait again.
    pub fn init_did_not_answer(&self) -> Option<&str> {
        match &self.nvml {
            Err(why) if self.init_timed_out => Some(why),
            _ => None,
        }
    }

    /// Lets go of NVML (a driver upgrade waits for the module to unload).
    pub fn release(&mut self, reason: impl Into<String>) {
        self.nvml = Err(reason.into());
        self.identity.clear();
    }

    /// Asks unresponsive GPUs again from the next sample on.
    pub fn forgive(&mut self) {
        self.unresponsive.clear();
    }

    /// Samples every GPU.
    pub fn sample(&mut self) -> Telemetry {
        let at = crate::time::now();
        let nvml = match &self.nvml {
            Ok(n) => n.clone(),
            Err(why) => {
                return Telemetry {
                    at,
                    gpus: Err(why.clone()),
                    extra: Vec::new(),
                }
            }
        };
        let n = nvml.clone();
        let count = match with_deadline("nvmlDeviceGetCount", self.deadline, move || {
            Ok(Some(n.device_count()))
        }) {
            Ok(Some(Ok(c))) => c,
            Ok(Some(Err(e))) => {
                return Telemetry {
                    at,
                    gpus: Err(format!("NVML: {}", why(&e))),
                    extra: Vec::new(),
                }
            }
            Ok(None) => 0,
            Err(e) => {
                return Telemetry {
                    at,
                    gpus: Err(format!("NVML: {e}")),
                    extra: Vec::new(),
                }
            }
        };
        let mut gpus = Vec::new();
        for index in 0..count {
            let (model, uuid) = self.identity.get(&index).cloned().unwrap_or_default();
            if let Some(w) = self.unresponsive.get(&index) {
                gpus.push(GpuSample {
                    index,
                    uuid,
                    model,
                    readings: Vec::new(),
                    unresponsive: Some(w.clone()),
                });
                continue;
            }
            let n = nvml.clone();
            match with_deadline(
                &format!("NVML sample of GPU {index}"),
                self.deadline,
                move || Ok(Some(sample_gpu(&n, index))),
            ) {
                Ok(Some(s)) => {
                    self.identity
                        .insert(index, (s.model.clone(), s.uuid.clone()));
                    gpus.push(s);
                }
                Ok(None) => {}
                Err(e) => {
                    let w = e.to_string();
                    self.unresponsive.insert(index, w.clone());
                    gpus.push(GpuSample {
                        index,
                        uuid,
                        model,
                        readings: Vec::new(),
                        unresponsive: Some(w),
                    });
                }
            }
        }
        Telemetry {
            at,
            gpus: Ok(gpus),
            extra: Vec::new(),
        }
    }
}

impl NvmlSampler {
    /// What the canary must know about each GPU, read now: compute mode, MIG
    /// mode, running compute processes (each NVML call under the deadline; an
    /// unresponsive GPU is not asked). `Err` when NVML is not open.
    pub fn canary_facts(&mut self) -> Result<Vec<GpuFacts>, String> {
        let nvml = self.nvml.clone()?;
        let n = nvml.clone();
        let count = match with_deadline("nvmlDeviceGetCount", self.deadline, move || {
            Ok(Some(n.device_count()))
        }) {
            Ok(Some(Ok(c))) => c,
            Ok(Some(Err(e))) => return Err(format!("NVML: {}", why(&e))),
            Ok(None) => 0,
            Err(e) => return Err(format!("NVML: {e}")),
        };
        let mut out = Vec::new();
        for index in 0..count {
            let (model, uuid) = self.identity.get(&index).cloned().unwrap_or_default();
            if let Some(w) = self.unresponsive.get(&index) {
                out.push(GpuFacts {
                    index,
                    uuid,
                    model,
                    compute_mode: Err("not asked".into()),
                    mig_enabled: Err("not asked".into()),
                    compute_processes: Err("not asked".into()),
                    unresponsive: Some(w.clone()),
                });
                continue;
            }
            let n = nvml.clone();
            match with_deadline(
                &format!("NVML canary facts of GPU {index}"),
                self.deadline,
                move || Ok(Some(canary_facts_of(&n, index))),
            ) {
                Ok(Some(f)) => out.push(f),
                Ok(None) => {}
                Err(e) => {
                    let w = e.to_string();
                    self.unresponsive.insert(index, w.clone());
                    out.push(GpuFacts {
                        index,
                        uuid,
                        model,
                        compute_mode: Err(w.clone()),
                        mig_enabled: Err(w.clone()),
                        compute_processes: Err(w.clone()),
                        unresponsive: Some(w),
                    });
                }
            }
        }
        Ok(out)
    }
}

fn canary_facts_of(nvml: &Nvml, index: u32) -> GpuFacts {
    use crate::model::ComputeMode as M;
    use nvml_wrapper::enum_wrappers::device::ComputeMode as N;
    let d = match nvml.device_by_index(index) {
        Ok(d) => d,
        Err(e) => {
            let w = why(&e);
            return GpuFacts {
                index,
                uuid: String::new(),
                model: String::new(),
                compute_mode: Err(w.clone()),
                mig_enabled: Err(w.clone()),
                compute_processes: Err(w),
                unresponsive: None,
            };
        }
    };
    GpuFacts {
        index,
        uuid: d.uuid().unwrap_or_default(),
        model: d.name().unwrap_or_default(),
        compute_mode: d
            .compute_mode()
            .map(|m| match m {
                N::Default => M::Default,
                N::ExclusiveThread => M::ExclusiveThread,
                N::Prohibited => M::Prohibited,
                N::ExclusiveProcess => M::ExclusiveProcess,
            })
            .map_err(|e| why(&e)),
        // A GPU without MIG support is not in MIG mode.
        mig_enabled: match d.mig_mode() {
            Ok(m) => Ok(m.current == 1),
            Err(NvmlError::NotSupported) => Ok(false),
            Err(e) => Err(why(&e)),
        },
        // nvmlDeviceGetComputeRunningProcesses_v3: a driver without it cannot
        // say, and the canary then leaves the GPU alone (facts_unreadable).
        compute_processes: d.running_compute_processes_count().map_err(|e| why(&e)),
        unresponsive: None,
    }
}

fn sample_gpu(nvml: &Nvml, index: u32) -> GpuSample {
    let d = match nvml.device_by_index(index) {
        Ok(d) => d,
        Err(e) => {
            return GpuSample {
                index,
                uuid: String::new(),
                model: String::new(),
                readings: Metric::ALL
                    .iter()
                    .map(|m| (*m, Reading::Unsupported(why(&e))))
                    .collect(),
                unresponsive: None,
            }
        }
    };
    let r = |v: Result<f64, NvmlError>| match v {
        Ok(v) => Reading::Value(v),
        Err(e) => Reading::Unsupported(why(&e)),
    };
    let mem = d.memory_info();
    let util = d.utilization_rates();
    const MIB: f64 = 1024.0 * 1024.0;
    let mut readings = vec![
        // Successors of the deprecated NVML functions, with a fallback to them.
        (
            Metric::GpuTemp,
            r(nvml_successors::gpu_temperature(&d).value.map(f64::from)),
        ),
        (
            Metric::PowerUsage,
            r(d.power_usage().map(|mw| f64::from(mw) / 1000.0)),
        ),
        (Metric::SmClock, r(d.clock_info(Clock::SM).map(f64::from))),
        (
            Metric::MemClock,
            r(d.clock_info(Clock::Memory).map(f64::from)),
        ),
        (
            Metric::GpuUtil,
            r(util.as_ref().map(|u| f64::from(u.gpu)).map_err(clone_err)),
        ),
        (
            Metric::MemCopyUtil,
            r(util
                .as_ref()
                .map(|u| f64::from(u.memory))
                .map_err(clone_err)),
        ),
        (
            Metric::FbUsed,
            r(mem.as_ref().map(|m| m.used as f64 / MIB).map_err(clone_err)),
        ),
        (
            Metric::FbFree,
            r(mem.as_ref().map(|m| m.free as f64 / MIB).map_err(clone_err)),
        ),
        (
            Metric::EccSbeTotal,
            r(
                d.total_ecc_errors(MemoryError::Corrected, EccCounter::Aggregate)
                    .map(|v| v as f64),
            ),
        ),
        (
            Metric::EccDbeTotal,
            r(
                d.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Aggregate)
                    .map(|v| v as f64),
            ),
        ),
        (
            Metric::PcieReplay,
            r(d.pcie_replay_counter().map(f64::from)),
        ),
        (
            Metric::ClockThrottleReasons,
            r(nvml_successors::clocks_event_reasons(&d)
                .value
                .map(|bits| ThrottleReasons::from_bits_truncate(bits).bits() as f64)),
        ),
    ];
    // Row remapping is not wrapped by nvml-wrapper 0.13: the raw symbol.
    let remap = match nvml.lib().nvmlDeviceGetRemappedRows.as_ref() {
        Ok(f) => {
            let (mut c, mut u, mut p, mut fl) = (0u32, 0u32, 0u32, 0u32);
            // SAFETY: a valid device handle and four out-pointers, per nvml.h.
            let rc = unsafe { f(d.handle(), &mut c, &mut u, &mut p, &mut fl) };
            match rc {
                0 => Ok((c, u)),
                3 => Err("not supported on this GPU".to_string()),
                code => Err(format!("nvmlDeviceGetRemappedRows returned {code}")),
            }
        }
        Err(_) => Err("this driver's NVML has no nvmlDeviceGetRemappedRows".to_string()),
    };
    match remap {
        Ok((c, u)) => {
            readings.push((
                Metric::CorrectableRemappedRows,
                Reading::Value(f64::from(c)),
            ));
            readings.push((
                Metric::UncorrectableRemappedRows,
                Reading::Value(f64::from(u)),
            ));
        }
        Err(w) => {
            readings.push((
                Metric::CorrectableRemappedRows,
                Reading::Unsupported(w.clone()),
            ));
            readings.push((Metric::UncorrectableRemappedRows, Reading::Unsupported(w)));
        }
    }
    GpuSample {
        index,
        uuid: d.uuid().unwrap_or_default(),
        model: d.name().unwrap_or_default(),
        readings,
        unresponsive: None,
    }
}

fn clone_err(e: &NvmlError) -> NvmlError {
    match e {
        NvmlError::NotSupported => NvmlError::NotSupported,
        NvmlError::NoPermission => NvmlError::NoPermission,
        NvmlError::GpuLost => NvmlError::GpuLost,
        _ => NvmlError::Unknown,
    }
}
