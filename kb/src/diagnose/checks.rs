//! Every check the doctor runs, as typed data: a stable name, the layer it
//! judges, its `kb/categories.tsv` label, the checks whose finding would
//! explain it (root cause over symptom), and a pure function over the
//! [`View`]. A check finds (one finding per GPU / env / library), clears the
//! machine with a sentence, or is undecided with the reason (a fact this
//! input could not observe is never a finding).

use super::view::{framework_key, View};
use super::{Affects, Evidence, Finding, Layer, Severity};
use gpukb_facts::compat::{self, DriverCompat, Outcome as ImageOutcome};
use gpukb_facts::{Observed, Source};

/// What a check concluded.
pub enum Outcome {
    Found(Vec<Finding>),
    Clear(String),
    Undecided(String),
}

/// One check.
pub struct Check {
    pub name: &'static str,
    pub layer: Layer,
    pub category: &'static str,
    /// Checks that, when found, explain this one (first found wins).
    pub explained_by: &'static [&'static str],
    /// One line: what it looks for.
    pub meaning: &'static str,
    pub run: fn(&View) -> Outcome,
}

/// Causes upstream of "the CUDA driver API does not work".
const CUDA_CAUSES: &[&str] = &[
    "no_nvidia_gpu_visible",
    "nouveau_bound",
    "secure_boot_blocks_module",
    "driver_not_built_for_running_kernel",
    "driver_not_installed",
    "driver_not_loaded",
    "open_module_required",
    "driver_branch_drops_gpu",
    "driver_userspace_mismatch",
    "container_ships_driver_libraries",
    "container_without_gpu",
    "wsl_libcuda_missing",
    "nvidia_uvm_not_loaded",
    "fabric_manager_not_running",
    "cuda_visible_devices_hides_gpus",
    "mig_without_instances",
    "gpu_memory_fault",
];

/// Every check, in chain order.
pub const CHECKS: &[Check] = &[
    Check { name: "no_nvidia_gpu_visible", layer: Layer::Hardware, category: "no_nvidia_gpu", explained_by: &["wsl_libcuda_missing"], meaning: "no NVIDIA GPU is visible on the PCI bus, to NVML or to CUDA", run: no_nvidia_gpu_visible },
    Check { name: "gpu_memory_fault", layer: Layer::Hardware, category: "ecc_row_remap", explained_by: &[], meaning: "a GPU reports uncorrectable ECC errors, failed or pending row remapping", run: gpu_memory_fault },
    Check { name: "thermal_or_power_throttling", layer: Layer::Hardware, category: "thermal_power_throttling", explained_by: &[], meaning: "a GPU's clocks are held down by a thermal or hardware power reason", run: throttling },
    Check { name: "pcie_link_degraded", layer: Layer::Hardware, category: "pcie_link_downtrained", explained_by: &[], meaning: "a GPU's PCIe link is narrower than its maximum, or slower under load", run: pcie_link_degraded },
    Check { name: "nouveau_bound", layer: Layer::KernelDriver, category: "nouveau_conflict", explained_by: &[], meaning: "the nouveau driver holds the GPU", run: nouveau_bound },
    Check { name: "secure_boot_blocks_module", layer: Layer::KernelDriver, category: "secure_boot_unsigned", explained_by: &["nouveau_bound"], meaning: "Secure Boot is on and the installed nvidia module is not loaded", run: secure_boot_blocks_module },
    Check { name: "driver_not_built_for_running_kernel", layer: Layer::KernelDriver, category: "driver_module_not_built_for_kernel", explained_by: &["nouveau_bound"], meaning: "another kernel has the nvidia module, the running one does not (DKMS did not rebuild)", run: driver_not_built_for_running_kernel },
    Check { name: "driver_not_installed", layer: Layer::KernelDriver, category: "driver_not_installed", explained_by: &["nouveau_bound"], meaning: "an NVIDIA GPU is present and no kernel has the nvidia module", run: driver_not_installed },
    Check { name: "driver_not_loaded", layer: Layer::KernelDriver, category: "driver_not_installed", explained_by: &["nouveau_bound", "secure_boot_blocks_module", "driver_not_built_for_running_kernel", "driver_not_installed", "container_without_gpu"], meaning: "an NVIDIA GPU is present but the nvidia kernel module is not loaded", run: driver_not_loaded },
    Check { name: "open_module_required", layer: Layer::KernelDriver, category: "open_kernel_module_required", explained_by: &[], meaning: "a Blackwell or Grace Hopper GPU runs the proprietary kernel module", run: open_module_required },
    Check { name: "driver_branch_drops_gpu", layer: Layer::KernelDriver, category: "driver_gpu_unsupported", explained_by: &[], meaning: "the driver branch does not support a GPU (legacy cut-off, or too old for Blackwell)", run: driver_branch_drops_gpu },
    Check { name: "driver_userspace_mismatch", layer: Layer::KernelDriver, category: "driver_lib_mismatch_reboot", explained_by: &["container_ships_driver_libraries"], meaning: "the loaded kernel module and the user-space driver libraries are different releases", run: driver_userspace_mismatch },
    Check { name: "nvidia_uvm_not_loaded", layer: Layer::KernelDriver, category: "nvidia_uvm_missing", explained_by: &[], meaning: "nvidia is loaded but nvidia_uvm (which CUDA needs) is not", run: nvidia_uvm_not_loaded },
    Check { name: "fabric_manager_not_running", layer: Layer::KernelDriver, category: "fabric_manager", explained_by: &[], meaning: "NVSwitches are present and cuInit says the system is not ready", run: fabric_manager_not_running },
    Check { name: "secure_boot_enabled", layer: Layer::KernelDriver, category: "secure_boot_unsigned", explained_by: &[], meaning: "Secure Boot is enabled (context)", run: secure_boot_enabled },
    Check { name: "in_container", layer: Layer::ContainerWsl, category: "container_no_gpu_runtime", explained_by: &[], meaning: "running inside a container (context)", run: in_container },
    Check { name: "wsl", layer: Layer::ContainerWsl, category: "wsl_driver", explained_by: &[], meaning: "running under WSL2 (context)", run: wsl },
    Check { name: "container_without_gpu", layer: Layer::ContainerWsl, category: "container_no_gpu_runtime", explained_by: &["no_nvidia_gpu_visible"], meaning: "a container was started without GPU access", run: container_without_gpu },
    Check { name: "container_ships_driver_libraries", layer: Layer::ContainerWsl, category: "container_image_driver_files", explained_by: &[], meaning: "the container image carries its own driver libraries, of another release than the host's module", run: container_ships_driver_libraries },
    Check { name: "wsl_libcuda_missing", layer: Layer::ContainerWsl, category: "wsl_libcuda_not_symlink", explained_by: &[], meaning: "under WSL2, libcuda from /usr/lib/wsl/lib is not found", run: wsl_libcuda_missing },
    Check { name: "cuda_visible_devices_hides_gpus", layer: Layer::CudaDriver, category: "cuda_visible_devices_wrong", explained_by: &[], meaning: "CUDA_VISIBLE_DEVICES is empty, -1 or names no existing GPU", run: cuda_visible_devices_hides_gpus },
    Check { name: "mig_without_instances", layer: Layer::CudaDriver, category: "mig_confusion", explained_by: &[], meaning: "MIG is enabled on a GPU with no GPU instances created", run: mig_without_instances },
    Check { name: "mig_enabled", layer: Layer::CudaDriver, category: "mig_confusion", explained_by: &[], meaning: "MIG mode is enabled, with instances (context)", run: mig_enabled },
    Check { name: "cuda_init_failed", layer: Layer::CudaDriver, category: "suspend_resume_driver_state", explained_by: CUDA_CAUSES, meaning: "cuInit did not return CUDA_SUCCESS", run: cuda_init_failed },
    Check { name: "driver_older_than_torch_cuda", layer: Layer::CudaDriver, category: "driver_too_old", explained_by: &["container_ships_driver_libraries", "driver_userspace_mismatch"], meaning: "the driver's CUDA version cannot run the CUDA version torch was built with", run: driver_older_than_torch_cuda },
    Check { name: "driver_older_than_framework_cuda", layer: Layer::CudaDriver, category: "driver_too_old", explained_by: &["container_ships_driver_libraries", "driver_userspace_mismatch", "driver_older_than_torch_cuda"], meaning: "the driver's CUDA version cannot run the CUDA version a JAX plugin, CuPy, TensorFlow, ONNX Runtime or TensorRT build targets", run: driver_older_than_framework_cuda },
    Check { name: "torch_library_missing", layer: Layer::CudaLibraries, category: "missing_runtime_lib", explained_by: &["jetson_torch_wheel_mismatch", "jetson_generic_aarch64_wheel"], meaning: "a CUDA library torch needs is not found by the loader", run: torch_library_missing },
    Check { name: "library_shadowed_by_ld_library_path", layer: Layer::CudaLibraries, category: "env_cuda_runtime_mismatch", explained_by: &[], meaning: "torch loads a CUDA library through LD_LIBRARY_PATH, not the copy its wheel pins", run: library_shadowed },
    Check { name: "onnxruntime_cuda_library_missing", layer: Layer::CudaLibraries, category: "missing_runtime_lib", explained_by: &[], meaning: "a CUDA library ONNX Runtime's CUDA execution provider needs is not found by the loader (it falls back to the CPU)", run: onnxruntime_cuda_library_missing },
    Check { name: "cuda_home_older_than_torch", layer: Layer::CudaLibraries, category: "cuda_home_mismatch", explained_by: &[], meaning: "CUDA_HOME (or /usr/local/cuda) is an older CUDA than torch's (extension builds break)", run: cuda_home_older_than_torch },
    Check { name: "duplicate_library_versions", layer: Layer::CudaLibraries, category: "cudnn_version_mismatch", explained_by: &[], meaning: "several versions of a CUDA library are installed", run: duplicate_library_versions },
    Check { name: "torch_cpu_only", layer: Layer::Framework, category: "cpu_only_wheel", explained_by: &[], meaning: "the torch install is a CPU-only build on a machine with an NVIDIA GPU", run: torch_cpu_only },
    Check { name: "jetson_torch_wheel_mismatch", layer: Layer::Framework, category: "jetson_jetpack_mismatch", explained_by: &[], meaning: "a Jetson torch wheel built for another JetPack", run: jetson_torch_wheel_mismatch },
    Check { name: "jetson_generic_aarch64_wheel", layer: Layer::Framework, category: "jetson_pip_wheel", explained_by: &[], meaning: "a generic PyPI aarch64 torch wheel on a Jetson", run: jetson_generic_aarch64_wheel },
    Check { name: "torch_pin_mismatch", layer: Layer::Framework, category: "cudnn_version_mismatch", explained_by: &["torch_library_missing", "library_shadowed_by_ld_library_path"], meaning: "installed nvidia-* wheels do not satisfy torch's pins", run: torch_pin_mismatch },
    Check { name: "jax_plugin_version_mismatch", layer: Layer::Framework, category: "jax_plugin_version_mismatch", explained_by: &[], meaning: "JAX's CUDA plugin (or its pjrt) is not jaxlib's release, so jaxlib does not use it and JAX runs on the CPU", run: jax_plugin_version_mismatch },
    Check { name: "torch_lacks_gpu_arch", layer: Layer::KernelImage, category: "arch_mismatch_wheel", explained_by: &["torch_cpu_only"], meaning: "a GPU can run neither the SASS nor the PTX of the installed torch", run: torch_lacks_gpu_arch },
    Check { name: "extension_lacks_gpu_arch", layer: Layer::KernelImage, category: "arch_mismatch_prebuilt", explained_by: &["torch_cpu_only", "torch_lacks_gpu_arch"], meaning: "a CUDA extension (flash-attn, xformers, vLLM, bitsandbytes…) has no kernel image a GPU runs", run: extension_lacks_gpu_arch },
    Check { name: "probe_kernels_fail", layer: Layer::CudaDriver, category: "xid_hardware", explained_by: CUDA_CAUSES, meaning: "gpukb probe's kernels failed to run or computed wrong results on a GPU", run: probe_kernels_fail },
    Check { name: "probe_loads_disagree", layer: Layer::KernelImage, category: "arch_mismatch_prebuilt", explained_by: &[], meaning: "the driver loaded probe images differently than the compatibility engine predicts", run: probe_loads_disagree },
    Check { name: "probe_throughput_low", layer: Layer::Hardware, category: "thermal_power_throttling", explained_by: &["thermal_or_power_throttling", "pcie_link_degraded", "gpu_memory_fault"], meaning: "a measured copy/FLOP/PCIe rate is far below its reference", run: probe_throughput_low },
    Check { name: "on_jetson", layer: Layer::Jetson, category: "jetson_jetpack_mismatch", explained_by: &[], meaning: "this is a Jetson (context)", run: on_jetson },
    Check { name: "jetson_partial_upgrade", layer: Layer::Jetson, category: "jetson_jetpack_mismatch", explained_by: &[], meaning: "L4T/JetPack sources disagree: a partial upgrade", run: jetson_partial_upgrade },
];

