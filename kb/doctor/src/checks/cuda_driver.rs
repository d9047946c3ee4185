//! Checks of the CUDA driver API: CUDA_VISIBLE_DEVICES, MIG, cuInit, the
//! driver's CUDA against what torch and other frameworks were built for, the probe's kernels.

use super::support::*;
use super::{Check, CheckId, Conclusion};
use crate::fixes;
use crate::view::{framework_key, View};
use crate::{Affects, Evidence, Layer, Severity};
use gpukb_facts::compat::{self, DriverCompat};
use gpukb_facts::{Observed, Source};

/// CUDA_VISIBLE_DEVICES empty, -1, not an index or UUID, or naming a GPU that does not
/// exist: CUDA sees no device (CUDA C++ Programming Guide, CUDA environment variables).
/// KB: `cuda-visible-devices-hides-gpus`.
pub(super) const CUDA_VISIBLE_DEVICES_HIDES_GPUS: Check = Check {
    id: CheckId::CudaVisibleDevicesHidesGpus,
    layer: Layer::CudaDriver,
    category: "cuda_visible_devices_wrong",
    explained_by: &[],
    context: false,
    meaning: "CUDA_VISIBLE_DEVICES is empty, -1 or names no existing GPU",
    run: cuda_visible_devices_hides_gpus,
    fix: fixes::cuda_visible_devices_hides_gpus,
};

fn cuda_visible_devices_hides_gpus(v: &View) -> Conclusion {
    let Some(val) = v.env("CUDA_VISIBLE_DEVICES") else {
        return Conclusion::Clear("CUDA_VISIBLE_DEVICES is not set".into());
    };
    let src = Source::Env {
        var: "CUDA_VISIBLE_DEVICES".into(),
    };
    let gpus = v.gpus();
    let total = v.fp.nvml.value().map(|n| n.gpus.len());
    let first = val.split(',').next().unwrap_or("").trim();
    let hides = if first.is_empty()
        || first == "-1"
        || first.eq_ignore_ascii_case("none")
        || first.eq_ignore_ascii_case("nodevfiles")
    {
        Some(format!("CUDA_VISIBLE_DEVICES={val:?} hides every GPU"))
    } else if let Ok(i) = first.parse::<usize>() {
        match total {
            Some(n) if i >= n => Some(format!(
                "CUDA_VISIBLE_DEVICES={val} names GPU {i}, but the machine has {n} (0–{})",
                n.saturating_sub(1)
            )),
            _ => None,
        }
    } else if first.starts_with("GPU-") || first.starts_with("MIG-") {
        (!gpus.is_empty()
            && !gpus
                .iter()
                .any(|g| !g.uuid.is_empty() && g.uuid.starts_with(first))
            && first.starts_with("GPU-")
            && total.is_some())
        .then(|| format!("CUDA_VISIBLE_DEVICES={val} names no GPU UUID on this machine"))
    } else {
        Some(format!(
            "CUDA_VISIBLE_DEVICES={val:?} is not a GPU index or UUID: CUDA sees no device"
        ))
    };
    match hides {
        Some(t) => found(
            finding(
                None,
                t.clone(),
                Severity::Failure,
                vec![Evidence::new(t, &src)],
            )
            .confirm(&[
                "echo \"CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"",
                "nvidia-smi -L",
            ]),
        ),
        None => Conclusion::Clear(format!("CUDA_VISIBLE_DEVICES={val} names existing GPUs")),
    }
}

/// MIG enabled on a GPU with no GPU instances: CUDA sees no device on it.
/// KB: `mig-enabled-no-compute-instances`.
pub(super) const MIG_WITHOUT_INSTANCES: Check = Check {
    id: CheckId::MigWithoutInstances,
    layer: Layer::CudaDriver,
    category: "mig_confusion",
    explained_by: &[],
    context: false,
    meaning: "MIG is enabled on a GPU with no GPU instances created",
    run: mig_without_instances,
    fix: fixes::mig_without_instances,
};

fn mig_without_instances(v: &View) -> Conclusion {
    per_gpu(v, "MIG", |g, _| match (g.mig_enabled, g.mig_instances) {
        (Some(true), Some(0)) => Some((
            format!(
                "GPU {} ({}) has MIG enabled and no GPU instances: CUDA sees no device on it",
                g.index, g.name
            ),
            Severity::Failure,
        )),
        (Some(true), None) if cuda_sees_no_device_on(v, g) => Some((
            format!(
                "GPU {} ({}) has MIG enabled and CUDA sees no device on it (NVML did not count its instances): no GPU/compute instance was created",
                g.index, g.name
            ),
            Severity::Failure,
        )),
        _ => None,
    })
    .with_confirm(&["nvidia-smi mig -lgi", "nvidia-smi mig -lci"])
}

