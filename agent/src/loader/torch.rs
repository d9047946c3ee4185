//! What PyTorch loads by itself, in its order, on top of the loader model:
//!
//! 1. `import torch` runs `_load_global_deps` (torch/__init__.py, PyTorch
//!    2.x, read at pytorch commit 0027c653): `ctypes.CDLL` of
//!    `torch/lib/libtorch_global_deps.so` by path; when that fails for a
//!    missing CUDA library, `_preload_cuda_deps` loads, for each entry of its
//!    `cuda_libs` table in order, the first `nvidia/<folder>/lib/<pattern>`
//!    on `sys.path` by path ([`LoadRule::Framework`]), then retries.
//! 2. `from torch._C import *`: Python `dlopen`s `torch/_C*.so`, whose
//!    `NEEDED` chain (libtorch_python → libtorch → libtorch_cuda → cuDNN,
//!    cuBLAS, NCCL…) the loader resolves.
//! 3. At run time, by name: the CUDA runtime `dlopen`s `libcuda.so.1` (for
//!    `cudaGetDriverEntryPoint`, c10/cuda/driver_api.cpp `get_symbol`);
//!    `libc10_cuda.so` `dlopen`s `libnvidia-ml.so.1`
//!    (`DriverAPI::get_nvml_handle`); cuDNN 9's `libcudnn.so.9` `dlopen`s its
//!    sub-libraries by soname (NVIDIA cuDNN 9 documentation, "cuDNN library
//!    sub-libraries"), so their search starts from libcudnn.so.9 and its loaders.

use super::{Environment, LoadError, LoadRule, Process, Rules, Target};
use crate::host::{EntryKind, Host};
use crate::parse::ld_cache::CacheEntry;

/// `_load_global_deps`' `cuda_libs`: (folder under `nvidia/`, file-name
/// prefix of the `lib*.so.*[0-9]` glob), in the table's order.
pub const TORCH_CUDA_LIBS: &[(&str, &str)] = &[
    ("cublas", "libcublas.so."),
    ("cudnn", "libcudnn.so."),
    ("cuda_nvrtc", "libnvrtc.so."),
    ("cuda_runtime", "libcudart.so."),
    ("cuda_cupti", "libcupti.so."),
    ("cufft", "libcufft.so."),
    ("curand", "libcurand.so."),
    ("nvjitlink", "libnvJitLink.so."),
    ("cusparse", "libcusparse.so."),
    ("cusolver", "libcusolver.so."),
    ("nccl", "libnccl.so."),
    ("nvtx", "libnvToolsExt.so."),
];

/// cuDNN 9's sub-libraries, which `libcudnn.so.9` loads by soname.
pub const CUDNN9_SUBLIBRARIES: &[&str] = &[
    "libcudnn_graph.so.9",
    "libcudnn_engines_precompiled.so.9",
    "libcudnn_engines_runtime_compiled.so.9",
    "libcudnn_heuristic.so.9",
    "libcudnn_ops.so.9",
    "libcudnn_cnn.so.9",
    "libcudnn_adv.so.9",
];

/// The process `python -c 'import torch'` becomes, then uses the GPU: what
/// it loads, from the torch in `site` (a site-packages directory), started
/// by `python` (its interpreter, when found). Libraries that would not be
/// found are in [`Process::missing`].
pub fn torch_process<'a>(
    host: &'a Host,
    target: &'a Target,
    env: &'a Environment,
    cache: &'a [CacheEntry],
    python: Option<&str>,
    site: &str,
) -> Result<Process<'a, Host>, LoadError> {
    let mut p = Process::start_with(host, target, env, cache, Rules::all(), python, true)
        .or_else(|_| Process::start_with(host, target, env, cache, Rules::all(), None, true))?;
    global_deps(host, &mut p, site);
    let lib = format!("{site}/torch/lib");
    let c_ext = host
        .list(&format!("{site}/torch"))
        .ok()
        .flatten()
        .unwrap_or_default()
        .into_iter()
        .find(|e| e.kind == EntryKind::File && e.name.starts_with("_C.") && e.name.ends_with(".so"))
        .map(|e| format!("{site}/torch/{}", e.name));
    for path in c_ext.into_iter().chain([format!("{lib}/libtorch_cuda.so")]) {
        // (A capture may hold the ELF summary of a file it never resolved.)
        if host.exists(&path).unwrap_or(false) || matches!(host.elf(&path), Ok(Some(_))) {
            record(&mut p, 0, &path);
        }
    }
    // What is loaded at run time by name is reported where found; one not
    // found is the driver's or cuDNN's own finding, not a missing dependency.
    runtime_dlopens(&mut p);
    Ok(p)
}

/// Step 1: `libtorch_global_deps.so`, with the wheel-library fallback.
fn global_deps(host: &Host, p: &mut Process<'_, Host>, site: &str) {
    let global = format!("{site}/torch/lib/libtorch_global_deps.so");
    if !host.exists(&global).unwrap_or(false) {
        return;
    }
    p.set_keep_going(false);
    let first = p.dlopen(0, &global);
    p.set_keep_going(true);
    let Err(LoadError::NotFound { name, .. }) = first else {
        return;
    };
    let stem = name.split(".so").next().unwrap_or("");
    if !TORCH_CUDA_LIBS.iter().any(|(_, pre)| pre.starts_with(stem)) {
        return;
    }
    for (folder, prefix) in TORCH_CUDA_LIBS {
        let dir = format!("{site}/nvidia/{folder}/lib");
        let Some(file) = host
            .list(&dir)
            .ok()
            .flatten()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.name)
            .find(|n| n.starts_with(prefix) && n.ends_with(|c: char| c.is_ascii_digit()))
        else {
            continue;
        };
        let before = p.objects.len();
        if let Ok(i) = p.dlopen(0, &format!("{dir}/{file}")) {
            if i >= before {
                p.objects[i].rule = LoadRule::Framework;
            }
        }
    }
    record(p, 0, &global);
}

/// Step 3: what torch's CUDA libraries `dlopen` by name once the GPU is used.
fn runtime_dlopens(p: &mut Process<'_, Host>) {
    let by_soname = |p: &Process<'_, Host>, pre: &str| {
        p.objects
            .iter()
            .position(|o| o.soname().is_some_and(|s| s.starts_with(pre)))
    };
    if let Some(cudart) = by_soname(p, "libcudart.so.") {
        let _ = p.dlopen(cudart, "libcuda.so.1");
    }
    if let Some(c10) = by_soname(p, "libc10_cuda.so") {
        let _ = p.dlopen(c10, "libnvidia-ml.so.1");
    }
    if let Some(cudnn) = by_soname(p, "libcudnn.so.9") {
        for sub in CUDNN9_SUBLIBRARIES {
            let _ = p.dlopen(cudnn, sub);
        }
    }
}

/// `dlopen(name)` from `caller`; a name that does not load is recorded as missing.
fn record(p: &mut Process<'_, Host>, caller: usize, name: &str) {
    if p.dlopen(caller, name).is_err() {
        let by = p.objects[caller].real.clone();
        p.missing.push((name.to_string(), by));
    }
}
