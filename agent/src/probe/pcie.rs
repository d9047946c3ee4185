//! NVML readings the probe needs beside its measurements: the PCIe link
//! generation and width (to judge host↔device bandwidth) and the SM clock
//! under load. NVML is optional: without it these are simply absent.

use super::PcieLink;

/// An initialised NVML, if libnvidia-ml could be loaded.
pub(super) struct Nvml(nvml_wrapper::Nvml);

impl Nvml {
    /// Opens NVML; `None` when it is absent or fails (never panics).
    pub(super) fn open() -> Option<Nvml> {
        std::panic::catch_unwind(nvml_wrapper::Nvml::init)
            .ok()?
            .ok()
            .map(Nvml)
    }

    fn device(&self, bus_id: &str) -> Option<nvml_wrapper::Device<'_>> {
        self.0.device_by_pci_bus_id(bus_id).ok()
    }

    /// The link as NVML reports it now, for the device at `bus_id`.
    pub(super) fn link(&self, bus_id: &str) -> Option<PcieLink> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let d = self.device(bus_id)?;
            Some(PcieLink {
                current_gen: d.current_pcie_link_gen().ok(),
                current_width: d.current_pcie_link_width().ok(),
                max_gen: d.max_pcie_link_gen().ok(),
                max_width: d.max_pcie_link_width().ok(),
                sm_clock_after_fma_mhz: None,
            })
        }))
        .ok()
        .flatten()
    }

    /// Current SM clock, MHz.
    pub(super) fn sm_clock_mhz(&self, bus_id: &str) -> Option<u32> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.device(bus_id)?
                .clock_info(nvml_wrapper::enum_wrappers::device::Clock::SM)
                .ok()
        }))
        .ok()
        .flatten()
    }
}
