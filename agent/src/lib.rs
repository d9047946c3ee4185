//! Observes a machine's NVIDIA stack through one seam ([`host::Host`]: files
//! under a root, commands with timeouts, registered env vars, NVML and the
//! CUDA driver API) and produces a [`fingerprint::Fingerprint`] in which every
//! fact records where it came from.
// Only the `gpukb` binary prints (cli); libraries return what they found.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod collect;
pub mod elf;
pub mod fatbin;
pub mod fingerprint;
pub mod host;
pub mod loader;
pub mod nvml_successors;
pub mod parse;
pub mod redact;

pub use collect::{
    cuda_section, fingerprint, fingerprint_timed, fingerprint_with_nvml, nvml_section,
    shows_no_nvidia_gpu, CollectorTiming, Settings,
};
pub use fingerprint::Fingerprint;

/// The C library's version (`gnu_get_libc_version`), or `None` when this
/// process is not linked against glibc.
pub(crate) fn libc_version() -> Result<Option<String>, host::HostError> {
    let this = libloading::os::unix::Library::this();
    // SAFETY: gnu_get_libc_version takes nothing and returns a static C string.
    let f = unsafe {
        this.get::<unsafe extern "C" fn() -> *const std::os::raw::c_char>(b"gnu_get_libc_version\0")
    };
    let Ok(f) = f else {
        return Ok(None);
    };
    // SAFETY: see above; the pointer is static and NUL-terminated.
    let s = unsafe { std::ffi::CStr::from_ptr(f()) };
    Ok(Some(s.to_string_lossy().into_owned()))
}
pub mod probe;
