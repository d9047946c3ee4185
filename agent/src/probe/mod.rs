//! `gpukb probe`: what this GPU can actually run, and how fast.
//!
//! Owns the live GPU probe and its report format. On each CUDA device it
//! loads every image embedded by `gpukb-kernels` through the driver API and
//! records the exact `CUresult` (the module-load matrix), runs a verified
//! smoke test, decides for each framework library the caller lists which
//! image the driver would run ([`verdict`], checked against the matrix), and
//! measures device-memory copy bandwidth, FP32 FMA rate, bf16/fp16 GEMM rate,
//! pinned host↔device bandwidth and peer-to-peer copies, each beside a
//! reference. The result is a [`ProbeReport`], versioned, which round-trips
//! through JSON (`probe.json` in a capture) so that doctor and tests read it
//! with no GPU.
//!
//! Nothing here panics on a machine without libcuda: presence is checked
//! first and every call into CUDA libraries runs under `catch_unwind`.

mod bench;
pub mod canary;
mod ffi;
#[cfg(test)]
mod fixture_tests;
mod matrix;
mod pcie;
pub mod reference;
pub mod verdict;

use crate::fatbin::FatbinImage;
use serde::{Deserialize, Serialize};
use std::time::Instant;

pub use verdict::{ImageOutcome, ImageVerdict};

/// Version of the [`ProbeReport`] JSON layout.
pub const PROBE_REPORT_VERSION: u32 = 1;

/// Why the probe could not run at all.
#[derive(
    Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error, schemars::JsonSchema,
)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProbeError {
    /// No loadable libcuda (`libcuda.so.1`): no NVIDIA driver, or not on the library path.
    #[error("no NVIDIA driver library: libcuda.so.1 cannot be loaded (driver not installed, or not on the library path)")]
    NoLibcuda,
    /// The toolkit's `stubs/libcuda.so` was loaded instead of the driver's.
    #[error("the CUDA toolkit's stub libcuda.so was loaded instead of the driver's (CUDA_ERROR_STUB_LIBRARY): remove .../stubs from LD_LIBRARY_PATH")]
    StubLibrary,
    /// libcuda loaded, but no usable device.
    #[error("no CUDA device: {detail}")]
    NoDevice { detail: String },
    /// A driver call failed.
    #[error("{call} failed: {code} {name}")]
    Driver {
        call: String,
        code: u32,
        name: String,
    },
    /// libcuda lacks a function the probe needs (a very old driver).
    #[error("libcuda has no {symbol} (driver too old)")]
    MissingSymbol { symbol: String },
    /// `--gpu N` names a device that does not exist.
    #[error("GPU {requested} does not exist (this machine has {count})")]
    NoSuchGpu { requested: usize, count: usize },
    /// A CUDA library (through cudarc) panicked; the panic was caught.
    #[error("{call} panicked: {message}")]
    Panicked { call: String, message: String },
}

impl ProbeError {
    /// A driver error from a raw `CUresult`, named by the driver when it can.
    pub fn driver(call: &str, code: u32) -> Self {
        ProbeError::Driver {
            call: call.to_string(),
            code,
            name: ffi::error_name(code),
        }
    }
}

/// Runs `f`, turning a panic inside a CUDA library binding into an error.
pub(crate) fn guard<T>(
    call: &str,
    f: impl FnOnce() -> Result<T, ProbeError>,
) -> Result<T, ProbeError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(ProbeError::Panicked {
            call: call.to_string(),
            message: p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".to_string()),
        }),
    }
}

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct ProbeOptions {
    /// Shorter measurements (smaller buffers, fewer repetitions).
    pub quick: bool,
    /// Probe only this CUDA ordinal (default: every device).
    pub gpu: Option<usize>,
    /// Skip the throughput measurements (module-load matrix and verdicts only).
    pub no_throughput: bool,
    /// Framework libraries whose fatbin images to judge on each GPU.
    pub frameworks: Vec<FrameworkInput>,
}

