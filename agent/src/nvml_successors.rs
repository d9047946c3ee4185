//! Readings whose NVML functions are deprecated (NVML's deprecation list;
//! removed in CUDA 14), read through their successors with a fallback to the
//! deprecated function for drivers whose NVML predates the successor:
//!
//! | reading | successor | deprecated fallback |
//! |---|---|---|
//! | GPU temperature | `nvmlDeviceGetTemperatureV` (`nvmlTemperature_v1`) | `nvmlDeviceGetTemperature` |
//! | clock event (throttle) reasons | `nvmlDeviceGetCurrentClocksEventReasons` | `nvmlDeviceGetCurrentClocksThrottleReasons` |
//!
//! The fallback runs when this NVML does not export the successor, or the
//! successor returns `NVML_ERROR_FUNCTION_NOT_FOUND`, `NVML_ERROR_NOT_SUPPORTED`
//! or `NVML_ERROR_ARGUMENT_VERSION_MISMATCH` (a driver that knows the symbol
//! but not the struct version gpukb sends). Any other error is the answer.
//!
//! The fingerprint's NVML section and the agent's telemetry both read these
//! here, and each [`NvmlReading`] names the function that gave it.

use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Device;
use nvml_wrapper_sys::bindings::{
    nvmlDevice_t, nvmlReturn_t,
    nvmlTemperatureSensors_enum_NVML_TEMPERATURE_GPU as NVML_TEMPERATURE_GPU, nvmlTemperature_v1_t,
};
use std::os::raw::{c_uint, c_ulonglong};

pub const TEMPERATURE_V: &str = "nvmlDeviceGetTemperatureV";
pub const TEMPERATURE: &str = "nvmlDeviceGetTemperature";
pub const CLOCKS_EVENT_REASONS: &str = "nvmlDeviceGetCurrentClocksEventReasons";
pub const CLOCKS_THROTTLE_REASONS: &str = "nvmlDeviceGetCurrentClocksThrottleReasons";

const NVML_SUCCESS: nvmlReturn_t = 0;
const NVML_ERROR_NOT_SUPPORTED: nvmlReturn_t = 3;
const NVML_ERROR_FUNCTION_NOT_FOUND: nvmlReturn_t = 13;
const NVML_ERROR_ARGUMENT_VERSION_MISMATCH: nvmlReturn_t = 25;

/// Successor return codes after which the deprecated function is asked.
const FALL_BACK_ON: [nvmlReturn_t; 3] = [
    NVML_ERROR_FUNCTION_NOT_FOUND,
    NVML_ERROR_NOT_SUPPORTED,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH,
];

/// nvml.h's `nvmlTemperature_v1`:
/// `NVML_STRUCT_VERSION(Temperature, 1)`, i.e.
/// `sizeof(nvmlTemperature_v1_t) | (1 << 24)`.
pub const TEMPERATURE_V1: c_uint =
    std::mem::size_of::<nvmlTemperature_v1_t>() as c_uint | (1 << 24);

/// A reading and the NVML function it came from: the one that answered, or
/// the one whose error is the answer.
#[derive(Debug)]
pub struct NvmlReading<T> {
    pub call: &'static str,
    pub value: Result<T, NvmlError>,
}

/// One raw call's outcome: `None` when this NVML does not export the symbol.
type Raw<T> = Option<Result<T, nvmlReturn_t>>;

fn raw<T>(rc: nvmlReturn_t, value: T) -> Result<T, nvmlReturn_t> {
    if rc == NVML_SUCCESS {
        Ok(value)
    } else {
        Err(rc)
    }
}

/// The successor's outcome unless it is absent or refuses in a way an older
/// driver would ([`FALL_BACK_ON`]); then the deprecated function's. When the
/// deprecated function is absent too, the successor's refusal is the answer.
fn with_fallback<T>(
    successor: &'static str,
    first: Raw<T>,
    deprecated: &'static str,
    then: impl FnOnce() -> Raw<T>,
) -> NvmlReading<T> {
    let refused = match first {
        Some(Err(rc)) if FALL_BACK_ON.contains(&rc) => Some(rc),
        Some(answer) => {
            return NvmlReading {
                call: successor,
                value: answer.map_err(NvmlError::from),
            }
        }
        None => None,
    };
    match (then(), refused) {
        (Some(answer), _) => NvmlReading {
            call: deprecated,
            value: answer.map_err(NvmlError::from),
        },
        (None, Some(rc)) => NvmlReading {
            call: successor,
            value: Err(NvmlError::from(rc)),
        },
        (None, None) => NvmlReading {
            call: successor,
            value: Err(NvmlError::FailedToLoadSymbol(format!(
                "this NVML exports neither {successor} nor {deprecated}"
            ))),
        },
    }
}

