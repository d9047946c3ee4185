//! A thin, panic-free view of libcuda for the probe's load path: every call is
//! looked up by name in the library cudarc already opened and returns the raw
//! `CUresult` as an integer (no Rust enum built from a number the bindings may
//! not know, no panic on a missing symbol: a missing symbol is an error).
//! Only for calls where the exact code matters (init, module loads, error
//! names) or that older drivers lack (`cuEventElapsedTime_v2`).

use super::ProbeError;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

type CuResult = c_int;

/// Opaque handles, as the driver API passes them.
pub(super) type Module = *mut c_void;

/// `CUjit_option` values (cuda.h).
const CU_JIT_ERROR_LOG_BUFFER: c_int = 5;
const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;

/// Is a libcuda loadable at all? Never panics.
pub(super) fn libcuda_present() -> bool {
    // SAFETY: only tries dlopen on cudarc's candidate names.
    std::panic::catch_unwind(|| unsafe { cudarc::driver::sys::is_culib_present() }).unwrap_or(false)
}

fn lib() -> Result<&'static libloading::Library, ProbeError> {
    if !libcuda_present() {
        return Err(ProbeError::NoLibcuda);
    }
    // SAFETY: present was checked, so culib() finds a library instead of panicking.
    std::panic::catch_unwind(|| unsafe { cudarc::driver::sys::culib() })
        .map_err(|_| ProbeError::NoLibcuda)
}

macro_rules! sym {
    ($name:literal, $ty:ty) => {{
        let l = lib()?;
        // SAFETY: the type matches the documented prototype in cuda.h.
        let f: libloading::Symbol<'static, $ty> = unsafe { l.get(concat!($name, "\0").as_bytes()) }
            .map_err(|_| ProbeError::MissingSymbol {
                symbol: $name.to_string(),
            })?;
        *f
    }};
}

fn check(call: &str, rc: CuResult) -> Result<(), ProbeError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(ProbeError::driver(call, rc as u32))
    }
}

/// `cuGetErrorName`, e.g. 209 → `CUDA_ERROR_NO_BINARY_FOR_GPU`; falls back to
/// the number when the driver does not know it.
pub(super) fn error_name(code: u32) -> String {
    name_or_string(code, true).unwrap_or_else(|| format!("CUresult {code}"))
}

/// `cuGetErrorString`, e.g. 209 → "no kernel image is available for execution on the device".
pub(super) fn error_string(code: u32) -> Option<String> {
    name_or_string(code, false)
}