/// One library with GPU code, as the fingerprint found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FrameworkInput {
    /// e.g. `torch 2.11.0+cu130 (libtorch_cuda.so)`.
    pub name: String,
    /// Where the library is.
    pub path: String,
    /// The images its `.nv_fatbin` holds (one per distinct target is enough).
    pub images: Vec<FatbinImage>,
}

/// The whole probe's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeReport {
    /// [`PROBE_REPORT_VERSION`].
    pub version: u32,
    /// gpukb version that wrote it.
    pub gpukb_version: String,
    /// `cuDriverGetVersion`, e.g. 13000.
    pub driver_cuda_version: u32,
    /// Highest PTX ISA this driver JITs, by the rules in [`verdict`].
    pub driver_max_ptx_isa: (u32, u32),
    /// Devices `cuDeviceGetCount` reported.
    pub device_count: usize,
    /// Whether `--quick` was used.
    pub quick: bool,
    /// One entry per probed device.
    pub gpus: Vec<GpuProbe>,
    /// Peer-to-peer results between probed devices (empty with one GPU).
    pub p2p: Vec<P2pResult>,
    /// Wall time of the whole probe, in milliseconds.
    pub total_ms: f64,
}

/// Everything measured on one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GpuProbe {
    pub ordinal: usize,
    pub name: String,
    /// Compute capability (major, minor).
    pub cc: (u32, u32),
    pub pci_bus_id: Option<String>,
    pub sm_count: u32,
    /// `CU_DEVICE_ATTRIBUTE_CLOCK_RATE` (max SM clock), kHz.
    pub clock_khz: u32,
    pub mem_clock_khz: u32,
    pub mem_bus_bits: u32,
    pub total_mem_bytes: u64,
    /// 1 on Jetson and other integrated GPUs.
    pub integrated: bool,
    /// Each embedded image: loaded or the exact `CUresult`.
    pub module_loads: Vec<ModuleLoad>,
    /// True when every matrix row matched the [`verdict`] rules' prediction.
    pub rules_agree_with_loads: bool,
    /// The kernels run on the device and checked on the host.
    pub smoke: Vec<SmokeTest>,
    /// Framework verdicts for this device.
    pub frameworks: Vec<FrameworkVerdict>,
    /// Throughput results, each beside its reference.
    pub throughput: Vec<Throughput>,
    /// The PCIe link NVML reports, if it could be read.
    pub pcie: Option<PcieLink>,
    /// Stage timings, in order.
    pub timings: Vec<Timing>,
    /// Stages that failed, with why (the rest of the probe still ran).
    pub errors: Vec<String>,
}

/// One row of the module-load matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModuleLoad {
    /// e.g. `gpukb_probe.sm_90.cubin`.
    pub image: String,
    /// `sm_90` or `compute_80`.
    pub target: String,
    /// `cubin` or `ptx`.
    #[schemars(with = "String")]
    pub kind: gpukb_kernels::ProbeImageKind,
    pub arch: u32,
    /// PTX ISA `.version` for PTX.
    pub ptx_isa: Option<(u32, u32)>,
    /// Raw `CUresult` of `cuModuleLoadDataEx`; 0 = loaded.
    pub code: u32,
    /// e.g. `CUDA_ERROR_NO_BINARY_FOR_GPU`.
    pub code_name: String,
    /// The driver's message (`cuGetErrorString`), e.g. "no kernel image is
    /// available for execution on the device"; absent on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_message: Option<String>,
    /// Whether every gpukb kernel was found in the loaded module.
    pub kernels_found: bool,
    /// What [`verdict::predict_standalone`] expected.
    pub predicted: u32,
    /// Load (and JIT) time, ms.
    pub ms: f64,
    /// First lines of the JIT error log, if any.
    pub jit_log: Option<String>,
}

impl ModuleLoad {
    /// Did the load succeed?
    pub fn loaded(&self) -> bool {
        self.code == 0
    }
}