/// The GPU's temperature in °C (`NVML_TEMPERATURE_GPU`).
pub fn gpu_temperature(device: &Device) -> NvmlReading<i32> {
    let lib = device.nvml().lib();
    // SAFETY: the handle is only passed to NVML functions of the session
    // `device` borrows, while that borrow keeps the session alive.
    let handle = unsafe { device.handle() };
    let first = lib.nvmlDeviceGetTemperatureV.as_ref().ok().map(|f| {
        let mut t = nvmlTemperature_v1_t {
            version: TEMPERATURE_V1,
            sensorType: NVML_TEMPERATURE_GPU,
            temperature: 0,
        };
        // SAFETY: `f` has nvml.h's signature for nvmlDeviceGetTemperatureV,
        // `handle` is a live device handle and `t` a writable
        // nvmlTemperature_v1_t whose version word says so.
        let rc = unsafe { f(handle, &mut t) };
        raw(rc, t.temperature)
    });
    with_fallback(TEMPERATURE_V, first, TEMPERATURE, || {
        lib.nvmlDeviceGetTemperature.as_ref().ok().map(|f| {
            let mut t: c_uint = 0;
            // SAFETY: `f` has nvml.h's signature for nvmlDeviceGetTemperature,
            // `handle` is a live device handle and `t` a writable unsigned int.
            let rc = unsafe { f(handle, NVML_TEMPERATURE_GPU, &mut t) };
            raw(rc, i32::try_from(t).unwrap_or(i32::MAX))
        })
    })
}

/// The bitmask of reasons the clocks are held down (`nvmlClocksEventReason*`,
/// the same bits as the deprecated `nvmlClocksThrottleReason*`).
pub fn clocks_event_reasons(device: &Device) -> NvmlReading<u64> {
    let lib = device.nvml().lib();
    // SAFETY: as in `gpu_temperature`.
    let handle = unsafe { device.handle() };
    let call = |f: &unsafe extern "C" fn(nvmlDevice_t, *mut c_ulonglong) -> nvmlReturn_t| {
        let mut bits: c_ulonglong = 0;
        // SAFETY: `f` has nvml.h's signature for both functions (a device
        // handle and an unsigned long long out-pointer), `handle` is a live
        // device handle and `bits` is writable.
        let rc = unsafe { f(handle, &mut bits) };
        raw(rc, bits)
    };
    let first = lib
        .nvmlDeviceGetCurrentClocksEventReasons
        .as_ref()
        .ok()
        .map(call);
    with_fallback(CLOCKS_EVENT_REASONS, first, CLOCKS_THROTTLE_REASONS, || {
        lib.nvmlDeviceGetCurrentClocksThrottleReasons
            .as_ref()
            .ok()
            .map(call)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temperature_struct_and_its_version_word_match_nvml_h() {
        // { unsigned int version; nvmlTemperatureSensors_t sensorType; int temperature; }
        assert_eq!(std::mem::size_of::<nvmlTemperature_v1_t>(), 12);
        assert_eq!(TEMPERATURE_V1, 0x0100_000C);
    }

    fn answer<T: std::fmt::Debug>(a: NvmlReading<T>) -> (&'static str, Result<T, String>) {
        (a.call, a.value.map_err(|e| format!("{e:?}")))
    }

    #[test]
    fn the_successor_answers_when_it_can() {
        let a = with_fallback("new", Some(Ok(50)), "old", || panic!("not asked"));
        assert_eq!(answer(a), ("new", Ok(50)));
    }

    #[test]
    fn an_absent_or_refusing_successor_falls_back() {
        let a = with_fallback("new", None, "old", || Some(Ok(41)));
        assert_eq!(answer(a), ("old", Ok(41)));
        for rc in FALL_BACK_ON {
            let a = with_fallback("new", Some(Err(rc)), "old", || Some(Ok(41)));
            assert_eq!(answer(a), ("old", Ok(41)), "{rc}");
        }
    }

    #[test]
    fn another_error_from_the_successor_is_the_answer() {
        // NVML_ERROR_GPU_IS_LOST
        let a = with_fallback::<i32>("new", Some(Err(15)), "old", || panic!("not asked"));
        assert_eq!(answer(a), ("new", Err("GpuLost".into())));
    }

    #[test]
    fn without_the_deprecated_function_the_successors_refusal_stands() {
        let a = with_fallback::<i32>("new", Some(Err(3)), "old", || None);
        assert_eq!(answer(a), ("new", Err("NotSupported".into())));
        let a = with_fallback::<i32>("new", None, "old", || None);
        assert_eq!(a.call, "new");
        assert!(matches!(a.value, Err(NvmlError::FailedToLoadSymbol(_))));
    }
}
