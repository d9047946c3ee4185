//! Operating-system files: `/etc/os-release`, `/proc/modules`,
//! `/proc/1/cgroup`, `/proc/version`, versioned library file names. (CUDA
//! toolkit `version.json`/`version.txt` parsers live in `gpukb_jetson`, which
//! needs them too.)

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Key/value pairs of an os-release file (quotes removed).
pub fn parse_os_release(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| !k.trim().is_empty() && !k.trim_start().starts_with('#'))
        .map(|(k, v)| {
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v);
            (k.trim().to_string(), v.to_string())
        })
        .collect()
}

/// One loaded kernel module from `/proc/modules`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelModule {
    pub name: String,
    pub state: String,
}

/// Parses `/proc/modules`.
pub fn parse_proc_modules(text: &str) -> Vec<KernelModule> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some(KernelModule {
                name: f.first()?.to_string(),
                state: f.get(4).unwrap_or(&"").to_string(),
            })
        })
        .collect()
}

/// A sysfs hex attribute (`0x10de\n`).
pub fn parse_sysfs_hex(text: &str) -> Option<u64> {
    let t = text.trim();
    u64::from_str_radix(t.strip_prefix("0x").unwrap_or(t), 16).ok()
}

/// The NVIDIA module files (`updates/dkms/nvidia.ko.zst`) a kernel's
/// `modules.dep` lists, and whether it lists nouveau.
pub fn parse_modules_dep(text: &str) -> (Vec<String>, bool) {
    let mut nvidia = Vec::new();
    let mut nouveau = false;
    for line in text.lines() {
        let Some(module) = line.split(':').next() else {
            continue;
        };
        let base = module.rsplit('/').next().unwrap_or(module);
        let stem = base.split(".ko").next().unwrap_or(base);
        if matches!(
            stem,
            "nvidia" | "nvidia-uvm" | "nvidia_uvm" | "nvidia-drm" | "nvidia-modeset"
        ) {
            nvidia.push(module.trim().to_string());
        } else if stem == "nouveau" {
            nouveau = true;
        }
    }
    (nvidia, nouveau)
}

/// The container runtime a `/proc/1/cgroup` (or mountinfo) text points to.
pub fn container_from_cgroup(text: &str) -> Option<&'static str> {
    if text.contains("kubepods") {
        Some("kubernetes")
    } else if text.contains("/docker/") || text.contains("docker-") {
        Some("docker")
    } else if text.contains("libpod") {
        Some("podman")
    } else if text.contains("/lxc/") {
        Some("lxc")
    } else {
        None
    }
}

/// Whether a `/proc/version` text comes from a WSL kernel, and which one.
pub fn wsl_from_proc_version(text: &str) -> Option<&'static str> {
    let t = text.to_ascii_lowercase();
    if t.contains("microsoft") {
        Some(if t.contains("wsl2") || t.contains("microsoft-standard") {
            "WSL2"
        } else {
            "WSL1"
        })
    } else {
        None
    }
}

/// The version encoded in a library file name: `libcudnn.so.9.14.0` → `9.14.0`.
pub fn version_from_file_name(name: &str) -> Option<String> {
    let (_, tail) = name.split_once(".so.")?;
    let ok = tail
        .split('.')
        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    ok.then(|| tail.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn modules_dep_lists_nvidia_modules_and_nouveau() {
        let dep = "kernel/drivers/gpu/drm/nouveau/nouveau.ko.zst: kernel/drivers/gpu/drm/drm.ko.zst\nupdates/dkms/nvidia.ko.zst:\nupdates/dkms/nvidia-uvm.ko.zst: updates/dkms/nvidia.ko.zst\nkernel/fs/ext4/ext4.ko.zst:\n";
        let (nvidia, nouveau) = super::parse_modules_dep(dep);
        assert_eq!(
            nvidia,
            vec![
                "updates/dkms/nvidia.ko.zst",
                "updates/dkms/nvidia-uvm.ko.zst"
            ]
        );
        assert!(nouveau);
        let (none, no_nouveau) = super::parse_modules_dep("kernel/fs/ext4/ext4.ko:\n");
        assert!(none.is_empty() && !no_nouveau);
    }

    #[test]
    fn sysfs_hex_attributes_parse() {
        assert_eq!(super::parse_sysfs_hex("0x10de\n"), Some(0x10de));
        assert_eq!(super::parse_sysfs_hex("0x030200\n"), Some(0x030200));
        assert_eq!(super::parse_sysfs_hex("junk"), None);
    }

    use super::*;

    #[test]
    fn os_release_h200() {
        let m = parse_os_release("PRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nID=ubuntu\n");
        assert_eq!(m["PRETTY_NAME"], "Ubuntu 24.04.3 LTS");
        assert_eq!(m["ID"], "ubuntu");
    }

    #[test]
    fn modules_h200() {
        let m = parse_proc_modules("nvidia_uvm 1830912 - - Live 0xffffffffc080c000 (O)\nnvidia 14299136 - - Live 0xffffffffc0400000 (O)\n");
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].name, "nvidia");
        assert_eq!(m[1].state, "Live");
    }

    #[test]
    fn cgroups_and_wsl() {
        assert_eq!(
            container_from_cgroup("0::/kubepods/besteffort/pod1/abc"),
            Some("kubernetes")
        );
        assert_eq!(
            container_from_cgroup("12:devices:/docker/0123abc"),
            Some("docker")
        );
        assert_eq!(container_from_cgroup("0::/init.scope"), None);
        assert_eq!(
            wsl_from_proc_version(
                "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f)"
            ),
            Some("WSL2")
        );
    }

    #[test]
    fn library_file_versions() {
        assert_eq!(
            version_from_file_name("libcudnn.so.9.14.0").as_deref(),
            Some("9.14.0")
        );
        assert_eq!(version_from_file_name("libcudnn.so"), None);
    }
}
