//! Host facts: OS release, kernel, architecture, glibc, container, WSL and
//! virtualization.

use super::{observe, Context};
use crate::fingerprint::{HostFacts, Observed, Source};
use crate::host::{HostError, Mode};
use crate::parse::system as p;
use std::time::Duration;

pub(super) fn failed(e: &HostError) -> HostFacts {
    let f = || {
        Observed::failed(
            Source::Derived {
                from: "host facts".into(),
            },
            e,
        )
    };
    HostFacts {
        os: f(),
        kernel: f(),
        arch: f(),
        glibc: f(),
        container: f(),
        wsl: f(),
        virtualization: f(),
        secure_boot: Observed::failed(
            Source::Derived {
                from: "host facts".into(),
            },
            e,
        ),
    }
}

pub(super) fn collect(ctx: &Context) -> HostFacts {
    let host = &ctx.host;
    let os = {
        let path = "/etc/os-release";
        let r = match host.read_string(path) {
            Ok(None) => host.read_string("/usr/lib/os-release"),
            other => other,
        };
        observe(r, Source::file(path), "no os-release file", |t| {
            let m = p::parse_os_release(&t);
            m.get("PRETTY_NAME")
                .or_else(|| m.get("NAME"))
                .cloned()
                .ok_or_else(|| "no PRETTY_NAME or NAME".to_string())
        })
    };
    let kernel = observe(
        host.read_string("/proc/sys/kernel/osrelease"),
        Source::file("/proc/sys/kernel/osrelease"),
        "no /proc (not a live Linux root?)",
        |t| Ok(t.trim().to_string()),
    );
    let arch = arch(ctx);
    let glibc = glibc(ctx);
    let (container, wsl) = container_and_wsl(ctx);
    let virtualization = virtualization(ctx);
    let secure_boot = secure_boot(ctx);
    HostFacts {
        os,
        kernel,
        arch,
        glibc,
        container,
        wsl,
        virtualization,
        secure_boot,
    }
}

/// The `SecureBoot` EFI variable: 4 bytes of attributes, then 1 when enabled.
fn secure_boot(ctx: &Context) -> Observed<bool> {
    let path = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e98c0130e1e1";
    let r = match ctx.host.read(path) {
        Ok(None) if !ctx.host.exists("/sys/firmware/efi").unwrap_or(false) => {
            return Observed::absent(
                Source::file(path),
                "not booted with UEFI (or /sys/firmware/efi not visible here)",
            )
        }
        other => other,
    };
    observe(
        r,
        Source::file(path),
        "no SecureBoot variable",
        |b| match b.get(4) {
            Some(v) => Ok(*v == 1),
            None => Err(format!("{} bytes, expected 5", b.len())),
        },
    )
}

fn arch(ctx: &Context) -> Observed<String> {
    if *ctx.host.mode() != Mode::Root {
        let r = ctx.host.answer("host.arch", Duration::from_secs(1), || {
            Ok(Some(std::env::consts::ARCH.to_string()))
        });
        return observe(
            r,
            Source::Libc {
                call: "uname".into(),
            },
            "",
            Ok,
        );
    }
    // A copied root: the loader cache says which architecture its libraries are.
    match ctx.ld_cache() {
        Ok(Some(entries)) => {
            let a = entries.iter().find_map(|e| match e.arch.as_str() {
                "x86-64" => Some("x86_64"),
                "AArch64" => Some("aarch64"),
                _ => None,
            });
            match a {
                Some(a) => Observed::found(a.to_string(), Source::file("/etc/ld.so.cache")),
                None => Observed::absent(Source::file("/etc/ld.so.cache"), "no 64-bit entries"),
            }
        }
        Ok(None) => Observed::absent(Source::file("/etc/ld.so.cache"), "no loader cache"),
        Err(e) => Observed::failed(Source::file("/etc/ld.so.cache"), e),
    }
}

pub(super) fn glibc(ctx: &Context) -> Observed<String> {
    if *ctx.host.mode() != Mode::Root {
        let r = ctx
            .host
            .answer("host.glibc", Duration::from_secs(1), crate::libc_version);
        return observe(
            r,
            Source::Libc {
                call: "gnu_get_libc_version".into(),
            },
            "not glibc",
            Ok,
        );
    }
    // A copied root: glibc < 2.34 names its file libc-X.Y.so.
    for dir in [
        "/lib/x86_64-linux-gnu",
        "/lib/aarch64-linux-gnu",
        "/lib64",
        "/usr/lib64",
        "/lib",
    ] {
        let path = format!("{dir}/libc.so.6");
        if let Ok(Some(real)) = ctx.host.canonicalize(&path) {
            let name = real.rsplit('/').next().unwrap_or("");
            if let Some(v) = name
                .strip_prefix("libc-")
                .and_then(|n| n.strip_suffix(".so"))
            {
                return Observed::found(v.to_string(), Source::Listing { path });
            }
            return Observed::absent(
                Source::Listing { path },
                "libc.so.6 does not carry its version in its name (glibc ≥ 2.34); run gpukb on the machine",
            );
        }
    }
    Observed::absent(
        Source::Listing {
            path: "/lib".into(),
        },
        "no libc.so.6 found",
    )
}