/// Checks that describe the setting, never a fault.
pub const CONTEXT: &[&str] = &[
    "in_container",
    "wsl",
    "on_jetson",
    "mig_enabled",
    "secure_boot_enabled",
];

/// Whether `name` is a check (entries' `[[conditions]] when` must name one).
pub fn is_check(name: &str) -> bool {
    CHECKS.iter().any(|c| c.name == name)
}

fn finding(
    suffix: Option<String>,
    title: String,
    severity: Severity,
    evidence: Vec<Evidence>,
) -> Finding {
    Finding {
        id: suffix.unwrap_or_default(),
        check: String::new(),
        title,
        severity,
        layer: Layer::Hardware,
        root_cause: true,
        explained_by: None,
        category: String::new(),
        kb_entries: Vec::new(),
        affects: vec![Affects::host()],
        evidence,
        confirm: Vec::new(),
        fixes: Vec::new(),
    }
}

/// Builder sugar.
trait Also {
    fn confirm(self, c: &[&str]) -> Self;
    fn affects(self, a: Vec<Affects>) -> Self;
}
impl Also for Finding {
    fn confirm(mut self, c: &[&str]) -> Self {
        self.confirm = c.iter().map(|s| s.to_string()).collect();
        self
    }
    fn affects(mut self, a: Vec<Affects>) -> Self {
        self.affects = a;
        self
    }
}

fn found(f: Finding) -> Outcome {
    Outcome::Found(vec![f])
}

/// Fills in finding ids: `check` or `check:suffix`.
pub(super) fn finalize_id(check: &str, f: &mut Finding) {
    f.id = if f.id.is_empty() {
        check.to_string()
    } else {
        format!("{check}:{}", f.id)
    };
}

// ---- hardware ----

fn no_nvidia_gpu_visible(v: &View) -> Outcome {
    if v.is_jetson() {
        return Outcome::Clear("a Jetson's integrated GPU".into());
    }
    let gpus = v.gpus();
    if !gpus.is_empty() {
        return Outcome::Clear(format!("{} GPU(s) visible", gpus.len()));
    }
    if v.is_wsl() {
        return Outcome::Undecided(
            "WSL2 shows the GPU through /dev/dxg, not on the PCI bus".into(),
        );
    }
    let Some(pci) = v.pci_gpus() else {
        return Outcome::Undecided("the PCI bus was not observed and no GPU was listed".into());
    };
    if !pci.is_empty() {
        return Outcome::Clear(format!("{} NVIDIA GPU(s) on the PCI bus", pci.len()));
    }
    let src = v.fp.pci.source().clone();
    let mut ev = vec![Evidence::new(
        "no NVIDIA (10de) display or 3D controller on the PCI bus",
        &src,
    )];
    match v.expects_gpu() {
        Some(why) => {
            ev.push(Evidence::new(
                why.clone(),
                &Source::Derived {
                    from: "python environments, env".into(),
                },
            ));
            found(
                finding(
                    None,
                    format!("No NVIDIA GPU is visible, but {why}"),
                    Severity::Failure,
                    ev,
                )
                .confirm(&["lspci -nn | grep -i nvidia", "ls /dev/nvidia*"]),
            )
        }
        None => found(finding(
            None,
            "No NVIDIA GPU visible, and nothing here expects one".into(),
            Severity::Info,
            ev,
        )),
    }
}

fn per_gpu<F>(v: &View, what: &str, mut f: F) -> Outcome
where
    F: FnMut(&gpukb_facts::fingerprint::NvmlGpu, &Source) -> Option<(String, Severity)>,
{
    let nvml = match &v.fp.nvml {
        Observed::Found { value, source } => (value, source),
        o => return Outcome::Undecided(format!("{what}: NVML {}", o.why_not().unwrap_or(""))),
    };
    let mut out = Vec::new();
    for g in &nvml.0.gpus {
        if let Some((title, sev)) = f(g, nvml.1) {
            out.push(
                finding(
                    Some(format!("gpu{}", g.index)),
                    title.clone(),
                    sev,
                    vec![Evidence::new(title, nvml.1)],
                )
                .affects(vec![Affects::gpu(g.index, &g.uuid)]),
            );
        }
    }
    if out.is_empty() {
        Outcome::Clear(format!("{what}: none of {} GPU(s)", nvml.0.gpus.len()))
    } else {
        Outcome::Found(out)
    }
}

