//! Fixes computed from the machine: the driver branch this GPU and this
//! torch need, the torch build (release × CUDA variant) whose kernels cover
//! every GPU here and whose CUDA this driver runs (both chosen by
//! `gpukb_facts::select`, the policy the planner shares), the exact
//! `CUDA_VISIBLE_DEVICES` for the GPUs present. Destructive steps carry a
//! warning and a safer way.
//!
//! Each check names its fix function here in its [`Check`](super::checks::Check)
//! (`fix:`, [`none`] when there is nothing to compute), so a check without
//! one does not compile.

use super::checks::Check;
use super::view::View;
use super::{Finding, FixStep};
use gpukb_facts::fingerprint::{FrameworkBuild, PythonEnv};
use gpukb_facts::select::{
    pick_driver_branch, pick_torch, TorchBuild, PROPOSED_BRANCH, TORCH_BUILDS_AS_OF,
};
use gpukb_facts::{ComputeCapability, CudaVersion};

/// The planner's pinned command for this build (`gpukb plan` shows the same).
fn install_torch(b: &TorchBuild) -> String {
    b.command
        .replacen("pip install ", "pip install --force-reinstall ", 1)
}

fn driver_package(branch: u32, ccs: &[ComputeCapability]) -> String {
    // Open modules: required on Blackwell, supported from Turing (7.5); not before.
    let open = ccs.iter().all(|c| c.pair() >= (7, 5));
    format!("nvidia-driver-{branch}{}", if open { "-open" } else { "" })
}

fn step(
    text: impl Into<String>,
    commands: &[String],
    warning: Option<&str>,
    mine: bool,
) -> FixStep {
    FixStep {
        text: text.into(),
        commands: commands.to_vec(),
        warning: warning.map(str::to_string),
        for_this_machine: mine,
    }
}

/// The version a JAX install should be brought to: jax's own, else jaxlib's.
fn jax_release(e: &PythonEnv, fw: &FrameworkBuild) -> String {
    let of = |n: &str| {
        e.cuda_packages
            .iter()
            .find(|p| p.name == n)
            .map(|p| p.version.clone())
    };
    of("jax")
        .or_else(|| of("jaxlib"))
        .unwrap_or_else(|| fw.version.clone())
}

/// Reinstalls jax, jaxlib and the CUDA `major` plugin and pjrt as one release
/// (`jax[cudaNN]==V` pins all four: the jax METADATA's extras).
fn jax_reinstall(e: &PythonEnv, fw: &FrameworkBuild, major: u32) -> Vec<FixStep> {
    let release = jax_release(e, fw);
    let old: Vec<String> = fw
        .same_release
        .iter()
        .filter(|p| p.name != "jaxlib")
        .map(|p| p.name.clone())
        .collect();
    let mut commands = Vec::new();
    if !old.is_empty() {
        commands.push(format!("pip uninstall -y {}", old.join(" ")));
    }
    commands.push(format!(
        "pip install --force-reinstall \"jax[cuda{major}]=={release}\""
    ));
    commands.push("python3 -c 'import jax; print(jax.devices())'".into());
    vec![step(
        format!("Install jax {release} with its CUDA {major} plugin and pjrt as one release"),
        &commands,
        None,
        true,
    )]
}