fn container_and_wsl(ctx: &Context) -> (Observed<String>, Observed<String>) {
    let host = &ctx.host;
    let env = host.env();
    let mut container = None;
    if env.get("KUBERNETES_SERVICE_HOST").is_some() {
        container = Some((
            "kubernetes".to_string(),
            Source::Env {
                var: "KUBERNETES_SERVICE_HOST".into(),
            },
        ));
    }
    if container.is_none() {
        if let Ok(true) = host.exists("/.dockerenv") {
            container = Some(("docker".into(), Source::file("/.dockerenv")));
        } else if let Ok(true) = host.exists("/run/.containerenv") {
            container = Some(("podman".into(), Source::file("/run/.containerenv")));
        }
    }
    if container.is_none() {
        if let Ok(Some(t)) = host.read_string("/proc/1/cgroup") {
            if let Some(c) = p::container_from_cgroup(&t) {
                container = Some((c.into(), Source::file("/proc/1/cgroup")));
            }
        }
    }
    if container.is_none() {
        if let Some(v) = env.get("container") {
            container = Some((
                v.to_string(),
                Source::Env {
                    var: "container".into(),
                },
            ));
        }
    }
    let container = match container {
        Some((c, s)) => Observed::found(c, s),
        None => Observed::absent(
            Source::Derived {
                from: "/.dockerenv, /run/.containerenv, /proc/1/cgroup, $container".into(),
            },
            "not in a container",
        ),
    };
    let wsl = match host.read_string("/proc/version") {
        Ok(Some(t)) => match p::wsl_from_proc_version(&t) {
            Some(w) => Observed::found(w.to_string(), Source::file("/proc/version")),
            None => Observed::absent(Source::file("/proc/version"), "not WSL"),
        },
        Ok(None) => match host.exists("/dev/dxg") {
            Ok(true) => Observed::found("WSL2".to_string(), Source::file("/dev/dxg")),
            _ => Observed::absent(Source::file("/proc/version"), "no /proc/version"),
        },
        Err(e) => Observed::failed(Source::file("/proc/version"), e),
    };
    (container, wsl)
}

fn virtualization(ctx: &Context) -> Observed<String> {
    let host = &ctx.host;
    let vendor = host
        .read_string("/sys/class/dmi/id/sys_vendor")
        .ok()
        .flatten();
    let product = host
        .read_string("/sys/class/dmi/id/product_name")
        .ok()
        .flatten();
    let joined = format!(
        "{} {}",
        vendor.as_deref().unwrap_or("").trim(),
        product.as_deref().unwrap_or("").trim()
    );
    let known = [
        ("KVM", "KVM"),
        ("QEMU", "QEMU"),
        ("VMware", "VMware"),
        ("VirtualBox", "VirtualBox"),
        ("Amazon EC2", "Amazon EC2"),
        ("Google Compute Engine", "Google Compute Engine"),
        ("Microsoft Corporation Virtual Machine", "Hyper-V"),
        ("Xen", "Xen"),
        ("OpenStack", "OpenStack"),
        ("Firecracker", "Firecracker"),
    ];
    if let Some((_, name)) = known.iter().find(|(k, _)| joined.contains(k)) {
        return Observed::found(
            name.to_string(),
            Source::file("/sys/class/dmi/id/sys_vendor"),
        );
    }
    match host.read_string("/proc/cpuinfo") {
        Ok(Some(t)) => {
            let hv = t
                .lines()
                .find(|l| l.starts_with("flags"))
                .is_some_and(|l| l.split_whitespace().any(|f| f == "hypervisor"));
            if hv {
                Observed::found(
                    "a hypervisor (unnamed)".to_string(),
                    Source::file("/proc/cpuinfo"),
                )
            } else {
                Observed::absent(Source::file("/proc/cpuinfo"), "no hypervisor visible")
            }
        }
        Ok(None) => Observed::absent(Source::file("/proc/cpuinfo"), "no /proc/cpuinfo"),
        Err(e) => Observed::failed(Source::file("/proc/cpuinfo"), e),
    }
}
