//! PCI devices from `/sys/bus/pci/devices`: every function's vendor, and for
//! NVIDIA ones the device id, class and the kernel driver bound to it. This is
//! what tells "no NVIDIA GPU in this machine" from "a GPU no driver claims"
//! (nouveau, an unsigned module under Secure Boot, no module for this kernel).

use super::Context;
use crate::fingerprint::{Observed, PciDevice, Source};
use crate::parse::system::parse_sysfs_hex;

/// At most this many PCI functions are read.
const MAX_DEVICES: usize = 512;

pub(super) fn collect(ctx: &Context) -> Observed<Vec<PciDevice>> {
    let host = &ctx.host;
    let root = "/sys/bus/pci/devices";
    let source = Source::Listing { path: root.into() };
    let entries = match host.list(root) {
        Ok(Some(e)) => e,
        Ok(None) => return Observed::absent(source, "no /sys/bus/pci/devices"),
        Err(e) => return super::observed_error(source, e),
    };
    let mut out = Vec::new();
    for e in entries.into_iter().take(MAX_DEVICES) {
        let dir = format!("{root}/{}", e.name);
        let hex = |file: &str| {
            host.read_string(&format!("{dir}/{file}"))
                .ok()
                .flatten()
                .and_then(|t| parse_sysfs_hex(&t))
        };
        let Some(vendor) = hex("vendor").and_then(|v| u16::try_from(v).ok()) else {
            continue;
        };
        let nvidia = vendor == PciDevice::NVIDIA;
        let driver_link = format!("{dir}/driver");
        let driver = if nvidia {
            match host.canonicalize(&driver_link) {
                Ok(Some(p)) => Observed::found(
                    p.rsplit('/').next().unwrap_or("").to_string(),
                    Source::Listing { path: driver_link },
                ),
                Ok(None) => Observed::absent(
                    Source::Listing { path: driver_link },
                    "no kernel driver is bound to this device",
                ),
                Err(err) => super::observed_error(Source::Listing { path: driver_link }, err),
            }
        } else {
            Observed::unobservable(
                Source::Listing { path: driver_link },
                "not read for non-NVIDIA devices",
            )
        };
        out.push(PciDevice {
            address: e.name,
            vendor,
            device: if nvidia {
                hex("device").and_then(|v| u16::try_from(v).ok())
            } else {
                None
            },
            class: if nvidia {
                hex("class").and_then(|v| u32::try_from(v).ok())
            } else {
                None
            },
            driver,
        });
    }
    Observed::found(out, source)
}

/// Whether a glance at the machine shows no NVIDIA GPU at all: the PCI bus is
/// readable, lists devices and none is NVIDIA's, and there is no NVIDIA device
/// node, no Jetson release file, no WSL GPU device and no NVIDIA driver in
/// `/proc`. Search's default detection then skips the rest of the facts, which
/// could not apply to a paste anyway. `false` whenever any of it cannot be read.
pub fn shows_no_nvidia_gpu(host: &crate::host::Host) -> bool {
    let root = "/sys/bus/pci/devices";
    let Ok(Some(entries)) = host.list(root) else {
        return false;
    };
    if entries.is_empty() {
        return false;
    }
    for e in entries.iter().take(MAX_DEVICES) {
        let vendor = host
            .read_string(&format!("{root}/{}/vendor", e.name))
            .ok()
            .flatten()
            .and_then(|t| parse_sysfs_hex(&t));
        match vendor {
            Some(v) if v == u64::from(PciDevice::NVIDIA) => return false,
            Some(_) => {}
            None => return false,
        }
    }
    let traces = [
        "/dev/nvidiactl",
        "/dev/nvidia0",
        "/dev/nvhost-ctrl-gpu",
        "/dev/dxg",
        "/etc/nv_tegra_release",
        "/proc/driver/nvidia",
    ];
    traces.iter().all(|p| matches!(host.exists(p), Ok(false)))
}

#[cfg(test)]
mod glance_tests {
    use super::shows_no_nvidia_gpu;
    use crate::host::Host;

    fn root_with(vendors: &[&str], extra: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (i, v) in vendors.iter().enumerate() {
            let dir = d.path().join(format!("sys/bus/pci/devices/0000:00:0{i}.0"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("vendor"), format!("{v}\n")).unwrap();
        }
        for p in extra {
            let f = d.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, "").unwrap();
        }
        d
    }

    #[test]
    fn a_bus_without_nvidia_and_no_traces_shows_no_gpu() {
        let d = root_with(&["0x8086", "0x1af4"], &[]);
        assert!(shows_no_nvidia_gpu(&Host::root_dir(d.path())));
    }

    #[test]
    fn an_nvidia_function_or_any_trace_of_a_driver_means_look_closer() {
        let d = root_with(&["0x8086", "0x10de"], &[]);
        assert!(!shows_no_nvidia_gpu(&Host::root_dir(d.path())));
        for trace in ["/etc/nv_tegra_release", "/dev/dxg", "/dev/nvidiactl"] {
            let d = root_with(&["0x8086"], &[trace]);
            assert!(!shows_no_nvidia_gpu(&Host::root_dir(d.path())), "{trace}");
        }
    }

    #[test]
    fn an_unreadable_or_empty_bus_is_not_proof() {
        let d = tempfile::tempdir().unwrap();
        assert!(!shows_no_nvidia_gpu(&Host::root_dir(d.path())));
        let d = root_with(&["not-hex"], &[]);
        assert!(!shows_no_nvidia_gpu(&Host::root_dir(d.path())));
    }
}
