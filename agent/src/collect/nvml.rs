//! NVML (`libnvidia-ml.so.1`, loaded at run time through `nvml-wrapper`).
//! A missing library is a finding (no driver), not a crash.

use crate::fingerprint::{NvmlFacts, NvmlGpu, Observed, RemappedRows, Source};
use crate::host::{Host, HostError};
use crate::nvml_successors;
use gpukb_facts::{ComputeCapability, CudaVersion};
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{EccCounter, MemoryError, RetirementCause};
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};
use std::collections::BTreeMap;
use std::time::Duration;

/// NVML return codes by number (nvml.h), for exact error names.
fn return_name(code: u32) -> &'static str {
    match code {
        1 => "NVML_ERROR_UNINITIALIZED",
        2 => "NVML_ERROR_INVALID_ARGUMENT",
        3 => "NVML_ERROR_NOT_SUPPORTED",
        4 => "NVML_ERROR_NO_PERMISSION",
        5 => "NVML_ERROR_ALREADY_INITIALIZED",
        6 => "NVML_ERROR_NOT_FOUND",
        7 => "NVML_ERROR_INSUFFICIENT_SIZE",
        8 => "NVML_ERROR_INSUFFICIENT_POWER",
        9 => "NVML_ERROR_DRIVER_NOT_LOADED",
        10 => "NVML_ERROR_TIMEOUT",
        11 => "NVML_ERROR_IRQ_ISSUE",
        12 => "NVML_ERROR_LIBRARY_NOT_FOUND",
        13 => "NVML_ERROR_FUNCTION_NOT_FOUND",
        14 => "NVML_ERROR_CORRUPTED_INFOROM",
        15 => "NVML_ERROR_GPU_IS_LOST",
        16 => "NVML_ERROR_RESET_REQUIRED",
        17 => "NVML_ERROR_OPERATING_SYSTEM",
        18 => "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
        19 => "NVML_ERROR_IN_USE",
        20 => "NVML_ERROR_MEMORY",
        21 => "NVML_ERROR_NO_DATA",
        22 => "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
        23 => "NVML_ERROR_INSUFFICIENT_RESOURCES",
        24 => "NVML_ERROR_FREQ_NOT_SUPPORTED",
        25 => "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
        26 => "NVML_ERROR_DEPRECATED",
        27 => "NVML_ERROR_NOT_READY",
        28 => "NVML_ERROR_GPU_NOT_FOUND",
        29 => "NVML_ERROR_INVALID_STATE",
        30 => "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED",
        _ => "NVML_ERROR_UNKNOWN",
    }
}

/// `NVML_ERROR_LIB_RM_VERSION_MISMATCH (Driver/library version mismatch)`.
fn describe(e: NvmlError) -> String {
    let text = e.to_string();
    match e {
        NvmlError::LibloadingError(_)
        | NvmlError::FailedToLoadSymbol(_)
        | NvmlError::Utf8Error(_)
        | NvmlError::NulError(_) => text,
        other => {
            let code: u32 = nvml_wrapper_sys::bindings::nvmlReturn_t::from(other);
            format!("{} ({text})", return_name(code))
        }
    }
}

pub(super) fn collect(host: &Host, deadline: Duration) -> Observed<NvmlFacts> {
    let source = Source::Nvml {
        call: "nvmlInit_v2".into(),
    };
    match host.answer("nvml", deadline, live) {
        Ok(Some(f)) => Observed::found(f, source),
        Ok(None) => Observed::absent(
            source,
            "libnvidia-ml.so.1 not found: no NVIDIA driver user-space libraries",
        ),
        Err(e) => super::observed_error(source, e),
    }
}

