//! Checks of the container / WSL2 layer: where this runs, GPU access in a
//! container, driver libraries an image brought, libcuda under WSL2.

use super::kernel_driver::{
    lib_release_differs, libs_mounted_from_host, nvml_mismatch, other_branch,
};
use super::support::*;
use super::{Check, CheckId, Conclusion};
use crate::fixes;
use crate::view::View;
use crate::{Evidence, Layer, Severity};
use gpukb_facts::{Observed, Source};

/// Context: running inside a container (the host provides the kernel driver).
/// KB: `container-started-without-gpu-access`.
pub(super) const IN_CONTAINER: Check = Check {
    id: CheckId::InContainer,
    layer: Layer::ContainerWsl,
    category: "container_no_gpu_runtime",
    explained_by: &[],
    context: true,
    meaning: "running inside a container (context)",
    run: in_container,
    fix: fixes::none,
};

fn in_container(v: &View) -> Conclusion {
    match &v.fp.host.container {
        Observed::Found { value, source } => found(finding(
            None,
            format!("Running inside a container ({value})"),
            Severity::Info,
            vec![Evidence::new(format!("container runtime {value}"), source)],
        )),
        Observed::Absent { .. } => Conclusion::Clear("not in a container".into()),
        o => Conclusion::Undecided(o.why_not().unwrap_or("").to_string()),
    }
}

/// Context: running under WSL2 (the Windows driver provides libcuda in /usr/lib/wsl/lib).
/// KB: `wsl2-libcuda-not-found`, `wsl2-linux-driver-installed-inside`.
pub(super) const WSL: Check = Check {
    id: CheckId::Wsl,
    layer: Layer::ContainerWsl,
    category: "wsl_driver",
    explained_by: &[],
    context: true,
    meaning: "running under WSL2 (context)",
    run: wsl,
    fix: fixes::none,
};

fn wsl(v: &View) -> Conclusion {
    match &v.fp.host.wsl {
        Observed::Found { value, source } => found(finding(
            None,
            format!("Running under {value}"),
            Severity::Info,
            vec![Evidence::new(value.clone(), source)],
        )),
        Observed::Absent { .. } => Conclusion::Clear("not WSL".into()),
        o => Conclusion::Undecided(o.why_not().unwrap_or("").to_string()),
    }
}

/// A container with no /dev/nvidia* nodes and no libcuda while something in it expects a
/// GPU: it was started without `--gpus` / CDI devices.
/// KB: `container-started-without-gpu-access`, `docker-could-not-select-device-driver-gpu`.
pub(super) const CONTAINER_WITHOUT_GPU: Check = Check {
    id: CheckId::ContainerWithoutGpu,
    layer: Layer::ContainerWsl,
    category: "container_no_gpu_runtime",
    explained_by: &[CheckId::NoNvidiaGpuVisible],
    context: false,
    meaning: "a container was started without GPU access",
    run: container_without_gpu,
    fix: fixes::container_without_gpu,
};

