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