/// One verified kernel run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SmokeTest {
    /// The image the kernels came from.
    pub image: String,
    pub passed: bool,
    /// Max relative error of saxpy and of the reduction.
    pub saxpy_max_rel_err: f64,
    pub reduce_rel_err: f64,
    pub detail: String,
}

/// A framework verdict on one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FrameworkVerdict {
    pub name: String,
    pub path: String,
    /// Distinct targets in the library, e.g. `sm_80`, `compute_90`.
    pub targets: Vec<String>,
    pub verdict: ImageVerdict,
}

/// A measured rate beside what it should be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Throughput {
    /// Stable key, e.g. `copy_kernel`, `gemm_bf16`.
    pub name: String,
    /// Human label.
    pub label: String,
    /// `GB/s` or `TFLOP/s`.
    pub unit: String,
    pub measured: f64,
    /// The reference the percentage is against (absent: none known).
    pub expected: Option<Reference>,
    /// measured / expected × 100.
    pub percent: Option<f64>,
    /// Below this percentage the result is flagged.
    pub threshold_percent: f64,
    /// True when `percent < threshold_percent`.
    pub far_below: bool,
    /// Further comparisons (each with its own percentage).
    pub other_references: Vec<Reference>,
    /// How it was measured (sizes, launch shape, repetitions).
    pub detail: String,
}

/// A reference figure and where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reference {
    pub value: f64,
    pub source: String,
    /// measured / value × 100, filled in for `other_references`.
    pub percent: Option<f64>,
}

impl Throughput {
    pub(crate) fn new(
        name: &str,
        label: &str,
        unit: &str,
        measured: f64,
        expected: Option<Reference>,
        threshold_percent: f64,
        detail: String,
    ) -> Self {
        let percent = expected
            .as_ref()
            .filter(|r| r.value > 0.0)
            .map(|r| measured / r.value * 100.0);
        Throughput {
            name: name.to_string(),
            label: label.to_string(),
            unit: unit.to_string(),
            measured,
            far_below: percent.is_some_and(|p| p < threshold_percent),
            expected,
            percent,
            threshold_percent,
            other_references: Vec::new(),
            detail,
        }
    }

    pub(crate) fn also(mut self, value: f64, source: &str) -> Self {
        let percent = (value > 0.0).then(|| self.measured / value * 100.0);
        self.other_references.push(Reference {
            value,
            source: source.to_string(),
            percent,
        });
        self
    }
}

/// The PCIe link as NVML reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PcieLink {
    /// Read right after the host↔device transfers (a link may idle at Gen1).
    pub current_gen: Option<u32>,
    pub current_width: Option<u32>,
    pub max_gen: Option<u32>,
    pub max_width: Option<u32>,
    /// SM clock (MHz) read right after the FMA run.
    pub sm_clock_after_fma_mhz: Option<u32>,
}

/// Peer-to-peer between two devices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct P2pResult {
    pub from: usize,
    pub to: usize,
    /// `cuDeviceCanAccessPeer`.
    pub can_access: bool,
    /// Copy bandwidth from `from` to `to`, GB/s (absent if not measured).
    pub gbps: Option<f64>,
    pub detail: String,
}

/// How long one stage took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Timing {
    pub stage: String,
    pub ms: f64,
}