fn container_without_gpu(v: &View) -> Conclusion {
    let Some(c) = v.container() else {
        return Conclusion::Clear("not in a container".into());
    };
    let nodes = v.fp.driver.device_nodes.value().map(|d| {
        d.iter()
            .any(|n| n.starts_with("/dev/nvidia") && n != "/dev/nvidia-caps")
    });
    let libcuda_absent = v.fp.driver.libcuda.is_absent();
    if nodes == Some(true) || !libcuda_absent {
        return Conclusion::Clear(
            "the container has NVIDIA device nodes or driver libraries".into(),
        );
    }
    if nodes.is_none() {
        return Conclusion::Undecided("/dev was not observed".into());
    }
    let nvd = v.env("NVIDIA_VISIBLE_DEVICES");
    let Some(why) = v
        .expects_gpu()
        .or_else(|| nvd.map(|x| format!("NVIDIA_VISIBLE_DEVICES={x}")))
    else {
        return Conclusion::Clear("nothing in this container expects a GPU".into());
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

/// Inside a container, driver libraries of another branch than the host's kernel module:
/// the image installed its own instead of the ones the NVIDIA Container Toolkit mounts.
/// KB: `container-image-ships-driver-libraries`.
pub(super) const CONTAINER_SHIPS_DRIVER_LIBRARIES: Check = Check {
    id: CheckId::ContainerShipsDriverLibraries,
    layer: Layer::ContainerWsl,
    category: "container_baked_driver_libs",
    explained_by: &[],
    context: false,
    meaning: "the container image carries its own driver libraries, of another release than the host's module",
    run: container_ships_driver_libraries,
    fix: fixes::container_ships_driver_libraries,
};

fn container_ships_driver_libraries(v: &View) -> Conclusion {
    if v.container().is_none() {
        return Conclusion::Clear("not in a container".into());
    }
    // Whose files they are decides: the host's (mounted by the runtime) are an
    // upgrade pending a reboot on the host, whatever the branch; without the mount
    // table, a library of the module's own branch is taken for the host's.
    if lib_release_differs(v).is_some() {
        match libs_mounted_from_host(v) {
            Some(true) => return Conclusion::Clear("the libraries are the host's, mounted by the container runtime (an upgrade pending a reboot, not the image's own)".into()),
            None if !other_branch(v) => return Conclusion::Clear("the libraries are the host's branch (an upgrade pending a reboot, not the image's own)".into()),
            _ => {}
        }
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
            Conclusion::Clear("the container's libcuda matches the host module".into())
        }
        None => Conclusion::Undecided("libcuda or the module version not observed".into()),
    }
}

/// Under WSL2, libcuda.so.1 not found: /usr/lib/wsl/lib is missing or not on the loader's path.
/// KB: `wsl2-libcuda-not-found`, `wsl2-libcuda-is-not-a-symbolic-link`.
pub(super) const WSL_LIBCUDA_MISSING: Check = Check {
    id: CheckId::WslLibcudaMissing,
    layer: Layer::ContainerWsl,
    category: "wsl_libcuda_not_symlink",
    explained_by: &[],
    context: false,
    meaning: "under WSL2, libcuda from /usr/lib/wsl/lib is not found",
    run: wsl_libcuda_missing,
    fix: fixes::wsl_libcuda_missing,
};

fn wsl_libcuda_missing(v: &View) -> Conclusion {
    if !v.is_wsl() {
        return Conclusion::Clear("not WSL".into());
    }
    match &v.fp.driver.libcuda {
        Observed::Found { .. } => Conclusion::Clear("libcuda is found".into()),
        Observed::Absent { source, note } => found(finding(None, "Under WSL2 libcuda.so.1 is not found: /usr/lib/wsl/lib is missing or not in the loader's path".into(), Severity::Failure,
            vec![Evidence::new(note.clone(), source)])
            .confirm(&["ls -l /usr/lib/wsl/lib/", "ldconfig -p | grep libcuda"])),
        o => Conclusion::Undecided(o.why_not().unwrap_or("").to_string()),
    }
}

/// Under WSL2, a Linux NVIDIA driver installed inside the distribution (its
/// packages, or its libcuda in the library directories): NVIDIA's CUDA on WSL
/// User Guide says the Windows driver "will be stubbed inside the WSL 2 as
/// libcuda.so, therefore users must not install any NVIDIA GPU Linux driver
/// within WSL 2"; its libcuda shadows WSL's and finds no /dev/nvidia*.
/// KB: `wsl2-linux-driver-installed-inside`.
pub(super) const WSL_LINUX_DRIVER_INSTALLED: Check = Check {
    id: CheckId::WslLinuxDriverInstalled,
    layer: Layer::ContainerWsl,
    category: "wsl_linux_driver_installed",
    explained_by: &[],
    context: false,
    meaning: "under WSL2, a Linux NVIDIA driver is installed inside the distribution",
    run: wsl_linux_driver_installed,
    fix: fixes::none,
};

fn wsl_linux_driver_installed(v: &View) -> Conclusion {
    let (w, wsrc) = match &v.fp.platform.wsl {
        Observed::Found { value, source } => (value, source),
        Observed::Absent { .. } => return Conclusion::Clear("not WSL2".into()),
        o => return Conclusion::Undecided(format!("WSL2 files: {}", o.why_not().unwrap_or(""))),
    };
    let mut ev = Vec::new();
    let loaded =
        v.fp.driver
            .libcuda
            .value()
            .filter(|l| !l.real_path.starts_with("/usr/lib/wsl/"));
    if let Some(l) = loaded {
        ev.push(Evidence::new(
            format!(
                "the loader picks libcuda.so.1 = {} ({}), not /usr/lib/wsl/lib's",
                l.real_path, l.found_via
            ),
            &l.source,
        ));
    }
    if let Observed::Found { value, source } = &w.foreign_libcuda {
        for p in value
            .iter()
            .filter(|p| loaded.is_none_or(|l| &l.real_path != *p))
        {
            ev.push(Evidence::new(
                format!("{p} is a Linux driver's libcuda"),
                source,
            ));
        }
    }
    let libcuda = !ev.is_empty();
    if let Observed::Found { value, source } = &w.driver_packages {
        if !value.is_empty() {
            let names: Vec<String> = value
                .iter()
                .map(|p| format!("{} {}", p.name, p.version))
                .collect();
            ev.push(Evidence::new(
                format!("installed: {}", names.join(", ")),
                source,
            ));
        }
    }
    if ev.is_empty() {
        return match (&w.driver_packages, &w.foreign_libcuda) {
            (Observed::Found { .. }, Observed::Found { .. }) => {
                Conclusion::Clear("no Linux NVIDIA driver package or libcuda inside WSL2".into())
            }
            (p, l) => Conclusion::Undecided(format!(
                "packages: {}; libcuda: {}",
                p.why_not().unwrap_or("seen"),
                l.why_not().unwrap_or("seen")
            )),
        };
    }
    let _ = wsrc;
    let (title, sev) = if libcuda {
        ("A Linux NVIDIA driver is installed inside WSL2: its libcuda shadows the one Windows' driver provides in /usr/lib/wsl/lib (NVIDIA: never install a Linux driver inside WSL 2)", Severity::Failure)
    } else {
        ("Linux NVIDIA driver packages are installed inside WSL2 (NVIDIA: never install a Linux driver inside WSL 2); WSL's libcuda is still the one found", Severity::Warning)
    };
    found(finding(None, title.into(), sev, ev).confirm(&[
        "dpkg -l | grep -E '^ii +(nvidia-driver|libnvidia-compute|cuda-drivers)'",
        "ldconfig -p | grep libcuda",
        "ls -l /usr/lib/wsl/lib/libcuda*",
    ]))
}
