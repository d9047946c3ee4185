//! `cuInit` in the `libcuda.so.1` the user's process would load (issue 20 item 4).
//! gpukb's own driver calls go through cudarc's search for libcuda, which is not
//! the user's: a stub or a second driver copy found by the process's
//! `LD_LIBRARY_PATH` or RPATH would stay hidden. When the process's copy is not
//! the one gpukb loaded, a child process (`gpukb` itself, started with
//! [`CHILD_ARG`]) `dlopen`s that file by path and calls `cuInit(0)` under a
//! deadline; a crash or a hang there costs the child, not the fingerprint.

use crate::fingerprint::{CudaFacts, Observed, ProcessInit, Source};
use crate::host::{self, Host, HostError};
use std::ffi::{c_int, c_uint, OsString};
use std::time::Duration;

/// The argument that makes `gpukb` the child: `gpukb __gpukb-cuinit-child PATH`.
pub const CHILD_ARG: &str = "__gpukb-cuinit-child";

/// What the child prints on success: `init=<CUresult code>`.
const ANSWER_PREFIX: &str = "init=";

/// The CUresult names a `cuInit` can return (cuda.h), for codes the loaded copy
/// cannot name itself (a stub answers every call with its own error).
fn cu_result_name(code: i64) -> String {
    let name = match code {
        0 => "CUDA_SUCCESS",
        1 => "CUDA_ERROR_INVALID_VALUE",
        2 => "CUDA_ERROR_OUT_OF_MEMORY",
        3 => "CUDA_ERROR_NOT_INITIALIZED",
        4 => "CUDA_ERROR_DEINITIALIZED",
        34 => "CUDA_ERROR_STUB_LIBRARY",
        35 => "CUDA_ERROR_INSUFFICIENT_DRIVER",
        46 => "CUDA_ERROR_DEVICE_UNAVAILABLE",
        100 => "CUDA_ERROR_NO_DEVICE",
        101 => "CUDA_ERROR_INVALID_DEVICE",
        303 => "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
        304 => "CUDA_ERROR_OPERATING_SYSTEM",
        802 => "CUDA_ERROR_SYSTEM_NOT_READY",
        803 => "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        804 => "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        999 => "CUDA_ERROR_UNKNOWN",
        _ => return format!("CUresult {code}"),
    };
    name.to_string()
}

/// Parses the child's stdout: the CUresult name, or why there is none.
pub fn parse_answer(stdout: &str) -> Result<String, String> {
    let line = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix(ANSWER_PREFIX))
        .ok_or_else(|| format!("the child printed no answer ({:?})", stdout.trim()))?;
    line.trim()
        .parse::<i64>()
        .map(cu_result_name)
        .map_err(|_| format!("the child's answer is not a number: {line:?}"))
}

/// The child's body: `dlopen(path)`, `cuInit(0)`, print the code. Returns the exit
/// status (0 when cuInit was called, whatever it returned).
// The child's answer is its stdout protocol (`init=N`), read by its parent.
#[allow(clippy::print_stdout, clippy::print_stderr)]
fn child(path: &str) -> i32 {
    // SAFETY: loading a driver library by path runs its constructors; this is the
    // child process, which exists to take that risk.
    let lib = match unsafe { libloading::Library::new(path) } {
        Ok(l) => l,
        Err(e) => {
            eprintln!("dlopen {path}: {e}");
            return 3;
        }
    };
    type Init = unsafe extern "C" fn(c_uint) -> c_int;
    // SAFETY: cuInit's prototype in cuda.h.
    let init: libloading::Symbol<'_, Init> = match unsafe { lib.get(b"cuInit\0") } {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{path} has no cuInit: {e}");
            return 4;
        }
    };
    // SAFETY: flags must be 0.
    let rc = unsafe { init(0) };
    println!("{ANSWER_PREFIX}{rc}");
    0
}