fn gpu_memory_fault(v: &View) -> Outcome {
    per_gpu(v, "memory faults", |g, _| {
        let r = g.remapped_rows.as_ref();
        if r.is_some_and(|r| r.failed) {
            return Some((
                format!(
                    "GPU {} ({}): row remapping failed; the GPU needs service",
                    g.index, g.name
                ),
                Severity::Failure,
            ));
        }
        if r.is_some_and(|r| r.pending) || g.retired_pages_pending == Some(true) {
            return Some((
                format!(
                    "GPU {} ({}): a row remap / page retirement is pending until the GPU is reset",
                    g.index, g.name
                ),
                Severity::Warning,
            ));
        }
        match g.ecc_uncorrected_aggregate {
            Some(n) if n > 0 => Some((
                format!(
                    "GPU {} ({}): {n} uncorrectable ECC errors recorded",
                    g.index, g.name
                ),
                Severity::Warning,
            )),
            _ => None,
        }
    })
    .with_confirm(&["nvidia-smi -q -d ROW_REMAPPER,ECC"])
}

fn throttling(v: &View) -> Outcome {
    const BAD: &[&str] = &[
        "HW_SLOWDOWN",
        "HW_THERMAL_SLOWDOWN",
        "SW_THERMAL_SLOWDOWN",
        "HW_POWER_BRAKE_SLOWDOWN",
    ];
    per_gpu(v, "throttling", |g, _| {
        let reasons = g.throttle_reasons.as_ref()?;
        let bad: Vec<&str> = reasons
            .iter()
            .map(String::as_str)
            .filter(|r| BAD.contains(r))
            .collect();
        (!bad.is_empty()).then(|| {
            (
                format!(
                    "GPU {} ({}) is throttled: {}{}",
                    g.index,
                    g.name,
                    bad.join(", "),
                    g.temperature_c
                        .map(|t| format!(" at {t} °C"))
                        .unwrap_or_default()
                ),
                Severity::Warning,
            )
        })
    })
    .with_confirm(&["nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER"])
}

fn pcie_link_degraded(v: &View) -> Outcome {
    per_gpu(v, "PCIe link", |g, _| {
        let idle = g
            .throttle_reasons
            .as_ref()
            .is_some_and(|r| r.iter().any(|x| x == "GPU_IDLE"));
        match (g.pcie_width_current, g.pcie_width_max) {
            (Some(c), Some(m)) if c < m => {
                return Some((
                    format!("GPU {} ({}): PCIe link x{c} of x{m}", g.index, g.name),
                    Severity::Warning,
                ));
            }
            _ => {}
        }
        match (g.pcie_gen_current, g.pcie_gen_max) {
            (Some(c), Some(m)) if c < m && !idle => Some((
                format!(
                    "GPU {} ({}): PCIe Gen{c} of Gen{m} while not idle",
                    g.index, g.name
                ),
                Severity::Warning,
            )),
            (Some(c), Some(m)) if c < m => Some((
                format!(
                    "GPU {} ({}) idles at PCIe Gen{c} of Gen{m} (normal power saving)",
                    g.index, g.name
                ),
                Severity::Info,
            )),
            _ => None,
        }
    })
    .with_confirm(&["nvidia-smi -q -d PCIE   # under load: the generation rises when busy"])
}

trait WithConfirm {
    fn with_confirm(self, c: &[&str]) -> Self;
}
impl WithConfirm for Outcome {
    fn with_confirm(self, c: &[&str]) -> Self {
        match self {
            Outcome::Found(v) => Outcome::Found(v.into_iter().map(|f| f.confirm(c)).collect()),
            o => o,
        }
    }
}

// ---- kernel driver ----

fn nvidia_loaded(v: &View) -> Result<bool, String> {
    if v.is_jetson() {
        return Err("a Jetson's iGPU is driven by nvgpu".into());
    }
    match v.module_loaded("nvidia") {
        Some(l) => Ok(l),
        None => Err(format!(
            "/proc/modules was not observed ({})",
            v.fp.driver.modules.why_not().unwrap_or("")
        )),
    }
}

fn nouveau_bound(v: &View) -> Outcome {
    let pci_nouveau = v.pci_gpus().and_then(|g| {
        g.into_iter()
            .find(|p| p.driver.value().is_some_and(|d| d == "nouveau"))
            .cloned()
    });
    let loaded = v.module_loaded("nouveau");
    if let Some(p) = pci_nouveau {
        return found(
            finding(
                None,
                format!("nouveau drives the NVIDIA GPU at {}", p.address),
                Severity::Failure,
                vec![Evidence::new(
                    format!("{} is bound to nouveau", p.address),
                    p.driver.source(),
                )],
            )
            .confirm(&["lsmod | grep nouveau", "lspci -k -d 10de:"]),
        );
    }
    match (loaded, v.module_loaded("nvidia")) {
        (Some(true), Some(false)) => found(
            finding(
                None,
                "The nouveau driver is loaded and nvidia is not".into(),
                Severity::Failure,
                vec![Evidence::new(
                    "nouveau is in /proc/modules, nvidia is not",
                    v.modules_source(),
                )],
            )
            .confirm(&["lsmod | grep -E 'nouveau|nvidia'"]),
        ),
        (Some(_), _) => Outcome::Clear("nouveau does not hold the GPU".into()),
        (None, _) => Outcome::Undecided("/proc/modules was not observed".into()),
    }
}

/// The running kernel's NVIDIA modules and the other kernels that have them.
fn installed(v: &View) -> Result<(Vec<String>, Vec<String>, Source), String> {
    match &v.fp.driver.installed_modules {
        Observed::Found { value, source } => {
            let Some(run) = value.iter().find(|k| k.running) else {
                return Err("the running kernel has no /lib/modules directory".into());
            };
            let others = value
                .iter()
                .filter(|k| !k.running && !k.nvidia.is_empty())
                .map(|k| k.kernel.clone())
                .collect();
            Ok((run.nvidia.clone(), others, source.clone()))
        }
        o => Err(format!("/lib/modules: {}", o.why_not().unwrap_or(""))),
    }
}

fn gpu_without_module(v: &View) -> Result<bool, String> {
    if nvidia_loaded(v)? {
        return Ok(false);
    }
    Ok(v.pci_gpus().is_none_or(|g| !g.is_empty()))
}

fn secure_boot_blocks_module(v: &View) -> Outcome {
    match gpu_without_module(v) {
        Err(e) => return Outcome::Undecided(e),
        Ok(false) => {
            return Outcome::Clear("the nvidia module is loaded (or there is no GPU)".into())
        }
        Ok(true) => {}
    }
    let sb = match &v.fp.host.secure_boot {
        Observed::Found { value, source } => (*value, source.clone()),
        o => {
            return Outcome::Undecided(format!("Secure Boot state: {}", o.why_not().unwrap_or("")))
        }
    };
    if !sb.0 {
        return Outcome::Clear("Secure Boot is disabled".into());
    }
    match installed(v) {
        Ok((run, _, src)) if !run.is_empty() => found(finding(None,
            "Secure Boot is on and the installed nvidia module is not loaded: the kernel refuses an unsigned (DKMS-built) module".into(),
            Severity::Failure,
            vec![Evidence::new("UEFI Secure Boot is enabled", &sb.1),
                 Evidence::new(format!("the running kernel has {} but nvidia is not loaded", run.join(", ")), &src),
                 Evidence::new("nvidia is not in /proc/modules", v.modules_source())])
            .confirm(&["mokutil --sb-state", "sudo modprobe nvidia   # 'Key was rejected by service'", "sudo dmesg | grep -i -E 'module verification|lockdown'"])),
        Ok(_) => Outcome::Clear("no nvidia module is installed for the running kernel".into()),
        Err(e) => Outcome::Undecided(e),
    }
}

fn driver_not_built_for_running_kernel(v: &View) -> Outcome {
    match gpu_without_module(v) {
        Err(e) => return Outcome::Undecided(e),
        Ok(false) => {
            return Outcome::Clear("the nvidia module is loaded (or there is no GPU)".into())
        }
        Ok(true) => {}
    }
    match installed(v) {
        Ok((run, others, src)) if run.is_empty() && !others.is_empty() => {
            let kernel = v.fp.host.kernel.value().cloned().unwrap_or_default();
            found(finding(None,
                format!("The running kernel {kernel} has no nvidia module; {} has one (DKMS did not rebuild it)", others.join(", ")),
                Severity::Failure,
                vec![Evidence::new(format!("modules.dep of {kernel} lists no nvidia module; {} does", others.join(", ")), &src)])
                .confirm(&["dkms status", "ls /lib/modules/$(uname -r)/updates/dkms/"]))
        }
        Ok(_) => {
            Outcome::Clear("the running kernel has the nvidia module, or no kernel does".into())
        }
        Err(e) => Outcome::Undecided(e),
    }
}

