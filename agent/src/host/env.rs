//! The one registry of environment variables gpukb reads. Only the variables
//! listed here (and those starting with a listed prefix) are ever looked at.
#![allow(clippy::disallowed_methods)] // part of the host seam

use std::collections::BTreeMap;

/// Variables that decide how CUDA code loads and runs.
pub const ENV_VARS: &[&str] = &[
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "NVIDIA_REQUIRE_CUDA",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_MODULE_LOADING",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_DEVICE_ORDER",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_ALLOC_CONF",
    "TORCH_CUDA_ARCH_LIST",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PYTHONPATH",
    "HOME",
    "PATH",
    "WSL_DISTRO_NAME",
    "WSL_INTEROP",
    "KUBERNETES_SERVICE_HOST",
    "container",
];

/// Every variable starting with one of these is read too.
pub const ENV_PREFIXES: &[&str] = &["NCCL_", "CUDA_CACHE_"];

/// The environment as far as gpukb is concerned.
#[derive(Debug, Clone, Default)]
pub struct EnvRegistry {
    vars: BTreeMap<String, String>,
}

fn registered(name: &str) -> bool {
    ENV_VARS.contains(&name) || ENV_PREFIXES.iter().any(|p| name.starts_with(p))
}

impl EnvRegistry {
    /// Reads the registered variables from this process's environment.
    pub fn from_process() -> Self {
        let mut vars = BTreeMap::new();
        for (k, v) in std::env::vars_os() {
            let (Some(k), Some(v)) = (k.to_str(), v.to_str()) else {
                continue;
            };
            if registered(k) {
                vars.insert(k.to_string(), v.to_string());
            }
        }
        EnvRegistry { vars }
    }

    /// A fixed environment (replay, tests); unregistered names are dropped.
    pub fn from_map(map: BTreeMap<String, String>) -> Self {
        let vars = map.into_iter().filter(|(k, _)| registered(k)).collect();
        EnvRegistry { vars }
    }

    /// One registered variable.
    pub fn get(&self, name: &str) -> Option<&str> {
        debug_assert!(registered(name), "{name} is not in the env registry");
        self.vars.get(name).map(String::as_str)
    }

    /// Every registered variable that is set.
    pub fn all(&self) -> &BTreeMap<String, String> {
        &self.vars
    }

    /// Directories of `PATH` (a default list when unset).
    pub fn path_dirs(&self) -> Vec<String> {
        match self.vars.get("PATH") {
            Some(p) => p
                .split(':')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            None => [
                "/usr/local/sbin",
                "/usr/local/bin",
                "/usr/sbin",
                "/usr/bin",
                "/sbin",
                "/bin",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        }
    }
}
