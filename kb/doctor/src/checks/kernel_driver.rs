//! Checks of the kernel driver: nouveau, Secure Boot, DKMS, the nvidia module
//! and its flavour, the branch's GPU support, user space against module, nvidia_uvm,
//! Fabric Manager.

use super::support::*;
use super::{Check, CheckId, Conclusion};
use crate::fixes;
use crate::view::View;
use crate::{Affects, Evidence, Layer, Severity};
use gpukb_facts::compat;
use gpukb_facts::{Observed, Source};

/// The nouveau driver bound to the NVIDIA GPU (sysfs) or loaded while nvidia is not: it
/// holds the device, so the NVIDIA module cannot drive it.
/// KB: `nouveau-blocks-runfile-install`, `nouveau-owns-gpu-probe-skipped`.
pub(super) const NOUVEAU_BOUND: Check = Check {
    id: CheckId::NouveauBound,
    layer: Layer::KernelDriver,
    category: "nouveau_conflict",
    explained_by: &[],
    context: false,
    meaning: "the nouveau driver holds the GPU",
    run: nouveau_bound,
    fix: fixes::nouveau_bound,
};

fn nouveau_bound(v: &View) -> Conclusion {
    if let Some(c) = no_module_by_design(v) {
        return c;
    }
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
        (Some(_), _) => Conclusion::Clear("nouveau does not hold the GPU".into()),
        (None, _) => Conclusion::Undecided("/proc/modules was not observed".into()),
    }
}

/// Secure Boot on, an nvidia module installed for the running kernel and not loaded: the
/// kernel refuses an unsigned (DKMS-built) module.
/// KB: `secure-boot-rejects-unsigned-nvidia-module`.
pub(super) const SECURE_BOOT_BLOCKS_MODULE: Check = Check {
    id: CheckId::SecureBootBlocksModule,
    layer: Layer::KernelDriver,
    category: "secure_boot_unsigned",
    explained_by: &[CheckId::NouveauBound],
    context: false,
    meaning: "Secure Boot is on and the installed nvidia module is not loaded",
    run: secure_boot_blocks_module,
    fix: fixes::secure_boot_blocks_module,
};

fn secure_boot_blocks_module(v: &View) -> Conclusion {
    if let Some(c) = no_module_by_design(v) {
        return c;
    }
    match gpu_without_module(v) {
        Err(e) => return Conclusion::Undecided(e),
        Ok(false) => {
            return Conclusion::Clear("the nvidia module is loaded (or there is no GPU)".into())
        }
        Ok(true) => {}
    }
    let sb = match &v.fp.host.secure_boot {
        Observed::Found { value, source } => (*value, source.clone()),
        o => {
            return Conclusion::Undecided(format!(
                "Secure Boot state: {}",
                o.why_not().unwrap_or("")
            ))
        }
    };
    if !sb.0 {
        return Conclusion::Clear("Secure Boot is disabled".into());
    }
    match installed(v) {
        Ok((run, _, src)) if !run.is_empty() => found(finding(None,
            "Secure Boot is on and the installed nvidia module is not loaded: the kernel refuses an unsigned (DKMS-built) module".into(),
            Severity::Failure,
            vec![Evidence::new("UEFI Secure Boot is enabled", &sb.1),
                 Evidence::new(format!("the running kernel has {} but nvidia is not loaded", run.join(", ")), &src),
                 Evidence::new("nvidia is not in /proc/modules", v.modules_source())])
            .confirm(&["mokutil --sb-state", "sudo modprobe nvidia   # 'Key was rejected by service'", "sudo dmesg | grep -i -E 'module verification|lockdown'"])),
        Ok(_) => Conclusion::Clear("no nvidia module is installed for the running kernel".into()),
        Err(e) => Conclusion::Undecided(e),
    }
}

/// The running kernel's modules.dep has no nvidia module while another kernel's does:
/// DKMS did not rebuild the driver after a kernel update.
/// KB: `nvidia-module-not-built-for-running-kernel`, `nvidia-dkms-build-failed`.
pub(super) const DRIVER_NOT_BUILT_FOR_RUNNING_KERNEL: Check = Check {
    id: CheckId::DriverNotBuiltForRunningKernel,
    layer: Layer::KernelDriver,
    category: "driver_module_not_built_for_kernel",
    explained_by: &[CheckId::NouveauBound],
    context: false,
    meaning:
        "another kernel has the nvidia module, the running one does not (DKMS did not rebuild)",
    run: driver_not_built_for_running_kernel,
    fix: fixes::driver_not_built_for_running_kernel,
};

