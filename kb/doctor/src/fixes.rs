//! Fixes computed from the machine: the driver branch this GPU and this
//! torch need, the torch build (release × CUDA variant) whose kernels cover
//! every GPU here and whose CUDA this driver runs (both chosen by
//! `gpukb_facts::select`, the policy the planner shares), the exact
//! `CUDA_VISIBLE_DEVICES` for the GPUs present. Destructive steps carry a
//! warning and a safer way.
//!
//! Each check names its fix function here in its `Check` (`checks/mod.rs`;
//! `fix:`, [`none`] when there is nothing to compute), so a check without
//! one does not compile; the doctor hands it to [`compute`]. This module knows
//! no check: the checks depend on it, not the reverse.

use super::view::View;
use super::{Choice, Finding, FixStep, RunsOn};
use crate::effect::{effects_or_worst, Effect};
use gpukb_facts::driver_choice::{recommend, DriverRecommendation, Flavour, GpuIdentity, NoDriver};
use gpukb_facts::fingerprint::{FrameworkBuild, PythonEnv};
use gpukb_facts::plan::{plan, PlannerFacts, TorchSpec};
use gpukb_facts::{ComputeCapability, CudaVersion};

/// The planner's pinned command, reinstalling over the build that is there.
fn install_torch(command: &str) -> String {
    command.replacen("pip install ", "pip install --force-reinstall ", 1)
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
        runs_on: RunsOn::ThisMachine,
        choice: None,
    }
}

/// The platform a fix must fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// A Linux machine that owns its kernel and GPU (bare metal or a VM).
    Machine,
    /// Inside a container: the driver and its modules are the host's.
    Container,
    /// WSL2: the driver is the Windows one; there is no NVIDIA kernel module.
    Wsl2,
    /// A Jetson: the driver is part of L4T, flashed with JetPack.
    Jetson,
    /// Native Windows (a paste with Windows paths; never a detected machine).
    Windows,
}

impl Platform {
    /// The platform of the machine a view describes (WSL2 before container:
    /// a container under WSL2 still gets its driver from Windows).
    pub fn of(v: &View) -> Platform {
        if v.is_wsl() {
            Platform::Wsl2
        } else if v.is_jetson() {
            Platform::Jetson
        } else if v.container().is_some() {
            Platform::Container
        } else {
            Platform::Machine
        }
    }
}

/// Every effect of a step's commands (a command the table does not know
/// counts as a driver install: never printed as safe by default).
fn step_effects(s: &FixStep) -> Vec<Effect> {
    s.commands
        .iter()
        .flat_map(|c| effects_or_worst(c))
        .collect()
}

/// The step WSL2 gets instead of a Linux driver or module step.
fn windows_driver_step(why: &str) -> FixStep {
    let mut s = step(
        format!("Install or update the NVIDIA driver in Windows, not inside WSL2 (WSL2 reaches it through /usr/lib/wsl/lib; a Linux NVIDIA driver inside WSL breaks CUDA){why}"),
        &["wsl --shutdown   # in PowerShell after the Windows driver update, then reopen the WSL shell".into()],
        None,
        false,
    );
    s.runs_on = RunsOn::WindowsHost;
    s
}

/// The step a Jetson gets instead of a desktop driver package.
fn jetson_driver_step() -> FixStep {
    let mut s = step(
        "The GPU driver of a Jetson is part of L4T: upgrade JetPack (SDK Manager or flash.sh from an x86 host for a new major release; `sudo apt upgrade` of the nvidia-l4t-* packages within one)",
        &["sdkmanager   # on the x86 host, with the Jetson in recovery mode".into()],
        None,
        false,
    );
    s.runs_on = RunsOn::FlashHost;
    s
}

/// Fits steps to where they run: under WSL2 no step installs, builds, loads or
/// removes a Linux NVIDIA driver or module (one Windows step replaces them, and
/// a reboot becomes `wsl --shutdown` in Windows); inside a container a
/// host-only step (driver, module, GPU setting, reboot) runs on the container's
/// host; on a Jetson a desktop driver package becomes a JetPack upgrade.
pub fn place(platform: Platform, steps: Vec<FixStep>) -> Vec<FixStep> {
    let mut out: Vec<FixStep> = Vec::with_capacity(steps.len());
    let mut replaced = false;
    for mut s in steps {
        if s.runs_on != RunsOn::ThisMachine {
            out.push(s);
            continue;
        }
        let effects = step_effects(&s);
        let forbidden_in_wsl = effects.iter().any(|e| e.forbidden_in_wsl());
        let host_only = effects.iter().any(|e| e.host_only());
        let reboots = effects.contains(&Effect::Reboot);
        match platform {
            Platform::Wsl2 if forbidden_in_wsl => replaced = true,
            Platform::Wsl2 if reboots => {
                s.commands =
                    vec!["wsl --shutdown   # in PowerShell; then reopen the WSL shell".into()];
                s.runs_on = RunsOn::WindowsHost;
                out.push(s);
            }
            Platform::Wsl2 | Platform::Container if host_only => {
                s.runs_on = if platform == Platform::Wsl2 {
                    RunsOn::WindowsHost
                } else {
                    RunsOn::ContainerHost
                };
                out.push(s);
            }
            Platform::Jetson
                if effects.contains(&Effect::DriverInstall)
                    && s.commands.iter().any(|c| c.contains("nvidia-driver-")) =>
            {
                if !replaced {
                    out.push(jetson_driver_step());
                }
                replaced = true;
            }
            _ => out.push(s),
        }
    }
    if replaced && platform == Platform::Wsl2 {
        out.insert(0, windows_driver_step(""));
    }
    out
}

