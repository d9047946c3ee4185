//! Platform facts: under WSL2 the files through which Windows' driver
//! reaches Linux (`/usr/lib/wsl/lib`, `ld.wsl.conf`) and traces of a Linux
//! NVIDIA driver installed inside WSL (NVIDIA's CUDA on WSL User Guide: the
//! Windows driver "will be stubbed inside the WSL 2 as libcuda.so, therefore
//! users must not install any NVIDIA GPU Linux driver within WSL 2");
//! everywhere the driver files and device nodes mounted into this mount
//! namespace (`/proc/self/mountinfo`: a container runtime's bind mounts).

use super::{observe, Context};
use crate::fingerprint::{DriverMount, Observed, Package, PlatformFacts, Source, WslFacts};
use crate::parse::platform as p;

pub(super) fn collect(ctx: &Context) -> PlatformFacts {
    PlatformFacts {
        wsl: wsl(ctx),
        driver_mounts: driver_mounts(ctx),
    }
}

fn driver_mounts(ctx: &Context) -> Observed<Vec<DriverMount>> {
    let path = "/proc/self/mountinfo";
    observe(
        ctx.host.read_string(path),
        Source::file(path),
        "no /proc/self/mountinfo",
        |t| Ok(p::parse_driver_mounts(&t)),
    )
}

/// The directories a Linux driver's `libcuda` lands in.
const LIB_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/lib/aarch64-linux-gnu",
];

const WSL_LIB: &str = "/usr/lib/wsl/lib";

fn wsl(ctx: &Context) -> Observed<WslFacts> {
    let host = &ctx.host;
    let osrelease = "/proc/sys/kernel/osrelease";
    let kernel = observe(
        host.read_string(osrelease),
        Source::file(osrelease),
        "no /proc (not a live Linux root?)",
        |t| Ok(t.trim().to_string()),
    );
    let wsl_kernel = match &kernel {
        Observed::Found { value, .. } => value.to_ascii_lowercase().contains("microsoft"),
        _ => false,
    };
    if !wsl_kernel && !host.exists("/dev/dxg").unwrap_or(false) {
        return Observed::absent(
            Source::file(osrelease),
            "not WSL2 (the kernel release does not name Microsoft's WSL kernel, no /dev/dxg)",
        );
    }
    let lib_dir = observe(
        host.list(WSL_LIB),
        Source::Listing {
            path: WSL_LIB.into(),
        },
        "no /usr/lib/wsl/lib: Windows' driver libraries are not mounted",
        |e| Ok(e.into_iter().map(|e| e.name).collect()),
    );
    let conf = "/etc/ld.so.conf.d/ld.wsl.conf";
    let ld_conf = observe(
        host.read_string(conf),
        Source::file(conf),
        "no ld.wsl.conf: /usr/lib/wsl/lib is not in the loader's configuration",
        |t| Ok(p::parse_ld_conf(&t)),
    );
    Observed::found(
        WslFacts {
            kernel,
            lib_dir,
            ld_conf,
            driver_packages: driver_packages(ctx),
            foreign_libcuda: foreign_libcuda(ctx),
        },
        Source::file(osrelease),
    )
}

/// Linux NVIDIA driver packages: dpkg's status database, else `rpm -qa`.
fn driver_packages(ctx: &Context) -> Observed<Vec<Package>> {
    let host = &ctx.host;
    let status = "/var/lib/dpkg/status";
    match host.read_string(status) {
        Ok(Some(t)) => {
            return Observed::found(p::parse_dpkg_driver_packages(&t), Source::file(status))
        }
        Err(e) => return super::observed_error(Source::file(status), e),
        Ok(None) => {}
    }
    if !host.exists("/var/lib/rpm").unwrap_or(false) {
        return Observed::absent(Source::file(status), "no dpkg or rpm package database");
    }
    let argv = ["rpm", "-qa", "--qf", "%{NAME} %{VERSION}-%{RELEASE}\\n"];
    let src = Source::Command {
        command: argv.join(" "),
    };
    observe(host.run(&argv), src, "rpm is not installed", |o| {
        if o.success() {
            Ok(p::parse_rpm_driver_packages(&o.stdout))
        } else {
            Err(format!("rpm -qa: {}", o.stderr.trim()))
        }
    })
}

/// `libcuda.so*` in the distribution's library directories (and the loader
/// cache) that does not resolve into `/usr/lib/wsl/lib`.
fn foreign_libcuda(ctx: &Context) -> Observed<Vec<String>> {
    let host = &ctx.host;
    let mut out: Vec<String> = Vec::new();
    for dir in LIB_DIRS {
        for name in ["libcuda.so.1", "libcuda.so"] {
            let path = format!("{dir}/{name}");
            match host.canonicalize(&path) {
                Ok(Some(real)) if !real.starts_with(WSL_LIB) && !out.contains(&real) => {
                    out.push(real)
                }
                Ok(_) => {}
                Err(e) => return super::observed_error(Source::Listing { path }, e),
            }
        }
    }
    if let Ok(Some(entries)) = ctx.ld_cache() {
        for e in entries
            .iter()
            .filter(|e| e.soname.starts_with("libcuda.so"))
        {
            // A link into /usr/lib/wsl/lib (a common repair) is WSL's own.
            if let Ok(Some(real)) = host.canonicalize(&e.path) {
                if !real.starts_with(WSL_LIB) && !out.contains(&real) {
                    out.push(real);
                }
            }
        }
    }
    Observed::found(
        out,
        Source::Derived {
            from: "libcuda.so.1 in /usr/lib/x86_64-linux-gnu, /lib/x86_64-linux-gnu, /usr/lib64, /usr/lib/aarch64-linux-gnu and ld.so.cache".into(),
        },
    )
}