fn live() -> Result<Option<NvmlFacts>, HostError> {
    let lib = |e: NvmlError| HostError::Library {
        what: "NVML".into(),
        message: describe(e),
    };
    let nvml = match Nvml::init() {
        Ok(n) => n,
        Err(NvmlError::LibloadingError(_)) => return Ok(None),
        Err(e) => return Err(lib(e)),
    };
    let driver_version = nvml.sys_driver_version().map_err(lib)?;
    let cuda = nvml.sys_cuda_driver_version().map_err(lib)?;
    let count = nvml.device_count().map_err(lib)?;
    let mut gpus = Vec::new();
    for i in 0..count {
        gpus.push(gpu(&nvml, i));
    }
    let driver_version = driver_version.parse().map_err(|e| HostError::Library {
        what: "nvmlSystemGetDriverVersion".into(),
        message: format!("{e}"),
    })?;
    Ok(Some(NvmlFacts {
        driver_version,
        cuda_driver_version: CudaVersion::from_api(u32::try_from(cuda).unwrap_or(0)),
        gpus,
    }))
}

/// Every NVML fact of GPU `index`; a call that fails (other than
/// `NVML_ERROR_NOT_SUPPORTED`) is listed in `unavailable`, in the order asked.
fn gpu(nvml: &Nvml, index: u32) -> NvmlGpu {
    let mut g = NvmlGpu {
        index,
        ..Default::default()
    };
    let d = match nvml.device_by_index(index) {
        Ok(d) => d,
        Err(e) => {
            g.unavailable
                .push(format!("nvmlDeviceGetHandleByIndex: {}", describe(e)));
            return g;
        }
    };
    let mut m = Misses::default();
    read_identity(&d, &mut m, &mut g);
    read_pcie_link(&d, &mut m, &mut g);
    read_memory_health(&d, &mut m, &mut g);
    read_mig(&d, &mut m, &mut g);
    g.persistence_mode = m.get("nvmlDeviceGetPersistenceMode", d.is_in_persistent_mode());
    read_sensors(&d, &mut m, &mut g);
    g.remapped_rows = read_remapped_rows(nvml, &d, &mut m);
    g.unavailable = m.unavailable;
    g
}

/// The NVML calls that failed for one GPU, as `call: NVML_ERROR_…` lines;
/// `NVML_ERROR_NOT_SUPPORTED` is no failure and is left out.
#[derive(Default)]
struct Misses {
    unavailable: Vec<String>,
}

impl Misses {
    /// The call's answer, or `None` with the failure noted.
    fn get<T>(&mut self, call: &str, r: Result<T, NvmlError>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                if !matches!(e, NvmlError::NotSupported) {
                    self.unavailable.push(format!("{call}: {}", describe(e)));
                }
                None
            }
        }
    }
}

/// Name, UUID, compute capability, total memory (MiB) and PCI bus id.
fn read_identity(d: &Device, m: &mut Misses, g: &mut NvmlGpu) {
    g.name = m.get("nvmlDeviceGetName", d.name()).unwrap_or_default();
    g.uuid = m.get("nvmlDeviceGetUUID", d.uuid()).unwrap_or_default();
    g.compute_capability = m
        .get(
            "nvmlDeviceGetCudaComputeCapability",
            d.cuda_compute_capability(),
        )
        .map(|c| ComputeCapability::new(c.major as u32, c.minor as u32));
    g.memory_total_mib = m
        .get("nvmlDeviceGetMemoryInfo", d.memory_info())
        .map(|i| i.total >> 20);
    g.pci_bus_id = m
        .get("nvmlDeviceGetPciInfo", d.pci_info())
        .map(|p| p.bus_id);
}

/// The PCIe link's current and maximum generation and width.
fn read_pcie_link(d: &Device, m: &mut Misses, g: &mut NvmlGpu) {
    g.pcie_gen_current = m.get(
        "nvmlDeviceGetCurrPcieLinkGeneration",
        d.current_pcie_link_gen(),
    );
    g.pcie_gen_max = m.get("nvmlDeviceGetMaxPcieLinkGeneration", d.max_pcie_link_gen());
    g.pcie_width_current = m.get(
        "nvmlDeviceGetCurrPcieLinkWidth",
        d.current_pcie_link_width(),
    );
    g.pcie_width_max = m.get("nvmlDeviceGetMaxPcieLinkWidth", d.max_pcie_link_width());
}