fn driver_not_built_for_running_kernel(v: &View) -> Conclusion {
    if let Some(c) = no_module_by_design(v) {
        return c;
    }
    match gpu_without_module(v) {
        Err(e) => return Conclusion::Undecided(e),
        Ok(false) => {
            return Conclusion::Clear("the nvidia module is loaded (or there is no GPU)".into())
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
            Conclusion::Clear("the running kernel has the nvidia module, or no kernel does".into())
        }
        Err(e) => Conclusion::Undecided(e),
    }
}

/// An NVIDIA GPU present and no kernel's modules.dep lists an nvidia module (outside
/// containers, where the host provides the driver).
/// KB: `nvidia-driver-not-installed`.
pub(super) const DRIVER_NOT_INSTALLED: Check = Check {
    id: CheckId::DriverNotInstalled,
    layer: Layer::KernelDriver,
    category: "driver_not_installed",
    explained_by: &[CheckId::NouveauBound],
    context: false,
    meaning: "an NVIDIA GPU is present and no kernel has the nvidia module",
    run: driver_not_installed,
    fix: fixes::driver_branch,
};

fn driver_not_installed(v: &View) -> Conclusion {
    if let Some(c) = no_module_by_design(v) {
        return c;
    }
    match gpu_without_module(v) {
        Err(e) => return Conclusion::Undecided(e),
        Ok(false) => {
            return Conclusion::Clear("the nvidia module is loaded (or there is no GPU)".into())
        }
        Ok(true) => {}
    }
    if v.container().is_some() {
        return Conclusion::Clear("inside a container the host provides the driver".into());
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
        Ok(_) => Conclusion::Clear("an nvidia module is installed".into()),
        Err(e) => Conclusion::Undecided(e),
    }
}

/// An NVIDIA GPU present (or expected) and nvidia not in /proc/modules; the checks that say
/// why (nouveau, Secure Boot, DKMS, not installed, container) explain it.
/// KB: `nvidia-driver-not-installed`, `no-cuda-gpu-available`.
pub(super) const DRIVER_NOT_LOADED: Check = Check {
    id: CheckId::DriverNotLoaded,
    layer: Layer::KernelDriver,
    category: "driver_not_installed",
    explained_by: &[
        CheckId::NouveauBound,
        CheckId::SecureBootBlocksModule,
        CheckId::DriverNotBuiltForRunningKernel,
        CheckId::DriverNotInstalled,
        CheckId::ContainerWithoutGpu,
    ],
    context: false,
    meaning: "an NVIDIA GPU is present but the nvidia kernel module is not loaded",
    run: driver_not_loaded,
    fix: fixes::driver_branch,
};