/// When `args` (the process's arguments after the program name) ask for the child,
/// runs it and returns its exit status.
pub fn run_if_child(args: &[OsString]) -> Option<i32> {
    match args {
        [flag, path] if flag == CHILD_ARG => Some(child(&path.to_string_lossy())),
        _ => None,
    }
}

/// The real path of the libcuda gpukb itself mapped, from `/proc/self/maps` text.
pub fn mapped_libcuda(maps: &str) -> Option<String> {
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            p.rsplit('/')
                .next()
                .is_some_and(|n| n.starts_with("libcuda.so"))
        })
        .map(String::from)
}

/// Fills `cuda.process`: the init the process would see in `process_lib` (a real path).
pub(super) fn fill(
    host: &Host,
    deadline: Duration,
    cuda: &mut Observed<CudaFacts>,
    process_lib: Option<String>,
) {
    let Observed::Found { value: c, .. } = cuda else {
        return;
    };
    let source = Source::CudaDriver {
        call: "cuInit".into(),
    };
    let Some(init) = c.init.value().cloned() else {
        c.process = Observed::unobservable(source, "cuInit was not called");
        return;
    };
    let Some(lib) = process_lib else {
        c.process = Observed::absent(
            source,
            "the loader finds no libcuda.so.1 for the user's process",
        );
        return;
    };
    if c.loaded.value() == Some(&lib) {
        c.process = Observed::found(
            ProcessInit {
                library: lib,
                init,
                in_child: false,
            },
            c.init.source().clone(),
        );
        return;
    }
    let child_source = Source::CudaDriver {
        call: format!("cuInit in a child process that loads {lib}"),
    };
    let path = lib.clone();
    let asked = host.answer("cuda_process", deadline, move || {
        let out = host::run_self(&[CHILD_ARG, &path], deadline)?;
        if out.status != Some(0) {
            return Err(HostError::Library {
                what: format!("cuInit in {path}"),
                message: format!(
                    "the child exited with {:?}: {}",
                    out.status,
                    out.stderr.trim()
                ),
            });
        }
        parse_answer(&out.stdout)
            .map(Some)
            .map_err(|message| HostError::Library {
                what: format!("cuInit in {path}"),
                message,
            })
    });
    c.process = match asked {
        Ok(Some(init)) => Observed::found(
            ProcessInit {
                library: lib,
                init,
                in_child: true,
            },
            child_source,
        ),
        Ok(None) => Observed::absent(child_source, "no answer"),
        Err(e) => super::observed_error(child_source, e),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        assert_eq!(
            parse_answer("init=34\n").as_deref(),
            Ok("CUDA_ERROR_STUB_LIBRARY")
        );
        assert_eq!(parse_answer("init=0").as_deref(), Ok("CUDA_SUCCESS"));
        assert_eq!(parse_answer("init=4242").as_deref(), Ok("CUresult 4242"));
        assert!(parse_answer("").is_err());
        assert!(parse_answer("init=x").is_err());
        assert!(parse_answer("running 0 tests").is_err());
    }

    #[test]
    fn maps() {
        let maps = "7f1c2a000000-7f1c2a200000 r--p 00000000 fd:01 123 /usr/lib/x86_64-linux-gnu/libc.so.6\n\
                    7f1c2b000000-7f1c2b400000 r-xp 00000000 fd:01 456 /usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04\n\
                    7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n";
        assert_eq!(
            mapped_libcuda(maps).as_deref(),
            Some("/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04")
        );
        assert_eq!(mapped_libcuda("00-01 r--p 0 0:0 0 [vdso]\n"), None);
    }

    #[test]
    fn the_child_is_only_the_exact_form() {
        let a = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(run_if_child(&a(&["doctor"])), None);
        assert_eq!(run_if_child(&a(&[CHILD_ARG])), None);
        assert_eq!(run_if_child(&a(&[CHILD_ARG, "/a", "/b"])), None);
        // A path that does not load: the child reports it and exits non-zero.
        assert_eq!(
            run_if_child(&a(&[CHILD_ARG, "/nonexistent/libcuda.so.1"])),
            Some(3)
        );
    }
}
