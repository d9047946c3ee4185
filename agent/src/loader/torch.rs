//! What PyTorch loads by itself, in its order, on top of the loader model:
//!
//! 1. `import torch` runs `_load_global_deps` (torch/__init__.py):
//!    `ctypes.CDLL` of `torch/lib/libtorch_global_deps.so` by path. When that
//!    fails for a missing CUDA library, `_preload_cuda_deps` loads each entry
//!    of its `cuda_libs` table in order, by path ([`LoadRule::Framework`]),
//!    then retries. Since PyTorch 2.6 it does so also after a successful load
//!    whenever `libcudart.so` is mapped (pytorch/pytorch#138460, #145580), and
//!    stops at the first entry it cannot find. The table, the success-path
//!    preload and CUDA 13's merged `nvidia/cu<major>/lib` folder are read from
//!    the installed `torch/__init__.py` ([`crate::parse::torch_init`]); when it
//!    cannot be read, PyTorch 2.1–2.5's table and failure-only preload are used.
//! 2. `from torch._C import *`: Python `dlopen`s `torch/_C*.so`, whose
//!    `NEEDED` chain (libtorch_python → libtorch → libtorch_cuda → cuDNN,
//!    cuBLAS, NCCL…) the loader resolves.
//! 3. At run time, by name: the CUDA runtime `dlopen`s `libcuda.so.1` (for
//!    `cudaGetDriverEntryPoint`, c10/cuda/driver_api.cpp `get_symbol`);
//!    `libc10_cuda.so` `dlopen`s `libnvidia-ml.so.1`
//!    (`DriverAPI::get_nvml_handle`); cuDNN 9's `libcudnn.so.9` `dlopen`s
//!    `libcudnn_graph.so.9`, which `dlopen`s the engine and heuristic
//!    sub-libraries by soname (glibc's `LD_DEBUG=files` trace of torch 2.11 with
//!    cuDNN 9.19 on the H200, tests/live/results/who_loads). The legacy-API
//!    sub-libraries (ops, cnn, adv) load only when that API is used, so they
//!    are not predicted.

use super::{LoadError, LoadRule, LoaderEnvironment, Process, Rules, Target};
use crate::host::{EntryKind, Host};
use crate::parse::ld_cache::CacheEntry;
use crate::parse::torch_init::{self, TorchPreload};

/// PyTorch 2.1–2.5's `cuda_libs` (folder under `nvidia/`, glob), used when the
/// installed `torch/__init__.py` cannot be read: preloaded only when
/// `libtorch_global_deps.so` failed to load.
pub const TORCH_CUDA_LIBS: &[(&str, &str)] = &[
    ("cublas", "libcublas.so.*[0-9]"),
    ("cudnn", "libcudnn.so.*[0-9]"),
    ("cuda_nvrtc", "libnvrtc.so.*[0-9]"),
    ("cuda_runtime", "libcudart.so.*[0-9]"),
    ("cuda_cupti", "libcupti.so.*[0-9]"),
    ("cufft", "libcufft.so.*[0-9]"),
    ("curand", "libcurand.so.*[0-9]"),
    ("nvjitlink", "libnvJitLink.so.*[0-9]"),
    ("cusparse", "libcusparse.so.*[0-9]"),
    ("cusolver", "libcusolver.so.*[0-9]"),
    ("nccl", "libnccl.so.*[0-9]"),
    ("nvtx", "libnvToolsExt.so.*[0-9]"),
];

/// What `libcudnn.so.9` `dlopen`s, and what that one `dlopen`s in turn.
pub const CUDNN9_CHAIN: &[(&str, &[&str])] = &[
    ("libcudnn.so.9", &["libcudnn_graph.so.9"]),
    (
        "libcudnn_graph.so.9",
        &[
            "libcudnn_engines_precompiled.so.9",
            "libcudnn_engines_runtime_compiled.so.9",
            "libcudnn_heuristic.so.9",
        ],
    ),
];

/// The process `python -c 'import torch'` becomes, then uses the GPU: what
/// it loads, from the torch in `site` (a site-packages directory), started
/// by `python` (its interpreter, when found). Libraries that would not be
/// found are in [`Process::missing`].
pub fn torch_process<'a>(
    host: &'a Host,
    target: &'a Target,
    env: &'a LoaderEnvironment,
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