/// Whether cuInit saw no CUDA device on NVML GPU `g` (no device at all, or
/// none at its PCI bus id).
fn cuda_sees_no_device_on(v: &View, g: &gpukb_facts::fingerprint::NvmlGpu) -> bool {
    let Some(c) = v.fp.cuda.value() else {
        return false;
    };
    match c.init.value().map(String::as_str) {
        Some("CUDA_ERROR_NO_DEVICE") => true,
        Some("CUDA_SUCCESS") => {
            let key = g.pci_bus_id.as_deref().and_then(super::hardware::pci_key);
            key.is_some()
                && !c
                    .devices
                    .iter()
                    .any(|d| super::hardware::pci_key(&d.pci_bus_id) == key)
        }
        _ => false,
    }
}

/// The `libcuda.so.1` the user's torch process would load (the loader model's
/// answer for torch, not gpukb's own copy) is the CUDA toolkit's stub
/// (`…/lib64/stubs/libcuda.so`, for linking only): every CUDA call fails with
/// `CUDA_ERROR_STUB_LIBRARY` (34, "CUDA driver is a stub library"; CUDA Driver
/// API, Error Handling). Recognised by mechanism: the stub is installed only as an
/// unversioned `libcuda.so` in a `stubs` directory, while the driver's
/// `libcuda.so.1` resolves to `libcuda.so.<driver version>`.
/// KB: `cuda-stub-library-loaded`.
pub(super) const CUDA_STUB_LIBRARY_LOADED: Check = Check {
    id: CheckId::CudaStubLibraryLoaded,
    layer: Layer::CudaDriver,
    category: "stub_libcuda_loaded",
    explained_by: &[],
    context: false,
    meaning: "the libcuda.so.1 torch would load is the CUDA toolkit's stub, not the driver's",
    run: cuda_stub_library_loaded,
    fix: fixes::none,
};

/// The process's own `cuInit` answer, when a child ran it in the process's libcuda and
/// it said "stub library".
fn stub_answered(v: &View) -> Option<(gpukb_facts::fingerprint::ProcessInit, Source)> {
    let c = v.fp.cuda.value()?;
    let p = c.process.value()?;
    (p.in_child && p.init == "CUDA_ERROR_STUB_LIBRARY")
        .then(|| (p.clone(), c.process.source().clone()))
}

/// Whether a resolved `libcuda.so.1` real path is the toolkit's stub.
fn is_stub_libcuda(real: &str) -> bool {
    real.split('/').any(|c| c == "stubs") || real.rsplit('/').next() == Some("libcuda.so")
}

fn cuda_stub_library_loaded(v: &View) -> Conclusion {
    let mut seen = false;
    let mut out = Vec::new();
    for (e, t) in v.torches() {
        for l in t.loads.iter().filter(|l| l.soname == "libcuda.so.1") {
            seen = true;
            let Some(path) = l.path.as_deref().filter(|p| is_stub_libcuda(p)) else {
                continue;
            };
            let how = l.source.as_deref().unwrap_or(&l.via);
            let title = format!("torch in {} would load the CUDA toolkit's stub libcuda ({path}, found through {how}), not the driver's: every CUDA call fails with error 34 (CUDA driver is a stub library)", e.site_packages);
            let src = match l.rule {
                Some(gpukb_facts::fingerprint::LoadRule::Preload) => Source::Env {
                    var: "LD_PRELOAD".into(),
                },
                Some(gpukb_facts::fingerprint::LoadRule::LdLibraryPath) => Source::Env {
                    var: "LD_LIBRARY_PATH".into(),
                },
                // Found through RPATH/RUNPATH, the cache or a default directory: the
                // file itself is the evidence.
                _ => Source::file(path.to_string()),
            };
            out.push(
                finding(Some(e.site_packages.clone()), title.clone(), Severity::Failure, vec![Evidence::new(title, &src)])
                    .affects(vec![Affects::library(path), Affects::env(&e.site_packages)])
                    .confirm(&["echo $LD_LIBRARY_PATH", "LD_DEBUG=libs python3 -c 'import torch; torch.cuda.init()' 2>&1 | grep -E 'libcuda.so' | head"]),
            );
        }
    }
    if let Some((p, src)) = stub_answered(v) {
        let title = format!(
            "cuInit in the libcuda.so.1 the process loads ({}) returned CUDA_ERROR_STUB_LIBRARY: it is the CUDA toolkit's stub, not the driver's",
            p.library
        );
        let ev = Evidence::new(format!("cuInit(0) = {} in {}", p.init, p.library), &src);
        match out.first_mut() {
            Some(f) => f.evidence.push(ev),
            None => out.push(
                finding(None, title, Severity::Failure, vec![ev])
                    .affects(vec![Affects::library(&p.library)])
                    .confirm(&["echo $LD_LIBRARY_PATH", "LD_DEBUG=libs python3 -c 'import torch; torch.cuda.init()' 2>&1 | grep -E 'libcuda.so' | head"]),
            ),
        }
    }
    match (seen, out.is_empty()) {
        (_, false) => Conclusion::Found(out),
        (true, true) => Conclusion::Clear(
            "the libcuda.so.1 torch would load is the driver's, not a stub".into(),
        ),
        (false, true) => Conclusion::Undecided(
            "no torch install whose libcuda.so.1 the loader model resolved".into(),
        ),
    }
}