/// The build of `fw` for CUDA `major` (the driver's), when one is published.
fn framework_build_for(e: &PythonEnv, fw: &FrameworkBuild, major: u32) -> Vec<FixStep> {
    let keep = keeping_driver;
    match fw.framework.as_str() {
        // JAX publishes CUDA plugins for CUDA 12 and 13 (jax[cuda12], jax[cuda13]).
        "jax" if (12..=13).contains(&major) => keep(jax_reinstall(e, fw, major)),
        // CuPy publishes cupy-cuda11x, cupy-cuda12x and cupy-cuda13x.
        "cupy" if (11..=13).contains(&major) => {
            let pin = if major >= 12 { format!("=={}", fw.version) } else { String::new() };
            keep(vec![step(
                format!("Install CuPy's CUDA {major} build"),
                &[format!("pip uninstall -y {}", fw.distribution), format!("pip install cupy-cuda{major}x{pin}")],
                None,
                true,
            )])
        }
        "tensorrt" if (12..=13).contains(&major) => keep(vec![step(
            format!("Install TensorRT's CUDA {major} build"),
            &[format!("pip uninstall -y {}", fw.distribution), format!("pip install tensorrt-cu{major}")],
            None,
            true,
        )]),
        "tensorflow" | "onnxruntime-gpu" => keep(vec![step(
            format!(
                "Install a {} release built for CUDA {major}.x (its tested build configurations / CUDA execution provider requirements list which)",
                fw.framework
            ),
            &[],
            None,
            false,
        )]),
        _ => vec![],
    }
}

/// The pip wheel that ships `soname` for CUDA `major`.
fn wheel_for(soname: &str, major: u32) -> Option<String> {
    let family = soname.split(".so").next()?;
    let base = match family {
        "libcudart" => "nvidia-cuda-runtime",
        "libcublas" | "libcublasLt" => "nvidia-cublas",
        "libcudnn" => "nvidia-cudnn",
        "libcufft" => "nvidia-cufft",
        "libcurand" => "nvidia-curand",
        "libcusparse" => "nvidia-cusparse",
        "libcusolver" => "nvidia-cusolver",
        "libnvrtc" => "nvidia-cuda-nvrtc",
        "libnvJitLink" => "nvidia-nvjitlink",
        _ => return None,
    };
    // CUDA 13's toolkit wheels drop the suffix (nvidia-cublas 13.x; the H200
    // capture's torch cu130 env), cuDNN keeps it (nvidia-cudnn-cu13).
    Some(if major >= 13 && base != "nvidia-cudnn" {
        base.to_string()
    } else {
        format!("{base}-cu{major}")
    })
}

/// The first onnxruntime-gpu release on PyPI built for CUDA 13: its METADATA's
/// `cuda` extra requires the CUDA 13 runtime wheel (1.25.1's still the
/// `-cu12` one; checked on the PyPI METADATA of 1.23.2, 1.24.1, 1.25.1,
/// 1.27.0, 1.29.0–1.31.1 on 2026-12-01).
const ORT_FIRST_CUDA13: &str = "1.27.0";

/// The CUDA major of the runtime wheel an env carries (`nvidia-cuda-runtime`
/// 13.0.96 → 13, `nvidia-cuda-runtime-cu12` → 12).
fn env_cuda_major(e: &PythonEnv) -> Option<u32> {
    e.nvidia_wheels.iter().find_map(|w| match w.name.as_str() {
        "nvidia-cuda-runtime" => w.version.split('.').next()?.parse().ok(),
        n => n.strip_prefix("nvidia-cuda-runtime-cu")?.parse().ok(),
    })
}

/// An onnxruntime-gpu built for the CUDA major the env's wheels already carry.
fn onnxruntime_for_env(e: &PythonEnv, fw: &FrameworkBuild) -> Vec<FixStep> {
    let (Some(env), Some(built)) = (env_cuda_major(e), fw.cuda.value().map(|c| c.major)) else {
        return vec![];
    };
    let spec = match (env, built) {
        (13, 12) => format!("'onnxruntime-gpu>={ORT_FIRST_CUDA13}'"),
        (12, 13) => format!("'onnxruntime-gpu<{ORT_FIRST_CUDA13}'"),
        _ => return vec![],
    };
    vec![step(
        format!("Or install an onnxruntime-gpu built for CUDA {env}, whose libraries this env's nvidia-* wheels already carry"),
        &[
            format!("pip install --force-reinstall {spec}"),
            "python3 -c 'import onnxruntime as ort; ort.preload_dlls(); print(ort.get_available_providers())'".into(),
        ],
        None,
        true,
    )]
}