/// ECC mode and, when it is on, the aggregate error counts; retired pages.
fn read_memory_health(d: &Device, m: &mut Misses, g: &mut NvmlGpu) {
    g.ecc_enabled = m
        .get("nvmlDeviceGetEccMode", d.is_ecc_enabled())
        .map(|e| e.currently_enabled);
    if g.ecc_enabled == Some(true) {
        g.ecc_uncorrected_aggregate = m.get(
            "nvmlDeviceGetTotalEccErrors",
            d.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Aggregate),
        );
        g.ecc_corrected_aggregate = m.get(
            "nvmlDeviceGetTotalEccErrors",
            d.total_ecc_errors(MemoryError::Corrected, EccCounter::Aggregate),
        );
    }
    g.retired_pages_double_bit = m
        .get(
            "nvmlDeviceGetRetiredPages",
            d.retired_pages(RetirementCause::DoubleBitEccError),
        )
        .map(|p| p.len() as u32);
    g.retired_pages_pending = m.get(
        "nvmlDeviceGetRetiredPagesPendingStatus",
        d.are_pages_pending_retired(),
    );
}

/// MIG mode and, when it is on, how many MIG devices (compute instances)
/// exist: handles that resolve below the maximum.
fn read_mig(d: &Device, m: &mut Misses, g: &mut NvmlGpu) {
    g.mig_enabled = m
        .get("nvmlDeviceGetMigMode", d.mig_mode())
        .map(|mode| mode.current == 1);
    g.mig_instances = match g.mig_enabled {
        Some(true) => m
            .get("nvmlDeviceGetMaxMigDeviceCount", d.mig_device_count())
            .map(|max| {
                (0..max)
                    .filter(|i| d.mig_device_by_index(*i).is_ok())
                    .count() as u32
            }),
        _ => None,
    };
}

/// Temperature (°C), power draw and enforced limit (W) and throttle reasons.
/// Successor functions fall back to the deprecated ones; `answered_by` names
/// the function that gave each answer.
fn read_sensors(d: &Device, m: &mut Misses, g: &mut NvmlGpu) {
    let mut answered_by = BTreeMap::new();
    let t = nvml_successors::gpu_temperature(d);
    if t.value.is_ok() {
        answered_by.insert("temperature_c".to_string(), t.call.to_string());
    }
    // The successor's `int`: a reading below 0 °C is recorded as 0.
    g.temperature_c = m
        .get(t.call, t.value)
        .map(|c| u32::try_from(c).unwrap_or(0));
    g.power_w = m
        .get("nvmlDeviceGetPowerUsage", d.power_usage())
        .map(|mw| mw as f64 / 1000.0);
    g.power_limit_w = m
        .get("nvmlDeviceGetEnforcedPowerLimit", d.enforced_power_limit())
        .map(|mw| mw as f64 / 1000.0);
    let reasons = nvml_successors::clocks_event_reasons(d);
    if reasons.value.is_ok() {
        answered_by.insert("throttle_reasons".to_string(), reasons.call.to_string());
    }
    g.throttle_reasons = m.get(reasons.call, reasons.value).map(|bits| {
        let r = ThrottleReasons::from_bits_truncate(bits);
        let mut names: Vec<String> = r.iter_names().map(|(n, _)| n.to_string()).collect();
        names.sort();
        names
    });
    g.answered_by = answered_by;
}

/// Row remapping counts. nvml-wrapper 0.13 does not wrap
/// `nvmlDeviceGetRemappedRows`: the raw symbol is called.
fn read_remapped_rows(nvml: &Nvml, d: &Device, m: &mut Misses) -> Option<RemappedRows> {
    let f = nvml.lib().nvmlDeviceGetRemappedRows.as_ref().ok()?;
    let (mut c, mut u, mut p, mut fl) = (0u32, 0u32, 0u32, 0u32);
    // SAFETY: a valid device handle and four out-pointers, per nvml.h.
    let rc = unsafe { f(d.handle(), &mut c, &mut u, &mut p, &mut fl) };
    match rc {
        0 => Some(RemappedRows {
            correctable: c,
            uncorrectable: u,
            pending: p != 0,
            failed: fl != 0,
        }),
        3 => None,
        code => {
            m.unavailable
                .push(format!("nvmlDeviceGetRemappedRows: {}", return_name(code)));
            None
        }
    }
}
