//! `/var/lib/dpkg/status` stanzas that matter on a Jetson.
//!
//! * `nvidia-l4t-core` (`32.7.1-20220219090432`, `36.4.3-20250107174145`):
//!   the L4T release as installed by apt, the part before `-`.
//! * `nvidia-jetpack` meta-package (`4.6.1-b110`, `5.1.2-b104`, `6.2+b77`,
//!   `6.2.1+b38`, `7.0-b128`, `7.2-b184`): states the JetPack release
//!   directly; it is only there when the user installed the JetPack SDK
//!   components (`apt install nvidia-jetpack` or SDK Manager).
//! * CUDA (`cuda-cudart-12-6 12.6.68-1`), cuDNN (`libcudnn8
//!   8.6.0.166-1+cuda11.4`, `libcudnn9-cuda-12 9.3.0.75-1`) and TensorRT
//!   (`libnvinfer8 8.5.2-1+cuda11.4`, `libnvinfer10 10.3.0.30-1+cuda12.5`).

use serde::{Deserialize, Serialize};

use crate::version::{cmp_dotted, L4tVersion};

/// One stanza of a dpkg status (or `apt-cache show`) file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DpkgPackage {
    /// `Package:`.
    pub name: String,
    /// `Version:` verbatim (epoch, upstream and Debian revision).
    pub version: String,
    /// `Status:` (`install ok installed`); `None` in `apt-cache show` output.
    pub status: Option<String>,
    /// `Architecture:`.
    pub architecture: Option<String>,
}

impl DpkgPackage {
    /// True unless `Status:` says the package is not (fully) installed
    /// (`deinstall ok config-files`, `purge ...`, half-installed, ...).
    pub fn is_installed(&self) -> bool {
        match &self.status {
            None => true,
            Some(s) => s.split_whitespace().last() == Some("installed"),
        }
    }

    /// The upstream part of the version: epoch and Debian revision removed
    /// (`1:8.5.2-1+cuda11.4` → `8.5.2`).
    pub fn upstream_version(&self) -> &str {
        upstream_version(&self.version)
    }
}

/// The upstream part of a Debian version (`1:8.5.2-1+cuda11.4` → `8.5.2`,
/// `32.7.1-20220219090432` → `32.7.1`, `6.2.1+b38` → `6.2.1+b38`).
pub fn upstream_version(version: &str) -> &str {
    let v = version.trim();
    let v = match v.split_once(':') {
        Some((epoch, rest)) if epoch.bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => v,
    };
    match v.rfind('-') {
        Some(i) if i > 0 => &v[..i],
        _ => v,
    }
}

/// Parse a dpkg status file. Stanzas without `Package:` or `Version:` are
/// skipped; continuation lines are ignored. Never fails.
pub fn parse_dpkg_status(text: &str) -> Vec<DpkgPackage> {
    let mut out = Vec::new();
    let mut name = None;
    let mut version = None;
    let mut status = None;
    let mut arch = None;
    let mut flush = |name: &mut Option<String>,
                     version: &mut Option<String>,
                     status: &mut Option<String>,
                     arch: &mut Option<String>| {
        if let (Some(n), Some(v)) = (name.take(), version.take()) {
            out.push(DpkgPackage {
                name: n,
                version: v,
                status: status.take(),
                architecture: arch.take(),
            });
        }
        *name = None;
        *version = None;
        *status = None;
        *arch = None;
    };
    for raw in text.lines() {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            flush(&mut name, &mut version, &mut status, &mut arch);
            continue;
        }
        if line.starts_with(' ') || line.starts_with('\t') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key {
            "Package" => {
                // A new Package: without a blank line also starts a stanza.
                if name.is_some() {
                    flush(&mut name, &mut version, &mut status, &mut arch);
                }
                name = Some(value.to_string());
            }
            "Version" => version = Some(value.to_string()),
            "Status" => status = Some(value.to_string()),
            "Architecture" => arch = Some(value.to_string()),
            _ => {}
        }
    }
    flush(&mut name, &mut version, &mut status, &mut arch);
    out
}

/// The L4T release in an `nvidia-l4t-core` version
/// (`36.4.3-20250107174145` → 36.4.3).
pub fn l4t_from_core_version(version: &str) -> Option<L4tVersion> {
    L4tVersion::parse(upstream_version(version)).ok()
}