/// Brings the CUDA libraries ONNX Runtime's CUDA provider needs into the env.
fn onnxruntime_libraries(fw: &FrameworkBuild) -> Vec<FixStep> {
    let missing: Vec<&str> = fw
        .loads
        .iter()
        .filter(|l| l.path.is_none())
        .map(|l| l.soname.as_str())
        .collect();
    let Some(major) = fw.cuda.value().map(|c| c.major) else {
        return vec![];
    };
    let mut wheels: Vec<String> = missing.iter().filter_map(|m| wheel_for(m, major)).collect();
    wheels.sort();
    wheels.dedup();
    let mut s = Vec::new();
    if !wheels.is_empty() {
        s.push(step(
            format!("Install the CUDA {major} wheels that carry {} and load them before the session (onnxruntime.preload_dlls(), ONNX Runtime 1.21+)", missing.join(", ")),
            &[
                format!("pip install {}", wheels.join(" ")),
                "python3 -c 'import onnxruntime as ort; ort.preload_dlls(); print(ort.get_available_providers())'".into(),
            ],
            None,
            true,
        ));
    }
    s.push(step(
        format!("Or put a CUDA {major} copy of them on the loader path (a CUDA {major} toolkit's lib64 in LD_LIBRARY_PATH or ld.so.conf)"),
        &[format!("ldconfig -p | grep -E '{}'", missing.iter().map(|m| m.replace('.', "\\.")).collect::<Vec<_>>().join("|"))],
        None,
        true,
    ));
    s
}

/// Fills `f.fixes` for this machine, with its check's fix function.
pub fn compute(v: &View, f: &mut Finding) {
    f.fixes = Check::of(f.check).map_or_else(Vec::new, |c| (c.fix)(v, f));
}

/// The compute capabilities of the GPUs here.
fn ccs(v: &View) -> Vec<ComputeCapability> {
    v.gpus().iter().filter_map(|g| g.cc).collect()
}

/// The driver's CUDA version.
fn driver_cuda(v: &View) -> Option<CudaVersion> {
    v.driver_cuda().map(|(c, _)| c)
}

/// Prefixes each step with "Or keep the driver: ".
fn keeping_driver(mut steps: Vec<FixStep>) -> Vec<FixStep> {
    for x in &mut steps {
        x.text = format!("Or keep the driver: {}", x.text);
    }
    steps
}

/// The framework build a finding's id names (`check:key`).
fn framework_of<'a>(v: &View<'a>, f: &Finding) -> Option<(&'a PythonEnv, &'a FrameworkBuild)> {
    let key = f.id.split_once(':').map_or("", |(_, k)| k);
    v.framework_by_key(key)
}

/// For checks whose fixes are the KB entries' (nothing computed from the machine).
pub(super) fn none(_: &View, _: &Finding) -> Vec<FixStep> {
    Vec::new()
}

/// The torch build whose kernels cover every GPU here and whose CUDA this driver runs.
pub(super) fn torch_build(v: &View, _: &Finding) -> Vec<FixStep> {
    let ccs = ccs(v);
    let driver_cuda = driver_cuda(v);
    match pick_torch(&ccs, driver_cuda) {
        Some(b) if !ccs.is_empty() => vec![step(
            format!(
                "Install torch {}+{}: it carries SASS for {} and this driver (CUDA {}) runs CUDA {}.{} (torch builds as of {TORCH_BUILDS_AS_OF})",
                b.torch, b.variant,
                ccs.iter().map(|c| format!("sm_{}", c.sm())).collect::<Vec<_>>().join(", "),
                driver_cuda.map(|c| c.to_string()).unwrap_or("?".into()),
                b.cuda.0, b.cuda.1
            ),
            &[install_torch(b)],
            None,
            true,
        )],
        _ => vec![step(
            "No current torch build runs on both this GPU and this driver: upgrade the driver first, or build torch from source with TORCH_CUDA_ARCH_LIST set to the GPU's compute capability",
            &["git clone --recursive https://github.com/pytorch/pytorch && cd pytorch && TORCH_CUDA_ARCH_LIST=\"<CC>\" python setup.py develop".into()],
            None,
            false,
        )],
    }
}

