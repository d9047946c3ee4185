//! The kernel driver: its version (ordered fallbacks), flavour, loaded
//! modules, device nodes, and the user-space libraries the loader would pick.

use super::{observe, Context};
use crate::fingerprint::{
    DriverFacts, InstalledModules, LibraryFile, ModuleState, NvmlFacts, Observed, Source,
};
use crate::host::{EntryKind, HostError};
use crate::parse::{nvidia, system};
use gpukb_facts::DriverVersion;

const MODULES: &[&str] = &[
    "nvidia",
    "nvidia_uvm",
    "nvidia_drm",
    "nvidia_modeset",
    "nouveau",
];

pub(super) fn failed(e: &HostError) -> DriverFacts {
    let s = || Source::Derived {
        from: "driver files".into(),
    };
    DriverFacts {
        version: Observed::failed(s(), e),
        flavor: Observed::failed(s(), e),
        modules: Observed::failed(s(), e),
        device_nodes: Observed::failed(s(), e),
        libcuda: Observed::failed(s(), e),
        libnvidia_ml: Observed::failed(s(), e),
        installed_modules: Observed::failed(s(), e),
    }
}

/// Parses a version found as text; a text that is no driver version fails.
fn typed_version(o: Observed<String>) -> Observed<DriverVersion> {
    o.try_map(|v| v.parse::<DriverVersion>())
}

pub(super) fn collect_files(ctx: &Context) -> DriverFacts {
    let host = &ctx.host;
    // 1. sysfs: the loaded module's own version.
    let sys_path = "/sys/module/nvidia/version";
    let sys = observe(
        host.read_string(sys_path),
        Source::file(sys_path),
        "nvidia kernel module not loaded",
        |t| {
            nvidia::parse_module_version(&t)
                .ok_or_else(|| format!("unexpected contents {:?}", t.trim()))
        },
    );
    // 2. procfs: version and open/proprietary flavour.
    let proc_path = "/proc/driver/nvidia/version";
    let proc = observe(
        host.read_string(proc_path),
        Source::file(proc_path),
        "no NVIDIA kernel driver loaded",
        |t| {
            nvidia::parse_proc_driver_version(&t)
                .ok_or_else(|| "no `NVRM version:` line".to_string())
        },
    );
    let version = match (&sys, &proc) {
        (Observed::Found { .. }, _) => sys.clone(),
        (_, Observed::Found { value, source }) => {
            Observed::found(value.version.clone(), source.clone())
        }
        (Observed::Failed { .. }, _) => sys.clone(),
        (_, Observed::Failed { source, error }) => Observed::failed(source.clone(), error),
        _ => Observed::absent(
            Source::Derived {
                from: format!("{sys_path}, {proc_path}"),
            },
            "no NVIDIA kernel driver loaded",
        ),
    };
    let version = typed_version(version);
    let flavor = proc.clone().map(|p| p.flavor);
    let modules = observe(
        host.read_string("/proc/modules"),
        Source::file("/proc/modules"),
        "no /proc/modules",
        |t| {
            let loaded = system::parse_proc_modules(&t);
            Ok(MODULES
                .iter()
                .map(|m| ModuleState {
                    name: m.to_string(),
                    loaded: loaded.iter().any(|l| l.name == *m),
                })
                .collect())
        },
    );
    let device_nodes = observe(
        host.list("/dev"),
        Source::Listing {
            path: "/dev".into(),
        },
        "no /dev",
        |entries| {
            Ok(entries
                .into_iter()
                .filter(|e| e.name.starts_with("nvidia") && e.kind != EntryKind::Dir)
                .map(|e| format!("/dev/{}", e.name))
                .collect())
        },
    );
    let libcuda = loader_pick(ctx, "libcuda.so.1", "libcuda");
    let libnvidia_ml = loader_pick(ctx, "libnvidia-ml.so.1", "libnvidia-ml");
    let installed_modules = installed_modules(ctx);
    DriverFacts {
        version,
        flavor,
        modules,
        device_nodes,
        libcuda,
        libnvidia_ml,
        installed_modules,
    }
}

/// At most this many kernels under `/lib/modules` are read.
const MAX_KERNELS: usize = 8;