/// The preload logic of the torch in `site`: read from its `__init__.py`, else
/// PyTorch 2.1–2.5's.
fn preload_logic(host: &Host, site: &str) -> TorchPreload {
    host.read_string(&format!("{site}/torch/__init__.py"))
        .ok()
        .flatten()
        .and_then(|src| torch_init::parse(&src))
        .unwrap_or_else(|| TorchPreload {
            libs: TORCH_CUDA_LIBS
                .iter()
                .map(|(f, l)| (f.to_string(), l.to_string()))
                .collect(),
            after_success: false,
            merged_cuda_folder: false,
        })
}

/// The major CUDA version of the torch in `site` (`torch/version.py`'s `cuda = '13.0'`).
fn torch_cuda_major(host: &Host, site: &str) -> Option<String> {
    let text = host
        .read_string(&format!("{site}/torch/version.py"))
        .ok()
        .flatten()?;
    text.lines().find_map(|l| {
        let v = l.strip_prefix("cuda")?.split_once('=')?.1.trim();
        let v = v.trim_matches(|c| c == '\'' || c == '"');
        let major = v.split('.').next()?;
        (!major.is_empty() && major.chars().all(|c| c.is_ascii_digit())).then(|| major.to_string())
    })
}

/// `_get_cuda_dep_paths(site, folder, glob)`'s first match: `nvidia/<folder>/lib`,
/// then `nvidia/cu<major>/lib` (when the torch knows that folder), then `<folder>/lib`.
/// (Python's glob returns directory order; the first by name is taken.)
fn cuda_dep_path(host: &Host, dirs: &[String], pattern: &str) -> Option<String> {
    dirs.iter().find_map(|dir| {
        let mut names: Vec<String> = host
            .list(dir)
            .ok()
            .flatten()
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e.kind != EntryKind::Dir)
            .map(|e| e.name)
            .filter(|n| torch_init::glob_matches(pattern, n))
            .collect();
        names.sort();
        names.into_iter().next().map(|n| format!("{dir}/{n}"))
    })
}

/// `_preload_cuda_deps`: each table entry by path, in order, stopping at the
/// first one not found (it raises, and the caller's `except` ends the loop).
fn preload_cuda_deps(host: &Host, p: &mut Process<'_, Host>, site: &str, logic: &TorchPreload) {
    let major = logic
        .merged_cuda_folder
        .then(|| torch_cuda_major(host, site))
        .flatten();
    for (folder, pattern) in &logic.libs {
        let mut dirs = vec![format!("{site}/nvidia/{folder}/lib")];
        if let Some(m) = &major {
            dirs.push(format!("{site}/nvidia/cu{m}/lib"));
        }
        dirs.push(format!("{site}/{folder}/lib"));
        let Some(path) = cuda_dep_path(host, &dirs, pattern) else {
            if folder == "nvtx" {
                continue;
            }
            return;
        };
        let before = p.objects.len();
        if let Ok(i) = p.dlopen(0, &path) {
            if i >= before {
                p.objects[i].rule = LoadRule::Framework;
            }
        }
    }
}

/// Step 1: `libtorch_global_deps.so`, with the wheel-library preload.
fn global_deps(host: &Host, p: &mut Process<'_, Host>, site: &str) {
    let global = format!("{site}/torch/lib/libtorch_global_deps.so");
    if !host.exists(&global).unwrap_or(false) {
        return;
    }
    let logic = preload_logic(host, site);
    p.set_keep_going(false);
    let first = p.dlopen(0, &global);
    p.set_keep_going(true);
    match first {
        Ok(_) => {
            let cudart = p
                .objects
                .iter()
                .any(|o| o.soname().is_some_and(|s| s.starts_with("libcudart.so")));
            if logic.after_success && cudart {
                preload_cuda_deps(host, p, site, &logic);
            }
        }
        Err(LoadError::NotFound { name, .. }) => {
            let stem = name.split(".so").next().unwrap_or("");
            if !logic
                .libs
                .iter()
                .any(|(_, l)| l.split('.').next() == Some(stem))
            {
                return;
            }
            preload_cuda_deps(host, p, site, &logic);
            record(p, 0, &global);
        }
        Err(_) => {}
    }
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
    for (lib, subs) in CUDNN9_CHAIN {
        if let Some(by) = by_soname(p, lib) {
            for sub in *subs {
                let _ = p.dlopen(by, sub);
            }
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