fn driver_not_installed(v: &View) -> Outcome {
    match gpu_without_module(v) {
        Err(e) => return Outcome::Undecided(e),
        Ok(false) => {
            return Outcome::Clear("the nvidia module is loaded (or there is no GPU)".into())
        }
        Ok(true) => {}
    }
    if v.container().is_some() {
        return Outcome::Clear("inside a container the host provides the driver".into());
    }
    match installed(v) {
        Ok((run, others, src)) if run.is_empty() && others.is_empty() => found(
            finding(
                None,
                "An NVIDIA GPU is present but no NVIDIA driver is installed for any kernel".into(),
                Severity::Failure,
                vec![
                    Evidence::new("no nvidia module in any /lib/modules/*/modules.dep", &src),
                    Evidence::new("nvidia is not in /proc/modules", v.modules_source()),
                ],
            )
            .confirm(&[
                "lspci -nnk -d 10de:",
                "ls /lib/modules/$(uname -r)/updates/dkms/",
            ]),
        ),
        Ok(_) => Outcome::Clear("an nvidia module is installed".into()),
        Err(e) => Outcome::Undecided(e),
    }
}

fn driver_not_loaded(v: &View) -> Outcome {
    match gpu_without_module(v) {
        Err(e) => Outcome::Undecided(e),
        Ok(false) => Outcome::Clear("the nvidia module is loaded (or there is no GPU)".into()),
        Ok(true) if v.container().is_some() => {
            Outcome::Clear("a container shows the host's modules; see container checks".into())
        }
        Ok(true) => {
            let why = v
                .pci_gpus()
                .and_then(|g| {
                    g.first()
                        .map(|p| format!("an NVIDIA GPU is at {}", p.address))
                })
                .or_else(|| v.expects_gpu())
                .unwrap_or_else(|| "an NVIDIA GPU is expected".into());
            found(
                finding(
                    None,
                    format!("The nvidia kernel module is not loaded ({why})"),
                    Severity::Failure,
                    vec![Evidence::new(
                        "nvidia is not in /proc/modules",
                        v.modules_source(),
                    )],
                )
                .confirm(&[
                    "lsmod | grep nvidia",
                    "sudo modprobe nvidia && sudo dmesg | tail",
                ]),
            )
        }
    }
}

fn open_module_required(v: &View) -> Outcome {
    let flavor = match &v.fp.driver.flavor {
        Observed::Found { value, source } => (value.clone(), source.clone()),
        o => return Outcome::Undecided(format!("module flavour: {}", o.why_not().unwrap_or(""))),
    };
    let gpus = v.gpus();
    let needs: Vec<_> = gpus
        .iter()
        .filter(|g| {
            g.cc.is_some_and(|c| compat::needs_open_modules(c.pair(), &g.name))
        })
        .collect();
    let pci_blackwell = v
        .pci_gpus()
        .map(|g| {
            g.iter()
                .filter(|p| p.device.is_some_and(is_blackwell_device_id))
                .count()
        })
        .unwrap_or(0);
    if needs.is_empty() && pci_blackwell == 0 {
        return Outcome::Clear("no GPU here needs the open kernel modules".into());
    }
    if flavor.0 == "open" {
        return Outcome::Clear("the open kernel module is loaded".into());
    }
    let which = needs
        .first()
        .map(|g| g.name.clone())
        .unwrap_or_else(|| "a Blackwell GPU (by PCI device id)".into());
    found(
        finding(
            None,
            format!("{which} needs NVIDIA's open kernel modules; the proprietary module is loaded"),
            Severity::Failure,
            vec![Evidence::new(
                format!("the kernel module is {}", flavor.0),
                &flavor.1,
            )],
        )
        .confirm(&[
            "cat /proc/driver/nvidia/version   # 'Open Kernel Module' when open",
            "modinfo nvidia | grep license   # Dual MIT/GPL when open",
        ]),
    )
}

/// Blackwell PCI device ids: GB100/GB102 (0x29xx), GB20x (0x2Bxx–0x2Fxx) (PCI ID repository, NVIDIA).
fn is_blackwell_device_id(id: u16) -> bool {
    (0x2900..0x3000).contains(&id) && !(0x2A00..0x2B00).contains(&id)
}

fn driver_branch_drops_gpu(v: &View) -> Outcome {
    let Some(drv) = v.fp.driver.version.value() else {
        return Outcome::Undecided(format!(
            "driver version: {}",
            v.fp.driver.version.why_not().unwrap_or("")
        ));
    };
    let gpus = v.gpus();
    if gpus.is_empty() {
        return Outcome::Undecided("no GPU compute capability observed".into());
    }
    let mut out = Vec::new();
    for g in &gpus {
        if let Some(cc) = g.cc {
            if let Err(why) = compat::branch_supports_gpu(drv.branch(), cc.pair()) {
                out.push(
                    finding(
                        Some(format!("gpu{}", g.index)),
                        format!("{}: {why}", g.name),
                        Severity::Failure,
                        vec![
                            Evidence::new(format!("driver {drv}"), v.fp.driver.version.source()),
                            Evidence::new(format!("{} is CC {cc}", g.name), &g.source),
                        ],
                    )
                    .affects(vec![Affects::gpu(g.index, &g.uuid)]),
                );
            }
        }
    }
    if out.is_empty() {
        Outcome::Clear(format!("R{} supports every GPU here", drv.branch()))
    } else {
        Outcome::Found(out)
    }
}

/// Whether the driver libraries are of another *branch* than the module (an
/// image that brought its own, e.g. 535 libraries on a 580 host) rather than
/// another release of the same branch (an upgrade waiting for a reboot).
fn other_branch(v: &View) -> bool {
    let Some(module) = v.fp.driver.version.value() else {
        return false;
    };
    [&v.fp.driver.libcuda, &v.fp.driver.libnvidia_ml]
        .iter()
        .any(|l| {
            l.value()
                .and_then(|f| f.version.as_deref())
                .and_then(|x| x.split('.').next()?.parse::<u32>().ok())
                .is_some_and(|b| b != module.branch())
        })
}

/// The first driver library whose release differs from the loaded module's,
/// as a sentence and its source.
fn lib_release_differs(v: &View) -> Option<(String, Source)> {
    let module = v.fp.driver.version.value()?;
    if !matches!(v.fp.driver.version.source(), Source::File { .. }) {
        return None; // only the kernel's own files say what is loaded
    }
    for lib in [&v.fp.driver.libcuda, &v.fp.driver.libnvidia_ml] {
        if let Observed::Found { value, source } = lib {
            if let Some(ver) = &value.version {
                if ver.contains('.') && ver != module.as_str() {
                    return Some((
                        format!(
                            "{} is {ver}, the loaded kernel module is {module}",
                            value.real_path
                        ),
                        source.clone(),
                    ));
                }
            }
        }
    }
    None
}

fn nvml_mismatch(v: &View) -> Option<(String, Source)> {
    match &v.fp.nvml {
        Observed::Failed { error, source } if error.to_lowercase().contains("mismatch") => {
            Some((error.clone(), source.clone()))
        }
        _ => None,
    }
}

fn driver_userspace_mismatch(v: &View) -> Outcome {
    if v.is_jetson() {
        return Outcome::Clear("Jetson".into());
    }
    let diff = lib_release_differs(v);
    let nvml = nvml_mismatch(v);
    if diff.is_none() && nvml.is_none() {
        return if v.fp.driver.version.is_found() && v.fp.driver.libcuda.is_found() {
            Outcome::Clear("the kernel module and libcuda are the same release".into())
        } else {
            Outcome::Undecided("kernel module or libcuda version not observed".into())
        };
    }
    let mut ev = Vec::new();
    if let Some((f, s)) = &diff {
        ev.push(Evidence::new(f.clone(), s));
    }
    if let Some((f, s)) = &nvml {
        ev.push(Evidence::new(f.clone(), s));
    }
    found(finding(None, "The user-space driver was upgraded under the loaded kernel module: Driver/library version mismatch until reboot".into(), Severity::Failure, ev)
        .confirm(&["cat /proc/driver/nvidia/version", "ls -l /usr/lib/x86_64-linux-gnu/libcuda.so.*", "nvidia-smi"]))
}

fn nvidia_uvm_not_loaded(v: &View) -> Outcome {
    match nvidia_loaded(v) {
        Err(e) => Outcome::Undecided(e),
        Ok(false) => Outcome::Clear("nvidia is not loaded (another check covers that)".into()),
        Ok(true) => match v.module_loaded("nvidia_uvm") {
            Some(true) => Outcome::Clear("nvidia_uvm is loaded".into()),
            _ if v.container().is_some() && v.fp.driver.device_nodes.value().is_some_and(|d| d.iter().any(|n| n == "/dev/nvidia-uvm")) => {
                Outcome::Clear("/dev/nvidia-uvm is present in the container".into())
            }
            _ => found(finding(None, "nvidia is loaded but nvidia_uvm is not: CUDA cannot start (NVML and nvidia-smi still work)".into(), Severity::Failure,
                vec![Evidence::new("nvidia_uvm is not in /proc/modules", v.modules_source())])
                .confirm(&["lsmod | grep nvidia_uvm", "ls -l /dev/nvidia-uvm"])),
        },
    }
}