/// Context: MIG mode is enabled, with instances.
/// KB: `mig-mode-change-pending-reset`.
pub(super) const MIG_ENABLED: Check = Check {
    id: CheckId::MigEnabled,
    layer: Layer::CudaDriver,
    category: "mig_confusion",
    explained_by: &[],
    context: true,
    meaning: "MIG mode is enabled, with instances (context)",
    run: mig_enabled,
    fix: fixes::none,
};

fn mig_enabled(v: &View) -> Conclusion {
    per_gpu(v, "MIG", |g, _| match (g.mig_enabled, g.mig_instances) {
        (Some(true), n) if n != Some(0) => Some((
            format!(
                "GPU {} has MIG enabled{}",
                g.index,
                n.map(|n| format!(" ({n} instances)")).unwrap_or_default()
            ),
            Severity::Info,
        )),
        _ => None,
    })
}

/// cuInit(0) returning anything but CUDA_SUCCESS; every upstream cause (no GPU, module,
/// mismatch, UVM, fabric manager, MIG, CUDA_VISIBLE_DEVICES, memory fault) explains it.
/// KB: `cuda-broken-after-suspend-resume`, `nvidia-uvm-module-not-loaded`.
pub(super) const CUDA_INIT_FAILED: Check = Check {
    id: CheckId::CudaInitFailed,
    layer: Layer::CudaDriver,
    category: "suspend_resume_driver_state",
    explained_by: super::CUDA_CAUSES,
    context: false,
    meaning: "cuInit did not return CUDA_SUCCESS",
    run: cuda_init_failed,
    fix: fixes::none,
};

fn cuda_init_failed(v: &View) -> Conclusion {
    match init_result(v) {
        Ok((r, _)) if r == "CUDA_SUCCESS" => {
            Conclusion::Clear("cuInit returned CUDA_SUCCESS".into())
        }
        Ok((r, s)) => found(
            finding(
                None,
                format!("cuInit returned {r}"),
                Severity::Failure,
                vec![Evidence::new(format!("cuInit(0) = {r}"), &s)],
            )
            .confirm(&[
                "nvidia-smi",
                "python3 -c 'import torch; print(torch.cuda.is_available())'",
            ]),
        ),
        Err(e) => Conclusion::Undecided(e),
    }
}

/// A torch built with a CUDA the driver cannot run (the compatibility engine's minor-version
/// rule, `gpukb_facts::compat::driver_runs_cuda`).
/// KB: `torch-driver-too-old-found-version`.
pub(super) const DRIVER_OLDER_THAN_TORCH_CUDA: Check = Check {
    id: CheckId::DriverOlderThanTorchCuda,
    layer: Layer::CudaDriver,
    category: "driver_too_old",
    explained_by: &[
        CheckId::ContainerShipsDriverLibraries,
        CheckId::DriverUserspaceMismatch,
    ],
    context: false,
    meaning: "the driver's CUDA version cannot run the CUDA version torch was built with",
    run: driver_older_than_torch_cuda,
    fix: fixes::driver_older_than_torch_cuda,
};

fn driver_older_than_torch_cuda(v: &View) -> Conclusion {
    let Some((drv, src)) = v.driver_cuda() else {
        return Conclusion::Undecided("the driver's CUDA version was not observed".into());
    };
    let mut out = Vec::new();
    for (e, t) in v.torches() {
        let Some(tc) = t.cuda else { continue };
        if compat::driver_runs_cuda(drv, tc) == DriverCompat::TooOld {
            let sev = if v.is_active(e) {
                Severity::Failure
            } else {
                Severity::Warning
            };
            out.push(
                finding(
                    Some(e.site_packages.clone()),
                    format!(
                        "The driver supports CUDA {drv}; torch {} needs CUDA {tc} (R{}+)",
                        t.version,
                        compat::min_driver_branch_for(tc).unwrap_or(0)
                    ),
                    sev,
                    vec![
                        Evidence::new(format!("driver CUDA {drv}"), &src),
                        Evidence::new(
                            format!("torch {} built with CUDA {tc}", t.version),
                            &t.source,
                        ),
                    ],
                )
                .affects(vec![Affects::env(&e.site_packages)])
                .confirm(&[
                    "nvidia-smi | head -4",
                    "python3 -c 'import torch; print(torch.version.cuda)'",
                ]),
            );
        }
    }
    if out.is_empty() {
        Conclusion::Clear(format!(
            "the driver (CUDA {drv}) runs every torch build here"
        ))
    } else {
        Conclusion::Found(out)
    }
}

