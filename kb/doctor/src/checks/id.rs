//! The identity of every doctor check: [`CheckId`], one variant per check, and
//! its stable snake_case name (the name in the `Diagnosis` JSON, in fixtures'
//! `EXPECT.toml` and in KB entries' `[[conditions]] when = "..."`).
//!
//! This file depends on nothing but `core`, so `kb/build.rs` includes it too
//! (`#[path]`) and fails the build on an entry that names no check.

macro_rules! check_ids {
    ($($variant:ident => $name:literal,)+) => {
        /// One doctor check. `ALL` lists them in the order the doctor runs them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum CheckId {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )+
        }

        impl CheckId {
            /// Every check, in the order the doctor runs them.
            pub const ALL: &'static [CheckId] = &[$(CheckId::$variant,)+];

            /// The stable snake_case name (`cuda_init_failed`).
            pub const fn name(self) -> &'static str {
                match self {
                    $(CheckId::$variant => $name,)+
                }
            }

            /// The check named `name`, if there is one.
            pub fn from_name(name: &str) -> Option<CheckId> {
                match name {
                    $($name => Some(CheckId::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

check_ids! {
    NoNvidiaGpuVisible => "no_nvidia_gpu_visible",
    GpuMemoryFault => "gpu_memory_fault",
    ThermalOrPowerThrottling => "thermal_or_power_throttling",
    PcieLinkDegraded => "pcie_link_degraded",
    GpuFellOffBus => "gpu_fell_off_bus",
    NouveauBound => "nouveau_bound",
    SecureBootBlocksModule => "secure_boot_blocks_module",
    DriverNotBuiltForRunningKernel => "driver_not_built_for_running_kernel",
    DriverNotInstalled => "driver_not_installed",
    DriverNotLoaded => "driver_not_loaded",
    OpenModuleRequired => "open_module_required",
    DriverBranchDropsGpu => "driver_branch_drops_gpu",
    DriverUserspaceMismatch => "driver_userspace_mismatch",
    NvidiaUvmNotLoaded => "nvidia_uvm_not_loaded",
    FabricManagerNotRunning => "fabric_manager_not_running",
    SecureBootEnabled => "secure_boot_enabled",
    InContainer => "in_container",
    Wsl => "wsl",
    ContainerWithoutGpu => "container_without_gpu",
    ContainerShipsDriverLibraries => "container_ships_driver_libraries",
    WslLibcudaMissing => "wsl_libcuda_missing",
    WslLinuxDriverInstalled => "wsl_linux_driver_installed",
    CudaVisibleDevicesHidesGpus => "cuda_visible_devices_hides_gpus",
    CudaStubLibraryLoaded => "cuda_stub_library_loaded",
    MigWithoutInstances => "mig_without_instances",
    MigEnabled => "mig_enabled",
    CudaInitFailed => "cuda_init_failed",
    DriverOlderThanTorchCuda => "driver_older_than_torch_cuda",
    DriverOlderThanFrameworkCuda => "driver_older_than_framework_cuda",
    TorchLibraryMissing => "torch_library_missing",
    LibraryShadowedByLdLibraryPath => "library_shadowed_by_ld_library_path",
    OnnxruntimeCudaLibraryMissing => "onnxruntime_cuda_library_missing",
    CudaHomeOlderThanTorch => "cuda_home_older_than_torch",
    DuplicateLibraryVersions => "duplicate_library_versions",
    TorchCpuOnly => "torch_cpu_only",
    JetsonTorchWheelMismatch => "jetson_torch_wheel_mismatch",
    JetsonGenericAarch64Wheel => "jetson_generic_aarch64_wheel",
    TorchPinMismatch => "torch_pin_mismatch",
    JaxPluginVersionMismatch => "jax_plugin_version_mismatch",
    TorchLacksGpuArch => "torch_lacks_gpu_arch",
    ExtensionLacksGpuArch => "extension_lacks_gpu_arch",
    ProbeKernelsFail => "probe_kernels_fail",
    ProbeLoadsDisagree => "probe_loads_disagree",
    ProbeThroughputLow => "probe_throughput_low",
    OnJetson => "on_jetson",
    JetsonPartialUpgrade => "jetson_partial_upgrade",
}
