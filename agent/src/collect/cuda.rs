//! The CUDA driver API (`libcuda.so.1`, loaded at run time through cudarc):
//! `cuDriverGetVersion`, `cuInit` with its exact CUresult name, devices.
//! cudarc panics when libcuda is missing, so presence is checked first and
//! every call runs under the host's deadline and panic guard.

use crate::fingerprint::{CudaDevice, CudaFacts, Observed, Source};
use crate::host::{Host, HostError};
use cudarc::driver::sys::{self, CUdevice_attribute as A, CUresult};
use gpukb_facts::{ComputeCapability, CudaVersion};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What the driver API answered, as recorded in a capture (capture format 1:
/// `init` is the CUresult name, or [`INIT_SKIPPED`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct CudaAnswer {
    driver_version: CudaVersion,
    init: String,
    devices: Vec<CudaDevice>,
    /// The libcuda file gpukb mapped (absent in captures made before it was recorded).
    #[serde(default)]
    loaded: Option<String>,
}

impl CudaAnswer {
    fn into_facts(self) -> CudaFacts {
        let source = Source::CudaDriver {
            call: "cuInit".into(),
        };
        let loaded = match self.loaded {
            Some(path) => Observed::found(path, Source::file("/proc/self/maps")),
            None => Observed::unobservable(
                Source::file("/proc/self/maps"),
                "which libcuda gpukb loaded was not recorded (a capture from an older gpukb, or no maps)",
            ),
        };
        CudaFacts {
            driver_version: self.driver_version,
            init: if self.init == INIT_SKIPPED {
                Observed::unobservable(source.clone(), "cuInit was not called (--quick)")
            } else {
                Observed::found(self.init, source.clone())
            },
            devices: self.devices,
            loaded,
            process: Observed::unobservable(
                source,
                "which libcuda the user's process loads was not resolved",
            ),
        }
    }
}

pub(super) fn collect(host: &Host, deadline: Duration, init: bool) -> Observed<CudaFacts> {
    let source = Source::CudaDriver {
        call: "cuInit".into(),
    };
    match host.answer("cuda", deadline, move || live(init)) {
        Ok(Some(f)) => Observed::found(CudaAnswer::into_facts(f), source),
        Ok(None) => Observed::absent(
            source,
            "libcuda.so.1 not found: no NVIDIA driver user-space libraries",
        ),
        Err(e) => super::observed_error(source, e),
    }
}

/// The exact CUresult name, e.g. `CUDA_ERROR_NO_DEVICE`.
pub(super) fn result_name(r: CUresult) -> String {
    format!("{r:?}")
}

fn check(call: &str, r: CUresult) -> Result<(), HostError> {
    if r == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(HostError::Library {
            what: call.into(),
            message: result_name(r),
        })
    }
}

/// What a capture's `cuda` answer (and a schema-1 fingerprint) holds in
/// `init` when cuInit was skipped: one definition, in the fact model's reader.
pub(super) use gpukb_facts::read::SCHEMA1_INIT_SKIPPED as INIT_SKIPPED;

fn live(init: bool) -> Result<Option<CudaAnswer>, HostError> {
    // SAFETY: only asks whether the library can be dlopen'ed.
    if !unsafe { sys::is_culib_present() } {
        return Ok(None);
    }
    let mut v = 0;
    // SAFETY: FFI with a valid out-pointer; works before cuInit.
    check("cuDriverGetVersion", unsafe {
        sys::cuDriverGetVersion(&mut v)
    })?;
    let driver_version = CudaVersion::from_api(u32::try_from(v).unwrap_or(0));
    let loaded = crate::host::own_maps()
        .as_deref()
        .and_then(super::cuda_process::mapped_libcuda);
    if !init {
        return Ok(Some(CudaAnswer {
            driver_version,
            init: INIT_SKIPPED.into(),
            devices: vec![],
            loaded,
        }));
    }
    // SAFETY: FFI, flags must be 0.
    let init = unsafe { sys::cuInit(0) };
    let mut devices = Vec::new();
    if init == CUresult::CUDA_SUCCESS {
        let mut n = 0;
        // SAFETY: valid out-pointer after a successful cuInit.
        check("cuDeviceGetCount", unsafe { sys::cuDeviceGetCount(&mut n) })?;
        for i in 0..n {
            devices.push(device(i)?);
        }
    }
    Ok(Some(CudaAnswer {
        driver_version,
        init: result_name(init),
        devices,
        loaded,
    }))
}

fn device(ordinal: i32) -> Result<CudaDevice, HostError> {
    let mut dev = 0;
    // SAFETY: valid out-pointer, ordinal below the device count.
    check("cuDeviceGet", unsafe {
        sys::cuDeviceGet(&mut dev, ordinal)
    })?;
    let attr = |a: A| -> Result<i32, HostError> {
        let mut v = 0;
        // SAFETY: valid out-pointer and device.
        check("cuDeviceGetAttribute", unsafe {
            sys::cuDeviceGetAttribute(&mut v, a, dev)
        })?;
        Ok(v)
    };
    let mut name = [0 as std::ffi::c_char; 256];
    // SAFETY: the buffer is 256 bytes and the length says so.
    check("cuDeviceGetName", unsafe {
        sys::cuDeviceGetName(name.as_mut_ptr(), 256, dev)
    })?;
    let mut bus = [0 as std::ffi::c_char; 64];
    // SAFETY: as above, 64 bytes.
    check("cuDeviceGetPCIBusId", unsafe {
        sys::cuDeviceGetPCIBusId(bus.as_mut_ptr(), 64, dev)
    })?;
    let mut mem = 0usize;
    // SAFETY: valid out-pointer.
    check("cuDeviceTotalMem", unsafe {
        sys::cuDeviceTotalMem_v2(&mut mem, dev)
    })?;
    let text = |b: &[std::ffi::c_char]| {
        // SAFETY: the driver NUL-terminates within the buffer; the last byte is still 0.
        unsafe { std::ffi::CStr::from_ptr(b.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    Ok(CudaDevice {
        ordinal: ordinal as u32,
        name: text(&name),
        compute_capability: ComputeCapability::new(
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)? as u32,
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)? as u32,
        ),
        total_memory_mib: (mem >> 20) as u64,
        multiprocessors: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        clock_mhz: (attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? / 1000) as u32,
        memory_clock_mhz: (attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)? / 1000) as u32,
        memory_bus_bits: attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)? as u32,
        integrated: attr(A::CU_DEVICE_ATTRIBUTE_INTEGRATED)? != 0,
        pci_bus_id: text(&bus),
    })
}