/// The driver branch that supports every GPU here (and runs CUDA `need`).
fn driver_for(v: &View, need: Option<CudaVersion>) -> Vec<FixStep> {
    let ccs = ccs(v);
    match pick_driver_branch(&ccs, need) {
        Ok(b) => vec![step(
            format!(
                "Install the R{b} driver ({}; it supports every GPU here{})",
                driver_package(b, &ccs),
                need.map(|n| format!(" and runs CUDA {n}"))
                    .unwrap_or_default()
            ),
            &[
                "sudo apt update".into(),
                format!("sudo apt install {}", driver_package(b, &ccs)),
                "sudo reboot".into(),
            ],
            None,
            true,
        )],
        Err(e) => vec![step(format!("No driver branch fits: {e}"), &[], None, true)],
    }
}

/// The driver branch that supports every GPU here.
pub(super) fn driver_branch(v: &View, _: &Finding) -> Vec<FixStep> {
    driver_for(v, None)
}

pub(super) fn cuda_visible_devices_hides_gpus(v: &View, _: &Finding) -> Vec<FixStep> {
    let n = v.fp.nvml.value().map_or(0, |n| n.gpus.len());
    let all = (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    vec![
        step(
            "Unset the variable (use every GPU)",
            &["unset CUDA_VISIBLE_DEVICES".into()],
            None,
            false,
        ),
        step(
            format!("Or name GPUs that exist (this machine has {n})"),
            &[format!("export CUDA_VISIBLE_DEVICES={all}")],
            None,
            true,
        ),
    ]
}

pub(super) fn driver_older_than_torch_cuda(v: &View, f: &Finding) -> Vec<FixStep> {
    let need = v.torches().iter().filter_map(|(_, t)| t.cuda).max();
    let mut s = driver_for(v, need);
    s.extend(keeping_driver(torch_build(v, f)));
    s
}

pub(super) fn driver_older_than_framework_cuda(v: &View, f: &Finding) -> Vec<FixStep> {
    let Some((e, fw)) = framework_of(v, f) else {
        return vec![];
    };
    let need = fw.cuda.value().map(|c| c.version());
    let mut s = driver_for(v, need);
    if let Some(d) = driver_cuda(v) {
        s.extend(framework_build_for(e, fw, d.major));
    }
    s
}

pub(super) fn jax_plugin_version_mismatch(v: &View, f: &Finding) -> Vec<FixStep> {
    match framework_of(v, f) {
        Some((e, fw)) => jax_reinstall(e, fw, fw.cuda.value().map_or(12, |c| c.major)),
        None => vec![],
    }
}

pub(super) fn onnxruntime_cuda_library_missing(v: &View, f: &Finding) -> Vec<FixStep> {
    match framework_of(v, f) {
        Some((e, fw)) => {
            let mut s = onnxruntime_libraries(fw);
            s.extend(onnxruntime_for_env(e, fw));
            s
        }
        None => vec![],
    }
}

pub(super) fn extension_lacks_gpu_arch(v: &View, f: &Finding) -> Vec<FixStep> {
    let mut archs: Vec<String> = ccs(v).iter().map(|c| c.to_string()).collect();
    archs.sort();
    archs.dedup();
    vec![step(
        "Install a build of the extension made for this GPU's architecture and this torch (a wheel whose name matches torch's version and CUDA), or build it here",
        &[format!(
            "TORCH_CUDA_ARCH_LIST=\"{}\" pip install --no-build-isolation --no-binary :all: --force-reinstall {}",
            archs.join(";"),
            f.id.split(':').nth(1).unwrap_or("<package>")
        )],
        None,
        true,
    )]
}

pub(super) fn torch_library_missing(v: &View, _: &Finding) -> Vec<FixStep> {
    match v.torches().first() {
        Some((_, t)) => vec![step(
            format!(
                "Reinstall torch {} so pip brings the nvidia-* wheels it pins",
                t.version
            ),
            &[format!(
                "pip install --force-reinstall 'torch=={}'{}",
                t.version.split('+').next().unwrap_or(&t.version),
                t.version
                    .split_once('+')
                    .map(|(_, var)| format!(" --index-url https://download.pytorch.org/whl/{var}"))
                    .unwrap_or_default()
            )],
            None,
            true,
        )],
        None => vec![],
    }
}

pub(super) fn driver_not_built_for_running_kernel(_: &View, _: &Finding) -> Vec<FixStep> {
    vec![step(
        "Build the installed driver for the running kernel (DKMS)",
        &[
            "sudo apt install linux-headers-$(uname -r)".into(),
            "sudo dkms autoinstall -k $(uname -r)".into(),
            "sudo modprobe nvidia".into(),
        ],
        None,
        false,
    )]
}

pub(super) fn secure_boot_blocks_module(v: &View, _: &Finding) -> Vec<FixStep> {
    let ccs = ccs(v);
    vec![
        step(
            "Enroll the DKMS signing key, then reboot and confirm it in the MOK manager",
            &[
                "sudo mokutil --import /var/lib/dkms/mok.pub".into(),
                "sudo reboot".into(),
            ],
            None,
            false,
        ),
        step(
            "Or install the distribution's pre-signed modules",
            &[format!(
                "sudo apt install linux-modules-nvidia-{}-$(uname -r)",
                pick_driver_branch(&ccs, None).unwrap_or(PROPOSED_BRANCH)
            )],
            None,
            true,
        ),
    ]
}

pub(super) fn nouveau_bound(v: &View, _: &Finding) -> Vec<FixStep> {
    let ccs = ccs(v);
    vec![step("Blacklist nouveau and install the NVIDIA driver",
        &["echo -e 'blacklist nouveau\\noptions nouveau modeset=0' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf".into(), "sudo update-initramfs -u".into(),
          format!("sudo apt install {}", driver_package(pick_driver_branch(&ccs, None).unwrap_or(PROPOSED_BRANCH), &ccs)), "sudo reboot".into()],
        Some("the display falls back to a basic framebuffer until the NVIDIA driver loads; keep SSH access"), true)]
}

pub(super) fn nvidia_uvm_not_loaded(_: &View, _: &Finding) -> Vec<FixStep> {
    vec![step(
        "Load nvidia_uvm and create its device node",
        &[
            "sudo modprobe nvidia_uvm".into(),
            "sudo nvidia-modprobe -u -c=0".into(),
        ],
        None,
        false,
    )]
}

pub(super) fn driver_userspace_mismatch(_: &View, _: &Finding) -> Vec<FixStep> {
    vec![
        step("Reboot so the kernel loads the module that matches the upgraded libraries", &["sudo reboot".into()], None, false),
        step("Or reload the module without a reboot (only when no process uses the GPU)", &["sudo systemctl stop nvidia-persistenced gpukb-agent 2>/dev/null".into(), "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia".into(), "sudo modprobe -a nvidia nvidia_uvm".into()],
            Some("kills nothing but fails if anything holds /dev/nvidia*; stops persistence and the display"), false),
    ]
}

pub(super) fn open_module_required(v: &View, _: &Finding) -> Vec<FixStep> {
    let b = pick_driver_branch(&ccs(v), None).unwrap_or(PROPOSED_BRANCH);
    vec![step(
        format!("Install the open kernel modules of R{b}"),
        &[
            format!("sudo apt install nvidia-driver-{b}-open"),
            "sudo reboot".into(),
        ],
        Some("replaces the proprietary kernel module package"),
        true,
    )]
}

pub(super) fn fabric_manager_not_running(v: &View, _: &Finding) -> Vec<FixStep> {
    // From R580 one package name serves every branch (NVIDIA
    // gpu-driver-container #451); before it the branch is in the name.
    let (package, mine) = match v.fp.driver.version.value() {
        Some(d) if d.branch() >= 580 => (format!("nvidia-fabricmanager={d}-1"), true),
        Some(d) => (format!("nvidia-fabricmanager-{}={d}-1", d.branch()), true),
        None => (
            "nvidia-fabricmanager=<DRIVER_VERSION>-1   # cat /proc/driver/nvidia/version"
                .to_string(),
            false,
        ),
    };
    vec![step(
        "Install and start Fabric Manager of exactly the driver's release",
        &[
            format!("sudo apt install {package}"),
            "sudo systemctl enable --now nvidia-fabricmanager".into(),
        ],
        None,
        mine,
    )]
}

pub(super) fn mig_without_instances(_: &View, _: &Finding) -> Vec<FixStep> {
    vec![
        step(
            "Create GPU instances (list profiles first)",
            &[
                "sudo nvidia-smi mig -lgip".into(),
                "sudo nvidia-smi mig -cgi <profile> -C".into(),
            ],
            None,
            false,
        ),
        step(
            "Or disable MIG",
            &["sudo nvidia-smi -mig 0".into()],
            Some("resets the GPU: stop every process on it first"),
            false,
        ),
    ]
}

pub(super) fn container_without_gpu(_: &View, _: &Finding) -> Vec<FixStep> {
    vec![step(
        "Start the container with GPU access (NVIDIA Container Toolkit)",
        &[
            "docker run --gpus all ...".into(),
            "# or, with CDI: docker run --device nvidia.com/gpu=all ...".into(),
        ],
        None,
        false,
    )]
}

pub(super) fn container_ships_driver_libraries(_: &View, _: &Finding) -> Vec<FixStep> {
    vec![step("Rebuild the image without driver libraries (let the NVIDIA Container Toolkit mount the host's)",
        &["# in the Dockerfile: do not install libnvidia-compute-*/nvidia-driver-* packages".into(), "docker run --gpus all ... # the toolkit mounts the host's libcuda".into()], None, false)]
}

pub(super) fn wsl_libcuda_missing(_: &View, _: &Finding) -> Vec<FixStep> {
    vec![step("Install the NVIDIA driver on Windows (not inside WSL) and make /usr/lib/wsl/lib visible to the loader",
        &["echo /usr/lib/wsl/lib | sudo tee /etc/ld.so.conf.d/ld.wsl.conf".into(), "sudo ldconfig".into(), "wsl --update   # from Windows".into()], None, false)]
}

pub(super) fn library_shadowed_by_ld_library_path(_: &View, _: &Finding) -> Vec<FixStep> {
    vec![step("Drop the directory from LD_LIBRARY_PATH for Python (or restore the pinned wheel)",
        &["export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | grep -v -e nccl -e cudnn | paste -sd:)".into(), "pip check".into()], None, false)]
}

pub(super) fn cuda_home_older_than_torch(v: &View, _: &Finding) -> Vec<FixStep> {
    let need = v.torches().iter().filter_map(|(_, t)| t.cuda).max();
    let matching = need.and_then(|n| {
        v.fp.libraries.toolkits.iter().find(|t| {
            t.version
                .value()
                .and_then(|s| s.parse::<CudaVersion>().ok())
                == Some(n)
        })
    });
    match (matching, need) {
        (Some(t), _) => vec![step(
            format!("Point CUDA_HOME at the matching toolkit {}", t.path),
            &[format!("export CUDA_HOME={}", t.path)],
            None,
            true,
        )],
        (None, Some(n)) => vec![step(
            format!("Install the CUDA {n} toolkit and point CUDA_HOME at it"),
            &[
                format!("sudo apt install cuda-toolkit-{}-{}", n.major, n.minor),
                format!("export CUDA_HOME=/usr/local/cuda-{n}"),
            ],
            None,
            true,
        )],
        _ => vec![],
    }
}

pub(super) fn gpu_memory_fault(_: &View, _: &Finding) -> Vec<FixStep> {
    vec![step("Reset the GPU to apply pending remaps; if remapping failed, drain the node and contact the vendor (RMA)", &["sudo nvidia-smi -r -i <index>".into()], Some("a reset kills every process on that GPU"), false)]
}