fn init_result(v: &View) -> Result<(String, Source), String> {
    match &v.fp.cuda {
        Observed::Found { value, .. } => match &value.init {
            Observed::Found { value, source } => Ok((value.clone(), source.clone())),
            o => Err(format!("cuInit: {}", o.why_not().unwrap_or(""))),
        },
        o => Err(format!("CUDA driver API: {}", o.why_not().unwrap_or(""))),
    }
}

fn fabric_manager_not_running(v: &View) -> Outcome {
    let n = v.nvswitches();
    if v.fp.pci.value().is_none() {
        return Outcome::Undecided("the PCI bus was not observed".into());
    }
    if n == 0 {
        return Outcome::Clear("no NVSwitch on the PCI bus".into());
    }
    match init_result(v) {
        Ok((r, s)) if r == "CUDA_ERROR_SYSTEM_NOT_READY" => found(finding(None,
            format!("{n} NVSwitches and cuInit returns CUDA_ERROR_SYSTEM_NOT_READY: nvidia-fabricmanager is not running (or not the driver's version)"),
            Severity::Failure,
            vec![Evidence::new(format!("{n} NVIDIA NVSwitch bridges on the PCI bus"), v.fp.pci.source()), Evidence::new(format!("cuInit returned {r}"), &s)])
            .confirm(&["systemctl status nvidia-fabricmanager", "nvidia-smi -q | grep -A2 Fabric"])),
        Ok(_) => Outcome::Clear("cuInit is not waiting for the fabric".into()),
        Err(e) => Outcome::Undecided(e),
    }
}

fn secure_boot_enabled(v: &View) -> Outcome {
    match &v.fp.host.secure_boot {
        Observed::Found {
            value: true,
            source,
        } => found(finding(
            None,
            "Secure Boot is enabled".into(),
            Severity::Info,
            vec![Evidence::new("UEFI SecureBoot variable is 1", source)],
        )),
        Observed::Found { .. } => Outcome::Clear("Secure Boot is disabled".into()),
        Observed::Absent { .. } => Outcome::Clear("not booted with UEFI: no Secure Boot".into()),
        o => Outcome::Undecided(o.why_not().unwrap_or("").to_string()),
    }
}

// ---- container / WSL ----

fn in_container(v: &View) -> Outcome {
    match &v.fp.host.container {
        Observed::Found { value, source } => found(finding(
            None,
            format!("Running inside a container ({value})"),
            Severity::Info,
            vec![Evidence::new(format!("container runtime {value}"), source)],
        )),
        Observed::Absent { .. } => Outcome::Clear("not in a container".into()),
        o => Outcome::Undecided(o.why_not().unwrap_or("").to_string()),
    }
}

fn wsl(v: &View) -> Outcome {
    match &v.fp.host.wsl {
        Observed::Found { value, source } => found(finding(
            None,
            format!("Running under {value}"),
            Severity::Info,
            vec![Evidence::new(value.clone(), source)],
        )),
        Observed::Absent { .. } => Outcome::Clear("not WSL".into()),
        o => Outcome::Undecided(o.why_not().unwrap_or("").to_string()),
    }
}

fn container_without_gpu(v: &View) -> Outcome {
    let Some(c) = v.container() else {
        return Outcome::Clear("not in a container".into());
    };
    let nodes = v.fp.driver.device_nodes.value().map(|d| {
        d.iter()
            .any(|n| n.starts_with("/dev/nvidia") && n != "/dev/nvidia-caps")
    });
    let libcuda_absent = v.fp.driver.libcuda.is_absent();
    if nodes == Some(true) || !libcuda_absent {
        return Outcome::Clear("the container has NVIDIA device nodes or driver libraries".into());
    }
    if nodes.is_none() {
        return Outcome::Undecided("/dev was not observed".into());
    }
    let nvd = v.env("NVIDIA_VISIBLE_DEVICES");
    let Some(why) = v
        .expects_gpu()
        .or_else(|| nvd.map(|x| format!("NVIDIA_VISIBLE_DEVICES={x}")))
    else {
        return Outcome::Clear("nothing in this container expects a GPU".into());
    };
    let mut ev = vec![
        Evidence::new(
            "no /dev/nvidia* device nodes",
            v.fp.driver.device_nodes.source(),
        ),
        Evidence::new("libcuda.so.1 is not found", v.fp.driver.libcuda.source()),
        Evidence::new(
            why,
            &Source::Derived {
                from: "python environments, env".into(),
            },
        ),
    ];
    if let Some(x) = nvd {
        ev.push(Evidence::new(
            format!("NVIDIA_VISIBLE_DEVICES={x}"),
            &Source::Env {
                var: "NVIDIA_VISIBLE_DEVICES".into(),
            },
        ));
    }
    found(finding(None, format!("This {c} container was started without GPU access (no /dev/nvidia*, no driver libraries)"), Severity::Failure, ev)
        .confirm(&["ls -l /dev/nvidia*", "docker inspect <container> | grep -i -A3 DeviceRequests"]))
}

fn container_ships_driver_libraries(v: &View) -> Outcome {
    if v.container().is_none() {
        return Outcome::Clear("not in a container".into());
    }
    if lib_release_differs(v).is_some() && !other_branch(v) {
        return Outcome::Clear("the libraries are the host's branch (an upgrade pending a reboot, not the image's own)".into());
    }
    match lib_release_differs(v) {
        Some((fact, src)) => {
            let mut ev = vec![Evidence::new(fact, &src)];
            if let Some((f, s)) = nvml_mismatch(v) {
                ev.push(Evidence::new(f, &s));
            }
            found(finding(None, "The container image ships its own NVIDIA driver libraries, of another release than the host's kernel module".into(), Severity::Failure, ev)
                .confirm(&["ls -l /usr/lib/x86_64-linux-gnu/libcuda.so* /usr/lib/x86_64-linux-gnu/libnvidia-ml.so*", "cat /proc/driver/nvidia/version"]))
        }
        None if v.fp.driver.libcuda.is_found() && v.fp.driver.version.is_found() => {
            Outcome::Clear("the container's libcuda matches the host module".into())
        }
        None => Outcome::Undecided("libcuda or the module version not observed".into()),
    }
}

fn wsl_libcuda_missing(v: &View) -> Outcome {
    if !v.is_wsl() {
        return Outcome::Clear("not WSL".into());
    }
    match &v.fp.driver.libcuda {
        Observed::Found { .. } => Outcome::Clear("libcuda is found".into()),
        Observed::Absent { source, note } => found(finding(None, "Under WSL2 libcuda.so.1 is not found: /usr/lib/wsl/lib is missing or not in the loader's path".into(), Severity::Failure,
            vec![Evidence::new(note.clone(), source)])
            .confirm(&["ls -l /usr/lib/wsl/lib/", "ldconfig -p | grep libcuda"])),
        o => Outcome::Undecided(o.why_not().unwrap_or("").to_string()),
    }
}

// ---- CUDA driver API ----

fn cuda_visible_devices_hides_gpus(v: &View) -> Outcome {
    let Some(val) = v.env("CUDA_VISIBLE_DEVICES") else {
        return Outcome::Clear("CUDA_VISIBLE_DEVICES is not set".into());
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
        None => Outcome::Clear(format!("CUDA_VISIBLE_DEVICES={val} names existing GPUs")),
    }
}

fn mig_without_instances(v: &View) -> Outcome {
    per_gpu(v, "MIG", |g, _| match (g.mig_enabled, g.mig_instances) {
        (Some(true), Some(0)) => Some((
            format!(
                "GPU {} ({}) has MIG enabled and no GPU instances: CUDA sees no device on it",
                g.index, g.name
            ),
            Severity::Failure,
        )),
        _ => None,
    })
    .with_confirm(&["nvidia-smi mig -lgi"])
}