fn name_or_string(code: u32, name: bool) -> Option<String> {
    type F = unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult;
    let f: F = if name {
        (|| Ok::<F, ProbeError>(sym!("cuGetErrorName", F)))().ok()?
    } else {
        (|| Ok::<F, ProbeError>(sym!("cuGetErrorString", F)))().ok()?
    };
    let mut p: *const c_char = std::ptr::null();
    // SAFETY: the driver writes a pointer to a static string or returns an error.
    let rc = unsafe { f(code as CuResult, &mut p) };
    if rc != 0 || p.is_null() {
        return None;
    }
    // SAFETY: non-null, NUL-terminated, static in libcuda.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// `cuDriverGetVersion` (works before `cuInit`): 13000 = CUDA 13.0.
pub(super) fn driver_version() -> Result<u32, ProbeError> {
    let f = sym!(
        "cuDriverGetVersion",
        unsafe extern "C" fn(*mut c_int) -> CuResult
    );
    let mut v: c_int = 0;
    // SAFETY: out-pointer to a local.
    check("cuDriverGetVersion", unsafe { f(&mut v) })?;
    Ok(v as u32)
}

/// `cuInit(0)`.
pub(super) fn init() -> Result<(), ProbeError> {
    let f = sym!("cuInit", unsafe extern "C" fn(c_uint) -> CuResult);
    // SAFETY: plain call.
    check("cuInit", unsafe { f(0) })
}

/// `cuDeviceGetCount`.
pub(super) fn device_count() -> Result<usize, ProbeError> {
    let f = sym!(
        "cuDeviceGetCount",
        unsafe extern "C" fn(*mut c_int) -> CuResult
    );
    let mut n: c_int = 0;
    // SAFETY: out-pointer to a local.
    check("cuDeviceGetCount", unsafe { f(&mut n) })?;
    Ok(n.max(0) as usize)
}

/// `cuDeviceGetAttribute` by raw attribute number.
pub(super) fn attribute(ordinal: usize, attr: c_int) -> Result<i32, ProbeError> {
    let f = sym!(
        "cuDeviceGetAttribute",
        unsafe extern "C" fn(*mut c_int, c_int, c_int) -> CuResult
    );
    let mut v: c_int = 0;
    // SAFETY: out-pointer to a local; a CUdevice is its ordinal.
    check("cuDeviceGetAttribute", unsafe {
        f(&mut v, attr, ordinal as c_int)
    })?;
    Ok(v)
}

/// `cuDeviceGetName`.
pub(super) fn device_name(ordinal: usize) -> Result<String, ProbeError> {
    let f = sym!(
        "cuDeviceGetName",
        unsafe extern "C" fn(*mut c_char, c_int, c_int) -> CuResult
    );
    let mut buf = [0 as c_char; 256];
    // SAFETY: the driver writes at most len bytes, NUL-terminated.
    check("cuDeviceGetName", unsafe {
        f(buf.as_mut_ptr(), buf.len() as c_int, ordinal as c_int)
    })?;
    // SAFETY: NUL-terminated by the driver (buffer zeroed as a backstop).
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}

/// `cuDeviceGetPCIBusId`, e.g. `0000:00:06.0`.
pub(super) fn pci_bus_id(ordinal: usize) -> Result<String, ProbeError> {
    let f = sym!(
        "cuDeviceGetPCIBusId",
        unsafe extern "C" fn(*mut c_char, c_int, c_int) -> CuResult
    );
    let mut buf = [0 as c_char; 64];
    // SAFETY: as device_name.
    check("cuDeviceGetPCIBusId", unsafe {
        f(buf.as_mut_ptr(), buf.len() as c_int, ordinal as c_int)
    })?;
    // SAFETY: as device_name.
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}

/// `cuDeviceTotalMem_v2`.
pub(super) fn total_mem(ordinal: usize) -> Result<u64, ProbeError> {
    let f = sym!(
        "cuDeviceTotalMem_v2",
        unsafe extern "C" fn(*mut usize, c_int) -> CuResult
    );
    let mut v: usize = 0;
    // SAFETY: out-pointer to a local.
    check("cuDeviceTotalMem_v2", unsafe {
        f(&mut v, ordinal as c_int)
    })?;
    Ok(v as u64)
}

/// Makes the device's primary context current on this thread (retaining it;
/// the probe process keeps it until exit, as every CUDA program does).
pub(super) fn use_primary_context(ordinal: usize) -> Result<(), ProbeError> {
    let retain = sym!(
        "cuDevicePrimaryCtxRetain",
        unsafe extern "C" fn(*mut *mut c_void, c_int) -> CuResult
    );
    let set = sym!(
        "cuCtxSetCurrent",
        unsafe extern "C" fn(*mut c_void) -> CuResult
    );
    let mut ctx: *mut c_void = std::ptr::null_mut();
    // SAFETY: out-pointer to a local.
    check("cuDevicePrimaryCtxRetain", unsafe {
        retain(&mut ctx, ordinal as c_int)
    })?;
    // SAFETY: ctx came from the driver.
    check("cuCtxSetCurrent", unsafe { set(ctx) })
}

/// What one `cuModuleLoadDataEx` gave.
pub(super) struct LoadOutcome {
    /// The raw `CUresult`.
    pub code: u32,
    /// The module on success (unload it with [`unload`]).
    pub module: Option<Module>,
    /// The JIT error log, first lines, when the driver wrote one.
    pub jit_log: Option<String>,
}

/// `cuModuleLoadDataEx` on a cubin or NUL-terminated PTX, with a JIT error
/// log buffer. The image must stay alive for the call only.
pub(super) fn module_load(image: &[u8]) -> Result<LoadOutcome, ProbeError> {
    type F = unsafe extern "C" fn(
        *mut Module,
        *const c_void,
        c_uint,
        *mut c_int,
        *mut *mut c_void,
    ) -> CuResult;
    let f = sym!("cuModuleLoadDataEx", F);
    let mut log = vec![0u8; 8192];
    let mut opts: [c_int; 2] = [CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    let mut vals: [*mut c_void; 2] = [log.as_mut_ptr().cast(), log.len() as *mut c_void];
    let mut m: Module = std::ptr::null_mut();
    // SAFETY: image is a complete cubin or NUL-terminated PTX; the log buffer
    // outlives the call and its size is passed by value as the API specifies.
    let rc = unsafe {
        f(
            &mut m,
            image.as_ptr().cast(),
            2,
            opts.as_mut_ptr(),
            vals.as_mut_ptr(),
        )
    };
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    let text = String::from_utf8_lossy(&log[..end]).trim().to_string();
    Ok(LoadOutcome {
        code: rc as u32,
        module: (rc == 0 && !m.is_null()).then_some(m),
        jit_log: (!text.is_empty()).then_some(text),
    })
}

/// `cuModuleGetFunction`: is kernel `name` in the module?
pub(super) fn has_function(module: Module, name: &str) -> Result<bool, ProbeError> {
    let f = sym!(
        "cuModuleGetFunction",
        unsafe extern "C" fn(*mut *mut c_void, Module, *const c_char) -> CuResult
    );
    let c =
        std::ffi::CString::new(name).map_err(|_| ProbeError::driver("cuModuleGetFunction", 1))?;
    let mut func: *mut c_void = std::ptr::null_mut();
    // SAFETY: module came from module_load; c is NUL-terminated.
    let rc = unsafe { f(&mut func, module, c.as_ptr()) };
    Ok(rc == 0)
}

/// `cuModuleUnload`.
pub(super) fn unload(module: Module) -> Result<(), ProbeError> {
    let f = sym!("cuModuleUnload", unsafe extern "C" fn(Module) -> CuResult);
    // SAFETY: module came from module_load and is unloaded once.
    check("cuModuleUnload", unsafe { f(module) })
}

/// Milliseconds between two recorded events: `cuEventElapsedTime_v2` where
/// the driver has it (CUDA 12.8+), else the v1 `cuEventElapsedTime` (what
/// cudarc's `elapsed_ms` cannot fall back to). Synchronizes on `end` first.
pub(super) fn elapsed_ms(start: *mut c_void, end: *mut c_void) -> Result<f32, ProbeError> {
    type Sync = unsafe extern "C" fn(*mut c_void) -> CuResult;
    type Elapsed = unsafe extern "C" fn(*mut f32, *mut c_void, *mut c_void) -> CuResult;
    let sync = sym!("cuEventSynchronize", Sync);
    // SAFETY: end is a live event recorded on a stream.
    check("cuEventSynchronize", unsafe { sync(end) })?;
    let l = lib()?;
    // SAFETY: both names have the same prototype in cuda.h.
    let f: Elapsed = match unsafe { l.get::<Elapsed>(b"cuEventElapsedTime_v2\0") } {
        Ok(s) => *s,
        Err(_) => sym!("cuEventElapsedTime", Elapsed),
    };
    let mut ms: f32 = 0.0;
    // SAFETY: out-pointer to a local; both events are live.
    check("cuEventElapsedTime", unsafe { f(&mut ms, start, end) })?;
    Ok(ms)
}