/// NVIDIA and nouveau modules installed for the running kernel, from its
/// `modules.dep` (what `modprobe` would find), and, when it has no nvidia
/// module, for the other kernels too (newest first): enough to tell "DKMS did
/// not build it for this kernel" from "not installed at all".
fn installed_modules(ctx: &Context) -> Observed<Vec<InstalledModules>> {
    let host = &ctx.host;
    let running = host
        .read_string("/proc/sys/kernel/osrelease")
        .ok()
        .flatten()
        .map(|s| s.trim().to_string());
    let source = Source::Listing {
        path: "/lib/modules".into(),
    };
    let entries = match host.list("/lib/modules") {
        Ok(Some(e)) => e,
        Ok(None) => return Observed::absent(source, "no /lib/modules"),
        Err(e) => return super::observed_error(source, e),
    };
    let mut kernels: Vec<String> = entries
        .into_iter()
        .filter(|e| e.kind == EntryKind::Dir)
        .map(|e| e.name)
        .collect();
    kernels.sort_by(|a, b| b.cmp(a));
    if let Some(r) = &running {
        // The running kernel first, always read.
        if let Some(i) = kernels.iter().position(|k| k == r) {
            let k = kernels.remove(i);
            kernels.insert(0, k);
        }
    }
    let mut out: Vec<InstalledModules> = Vec::new();
    for k in kernels.into_iter().take(MAX_KERNELS) {
        // The other kernels matter only when the running one lacks the module
        // (a modules.dep is ~1 MB: read no more than the question needs).
        if out
            .first()
            .is_some_and(|r| r.running && !r.nvidia.is_empty())
        {
            break;
        }
        let path = format!("/lib/modules/{k}/modules.dep");
        let text = match host.read_string(&path) {
            Ok(Some(t)) => t,
            Ok(None) => continue,
            Err(e) => return super::observed_error(Source::file(path), e),
        };
        let (nvidia, nouveau) = system::parse_modules_dep(&text);
        out.push(InstalledModules {
            running: running.as_deref() == Some(k.as_str()),
            kernel: k,
            nvidia,
            nouveau,
        });
    }
    Observed::found(out, source)
}

/// Which file the dynamic loader would open for `soname` (LD_LIBRARY_PATH,
/// then the loader cache, then the default directories).
fn loader_pick(ctx: &Context, soname: &str, family: &str) -> Observed<LibraryFile> {
    let host = &ctx.host;
    let mut candidates: Vec<(String, String, Source)> = Vec::new();
    if let Some(llp) = host.env().get("LD_LIBRARY_PATH") {
        for d in llp.split(':').filter(|d| !d.is_empty()) {
            candidates.push((
                format!("{}/{soname}", d.trim_end_matches('/')),
                "LD_LIBRARY_PATH".into(),
                Source::Env {
                    var: "LD_LIBRARY_PATH".into(),
                },
            ));
        }
    }
    match ctx.ld_cache() {
        Ok(Some(entries)) => {
            for e in entries
                .iter()
                .filter(|e| e.soname == soname && e.arch != "libc6")
            {
                candidates.push((
                    e.path.clone(),
                    "ld.so.cache".into(),
                    Source::file("/etc/ld.so.cache"),
                ));
            }
        }
        Ok(None) => {}
        Err(e) => return Observed::failed(Source::file("/etc/ld.so.cache"), e),
    }
    for d in [
        "/lib64",
        "/usr/lib64",
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib/aarch64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib/wsl/lib",
    ] {
        candidates.push((
            format!("{d}/{soname}"),
            "default directories".into(),
            Source::Listing { path: d.into() },
        ));
    }
    for (path, via, source) in candidates {
        match host.canonicalize(&path) {
            Ok(Some(real)) => {
                let version = system::version_from_file_name(real.rsplit('/').next().unwrap_or(""));
                return Observed::found(
                    LibraryFile {
                        family: family.into(),
                        soname: soname.into(),
                        path,
                        real_path: real,
                        version,
                        found_via: via,
                        source: source.clone(),
                    },
                    source,
                );
            }
            Ok(None) => continue,
            Err(e) => return Observed::failed(source, e),
        }
    }
    Observed::absent(
        Source::Derived {
            from: "LD_LIBRARY_PATH, /etc/ld.so.cache, default directories".into(),
        },
        format!("{soname} not found: the NVIDIA user-space driver is not installed (or not mounted into this container)"),
    )
}

/// Fills the driver version from NVML, then `nvidia-smi`, when the kernel
/// module's files did not say.
pub(super) fn fill_fallbacks(ctx: &Context, drv: &mut DriverFacts, nvml: &Observed<NvmlFacts>) {
    if drv.version.is_found() {
        return;
    }
    if let Some(n) = nvml.value() {
        drv.version = Observed::found(
            n.driver_version.clone(),
            Source::Nvml {
                call: "nvmlSystemGetDriverVersion".into(),
            },
        );
        return;
    }
    let argv = [
        "nvidia-smi",
        "--query-gpu=driver_version",
        "--format=csv,noheader",
    ];
    let source = Source::Command {
        command: argv.join(" "),
    };
    match ctx.host.run(&argv) {
        Ok(Some(out)) if out.success() => {
            if let Some(v) = nvidia::parse_smi_driver_version(&out.stdout) {
                drv.version = typed_version(Observed::found(v, source));
            }
        }
        Ok(Some(out)) => {
            // Keep the file-based answer (absent/failed) but say what nvidia-smi said.
            let msg = out
                .stdout
                .lines()
                .chain(out.stderr.lines())
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
                .to_string();
            if !drv.version.is_found() && !msg.is_empty() {
                drv.version = Observed::failed(
                    source,
                    format!("nvidia-smi exited with {:?}: {msg}", out.status),
                );
            }
        }
        Ok(None) => {}
        Err(e @ HostError::Timeout { .. }) => drv.version = Observed::failed(source, e),
        Err(_) => {}
    }
}