fn driver_not_loaded(v: &View) -> Conclusion {
    if let Some(c) = no_module_by_design(v) {
        return c;
    }
    match gpu_without_module(v) {
        Err(e) => Conclusion::Undecided(e),
        Ok(false) => Conclusion::Clear("the nvidia module is loaded (or there is no GPU)".into()),
        Ok(true) if v.container().is_some() => {
            Conclusion::Clear("a container shows the host's modules; see container checks".into())
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

/// A GPU that needs NVIDIA's open kernel modules (Blackwell, Grace Hopper; by CC or by
/// PCI device id) with the proprietary module loaded: the driver does not initialise it.
/// KB: `blackwell-requires-open-kernel-modules`.
pub(super) const OPEN_MODULE_REQUIRED: Check = Check {
    id: CheckId::OpenModuleRequired,
    layer: Layer::KernelDriver,
    category: "open_module_gpu_mismatch",
    explained_by: &[],
    context: false,
    meaning: "a Blackwell or Grace Hopper GPU runs the proprietary kernel module",
    run: open_module_required,
    fix: fixes::open_module_required,
};

fn open_module_required(v: &View) -> Conclusion {
    let flavor = match &v.fp.driver.flavor {
        Observed::Found { value, source } => (value.clone(), source.clone()),
        o => {
            return Conclusion::Undecided(format!("module flavour: {}", o.why_not().unwrap_or("")))
        }
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
        return Conclusion::Clear("no GPU here needs the open kernel modules".into());
    }
    if flavor.0 == "open" {
        return Conclusion::Clear("the open kernel module is loaded".into());
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

/// A GPU the loaded driver branch does not support (legacy cut-off, or a branch older than
/// the GPU), by the compatibility engine's branch table (`gpukb_facts::compat`).
/// KB: `legacy-gpu-dropped-by-driver-branch`.
pub(super) const DRIVER_BRANCH_DROPS_GPU: Check = Check {
    id: CheckId::DriverBranchDropsGpu,
    layer: Layer::KernelDriver,
    category: "driver_gpu_unsupported",
    explained_by: &[],
    context: false,
    meaning: "the driver branch does not support a GPU (legacy cut-off, or too old for Blackwell)",
    run: driver_branch_drops_gpu,
    fix: fixes::driver_branch,
};

fn driver_branch_drops_gpu(v: &View) -> Conclusion {
    let Some(drv) = v.fp.driver.version.value() else {
        return Conclusion::Undecided(format!(
            "driver version: {}",
            v.fp.driver.version.why_not().unwrap_or("")
        ));
    };
    let gpus = v.gpus();
    if gpus.is_empty() {
        return Conclusion::Undecided("no GPU compute capability observed".into());
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
        Conclusion::Clear(format!("R{} supports every GPU here", drv.branch()))
    } else {
        Conclusion::Found(out)
    }
}

/// libcuda / libnvidia-ml of another release than the loaded kernel module, or NVML's
/// "Driver/library version mismatch": a driver upgrade waits for a reboot.
/// KB: `nvml-driver-library-mismatch-reboot`, `cuda-803-after-driver-upgrade-without-reboot`.
pub(super) const DRIVER_USERSPACE_MISMATCH: Check = Check {
    id: CheckId::DriverUserspaceMismatch,
    layer: Layer::KernelDriver,
    category: "driver_lib_mismatch_reboot",
    explained_by: &[CheckId::ContainerShipsDriverLibraries],
    context: false,
    meaning: "the loaded kernel module and the user-space driver libraries are different releases",
    run: driver_userspace_mismatch,
    fix: fixes::driver_userspace_mismatch,
};

fn driver_userspace_mismatch(v: &View) -> Conclusion {
    if v.is_jetson() {
        return Conclusion::Clear("Jetson".into());
    }
    let diff = lib_release_differs(v);
    let nvml = nvml_mismatch(v);
    if diff.is_none() && nvml.is_none() {
        return if v.fp.driver.version.is_found() && v.fp.driver.libcuda.is_found() {
            Conclusion::Clear("the kernel module and libcuda are the same release".into())
        } else {
            Conclusion::Undecided("kernel module or libcuda version not observed".into())
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

/// nvidia loaded and nvidia_uvm not (and no /dev/nvidia-uvm in a container): CUDA cannot
/// start while NVML and nvidia-smi still work.
/// KB: `nvidia-uvm-module-not-loaded`.
pub(super) const NVIDIA_UVM_NOT_LOADED: Check = Check {
    id: CheckId::NvidiaUvmNotLoaded,
    layer: Layer::KernelDriver,
    category: "nvidia_uvm_not_loaded",
    explained_by: &[],
    context: false,
    meaning: "nvidia is loaded but nvidia_uvm (which CUDA needs) is not",
    run: nvidia_uvm_not_loaded,
    fix: fixes::nvidia_uvm_not_loaded,
};

fn nvidia_uvm_not_loaded(v: &View) -> Conclusion {
    if let Some(c) = no_module_by_design(v) {
        return c;
    }
    match nvidia_loaded(v) {
        Err(e) => Conclusion::Undecided(e),
        Ok(false) => Conclusion::Clear("nvidia is not loaded (another check covers that)".into()),
        Ok(true) => match v.module_loaded("nvidia_uvm") {
            Some(true) => Conclusion::Clear("nvidia_uvm is loaded".into()),
            _ if v.container().is_some() && v.fp.driver.device_nodes.value().is_some_and(|d| d.iter().any(|n| n == "/dev/nvidia-uvm")) => {
                Conclusion::Clear("/dev/nvidia-uvm is present in the container".into())
            }
            _ => found(finding(None, "nvidia is loaded but nvidia_uvm is not: CUDA cannot start (NVML and nvidia-smi still work)".into(), Severity::Failure,
                vec![Evidence::new("nvidia_uvm is not in /proc/modules", v.modules_source())])
                .confirm(&["lsmod | grep nvidia_uvm", "ls -l /dev/nvidia-uvm"])),
        },
    }
}

/// NVSwitches on the PCI bus and cuInit returning CUDA_ERROR_SYSTEM_NOT_READY:
/// nvidia-fabricmanager is not running, or not the driver's release.
/// KB: `fabric-manager-not-running-802`, `fabric-manager-driver-version-mismatch`.
pub(super) const FABRIC_MANAGER_NOT_RUNNING: Check = Check {
    id: CheckId::FabricManagerNotRunning,
    layer: Layer::KernelDriver,
    category: "fabric_manager",
    explained_by: &[],
    context: false,
    meaning: "NVSwitches are present and cuInit says the system is not ready",
    run: fabric_manager_not_running,
    fix: fixes::fabric_manager_not_running,
};

fn fabric_manager_not_running(v: &View) -> Conclusion {
    let n = v.nvswitches();
    if v.fp.pci.value().is_none() {
        return Conclusion::Undecided("the PCI bus was not observed".into());
    }
    if n == 0 {
        return Conclusion::Clear("no NVSwitch on the PCI bus".into());
    }
    match init_result(v) {
        Ok((r, s)) if r == "CUDA_ERROR_SYSTEM_NOT_READY" => found(finding(None,
            format!("{n} NVSwitches and cuInit returns CUDA_ERROR_SYSTEM_NOT_READY: nvidia-fabricmanager is not running (or not the driver's version)"),
            Severity::Failure,
            vec![Evidence::new(format!("{n} NVIDIA NVSwitch bridges on the PCI bus"), v.fp.pci.source()), Evidence::new(format!("cuInit returned {r}"), &s)])
            .confirm(&["systemctl status nvidia-fabricmanager", "nvidia-smi -q | grep -A2 Fabric"])),
        Ok(_) => Conclusion::Clear("cuInit is not waiting for the fabric".into()),
        Err(e) => Conclusion::Undecided(e),
    }
}

/// Context: UEFI Secure Boot is enabled (unsigned modules are refused).
/// KB: `secure-boot-rejects-unsigned-nvidia-module`.
pub(super) const SECURE_BOOT_ENABLED: Check = Check {
    id: CheckId::SecureBootEnabled,
    layer: Layer::KernelDriver,
    category: "secure_boot_unsigned",
    explained_by: &[],
    context: true,
    meaning: "Secure Boot is enabled (context)",
    run: secure_boot_enabled,
    fix: fixes::none,
};

fn secure_boot_enabled(v: &View) -> Conclusion {
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
        Observed::Found { .. } => Conclusion::Clear("Secure Boot is disabled".into()),
        Observed::Absent { .. } => Conclusion::Clear("not booted with UEFI: no Secure Boot".into()),
        o => Conclusion::Undecided(o.why_not().unwrap_or("").to_string()),
    }
}

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

/// Blackwell PCI device ids: GB100/GB102 (0x29xx), GB20x (0x2Bxx–0x2Fxx) (PCI ID repository, NVIDIA).
fn is_blackwell_device_id(id: u16) -> bool {
    (0x2900..0x3000).contains(&id) && !(0x2A00..0x2B00).contains(&id)
}

/// Whether the driver libraries are of another *branch* than the module (an
/// image that brought its own, e.g. 535 libraries on a 580 host) rather than
/// another release of the same branch (an upgrade waiting for a reboot).
pub(super) fn other_branch(v: &View) -> bool {
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

/// Whether the driver libraries this container loads are the host's, mounted by
/// the container runtime: `Some(true)` when `/proc/self/mountinfo` lists them as
/// mounts (or they live under `/usr/local/nvidia`, where the runtime mounts the
/// host's driver), `Some(false)` when the mount table was read and lists none of
/// them (the image's own files), `None` when neither is known.
pub(super) fn libs_mounted_from_host(v: &View) -> Option<bool> {
    let libs: Vec<_> = [&v.fp.driver.libcuda, &v.fp.driver.libnvidia_ml]
        .into_iter()
        .filter_map(|l| l.value())
        .collect();
    if libs.is_empty() {
        return None;
    }
    let under = |l: &&gpukb_facts::fingerprint::LibraryFile, dir: &str| {
        let dir = dir.trim_end_matches('/');
        [&l.path, &l.real_path]
            .iter()
            .any(|p| p.as_str() == dir || p.strip_prefix(dir).is_some_and(|r| r.starts_with('/')))
    };
    if libs.iter().any(|l| under(l, "/usr/local/nvidia")) {
        return Some(true);
    }
    let mounts = v.fp.platform.driver_mounts.value()?;
    Some(
        libs.iter()
            .any(|l| mounts.iter().any(|m| under(l, &m.mount_point))),
    )
}

/// The first driver library whose release differs from the loaded module's,
/// as a sentence and its source.
pub(super) fn lib_release_differs(v: &View) -> Option<(String, Source)> {
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

pub(super) fn nvml_mismatch(v: &View) -> Option<(String, Source)> {
    match &v.fp.nvml {
        Observed::Failed { error, source } if error.to_lowercase().contains("mismatch") => {
            Some((error.clone(), source.clone()))
        }
        _ => None,
    }
}

/// Under WSL2 there is no NVIDIA kernel module by design: the Windows driver
/// reaches the GPU through `/dev/dxg` (NVIDIA: CUDA on WSL User Guide), so the
/// module checks clear instead of finding a missing module.
fn no_module_by_design(v: &View) -> Option<Conclusion> {
    v.is_wsl().then(|| {
        Conclusion::Clear(
            "WSL2 has no NVIDIA kernel module by design: the Windows driver reaches the GPU through /dev/dxg".into(),
        )
    })
}