impl ProbeReport {
    /// The judged summary the diagnosis reads (`source`: where this report came from).
    pub fn evidence(
        &self,
        source: crate::fingerprint::Source,
    ) -> gpukb_facts::measured::ProbeEvidence {
        use gpukb_facts::measured::{ProbeEvidence, ProbedFramework, ProbedGpu};
        ProbeEvidence {
            source,
            gpus: self
                .gpus
                .iter()
                .map(|g| ProbedGpu {
                    ordinal: g.ordinal,
                    name: g.name.clone(),
                    cc: gpukb_facts::ComputeCapability::new(g.cc.0, g.cc.1),
                    load_mismatches: g
                        .module_loads
                        .iter()
                        .filter(|m| m.code != m.predicted)
                        .map(|m| {
                            format!(
                                "{}: {} ({}), predicted {}",
                                m.image, m.code, m.code_name, m.predicted
                            )
                        })
                        .collect(),
                    smoke_failures: g
                        .smoke
                        .iter()
                        .filter(|s| !s.passed)
                        .map(|s| format!("{}: {}", s.image, s.detail))
                        .collect(),
                    frameworks: g
                        .frameworks
                        .iter()
                        .map(|f| ProbedFramework {
                            name: f.name.clone(),
                            path: f.path.clone(),
                            expected_code: f.verdict.expected_code,
                            reason: f.verdict.reason.clone(),
                        })
                        .collect(),
                    slow: g
                        .throughput
                        .iter()
                        .filter(|t| t.far_below)
                        .map(|t| {
                            format!(
                                "{} {:.0} {} is {:.0} % of its reference",
                                t.label,
                                t.measured,
                                t.unit,
                                t.percent.unwrap_or(0.0)
                            )
                        })
                        .collect(),
                    errors: g.errors.clone(),
                })
                .collect(),
        }
    }