/// A JAX plugin, CuPy, TensorFlow, ONNX Runtime or TensorRT build whose CUDA the driver
/// cannot run (`gpukb_facts::compat::driver_runs_cuda`).
/// KB: `fw-framework-cuda-newer-than-driver`.
pub(super) const DRIVER_OLDER_THAN_FRAMEWORK_CUDA: Check = Check {
    id: CheckId::DriverOlderThanFrameworkCuda,
    layer: Layer::CudaDriver,
    category: "driver_too_old",
    explained_by: &[CheckId::ContainerShipsDriverLibraries, CheckId::DriverUserspaceMismatch, CheckId::DriverOlderThanTorchCuda],
    context: false,
    meaning: "the driver's CUDA version cannot run the CUDA version a JAX plugin, CuPy, TensorFlow, ONNX Runtime or TensorRT build targets",
    run: driver_older_than_framework_cuda,
    fix: fixes::driver_older_than_framework_cuda,
};

fn driver_older_than_framework_cuda(v: &View) -> Conclusion {
    let Some((drv, src)) = v.driver_cuda() else {
        return Conclusion::Undecided("the driver's CUDA version was not observed".into());
    };
    let builds = v.frameworks();
    let mut out = Vec::new();
    let mut read = 0;
    for (e, fw) in &builds {
        let Observed::Found { value: c, source } = &fw.cuda else {
            continue;
        };
        read += 1;
        let need = c.version();
        if compat::driver_runs_cuda(drv, need) != DriverCompat::TooOld {
            continue;
        }
        let floor = compat::min_driver_for(need).unwrap_or("?");
        out.push(
            finding(
                Some(framework_key(e, fw)),
                format!(
                    "The driver supports CUDA {drv}; {} {} is built for CUDA {c} (driver {floor}+)",
                    fw.distribution, fw.version
                ),
                env_severity(v, e),
                vec![
                    Evidence::new(format!("driver CUDA {drv}"), &src),
                    Evidence::new(
                        format!(
                            "{} {} built for CUDA {c} ({})",
                            fw.distribution, fw.version, c.read_from
                        ),
                        source,
                    ),
                ],
            )
            .affects(vec![Affects::env(&e.site_packages)])
            .confirm(&[
                "nvidia-smi | head -4",
                "pip list 2>/dev/null | grep -Ei 'jax|cupy|tensorflow|onnxruntime|tensorrt'",
            ]),
        );
    }
    if !out.is_empty() {
        return Conclusion::Found(out);
    }
    if read == 0 {
        return if v.has_package(FRAMEWORK_PACKAGES) {
            Conclusion::Undecided("no framework's CUDA build could be read".into())
        } else {
            Conclusion::Undecided("no JAX CUDA plugin, CuPy, TensorFlow, ONNX Runtime GPU or TensorRT in the Python envs read".into())
        };
    }
    Conclusion::Clear(format!(
        "the driver (CUDA {drv}) runs every framework build here"
    ))
}

/// gpukb probe's kernels failing to run or computing wrong results on a GPU
/// (`gpukb doctor --probe`); upstream driver causes explain it.
pub(super) const PROBE_KERNELS_FAIL: Check = Check {
    id: CheckId::ProbeKernelsFail,
    layer: Layer::CudaDriver,
    category: "xid_hardware",
    explained_by: super::CUDA_CAUSES,
    context: false,
    meaning: "gpukb probe's kernels failed to run or computed wrong results on a GPU",
    run: probe_kernels_fail,
    fix: fixes::none,
};

fn probe_kernels_fail(v: &View) -> Conclusion {
    probed(
        v,
        "probe kernels",
        "fails gpukb's probe kernels: they did not run or computed wrong results",
        |g| g.smoke_failures.iter().chain(&g.errors).cloned().collect(),
    )
    .with_confirm(&["gpukb probe --no-throughput", "sudo dmesg | grep -i xid"])
}

/// Packages whose presence means a framework build was there to read.
const FRAMEWORK_PACKAGES: &[&str] = &[
    "jax-cuda12-plugin",
    "jax-cuda13-plugin",
    "cupy-cuda11x",
    "cupy-cuda12x",
    "cupy-cuda13x",
    "tensorflow",
    "onnxruntime-gpu",
    "tensorrt-cu12",
    "tensorrt-cu13",
];