/// The JetPack release in an `nvidia-jetpack` version:
/// `6.2.1+b38` → `6.2.1`, `5.1.2-b104` → `5.1.2`, `6.2+b77` → `6.2`,
/// `7.0-b128` → `7.0`.
pub fn jetpack_from_meta_version(version: &str) -> Option<String> {
    let v = version.trim();
    let v = v.split_once(':').map(|(_, r)| r).unwrap_or(v);
    let end = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let core = v[..end].trim_end_matches('.');
    let mut parts = core.split('.');
    let ok = parts.clone().count() >= 2
        && parts.all(|p| !p.is_empty() && p.len() <= 4)
        && core.len() <= 16;
    ok.then(|| core.to_string())
}

/// A component version found in dpkg, with the package that said so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PackageVersion {
    /// Upstream version (`12.6.68`, `8.6.0.166`, `10.3.0.30`).
    pub version: String,
    /// Package name (`cuda-cudart-12-6`).
    pub package: String,
    /// Full dpkg version (`12.6.68-1`).
    pub dpkg_version: String,
}

/// What the dpkg database says about the Jetson stack.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DpkgStack {
    /// `nvidia-l4t-core` version → L4T.
    pub l4t_core: Option<(L4tVersion, String)>,
    /// `nvidia-jetpack` version → JetPack (`6.2.1`), with the raw version.
    pub jetpack: Option<(String, String)>,
    /// Highest installed CUDA runtime (`cuda-cudart-X-Y`), else `cuda-nvcc-X-Y`
    /// or `cuda-toolkit-X-Y`.
    pub cuda: Option<PackageVersion>,
    /// Highest installed cuDNN runtime (`libcudnn9-cuda-12`, `libcudnn8`).
    pub cudnn: Option<PackageVersion>,
    /// Highest installed TensorRT runtime (`libnvinfer10`, `libnvinfer8`),
    /// else the `tensorrt` meta-package.
    pub tensorrt: Option<PackageVersion>,
    /// Highest installed CUDA forward-compatibility package (`cuda-compat-12-2`):
    /// the upgradable CUDA driver that JetPack 5.0+ can run a newer CUDA with
    /// (NVIDIA blog "Simplifying CUDA Upgrades for NVIDIA Jetson Users").
    #[serde(default)]
    pub cuda_compat: Option<PackageVersion>,
}

fn is_cuda_versioned(name: &str, prefix: &str) -> bool {
    // cuda-cudart-12-6, but not cuda-cudart-dev-12-6.
    name.strip_prefix(prefix).is_some_and(|rest| {
        let mut it = rest.split('-');
        matches!((it.next(), it.next(), it.next()),
            (Some(a), Some(b), None) if !a.is_empty() && !b.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit()))
    })
}

fn is_cudnn_runtime(name: &str) -> bool {
    // libcudnn7, libcudnn8, libcudnn9-cuda-12, libcudnn9-cuda-13.
    let Some(rest) = name.strip_prefix("libcudnn") else {
        return false;
    };
    let (major, tail) = rest.split_at(
        rest.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len()),
    );
    !major.is_empty()
        && (tail.is_empty()
            || tail
                .strip_prefix("-cuda-")
                .is_some_and(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit())))
}

fn is_nvinfer_runtime(name: &str) -> bool {
    name.strip_prefix("libnvinfer")
        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
}

fn best(pkgs: &[&DpkgPackage]) -> Option<PackageVersion> {
    pkgs.iter()
        .max_by(|a, b| cmp_dotted(a.upstream_version(), b.upstream_version()))
        .map(|p| PackageVersion {
            version: p.upstream_version().to_string(),
            package: p.name.clone(),
            dpkg_version: p.version.clone(),
        })
}