    /// Parses a `probe.json`, refusing a newer layout.
    pub fn from_json(text: &str) -> Result<ProbeReport, String> {
        let r: ProbeReport = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if r.version > PROBE_REPORT_VERSION {
            return Err(format!(
                "probe.json version {} is newer than this gpukb understands ({})",
                r.version, PROBE_REPORT_VERSION
            ));
        }
        Ok(r)
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Decides every framework on every GPU of a recorded report again, with no
/// GPU (for doctor and tests): `(ordinal, framework name, verdict)`.
pub fn reverdict(
    report: &ProbeReport,
    frameworks: &[FrameworkInput],
) -> Vec<(usize, String, ImageVerdict)> {
    let mut out = Vec::new();
    for g in &report.gpus {
        for f in frameworks {
            out.push((
                g.ordinal,
                f.name.clone(),
                verdict::decide(g.cc, report.driver_cuda_version, &f.images),
            ));
        }
    }
    out
}

/// Runs the probe. `progress` gets one short line per stage.
pub fn run(opts: &ProbeOptions, progress: &mut dyn FnMut(&str)) -> Result<ProbeReport, ProbeError> {
    let t0 = Instant::now();
    if !ffi::libcuda_present() {
        return Err(ProbeError::NoLibcuda);
    }
    progress("initialising the CUDA driver");
    let driver = guard("cuDriverGetVersion", ffi::driver_version)?;
    match guard("cuInit", ffi::init) {
        Ok(()) => {}
        Err(ProbeError::Driver { code: 34, .. }) => return Err(ProbeError::StubLibrary),
        Err(ProbeError::Driver { code: 100, name, .. }) => {
            return Err(ProbeError::NoDevice {
                detail: format!("cuInit returned 100 {name} (no GPU visible: check CUDA_VISIBLE_DEVICES, the container's --gpus, and nvidia-smi)"),
            })
        }
        Err(e) => return Err(e),
    }
    let count = guard("cuDeviceGetCount", ffi::device_count)?;
    if count == 0 {
        return Err(ProbeError::NoDevice {
            detail: "cuDeviceGetCount returned 0".to_string(),
        });
    }
    let ordinals: Vec<usize> = match opts.gpu {
        Some(g) if g >= count => {
            return Err(ProbeError::NoSuchGpu {
                requested: g,
                count,
            })
        }
        Some(g) => vec![g],
        None => (0..count).collect(),
    };
    let nvml = pcie::Nvml::open();
    let mut gpus = Vec::new();
    for &ord in &ordinals {
        gpus.push(probe_gpu(ord, driver, opts, nvml.as_ref(), progress)?);
    }
    let p2p = if ordinals.len() > 1 && !opts.no_throughput {
        progress("peer-to-peer copies");
        bench::p2p(&ordinals, opts.quick)
    } else {
        Vec::new()
    };
    Ok(ProbeReport {
        version: PROBE_REPORT_VERSION,
        gpukb_version: env!("CARGO_PKG_VERSION").to_string(),
        driver_cuda_version: driver,
        driver_max_ptx_isa: verdict::max_ptx_isa(driver),
        device_count: count,
        quick: opts.quick,
        gpus,
        p2p,
        total_ms: t0.elapsed().as_secs_f64() * 1e3,
    })
}

fn probe_gpu(
    ord: usize,
    driver: u32,
    opts: &ProbeOptions,
    nvml: Option<&pcie::Nvml>,
    progress: &mut dyn FnMut(&str),
) -> Result<GpuProbe, ProbeError> {
    use cudarc::driver::sys::CUdevice_attribute as A;
    let t = Instant::now();
    let attr = |a: A| {
        guard("cuDeviceGetAttribute", || ffi::attribute(ord, a as i32)).map(|v| v.max(0) as u32)
    };
    let cc = (
        attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
    );
    let name = guard("cuDeviceGetName", || ffi::device_name(ord))?;
    progress(&format!(
        "GPU {ord}: {name} (compute capability {}.{})",
        cc.0, cc.1
    ));
    let mut g = GpuProbe {
        ordinal: ord,
        name,
        cc,
        pci_bus_id: guard("cuDeviceGetPCIBusId", || ffi::pci_bus_id(ord)).ok(),
        sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        clock_khz: attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).unwrap_or(0),
        mem_clock_khz: attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).unwrap_or(0),
        mem_bus_bits: attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH).unwrap_or(0),
        total_mem_bytes: guard("cuDeviceTotalMem", || ffi::total_mem(ord)).unwrap_or(0),
        integrated: attr(A::CU_DEVICE_ATTRIBUTE_INTEGRATED).unwrap_or(0) == 1,
        module_loads: Vec::new(),
        rules_agree_with_loads: false,
        smoke: Vec::new(),
        frameworks: Vec::new(),
        throughput: Vec::new(),
        pcie: None,
        timings: Vec::new(),
        errors: Vec::new(),
    };
    guard("cuDevicePrimaryCtxRetain", || ffi::use_primary_context(ord))?;
    g.timings.push(Timing {
        stage: "device_init".into(),
        ms: ms_since(t),
    });

    progress(&format!(
        "GPU {ord}: loading {} embedded images",
        gpukb_kernels::images().len()
    ));
    let t = Instant::now();
    g.module_loads = matrix::load_all(g.cc, driver)?;
    g.rules_agree_with_loads = g.module_loads.iter().all(|m| m.code == m.predicted);
    g.timings.push(Timing {
        stage: "module_load_matrix".into(),
        ms: ms_since(t),
    });

    for f in &opts.frameworks {
        let mut targets: Vec<String> = f.images.iter().map(|i| i.target()).collect();
        targets.sort();
        targets.dedup();
        g.frameworks.push(FrameworkVerdict {
            name: f.name.clone(),
            path: f.path.clone(),
            targets,
            verdict: verdict::decide(g.cc, driver, &f.images),
        });
    }

    bench::run_gpu(&mut g, opts, nvml, progress);
    Ok(g)
}

pub(crate) fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_libcuda_here_is_an_error_not_a_panic() {
        // The build machine has no driver; on a GPU machine this runs the probe.
        if ffi::libcuda_present() {
            return;
        }
        let mut lines = Vec::new();
        let r = run(&ProbeOptions::default(), &mut |l| lines.push(l.to_string()));
        assert_eq!(r.unwrap_err(), ProbeError::NoLibcuda);
        assert!(ffi::error_name(209).contains("209"));
    }

    #[test]
    fn throughput_percent_and_flag() {
        let t = Throughput::new(
            "x",
            "x",
            "GB/s",
            40.0,
            Some(Reference {
                value: 100.0,
                source: "s".into(),
                percent: None,
            }),
            50.0,
            String::new(),
        )
        .also(80.0, "other");
        assert_eq!(t.percent, Some(40.0));
        assert!(t.far_below);
        assert_eq!(t.other_references[0].percent, Some(50.0));
    }
}
