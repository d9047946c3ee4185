//! Platform files: `/proc/self/mountinfo` (which driver files a container
//! runtime mounted), dpkg's status database (a Linux NVIDIA driver installed
//! inside WSL2) and `/etc/ld.so.conf.d/*.conf` (WSL's `ld.wsl.conf`).

use crate::fingerprint::{DriverMount, Package};

/// Undoes mountinfo's octal escapes (`\040` for a space, proc(5)).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether a mount point is an NVIDIA driver file, directory or device node
/// (what the NVIDIA Container Toolkit, a Kubernetes device plugin's
/// `/usr/local/nvidia` or WSL's `/usr/lib/wsl` mounts).
pub fn is_driver_mount(mount_point: &str) -> bool {
    let base = mount_point.rsplit('/').next().unwrap_or("");
    base.starts_with("libcuda")
        || base.starts_with("libnvidia-")
        || base.starts_with("libnvcuvid")
        || base.starts_with("libnvoptix")
        || base.starts_with("nvidia")
        || mount_point.starts_with("/usr/local/nvidia")
        || mount_point.starts_with("/usr/lib/wsl")
        || mount_point.starts_with("/proc/driver/nvidia")
        || mount_point == "/dev/dxg"
}

/// The driver mounts of a mountinfo file (proc(5): `ID PARENT MAJ:MIN ROOT
/// MOUNT_POINT OPTIONS [OPTIONAL…] - FSTYPE SOURCE SUPER_OPTIONS`). Malformed
/// lines are skipped.
pub fn parse_driver_mounts(text: &str) -> Vec<DriverMount> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let Some(dash) = f.iter().position(|x| *x == "-") else {
            continue;
        };
        if dash < 6 || f.len() < dash + 2 {
            continue;
        }
        let mount_point = unescape(f[4]);
        if !is_driver_mount(&mount_point) {
            continue;
        }
        out.push(DriverMount {
            mount_point,
            root: unescape(f[3]),
            fs_type: f[dash + 1].to_string(),
        });
    }
    out
}

/// Whether a distribution package is a Linux NVIDIA driver (its kernel module
/// or its user-space libraries): Ubuntu's `nvidia-driver-580`,
/// `libnvidia-compute-580`, `nvidia-dkms-580-open`, NVIDIA's repository's
/// `cuda-drivers`, Debian's `nvidia-driver`/`libcuda1`, Fedora/RHEL's
/// `nvidia-driver`, `kmod-nvidia`, `xorg-x11-drv-nvidia`.
pub fn is_driver_package(name: &str) -> bool {
    [
        "nvidia-driver",
        "libnvidia-compute-",
        "nvidia-dkms-",
        "nvidia-kernel-",
        "nvidia-utils-",
        "cuda-drivers",
        "kmod-nvidia",
        "xorg-x11-drv-nvidia",
        "nvidia-open",
    ]
    .iter()
    .any(|p| name.starts_with(p))
        || name == "libcuda1"
}

/// The installed packages of dpkg's status database (`/var/lib/dpkg/status`)
/// that [`is_driver_package`] names.
pub fn parse_dpkg_driver_packages(text: &str) -> Vec<Package> {
    let mut out = Vec::new();
    for stanza in text.split("\n\n") {
        let (mut name, mut version, mut installed) = (None, None, false);
        for l in stanza.lines() {
            if let Some(v) = l.strip_prefix("Package: ") {
                name = Some(v.trim());
            } else if let Some(v) = l.strip_prefix("Version: ") {
                version = Some(v.trim());
            } else if let Some(v) = l.strip_prefix("Status: ") {
                installed = v.trim().ends_with(" installed");
            }
        }
        if let (Some(n), true) = (name, installed) {
            if is_driver_package(n) {
                out.push(Package {
                    name: n.to_string(),
                    version: version.unwrap_or("").to_string(),
                });
            }
        }
    }
    out
}

/// The package names of `rpm -qa --qf '%{NAME} %{VERSION}-%{RELEASE}\n'`
/// output that [`is_driver_package`] names.
pub fn parse_rpm_driver_packages(text: &str) -> Vec<Package> {
    text.lines()
        .filter_map(|l| {
            let (n, v) = l.trim().split_once(' ')?;
            is_driver_package(n).then(|| Package {
                name: n.to_string(),
                version: v.trim().to_string(),
            })
        })
        .collect()
}

/// The directories an `ld.so.conf` fragment lists (comments and `include` lines dropped).
pub fn parse_ld_conf(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty() && !l.starts_with("include "))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_toolkit_mounts_are_driver_mounts() {
        // The shape of lines the NVIDIA Container Toolkit's bind mounts leave in
        // mountinfo (one per file; devtmpfs device nodes; tmpfs over /proc/driver/nvidia).
        let t = "\
618 593 0:160 / / rw,relatime master:253 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/A
640 618 259:2 /usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04 /usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04 ro,nosuid,nodev,relatime master:1 - ext4 /dev/nvme0n1p2 rw
641 618 259:2 /usr/bin/nvidia-smi /usr/bin/nvidia-smi ro,nosuid,nodev,relatime master:1 - ext4 /dev/nvme0n1p2 rw
650 619 0:5 /nvidia0 /dev/nvidia0 ro,nosuid,noexec master:2 - devtmpfs udev rw,size=4096k
651 618 0:170 / /proc/driver/nvidia rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,mode=555
652 618 259:2 /home/a\\040b /data rw - ext4 /dev/nvme0n1p2 rw
garbage line
";
        let m = parse_driver_mounts(t);
        let points: Vec<&str> = m.iter().map(|d| d.mount_point.as_str()).collect();
        assert_eq!(
            points,
            [
                "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04",
                "/usr/bin/nvidia-smi",
                "/dev/nvidia0",
                "/proc/driver/nvidia"
            ]
        );
        assert_eq!(m[0].fs_type, "ext4");
        assert_eq!(m[2].root, "/nvidia0");
        assert_eq!(unescape("/home/a\\040b"), "/home/a b");
    }

    #[test]
    fn dpkg_driver_packages_are_the_installed_ones() {
        let t = "Package: nvidia-driver-580\nStatus: install ok installed\nVersion: 580.95.05-0ubuntu1\n\n\
Package: libnvidia-compute-535\nStatus: deinstall ok config-files\nVersion: 535.1\n\n\
Package: cuda-toolkit-12-8\nStatus: install ok installed\nVersion: 12.8.1-1\n\n\
Package: nvidia-container-toolkit\nStatus: install ok installed\nVersion: 1.17.8-1\n";
        let p = parse_dpkg_driver_packages(t);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].name, "nvidia-driver-580");
        assert_eq!(p[0].version, "580.95.05-0ubuntu1");
        assert_eq!(
            parse_rpm_driver_packages("kmod-nvidia 580.95.05-1.el9\nbash 5.1-6\n").len(),
            1
        );
    }

    #[test]
    fn ld_wsl_conf() {
        // WSL's file as shipped: one directory.
        assert_eq!(
            parse_ld_conf("# This file was automatically generated by WSL.\n/usr/lib/wsl/lib\n"),
            ["/usr/lib/wsl/lib"]
        );
    }
}
