//! Jetson (JetPack/L4T): the `gpukb-jetson` crate's reconciliation, fed with
//! files read through the host seam.

use super::Context;
use crate::fingerprint::{Observed, Source};
use crate::host::Host;
use gpukb_jetson::{JetsonFiles, JetsonReport};

struct Files<'a>(&'a Host);

impl JetsonFiles for Files<'_> {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        self.0.read(path).map_err(|e| e.to_string())
    }
    fn list(&self, dir: &str) -> Result<Option<Vec<String>>, String> {
        self.0
            .list(dir)
            .map(|o| o.map(|v| v.into_iter().map(|e| e.name).collect()))
            .map_err(|e| e.to_string())
    }
}

pub(super) fn collect(ctx: &Context) -> Observed<JetsonReport> {
    let source = Source::Derived {
        from: "/etc/nv_tegra_release, /proc/device-tree, dpkg status, nvpmodel, sysfs".into(),
    };
    // Only a Tegra system has these; skip dpkg and sysfs reads elsewhere.
    let tegra = [
        "/etc/nv_tegra_release",
        "/proc/device-tree/compatible",
        "/sys/firmware/devicetree/base/compatible",
    ]
    .iter()
    .any(|p| ctx.host.exists(p).unwrap_or(false));
    if !tegra {
        return Observed::absent(
            source,
            "not a Jetson (no /etc/nv_tegra_release or device tree)",
        );
    }
    match gpukb_jetson::observe(&Files(&ctx.host)) {
        Ok(Some(r)) => Observed::found(r, source),
        Ok(None) => Observed::absent(source, "not a Jetson"),
        Err(e) => Observed::failed(source, e),
    }
}