/// Marks alternatives: when a finding's steps include "Or …" steps, every step
/// is an option of one group (the steps before the first "Or" are option 1).
fn mark_alternatives(group: &str, steps: &mut [FixStep]) {
    if !steps.iter().skip(1).any(|s| s.text.starts_with("Or ")) {
        return;
    }
    let mut option = 1;
    for (i, s) in steps.iter_mut().enumerate() {
        if i > 0 && s.text.starts_with("Or ") {
            option += 1;
        }
        s.choice = Some(Choice {
            group: group.to_string(),
            option,
        });
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

/// The fixes of a finding of one check, computed from the machine.
pub type FixFn = fn(&View, &Finding) -> Vec<FixStep>;

/// Fills `f.fixes` for this machine with `fix`, its check's fix function (none
/// when the check is unknown), placed where they run and alternatives marked.
pub fn compute(v: &View, f: &mut Finding, fix: Option<FixFn>) {
    let steps = fix.map_or_else(Vec::new, |fix| fix(v, f));
    let mut steps = place(Platform::of(v), steps);
    mark_alternatives(&f.id, &mut steps);
    f.fixes = steps;
}

/// What is known of each GPU for choosing its driver: NVML's (or the CUDA
/// driver's, or the PCI table's) compute capability, else the PCI device id.
fn gpu_identities(v: &View) -> Vec<GpuIdentity> {
    let gpus = v.gpus();
    if !gpus.is_empty() && gpus.iter().all(|g| g.cc.is_some()) {
        return gpus
            .iter()
            .map(|g| GpuIdentity {
                cc: g.cc,
                ..Default::default()
            })
            .collect();
    }
    v.pci_gpus()
        .unwrap_or_default()
        .iter()
        .map(|p| GpuIdentity {
            pci_device: p.device,
            ..Default::default()
        })
        .collect()
}

/// The driver to install here (branch, flavour, legacy branch, minimum release).
/// The driver for these GPUs that runs CUDA `need`; when no branch both drives
/// the GPUs and runs it (a Kepler GPU under a CUDA 13 torch), the GPUs' own
/// driver, with a reason saying the framework must change instead.
fn driver_recommendation(
    v: &View,
    need: Option<CudaVersion>,
) -> Result<DriverRecommendation, NoDriver> {
    let ids = gpu_identities(v);
    match (recommend(&ids, need), need) {
        (Err(NoDriver::Conflict(why)), Some(n)) => {
            let mut rec = recommend(&ids, None)?;
            rec.reasons.push(format!(
                "no branch also runs CUDA {n} ({why}): install a build of the framework for this driver (`gpukb plan`)"
            ));
            Ok(rec)
        }
        (r, _) => r,
    }
}

/// The recommendation's reasons, one per distinct GPU kind.
fn reasons(rec: &DriverRecommendation) -> String {
    let mut r: Vec<&str> = Vec::new();
    for x in &rec.reasons {
        if !r.contains(&x.as_str()) {
            r.push(x);
        }
    }
    r.join("; ")
}

/// The driver to install for the GPUs a view shows, running the CUDA of the
/// torch builds here, as the doctor's driver fixes and the placeholders of KB
/// fixes take it.
pub fn driver_recommendation_for(v: &View) -> Option<DriverRecommendation> {
    driver_recommendation(v, torch_cuda(v)).ok()
}

/// The newest CUDA a torch here was built with: the driver to install must run it.
fn torch_cuda(v: &View) -> Option<CudaVersion> {
    v.torches().iter().filter_map(|(_, t)| t.cuda).max()
}

/// A step that says how to learn what a driver choice lacks (nothing installed).
fn no_driver_step(e: &NoDriver) -> FixStep {
    step(
        format!("gpukb cannot choose a driver: {e}"),
        &["lspci -nn | grep -i nvidia".into()],
        None,
        true,
    )
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

/// The torch build `gpukb plan` recommends for this machine (the same
/// conversion of the fingerprint, the same rules, the same command).
pub(super) fn torch_build(v: &View, _: &Finding) -> Vec<FixStep> {
    let machine = PlannerFacts::from_fingerprint(v.fp, "this machine");
    let p = plan(&[machine], &TorchSpec::default());
    match p.torch.recommended {
        Some(r) => vec![step(
            format!(
                "Install torch {}+{}, the build `gpukb plan` recommends here: {} (torch builds as of {})",
                r.version, r.variant, r.why, p.as_of
            ),
            &[install_torch(&r.command)],
            None,
            true,
        )],
        None => {
            let why = p
                .notes
                .first()
                .map(|n| n.text.clone())
                .unwrap_or_else(|| "no build in gpukb's tables runs on both this GPU and this driver".into());
            vec![step(
                format!("No torch build `gpukb plan` knows runs here ({why}): upgrade the driver first, or build torch from source for this GPU's compute capability"),
                &["gpukb plan --all   # every build and why it does not run".into()],
                None,
                false,
            )]
        }
    }
}

/// The driver branch that supports every GPU here (and runs CUDA `need`), in
/// the flavour they need; under WSL2 the Windows driver of that branch.
fn driver_for(v: &View, need: Option<CudaVersion>) -> Vec<FixStep> {
    let rec = match driver_recommendation(v, need) {
        Ok(r) => r,
        Err(e) => return vec![no_driver_step(&e)],
    };
    let runs = need
        .map(|n| format!(" and runs CUDA {n}"))
        .unwrap_or_default();
    let least = rec
        .min_release
        .as_ref()
        .map(|m| format!("; {} needs {} or later ({})", m.gpu, m.version, m.source))
        .unwrap_or_default();
    if Platform::of(v) == Platform::Wsl2 {
        return vec![windows_driver_step(&format!(
            ": a Windows driver of branch R{} or newer supports every GPU here{runs}",
            rec.branch
        ))];
    }
    vec![step(
        format!(
            "Install the R{} driver ({}; it supports every GPU here{runs}: {}{least})",
            rec.branch,
            rec.apt_package(),
            reasons(&rec)
        ),
        &[
            "sudo apt update".into(),
            format!("sudo apt install {}", rec.apt_package()),
            "sudo reboot".into(),
        ],
        None,
        true,
    )]
}

/// The driver branch that supports every GPU here.
pub(super) fn driver_branch(v: &View, _: &Finding) -> Vec<FixStep> {
    driver_for(v, torch_cuda(v))
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
    let mut s = driver_for(v, torch_cuda(v));
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
    let os =
        v.fp.host
            .os
            .value()
            .map(|o| o.to_ascii_lowercase())
            .unwrap_or_default();
    // Ubuntu's DKMS signs with shim-signed's MOK; Debian's DKMS with its own key.
    let key = if os.contains("ubuntu") {
        "/var/lib/shim-signed/mok/MOK.der"
    } else if os.contains("debian") {
        "/var/lib/dkms/mok.pub"
    } else {
        "/var/lib/shim-signed/mok/MOK.der   # Debian: /var/lib/dkms/mok.pub"
    };
    let enroll = step(
        "Enroll the DKMS signing key, then reboot",
        &[format!("sudo mokutil --import {key}"), "sudo reboot".into()],
        None,
        false,
    );
    let mut confirm = step(
        "At the next boot, in the blue MOK manager: Enroll MOK → Continue → Yes, and type the password you gave mokutil",
        &[],
        None,
        false,
    );
    confirm.runs_on = RunsOn::Firmware;
    let mut s = vec![enroll, confirm];
    // Canonical's signed modules exist only on Ubuntu, for the installed
    // branch and flavour (linux-modules-nvidia-<BRANCH>[-open]-<kernel>).
    let installed = v.fp.driver.version.value().map(|d| d.branch());
    let open = v.fp.driver.flavor.value().map(|f| f == "open");
    if os.contains("ubuntu") {
        if let (Some(b), Some(open)) = (installed, open) {
            s.push(step(
                format!(
                    "Or install Ubuntu's signed modules of the installed R{b} {} driver",
                    if open { "open" } else { "proprietary" }
                ),
                &[
                    format!(
                        "sudo apt install linux-modules-nvidia-{b}{}-$(uname -r)",
                        if open { "-open" } else { "" }
                    ),
                    "sudo reboot".into(),
                ],
                None,
                true,
            ));
        }
    }
    s
}

pub(super) fn nouveau_bound(v: &View, _: &Finding) -> Vec<FixStep> {
    let rec = match driver_recommendation(v, torch_cuda(v)) {
        Ok(r) => r,
        Err(e) => return vec![no_driver_step(&e)],
    };
    vec![step(
        format!("Blacklist nouveau and install the R{} driver ({}: {})", rec.branch, rec.apt_package(), reasons(&rec)),
        &["echo -e 'blacklist nouveau\\noptions nouveau modeset=0' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf".into(), "sudo update-initramfs -u".into(),
          format!("sudo apt install {}", rec.apt_package()), "sudo reboot".into()],
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
    let rec = match driver_recommendation(v, torch_cuda(v)) {
        Ok(r) if r.flavour == Flavour::Open => r,
        Ok(_) => {
            return vec![step(
                "A GPU here needs the open kernel modules and another needs the proprietary ones: no one driver flavour drives them all",
                &["nvidia-smi -L".into()],
                None,
                true,
            )]
        }
        Err(e) => return vec![no_driver_step(&e)],
    };
    vec![step(
        format!("Install the open kernel modules of R{}", rec.branch),
        &[
            format!("sudo apt install {}", rec.apt_package()),
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