/// Extract the Jetson stack from parsed dpkg stanzas (installed ones only).
pub fn stack_from_packages(pkgs: &[DpkgPackage]) -> DpkgStack {
    let installed: Vec<&DpkgPackage> = pkgs.iter().filter(|p| p.is_installed()).collect();
    let find = |name: &str| installed.iter().find(|p| p.name == name).copied();
    let l4t_core = find("nvidia-l4t-core")
        .and_then(|p| l4t_from_core_version(&p.version).map(|v| (v, p.version.clone())));
    let jetpack = find("nvidia-jetpack")
        .and_then(|p| jetpack_from_meta_version(&p.version).map(|v| (v, p.version.clone())));
    let pick = |pred: &dyn Fn(&str) -> bool| -> Option<PackageVersion> {
        let v: Vec<&DpkgPackage> = installed
            .iter()
            .filter(|p| pred(&p.name))
            .copied()
            .collect();
        best(&v)
    };
    let cuda = pick(&|n| is_cuda_versioned(n, "cuda-cudart-"))
        .or_else(|| pick(&|n| is_cuda_versioned(n, "cuda-nvcc-")))
        .or_else(|| pick(&|n| is_cuda_versioned(n, "cuda-toolkit-")));
    let cudnn = pick(&is_cudnn_runtime);
    let tensorrt = pick(&is_nvinfer_runtime).or_else(|| pick(&|n| n == "tensorrt"));
    let cuda_compat = pick(&|n| is_cuda_versioned(n, "cuda-compat-"));
    DpkgStack {
        l4t_core,
        jetpack,
        cuda,
        cudnn,
        tensorrt,
        cuda_compat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(
            l4t_from_core_version("32.7.1-20220219090432"),
            Some(L4tVersion::new(32, 7, 1))
        );
        assert_eq!(
            l4t_from_core_version("36.4.3-20250107174145"),
            Some(L4tVersion::new(36, 4, 3))
        );
        assert_eq!(l4t_from_core_version("garbage"), None);
        for (raw, jp) in [
            ("4.6.1-b110", "4.6.1"),
            ("5.1.2-b104", "5.1.2"),
            ("6.2+b77", "6.2"),
            ("6.2.1+b38", "6.2.1"),
            ("6.2.2+b24", "6.2.2"),
            ("7.0-b128", "7.0"),
            ("7.2-b184", "7.2"),
        ] {
            assert_eq!(jetpack_from_meta_version(raw).as_deref(), Some(jp), "{raw}");
        }
        assert_eq!(jetpack_from_meta_version("b38"), None);
        assert_eq!(jetpack_from_meta_version("6"), None);
        assert_eq!(upstream_version("1:8.5.2-1+cuda11.4"), "8.5.2");
        assert_eq!(upstream_version("10.3.0.30-1+cuda12.5"), "10.3.0.30");
    }

    #[test]
    fn stanzas() {
        let text = "Package: nvidia-l4t-core\nStatus: install ok installed\nArchitecture: arm64\nVersion: 35.4.1-20230801124926\nDescription: NVIDIA Core Package\n multi-line\n\nPackage: libcudnn8\nStatus: deinstall ok config-files\nVersion: 8.6.0.166-1+cuda11.4\n\nPackage: cuda-cudart-11-4\nStatus: install ok installed\nVersion: 11.4.298-1\nPackage: cuda-cudart-dev-11-4\nStatus: install ok installed\nVersion: 11.4.999-1\n";
        let pkgs = parse_dpkg_status(text);
        assert_eq!(pkgs.len(), 4);
        let s = stack_from_packages(&pkgs);
        assert_eq!(s.l4t_core.unwrap().0, L4tVersion::new(35, 4, 1));
        assert_eq!(s.cudnn, None, "config-files only is not installed");
        assert_eq!(s.cuda.unwrap().version, "11.4.298");
        assert!(s.cuda_compat.is_none());
        let up = "Package: cuda-compat-12-2\nStatus: install ok installed\nVersion: 12.2.34086345-1\n\nPackage: cuda-compat-11-8\nStatus: deinstall ok config-files\nVersion: 11.8.31339915-1\n";
        let s = stack_from_packages(&parse_dpkg_status(up));
        assert_eq!(s.cuda_compat.unwrap().package, "cuda-compat-12-2");
    }

    #[test]
    fn package_name_filters() {
        assert!(is_cudnn_runtime("libcudnn8"));
        assert!(is_cudnn_runtime("libcudnn9-cuda-12"));
        assert!(!is_cudnn_runtime("libcudnn9-dev-cuda-12"));
        assert!(!is_cudnn_runtime("libcudnn8-dev"));
        assert!(!is_cudnn_runtime("libcudnn9-static-cuda-12"));
        assert!(is_nvinfer_runtime("libnvinfer10"));
        assert!(!is_nvinfer_runtime("libnvinfer-bin"));
        assert!(!is_nvinfer_runtime("libnvinfer-plugin10"));
        assert!(is_cuda_versioned("cuda-cudart-12-6", "cuda-cudart-"));
        assert!(!is_cuda_versioned("cuda-cudart-dev-12-6", "cuda-cudart-"));
    }

    #[test]
    fn garbage() {
        assert!(parse_dpkg_status("").is_empty());
        assert!(parse_dpkg_status("\u{0}\u{1}:::\n\n:").is_empty());
        assert_eq!(stack_from_packages(&[]), DpkgStack::default());
    }
}
