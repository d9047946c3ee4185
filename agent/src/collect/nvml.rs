//! NVML (`libnvidia-ml.so.1`, loaded at run time through `nvml-wrapper`).
//! A missing library is a finding (no driver), not a crash.

use crate::fingerprint::{NvmlFacts, NvmlGpu, Observed, RemappedRows, Source};
use crate::host::{Host, HostError};
use crate::nvml_successors;
use gpukb_facts::{ComputeCapability, CudaVersion};
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{EccCounter, MemoryError, RetirementCause};
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Nvml;
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
    let mut unavailable = Vec::new();
    let mut miss = |call: &str, e: NvmlError| {
        if !matches!(e, NvmlError::NotSupported) {
            unavailable.push(format!("{call}: {}", describe(e)));
        }
    };
    macro_rules! get {
        ($call:expr, $e:expr) => {
            match $e {
                Ok(v) => Some(v),
                Err(e) => {
                    miss($call, e);
                    None
                }
            }
        };
    }
    let name = get!("nvmlDeviceGetName", d.name()).unwrap_or_default();
    let uuid = get!("nvmlDeviceGetUUID", d.uuid()).unwrap_or_default();
    let cc = get!(
        "nvmlDeviceGetCudaComputeCapability",
        d.cuda_compute_capability()
    )
    .map(|c| ComputeCapability::new(c.major as u32, c.minor as u32));
    let mem = get!("nvmlDeviceGetMemoryInfo", d.memory_info()).map(|m| m.total >> 20);
    let bus = get!("nvmlDeviceGetPciInfo", d.pci_info()).map(|p| p.bus_id);
    let gen_cur = get!(
        "nvmlDeviceGetCurrPcieLinkGeneration",
        d.current_pcie_link_gen()
    );
    let gen_max = get!("nvmlDeviceGetMaxPcieLinkGeneration", d.max_pcie_link_gen());
    let w_cur = get!(
        "nvmlDeviceGetCurrPcieLinkWidth",
        d.current_pcie_link_width()
    );
    let w_max = get!("nvmlDeviceGetMaxPcieLinkWidth", d.max_pcie_link_width());
    let ecc = get!("nvmlDeviceGetEccMode", d.is_ecc_enabled()).map(|e| e.currently_enabled);
    let (unc, corr) = if ecc == Some(true) {
        (
            get!(
                "nvmlDeviceGetTotalEccErrors",
                d.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Aggregate)
            ),
            get!(
                "nvmlDeviceGetTotalEccErrors",
                d.total_ecc_errors(MemoryError::Corrected, EccCounter::Aggregate)
            ),
        )
    } else {
        (None, None)
    };
    let retired = get!(
        "nvmlDeviceGetRetiredPages",
        d.retired_pages(RetirementCause::DoubleBitEccError)
    )
    .map(|p| p.len() as u32);
    let pending = get!(
        "nvmlDeviceGetRetiredPagesPendingStatus",
        d.are_pages_pending_retired()
    );
    let mig = get!("nvmlDeviceGetMigMode", d.mig_mode()).map(|m| m.current == 1);
    // MIG devices (compute instances) that exist: handles that resolve below the maximum.
    let mig_instances = match mig {
        Some(true) => get!("nvmlDeviceGetMaxMigDeviceCount", d.mig_device_count()).map(|max| {
            (0..max)
                .filter(|i| d.mig_device_by_index(*i).is_ok())
                .count() as u32
        }),
        _ => None,
    };
    let persistence = get!("nvmlDeviceGetPersistenceMode", d.is_in_persistent_mode());
    // Successor functions with a fallback to the deprecated ones; the answer
    // names the function that gave it.
    let mut answered_by = BTreeMap::new();
    let t = nvml_successors::gpu_temperature(&d);
    if t.value.is_ok() {
        answered_by.insert("temperature_c".to_string(), t.call.to_string());
    }
    // The successor's `int`: a reading below 0 °C is recorded as 0.
    let temp = get!(t.call, t.value).map(|c| u32::try_from(c).unwrap_or(0));
    let power = get!("nvmlDeviceGetPowerUsage", d.power_usage()).map(|mw| mw as f64 / 1000.0);
    let limit = get!("nvmlDeviceGetEnforcedPowerLimit", d.enforced_power_limit())
        .map(|mw| mw as f64 / 1000.0);
    let reasons = nvml_successors::clocks_event_reasons(&d);
    if reasons.value.is_ok() {
        answered_by.insert("throttle_reasons".to_string(), reasons.call.to_string());
    }
    let throttle = get!(reasons.call, reasons.value).map(|bits| {
        let r = ThrottleReasons::from_bits_truncate(bits);
        let mut names: Vec<String> = r.iter_names().map(|(n, _)| n.to_string()).collect();
        names.sort();
        names
    });
    // Row remapping is not wrapped by nvml-wrapper 0.13: call the raw symbol.
    let remapped = match nvml.lib().nvmlDeviceGetRemappedRows.as_ref() {
        Ok(f) => {
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
                    unavailable.push(format!("nvmlDeviceGetRemappedRows: {}", return_name(code)));
                    None
                }
            }
        }
        Err(_) => None,
    };
    g.unavailable = unavailable;
    g.answered_by = answered_by;
    g.name = name;
    g.uuid = uuid;
    g.compute_capability = cc;
    g.memory_total_mib = mem;
    g.pci_bus_id = bus;
    g.pcie_gen_current = gen_cur;
    g.pcie_gen_max = gen_max;
    g.pcie_width_current = w_cur;
    g.pcie_width_max = w_max;
    g.ecc_enabled = ecc;
    g.ecc_uncorrected_aggregate = unc;
    g.ecc_corrected_aggregate = corr;
    g.retired_pages_double_bit = retired;
    g.retired_pages_pending = pending;
    g.remapped_rows = remapped;
    g.mig_enabled = mig;
    g.mig_instances = mig_instances;
    g.persistence_mode = persistence;
    g.temperature_c = temp;
    g.power_w = power;
    g.power_limit_w = limit;
    g.throttle_reasons = throttle;
    g
}