fn mig_enabled(v: &View) -> Outcome {
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

fn cuda_init_failed(v: &View) -> Outcome {
    match init_result(v) {
        Ok((r, _)) if r == "CUDA_SUCCESS" => Outcome::Clear("cuInit returned CUDA_SUCCESS".into()),
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
        Err(e) => Outcome::Undecided(e),
    }
}

fn driver_older_than_torch_cuda(v: &View) -> Outcome {
    let Some((drv, src)) = v.driver_cuda() else {
        return Outcome::Undecided("the driver's CUDA version was not observed".into());
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
        Outcome::Clear(format!(
            "the driver (CUDA {drv}) runs every torch build here"
        ))
    } else {
        Outcome::Found(out)
    }
}

// ---- CUDA libraries ----

const CUDA_LIB_PREFIXES: &[&str] = &[
    "libcud",
    "libcublas",
    "libnccl",
    "libcufft",
    "libcurand",
    "libcusparse",
    "libcusolver",
    "libnvrtc",
    "libnvJitLink",
    "libcufile",
    "libnvshmem",
];

fn torch_library_missing(v: &View) -> Outcome {
    let mut out = Vec::new();
    let mut any = false;
    for (e, t) in v.torches() {
        if t.loads.is_empty() {
            continue;
        }
        any = true;
        let missing: Vec<&str> = t
            .loads
            .iter()
            .filter(|l| {
                l.path.is_none() && CUDA_LIB_PREFIXES.iter().any(|p| l.soname.starts_with(p))
            })
            .map(|l| l.soname.as_str())
            .collect();
        if !missing.is_empty() {
            let sev = if v.is_active(e) {
                Severity::Failure
            } else {
                Severity::Warning
            };
            out.push(finding(Some(e.site_packages.clone()), format!("torch {} needs {} and the loader finds no copy", t.version, missing.join(", ")), sev,
                vec![Evidence::new(format!("{} resolve nowhere (RPATH, LD_LIBRARY_PATH, ld.so.cache, default dirs)", missing.join(", ")), &t.source)])
                .affects(vec![Affects::env(&e.site_packages)])
                .confirm(&["python3 -c 'import torch'", "pip list 2>/dev/null | grep nvidia-"]));
        }
    }
    match (any, out.is_empty()) {
        (false, _) => Outcome::Undecided("no torch with resolved libraries".into()),
        (true, true) => Outcome::Clear("every CUDA library torch needs resolves".into()),
        _ => Outcome::Found(out),
    }
}

fn library_shadowed(v: &View) -> Outcome {
    let mut out = Vec::new();
    for (e, t) in v.torches() {
        for l in &t.loads {
            if !l.via.contains("LD_LIBRARY_PATH") || l.path.is_none() {
                continue;
            }
            let family = l.soname.split(".so").next().unwrap_or("");
            let pinned = e.nvidia_wheels.iter().find(|w| {
                let n = w.name.to_lowercase();
                family
                    .trim_start_matches("lib")
                    .split(|c: char| !c.is_ascii_alphabetic())
                    .next()
                    .is_some_and(|f| !f.is_empty() && n.contains(&f.to_lowercase()))
            });
            let path = l.path.clone().unwrap_or_default();
            let title = match (pinned, &l.version) {
                (Some(w), Some(ver)) if !ver.starts_with(&w.version) && !w.version.starts_with(ver.as_str()) => format!("torch loads {} {ver} from LD_LIBRARY_PATH ({path}), not the {} {} wheel it pins", l.soname, w.name, w.version),
                (Some(_), _) => continue,
                (None, _) => format!("torch loads {} from LD_LIBRARY_PATH ({path})", l.soname),
            };
            out.push(finding(Some(l.soname.clone()), title.clone(), Severity::Warning, vec![Evidence::new(title, &Source::Env { var: "LD_LIBRARY_PATH".into() })])
                .affects(vec![Affects::library(&path), Affects::env(&e.site_packages)])
                .confirm(&["echo $LD_LIBRARY_PATH", "LD_DEBUG=libs python3 -c 'import torch' 2>&1 | grep -E 'cudnn|cublas|nccl' | head"]));
        }
    }
    if out.is_empty() {
        Outcome::Clear("no torch library comes from LD_LIBRARY_PATH against its pin".into())
    } else {
        Outcome::Found(out)
    }
}

fn cuda_home_older_than_torch(v: &View) -> Outcome {
    let home = v
        .env("CUDA_HOME")
        .or_else(|| v.env("CUDA_PATH"))
        .unwrap_or("/usr/local/cuda")
        .trim_end_matches('/');
    let tk =
        v.fp.libraries
            .toolkits
            .iter()
            .find(|t| t.path.trim_end_matches('/') == home);
    let Some(tk) = tk else {
        return Outcome::Clear(format!("no CUDA toolkit at {home}"));
    };
    let Some(tv) = tk
        .version
        .value()
        .and_then(|s| s.parse::<gpukb_facts::CudaVersion>().ok())
    else {
        return Outcome::Undecided(format!("the version of {home} was not observed"));
    };
    let mut out = Vec::new();
    for (e, t) in v.torches() {
        if let Some(tc) = t.cuda {
            if tv.major < tc.major || (tv.major == tc.major && tv < tc) {
                out.push(finding(Some(e.site_packages.clone()), format!("CUDA_HOME {home} is CUDA {tv}; torch {} is CUDA {tc}: building CUDA extensions fails or mixes runtimes", t.version), Severity::Warning,
                    vec![Evidence::new(format!("{home} is CUDA {tv}"), tk.version.source()), Evidence::new(format!("torch built with CUDA {tc}"), &t.source)])
                    .affects(vec![Affects::env(&e.site_packages)])
                    .confirm(&["$CUDA_HOME/bin/nvcc --version", "python3 -c 'import torch; print(torch.version.cuda)'"]));
            }
        }
    }
    if out.is_empty() {
        Outcome::Clear(format!("{home} (CUDA {tv}) is not older than torch's CUDA"))
    } else {
        Outcome::Found(out)
    }
}

fn duplicate_library_versions(v: &View) -> Outcome {
    use std::collections::BTreeMap;
    let mut by: BTreeMap<&str, Vec<&gpukb_facts::fingerprint::LibraryFile>> = BTreeMap::new();
    for f in &v.fp.libraries.files {
        if f.version.is_some() {
            by.entry(f.soname.as_str()).or_default().push(f);
        }
    }
    let loaded: Vec<String> = v
        .torches()
        .iter()
        .flat_map(|(_, t)| t.loads.iter().filter_map(|l| l.path.clone()))
        .collect();
    let mut out = Vec::new();
    for (soname, files) in by {
        let mut versions: Vec<&str> = files.iter().filter_map(|f| f.version.as_deref()).collect();
        versions.sort();
        versions.dedup();
        if versions.len() < 2 {
            continue;
        }
        let used: Vec<&&gpukb_facts::fingerprint::LibraryFile> = files
            .iter()
            .filter(|f| loaded.iter().any(|p| p == &f.path || p == &f.real_path))
            .collect();
        let title = match used.first() {
            Some(u) => format!(
                "{soname}: {} installed; torch loads {} ({}), nothing loads the others",
                versions.join(", "),
                u.version.as_deref().unwrap_or("?"),
                u.real_path
            ),
            None => format!("{soname}: {} installed", versions.join(", ")),
        };
        out.push(finding(
            Some(soname.to_string()),
            title.clone(),
            Severity::Info,
            vec![Evidence::new(title, &files[0].source)],
        ));
    }
    if out.is_empty() {
        Outcome::Clear("one version of each CUDA library".into())
    } else {
        Outcome::Found(out)
    }
}

// ---- framework ----

fn torch_cpu_only(v: &View) -> Outcome {
    let torches = v.torches();
    if torches.is_empty() {
        return Outcome::Clear("no torch installed".into());
    }
    let gpu_here =
        !v.gpus().is_empty() || v.pci_gpus().is_some_and(|g| !g.is_empty()) || v.is_jetson();
    if !gpu_here {
        return Outcome::Undecided("no GPU observed to judge a CPU build against".into());
    }
    let mut out = Vec::new();
    for (e, t) in torches {
        if t.cuda.is_none() {
            if v.is_jetson() {
                continue;
            } // the Jetson wheel checks judge those
            let sev = if v.is_active(e) {
                Severity::Failure
            } else {
                Severity::Warning
            };
            out.push(
                finding(
                    Some(e.site_packages.clone()),
                    format!(
                        "torch {} in {} is a CPU-only build",
                        t.version, e.site_packages
                    ),
                    sev,
                    vec![Evidence::new(
                        format!("torch/version.py: cuda = None ({})", t.version),
                        &t.source,
                    )],
                )
                .affects(vec![Affects::env(&e.site_packages)])
                .confirm(&[
                    "python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'",
                ]),
            );
        }
    }
    if out.is_empty() {
        Outcome::Clear("every torch is a CUDA build".into())
    } else {
        Outcome::Found(out)
    }
}

fn jetson_wheels(v: &View, want_generic: bool) -> Outcome {
    let Some(report) = v.fp.jetson.value() else {
        return Outcome::Clear("not a Jetson".into());
    };
    let mut out = Vec::new();
    for (e, t) in v.torches() {
        let cuda = t.cuda.map(|c| c.to_string());
        let verdict = gpukb_jetson::check_torch_wheel(&t.version, cuda.as_deref(), report);
        use gpukb_jetson::torch::{TorchBuild, TorchStatus};
        if verdict.status != TorchStatus::Broken {
            continue;
        }
        let generic = matches!(verdict.build, TorchBuild::CpuOnly | TorchBuild::GenericCuda);
        if generic != want_generic {
            continue;
        }
        out.push(
            finding(
                Some(e.site_packages.clone()),
                verdict.message.clone(),
                if v.is_active(e) {
                    Severity::Failure
                } else {
                    Severity::Warning
                },
                vec![
                    Evidence::new(
                        format!(
                            "torch {} ({})",
                            t.version,
                            cuda.unwrap_or_else(|| "no CUDA".into())
                        ),
                        &t.source,
                    ),
                    Evidence::new(
                        format!(
                            "JetPack {}",
                            report
                                .jetpack
                                .as_ref()
                                .map(|j| j.version.clone())
                                .unwrap_or("?".into())
                        ),
                        v.fp.jetson.source(),
                    ),
                ],
            )
            .affects(vec![Affects::env(&e.site_packages)])
            .confirm(&[
                "python3 -c 'import torch; print(torch.__version__, torch.cuda.is_available())'",
                "cat /etc/nv_tegra_release",
            ]),
        );
    }
    if out.is_empty() {
        Outcome::Clear("the torch wheels fit this JetPack".into())
    } else {
        Outcome::Found(out)
    }
}

fn jetson_torch_wheel_mismatch(v: &View) -> Outcome {
    jetson_wheels(v, false)
}
fn jetson_generic_aarch64_wheel(v: &View) -> Outcome {
    jetson_wheels(v, true)
}

// ---- frameworks other than torch ----

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

fn env_severity(v: &View, e: &gpukb_facts::fingerprint::PythonEnv) -> Severity {
    if v.is_active(e) {
        Severity::Failure
    } else {
        Severity::Warning
    }
}

fn driver_older_than_framework_cuda(v: &View) -> Outcome {
    let Some((drv, src)) = v.driver_cuda() else {
        return Outcome::Undecided("the driver's CUDA version was not observed".into());
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
        return Outcome::Found(out);
    }
    if read == 0 {
        return if v.has_package(FRAMEWORK_PACKAGES) {
            Outcome::Undecided("no framework's CUDA build could be read".into())
        } else {
            Outcome::Undecided("no JAX CUDA plugin, CuPy, TensorFlow, ONNX Runtime GPU or TensorRT in the Python envs read".into())
        };
    }
    Outcome::Clear(format!(
        "the driver (CUDA {drv}) runs every framework build here"
    ))
}

fn jax_plugin_version_mismatch(v: &View) -> Outcome {
    let mut out = Vec::new();
    let mut seen = 0;
    for (e, fw) in v.frameworks() {
        if fw.framework != "jax" {
            continue;
        }
        seen += 1;
        let listing = Source::Listing {
            path: e.site_packages.clone(),
        };
        let jaxlib = fw.same_release.iter().find(|p| p.name == "jaxlib");
        let title = match jaxlib {
            None => format!(
                "{} {} is installed without jaxlib: JAX cannot use it",
                fw.distribution, fw.version
            ),
            Some(lib) => {
                let off: Vec<String> = fw
                    .same_release
                    .iter()
                    .filter(|p| {
                        p.name != "jaxlib" && !compat::jax_plugin_usable(&lib.version, &p.version)
                    })
                    .map(|p| format!("{} {}", p.name, p.version))
                    .collect();
                if off.is_empty() {
                    continue;
                }
                format!(
                    "{} {} not jaxlib {}'s release: jaxlib does not use the plugin and JAX runs on the CPU",
                    off.join(" and "),
                    if off.len() == 1 { "is" } else { "are" },
                    lib.version
                )
            }
        };
        let installed = fw
            .same_release
            .iter()
            .map(|p| format!("{} {}", p.name, p.version))
            .collect::<Vec<_>>()
            .join(", ");
        out.push(
            finding(
                Some(framework_key(e, fw)),
                title,
                env_severity(v, e),
                vec![Evidence::new(format!("installed: {installed}"), &listing)],
            )
            .affects(vec![Affects::env(&e.site_packages)])
            .confirm(&[
                "pip list 2>/dev/null | grep -Ei '^(jax|jaxlib|jax-cuda)'",
                "python3 -c 'import jax; print(jax.devices())'",
            ]),
        );
    }
    match (seen, out.is_empty()) {
        (0, _) if v.has_package(&["jax-cuda12-plugin", "jax-cuda13-plugin"]) => {
            Outcome::Undecided("JAX's CUDA plugin was listed but not read".into())
        }
        (0, _) => Outcome::Undecided("no JAX CUDA plugin in the Python envs read".into()),
        (_, true) => Outcome::Clear("every JAX CUDA plugin is jaxlib's release".into()),
        _ => Outcome::Found(out),
    }
}

fn onnxruntime_cuda_library_missing(v: &View) -> Outcome {
    let mut out = Vec::new();
    let mut resolved = 0;
    for (e, fw) in v.frameworks() {
        if fw.framework != "onnxruntime-gpu" || fw.loads.is_empty() {
            continue;
        }
        resolved += 1;
        let missing: Vec<&str> = fw
            .loads
            .iter()
            .filter(|l| {
                l.path.is_none() && CUDA_LIB_PREFIXES.iter().any(|p| l.soname.starts_with(p))
            })
            .map(|l| l.soname.as_str())
            .collect();
        if missing.is_empty() {
            continue;
        }
        // A copy in this env's nvidia-* wheels is off the loader's path but
        // onnxruntime.preload_dlls() (or importing torch first) loads it.
        let in_wheels: Vec<&str> = missing
            .iter()
            .copied()
            .filter(|m| {
                v.fp.libraries.files.iter().any(|f| {
                    f.soname == *m
                        && f.found_via.starts_with("pip ")
                        && f.path.starts_with(&e.site_packages)
                })
            })
            .collect();
        let so = fw.cuda_library.clone().unwrap_or_default();
        let source = Source::Elf { path: so.clone() };
        let (severity, tail) = if in_wheels.len() == missing.len() {
            (
                Severity::Warning,
                " (this env's nvidia-* wheels carry them: only onnxruntime.preload_dlls() or an earlier import torch loads them)",
            )
        } else {
            (
                env_severity(v, e),
                ": its CUDA execution provider does not load and inference runs on the CPU",
            )
        };
        out.push(
            finding(
                Some(framework_key(e, fw)),
                format!(
                    "onnxruntime-gpu {} needs {} and the loader finds no copy{tail}",
                    fw.version,
                    missing.join(", ")
                ),
                severity,
                vec![Evidence::new(
                    format!(
                        "{} NEEDs {}; they resolve nowhere (RPATH/RUNPATH, LD_LIBRARY_PATH, ld.so.cache, default dirs)",
                        so.rsplit('/').next().unwrap_or(&so),
                        missing.join(", ")
                    ),
                    &source,
                )],
            )
            .affects(vec![Affects::env(&e.site_packages)])
            .confirm(&[
                "python3 -c 'import onnxruntime as ort; print(ort.get_available_providers())'",
                "ldd $(python3 -c 'import onnxruntime, os; print(os.path.dirname(onnxruntime.__file__))')/capi/libonnxruntime_providers_cuda.so | grep 'not found'",
            ]),
        );
    }
    match (resolved, out.is_empty()) {
        (0, _) if v.has_package(&["onnxruntime-gpu"]) => Outcome::Undecided(
            "onnxruntime-gpu is installed but its CUDA provider's libraries were not read".into(),
        ),
        (0, _) => Outcome::Undecided("no onnxruntime-gpu in the Python envs read".into()),
        (_, true) => {
            Outcome::Clear("every CUDA library ONNX Runtime's CUDA provider needs resolves".into())
        }
        _ => Outcome::Found(out),
    }
}

fn torch_pin_mismatch(v: &View) -> Outcome {
    let mut out = Vec::new();
    for (e, t) in v.torches() {
        if !t.pin_mismatches.is_empty() {
            out.push(
                finding(
                    Some(e.site_packages.clone()),
                    format!(
                        "torch {} pins nvidia wheels that are not installed: {}",
                        t.version,
                        t.pin_mismatches.join("; ")
                    ),
                    Severity::Warning,
                    vec![Evidence::new(t.pin_mismatches.join("; "), &t.source)],
                )
                .affects(vec![Affects::env(&e.site_packages)])
                .confirm(&["pip check"]),
            );
        }
    }
    if out.is_empty() {
        Outcome::Clear("installed nvidia wheels satisfy torch's pins".into())
    } else {
        Outcome::Found(out)
    }
}

// ---- kernel image ----

fn torch_lacks_gpu_arch(v: &View) -> Outcome {
    let gpus = v.gpus();
    if gpus.is_empty() {
        return Outcome::Undecided("no GPU compute capability observed".into());
    }
    let driver_cuda = v.driver_cuda().map(|(c, _)| c);
    let mut out = Vec::new();
    let mut judged = false;
    let mut why_undecided = String::new();
    for (e, t) in v.torches() {
        if t.cuda.is_none() {
            continue;
        }
        let images = match &t.kernels {
            Observed::Found { value, .. } => {
                value.targets.iter().map(|x| x.image).collect::<Vec<_>>()
            }
            o => {
                why_undecided = format!("torch GPU code: {}", o.why_not().unwrap_or(""));
                continue;
            }
        };
        judged = true;
        for g in &gpus {
            let Some(cc) = g.cc else { continue };
            let dcuda = driver_cuda.or(t.cuda).map(|c| c.api()).unwrap_or(13000);
            let dev = tegra_aware_device(v, cc);
            let d = compat::decide_on(dev, dcuda, &images);
            if matches!(d.outcome, ImageOutcome::NoImage | ImageOutcome::PtxTooNew) {
                let sev = if v.is_active(e) {
                    Severity::Failure
                } else {
                    Severity::Warning
                };
                out.push(finding(Some(format!("gpu{}", g.index)),
                    format!("torch {} has no kernel image for {} (sm_{}): {}", t.version, g.name, cc.sm(), if d.outcome == ImageOutcome::NoImage { "no kernel image is available for execution on the device" } else { "its PTX is too new for this driver (222)" }),
                    sev,
                    vec![Evidence::new(d.reason.clone(), t.kernels.source()), Evidence::new(format!("{} is CC {cc}", g.name), &g.source)])
                    .affects(vec![Affects::gpu(g.index, &g.uuid), Affects::env(&e.site_packages)])
                    .confirm(&["python3 -c 'import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())'"]));
            }
        }
    }
    if !out.is_empty() {
        Outcome::Found(out)
    } else if judged {
        Outcome::Clear("every GPU runs the torch builds' code".into())
    } else if why_undecided.is_empty() {
        Outcome::Clear("no CUDA torch installed".into())
    } else {
        Outcome::Undecided(why_undecided)
    }
}

/// The compatibility engine's view of a GPU: Tegra when its CC is a Tegra
/// one, or when this is a Jetson and the GPU is the one the Jetson report
/// names (its CC); a discrete GPU on a Jetson/IGX host keeps desktop rules.
fn tegra_aware_device(v: &View, cc: gpukb_facts::ComputeCapability) -> compat::Device {
    let jetson_igpu =
        v.fp.jetson
            .value()
            .and_then(|j| j.compute_capability.as_ref())
            .and_then(|c| c.value.parse::<gpukb_facts::ComputeCapability>().ok())
            .is_some_and(|jcc| jcc == cc);
    compat::Device {
        cc: cc.pair(),
        tegra: jetson_igpu || compat::is_tegra(cc.pair()),
    }
}

fn extension_lacks_gpu_arch(v: &View) -> Outcome {
    let gpus = v.gpus();
    let exts: Vec<_> =
        v.fp.python
            .iter()
            .flat_map(|e| e.extensions.iter().map(move |x| (e, x)))
            .collect();
    if exts.is_empty() {
        return Outcome::Clear("no CUDA extension libraries found".into());
    }
    if gpus.is_empty() {
        return Outcome::Undecided("no GPU compute capability observed".into());
    }
    let driver_cuda = v.driver_cuda().map(|(c, _)| c.api()).unwrap_or(13000);
    let mut out = Vec::new();
    let mut judged = 0;
    for (e, x) in exts {
        let Observed::Found { value, source } = &x.kernels else {
            continue;
        };
        judged += 1;
        let images: Vec<_> = value.targets.iter().map(|t| t.image).collect();
        for g in &gpus {
            let Some(cc) = g.cc else { continue };
            let dev = tegra_aware_device(v, cc);
            let d = compat::decide_on(dev, driver_cuda, &images);
            if matches!(d.outcome, ImageOutcome::NoImage | ImageOutcome::PtxTooNew) {
                let file = x.path.rsplit('/').next().unwrap_or(&x.path);
                out.push(
                    finding(
                        Some(format!("{}:gpu{}", x.package, g.index)),
                        format!(
                            "{} {} ({file}) has no kernel image for {} (sm_{})",
                            x.package,
                            x.version,
                            g.name,
                            cc.sm()
                        ),
                        if v.is_active(e) {
                            Severity::Failure
                        } else {
                            Severity::Warning
                        },
                        vec![
                            Evidence::new(d.reason.clone(), source),
                            Evidence::new(format!("{} is CC {cc}", g.name), &g.source),
                        ],
                    )
                    .affects(vec![
                        Affects::gpu(g.index, &g.uuid),
                        Affects::library(&x.path),
                        Affects::env(&e.site_packages),
                    ])
                    .confirm(&[&format!(
                        "cuobjdump --list-elf {} | cut -d. -f3 | sort | uniq -c",
                        x.path
                    )]),
                );
            }
        }
    }
    if !out.is_empty() {
        Outcome::Found(out)
    } else if judged > 0 {
        Outcome::Clear(format!(
            "{judged} CUDA extension(s) carry code every GPU runs"
        ))
    } else {
        Outcome::Undecided("the extensions' GPU code was not observed".into())
    }
}

// ---- Jetson ----

fn on_jetson(v: &View) -> Outcome {
    match &v.fp.jetson {
        Observed::Found { value, source } => found(finding(
            None,
            format!(
                "Jetson {} (L4T {})",
                value
                    .module
                    .as_ref()
                    .and_then(|m| m.name.clone())
                    .unwrap_or_else(|| value.model.clone().unwrap_or_default()),
                value
                    .l4t
                    .as_ref()
                    .map(|l| l.version.to_string())
                    .unwrap_or("?".into())
            ),
            Severity::Info,
            vec![Evidence::new("Jetson", source)],
        )),
        Observed::Absent { .. } => Outcome::Clear("not a Jetson".into()),
        o => Outcome::Undecided(o.why_not().unwrap_or("").to_string()),
    }
}

fn jetson_partial_upgrade(v: &View) -> Outcome {
    let Observed::Found { value, source } = &v.fp.jetson else {
        return Outcome::Clear("not a Jetson".into());
    };
    let bad: Vec<_> = value.disagreements.iter().filter(|d| !d.benign).collect();
    if bad.is_empty() {
        return Outcome::Clear("L4T, JetPack and the CUDA packages agree".into());
    }
    let facts: Vec<&str> = bad.iter().map(|d| d.fact.as_str()).collect();
    found(
        finding(
            None,
            format!(
                "The Jetson's sources disagree on {}: a partial L4T/JetPack upgrade",
                facts.join(", ")
            ),
            Severity::Failure,
            bad.iter()
                .map(|d| Evidence::new(d.explanation.clone(), source))
                .collect(),
        )
        .confirm(&[
            "cat /etc/nv_tegra_release",
            "dpkg -l 'nvidia-l4t-*' | head",
            "apt-cache policy nvidia-jetpack",
        ]),
    )
}

// ---- measured by gpukb probe ----

fn probed<F>(v: &View, what: &str, headline: &str, f: F) -> Outcome
where
    F: Fn(&gpukb_facts::measured::ProbedGpu) -> Vec<String>,
{
    let Some(p) = v.probe else {
        return Outcome::Undecided(format!(
            "{what}: the probe did not run (gpukb doctor --probe)"
        ));
    };
    let mut out = Vec::new();
    for g in &p.gpus {
        let items = f(g);
        if !items.is_empty() {
            out.push(
                finding(
                    Some(format!("gpu{}", g.ordinal)),
                    format!("GPU {} ({}) {headline}", g.ordinal, g.name),
                    Severity::Failure,
                    items
                        .iter()
                        .map(|i| Evidence::new(i.clone(), &p.source))
                        .collect(),
                )
                .affects(vec![Affects::gpu(g.ordinal as u32, "")]),
            );
        }
    }
    if out.is_empty() {
        Outcome::Clear(format!("{what}: nothing on {} probed GPU(s)", p.gpus.len()))
    } else {
        Outcome::Found(out)
    }
}

fn probe_kernels_fail(v: &View) -> Outcome {
    probed(
        v,
        "probe kernels",
        "fails gpukb's probe kernels: they did not run or computed wrong results",
        |g| g.smoke_failures.iter().chain(&g.errors).cloned().collect(),
    )
    .with_confirm(&["gpukb probe --no-throughput", "sudo dmesg | grep -i xid"])
}

fn probe_loads_disagree(v: &View) -> Outcome {
    match probed(
        v,
        "module loads",
        "loads code images differently than the CUDA compatibility rules predict",
        |g| g.load_mismatches.clone(),
    ) {
        Outcome::Found(fs) => Outcome::Found(
            fs.into_iter()
                .map(|mut f| {
                    f.severity = Severity::Warning;
                    f
                })
                .collect(),
        ),
        o => o,
    }
}

fn probe_throughput_low(v: &View) -> Outcome {
    match probed(v, "throughput", "measures far below its reference", |g| {
        g.slow.clone()
    }) {
        Outcome::Found(fs) => Outcome::Found(
            fs.into_iter()
                .map(|mut f| {
                    f.severity = Severity::Warning;
                    f.confirm = vec![
                        "gpukb probe".into(),
                        "nvidia-smi -q -d PERFORMANCE,CLOCK".into(),
                    ];
                    f
                })
                .collect(),
        ),
        o => o,
    }
}
