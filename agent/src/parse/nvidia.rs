//! NVIDIA driver files and tool outputs: `/proc/driver/nvidia/version`,
//! `/proc/driver/nvidia/gpus/*/information`, `nvidia-smi --query-gpu` CSV.

use serde::{Deserialize, Serialize};

/// What `/proc/driver/nvidia/version` says about the loaded kernel module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcDriverVersion {
    /// e.g. `580.159.04`.
    pub version: String,
    /// `open` (NVIDIA's open GPU kernel modules) or `proprietary`.
    pub flavor: String,
    /// The whole `NVRM version:` line.
    pub line: String,
    /// The GCC that built the module, when printed.
    pub gcc: Option<String>,
}

fn is_version(tok: &str) -> bool {
    let parts: Vec<&str> = tok.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// Parses `/proc/driver/nvidia/version`.
pub fn parse_proc_driver_version(text: &str) -> Option<ProcDriverVersion> {
    let line = text.lines().find(|l| l.starts_with("NVRM version:"))?;
    let version = line.split_whitespace().find(|t| is_version(t))?.to_string();
    let flavor = if line.contains("Open Kernel Module") {
        "open"
    } else {
        "proprietary"
    };
    let gcc = text
        .lines()
        .find_map(|l| l.strip_prefix("GCC version:"))
        .map(|s| s.trim().to_string());
    Some(ProcDriverVersion {
        version,
        flavor: flavor.into(),
        line: line.trim().to_string(),
        gcc,
    })
}

/// Parses `/sys/module/nvidia/version` (just the version).
pub fn parse_module_version(text: &str) -> Option<String> {
    let v = text.trim();
    is_version(v).then(|| v.to_string())
}

/// Key/value pairs of `/proc/driver/nvidia/gpus/<bus>/information`.
pub fn parse_gpu_information(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// The driver version from `nvidia-smi --query-gpu=driver_version --format=csv,noheader`.
pub fn parse_smi_driver_version(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| is_version(l))
        .map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h200_proc_version() {
        let t = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \nGCC version:  gcc version 15.3.0 (GCC) \n";
        let v = parse_proc_driver_version(t).unwrap();
        assert_eq!(v.version, "580.159.04");
        assert_eq!(v.flavor, "open");
        assert_eq!(v.gcc.as_deref(), Some("gcc version 15.3.0 (GCC)"));
    }

    #[test]
    fn proprietary_module_line() {
        let t = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n";
        let v = parse_proc_driver_version(t).unwrap();
        assert_eq!(v.version, "535.183.01");
        assert_eq!(v.flavor, "proprietary");
    }

    #[test]
    fn junk() {
        assert!(parse_proc_driver_version("").is_none());
        assert!(parse_proc_driver_version("NVRM version: garbage").is_none());
        assert_eq!(
            parse_module_version("580.159.04\n").as_deref(),
            Some("580.159.04")
        );
        assert_eq!(parse_module_version("x"), None);
        assert_eq!(
            parse_smi_driver_version("580.159.04\n").as_deref(),
            Some("580.159.04")
        );
    }
}
