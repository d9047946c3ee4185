//! Python packaging files read without running Python: `torch/version.py`,
//! `*.dist-info/METADATA`, `pyvenv.cfg`, TensorFlow's `build_info.py`, and
//! the CUDA release other frameworks name in their distribution names
//! (`jax-cuda13-plugin`, `cupy-cuda12x`) or their libraries' sonames.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What `torch/version.py` says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TorchVersionPy {
    pub version: String,
    /// CUDA version the build targets; `None` for CPU and ROCm builds.
    pub cuda: Option<String>,
    pub git_version: Option<String>,
    pub hip: Option<String>,
}

fn py_value(v: &str) -> Option<String> {
    let v = v.trim();
    if v == "None" {
        return None;
    }
    Some(
        v.strip_prefix('\'')
            .and_then(|s| s.strip_suffix('\''))
            .or_else(|| v.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
            .unwrap_or(v)
            .to_string(),
    )
}

/// Parses the generated `torch/version.py`.
pub fn parse_torch_version_py(text: &str) -> Option<TorchVersionPy> {
    let mut vals: BTreeMap<String, Option<String>> = BTreeMap::new();
    for line in text.lines() {
        let Some((lhs, rhs)) = line.split_once('=') else {
            continue;
        };
        let name = lhs.split(':').next().unwrap_or("").trim();
        if name.chars().all(|c| c.is_alphanumeric() || c == '_') && !name.is_empty() {
            vals.insert(name.to_string(), py_value(rhs));
        }
    }
    let version = vals.get("__version__").cloned().flatten()?;
    Some(TorchVersionPy {
        version,
        cuda: vals.get("cuda").cloned().flatten(),
        git_version: vals.get("git_version").cloned().flatten(),
        hip: vals.get("hip").cloned().flatten(),
    })
}

/// A package's METADATA: name, version and `Requires-Dist` pins.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DistMetadata {
    pub name: String,
    pub version: String,
    /// (requirement name, version spec) without markers.
    pub requires: Vec<(String, String)>,
}

/// Parses the headers of a `METADATA` / `PKG-INFO` file.
pub fn parse_dist_metadata(text: &str) -> Option<DistMetadata> {
    let mut m = DistMetadata::default();
    for line in text.lines() {
        if line.is_empty() {
            break; // the body (long description) follows
        }
        if let Some(v) = line.strip_prefix("Name:") {
            m.name = v.trim().to_string();
        } else if let Some(v) = line.strip_prefix("Version:") {
            m.version = v.trim().to_string();
        } else if let Some(v) = line.strip_prefix("Requires-Dist:") {
            let (req, marker) = v.split_once(';').unwrap_or((v, ""));
            let req = req.trim();
            if marker.contains("extra ==") {
                continue;
            }
            let req = req.replace(['(', ')'], " ");
            let split = req
                .find(['=', '<', '>', '~', '!', ' ', '['])
                .unwrap_or(req.len());
            let name = req[..split].trim().to_string();
            let rest = req[split..].trim();
            let spec = rest
                .strip_prefix('[')
                .and_then(|r| r.split_once(']'))
                .map(|(_, s)| s)
                .unwrap_or(rest)
                .replace(' ', "");
            if !name.is_empty() {
                m.requires.push((name, spec));
            }
        }
    }
    (!m.name.is_empty() && !m.version.is_empty()).then_some(m)
}

/// Normalises a distribution name (PEP 503): `nvidia_cudnn_cu13` → `nvidia-cudnn-cu13`.
pub fn normalize_name(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

/// The `version` of a `pyvenv.cfg` (`version = 3.12.3` or `version_info = 3.12.3.final.0`).
pub fn parse_pyvenv_cfg(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The CUDA release a framework distribution's name says it was built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedCuda {
    /// `jax`, `cupy` or `tensorrt`.
    pub framework: &'static str,
    pub major: u32,
    /// Only the old per-minor names carry one (`cupy-cuda117` → 11.7).
    pub minor: Option<u32>,
}

/// Reads the CUDA release from a (normalised) distribution name:
/// `jax-cuda12-plugin` / `jax-cuda13-plugin` (JAX's CUDA plugin),
/// `cupy-cuda11x` / `cupy-cuda12x` / `cupy-cuda13x` and the older
/// `cupy-cuda102`, `cupy-cuda117`, and `tensorrt-cu12` / `tensorrt-cu13`.
pub fn cuda_of_distribution(name: &str) -> Option<NamedCuda> {
    let number = |s: &str| -> Option<u32> {
        (!s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let named = |framework, major, minor| NamedCuda {
        framework,
        major,
        minor,
    };
    if let Some(rest) = name.strip_prefix("jax-cuda") {
        return Some(named("jax", number(rest.strip_suffix("-plugin")?)?, None));
    }
    if let Some(rest) = name.strip_prefix("cupy-cuda") {
        if let Some(major) = rest.strip_suffix('x') {
            return Some(named("cupy", number(major)?, None));
        }
        // cupy-cuda92 (9.2), cupy-cuda102 (10.2), cupy-cuda117 (11.7).
        number(rest)?;
        let (major, minor) = rest.split_at(rest.len().checked_sub(1).filter(|n| *n > 0)?);
        return Some(named("cupy", number(major)?, Some(number(minor)?)));
    }
    let major = name.strip_prefix("tensorrt-cu")?;
    Some(named("tensorrt", number(major)?, None))
}

/// What TensorFlow's generated `tensorflow/python/platform/build_info.py` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TfBuildInfo {
    pub is_cuda_build: bool,
    /// `12.5.1`; `None` on CPU builds.
    pub cuda_version: Option<String>,
    /// `9`; `None` on CPU builds.
    pub cudnn_version: Option<String>,
}

/// Parses `build_info.py`: one `collections.OrderedDict([('key', value), …])`
/// literal whose values are strings, booleans or lists of strings. `None` when
/// the text holds no `is_cuda_build` key (not that file).
pub fn parse_tf_build_info(text: &str) -> Option<TfBuildInfo> {
    let value = |key: &str| -> Option<&str> {
        let at = text.find(&format!("('{key}', "))? + key.len() + 5;
        let rest = &text[at..];
        let end = rest.find(')')?;
        Some(rest[..end].trim())
    };
    let string = |key: &str| {
        value(key)
            .and_then(|v| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .map(str::to_string)
    };
    Some(TfBuildInfo {
        is_cuda_build: value("is_cuda_build")? == "True",
        cuda_version: string("cuda_version"),
        cudnn_version: string("cudnn_version"),
    })
}

/// The CUDA and cuDNN majors a library's `NEEDED` sonames name:
/// `libcudart.so.12`, `libcublas.so.12` or `libcublasLt.so.12` → CUDA 12
/// (cuBLAS's soname major is the CUDA major), `libcudnn.so.9` → cuDNN 9.
/// `None` when no CUDA runtime or cuBLAS soname is among them.
pub fn cuda_of_sonames(needed: &[String]) -> Option<(u32, Option<u32>)> {
    let major_of = |families: &[&str]| {
        needed.iter().find_map(|n| {
            let (family, version) = n.split_once(".so.")?;
            families
                .contains(&family)
                .then(|| version.split('.').next()?.parse::<u32>().ok())?
        })
    };
    let cuda = major_of(&["libcudart", "libcublasLt", "libcublas"])?;
    Some((cuda, major_of(&["libcudnn"])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torch_2_11_version_py() {
        let t = "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'rocm', 'xpu']\n__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\ngit_version = '70d99e998b4955e0049d13a98d77ae1b14db1f45'\nhip: Optional[str] = None\nrocm: Optional[str] = None\nxpu: Optional[str] = None\n";
        let v = parse_torch_version_py(t).unwrap();
        assert_eq!(v.version, "2.11.0+cu130");
        assert_eq!(v.cuda.as_deref(), Some("13.0"));
        assert_eq!(v.hip, None);
    }

    #[test]
    fn cpu_build_and_junk() {
        let v = parse_torch_version_py("__version__ = '2.3.1+cpu'\ncuda = None\n").unwrap();
        assert_eq!(v.cuda, None);
        assert!(parse_torch_version_py("\u{0}\u{1}garbage").is_none());
    }

    #[test]
    fn metadata_both_syntaxes() {
        let t = "Metadata-Version: 2.1\nName: torch\nVersion: 2.1.0\nRequires-Dist: nvidia-cudnn-cu12 (==8.9.2.26) ; platform_system == \"Linux\"\nRequires-Dist: nvidia-nccl-cu12==2.18.1; platform_system == \"Linux\"\nRequires-Dist: opt-einsum>=3.3; extra == \"opt-einsum\"\nRequires-Dist: cuda-toolkit[cublas,cudart]==13.2.2\n\nlong text\nRequires-Dist: nope\n";
        let m = parse_dist_metadata(t).unwrap();
        assert_eq!(m.name, "torch");
        assert_eq!(
            m.requires,
            vec![
                ("nvidia-cudnn-cu12".to_string(), "==8.9.2.26".to_string()),
                ("nvidia-nccl-cu12".to_string(), "==2.18.1".to_string()),
                ("cuda-toolkit".to_string(), "==13.2.2".to_string()),
            ]
        );
        assert_eq!(normalize_name("nvidia_cudnn_cu13"), "nvidia-cudnn-cu13");
    }
    #[test]
    fn framework_cuda_from_distribution_names() {
        // Names as pip writes them in dist-info directories (normalised), from
        // the PyPI wheels listed in agent/tests/data/frameworks/README.md.
        let c = |n: &str| cuda_of_distribution(n).map(|c| (c.framework, c.major, c.minor));
        assert_eq!(c("jax-cuda13-plugin"), Some(("jax", 13, None)));
        assert_eq!(c("jax-cuda12-plugin"), Some(("jax", 12, None)));
        assert_eq!(c("cupy-cuda12x"), Some(("cupy", 12, None)));
        assert_eq!(c("cupy-cuda11x"), Some(("cupy", 11, None)));
        assert_eq!(c("cupy-cuda117"), Some(("cupy", 11, Some(7))));
        assert_eq!(c("cupy-cuda102"), Some(("cupy", 10, Some(2))));
        assert_eq!(c("tensorrt-cu12"), Some(("tensorrt", 12, None)));
        // The pjrt is not the plugin; others name no CUDA.
        assert_eq!(c("jax-cuda13-pjrt"), None);
        assert_eq!(c("cupy"), None);
        assert_eq!(c("cupy-cudax"), None);
        assert_eq!(c("tensorrt-cu12-libs"), None);
        assert_eq!(c("jax-cuda-plugin"), None);
    }

    #[test]
    fn jax_plugin_pins_its_pjrt() {
        // Verbatim METADATA of jax_cuda13_plugin-0.12.0.1 (PyPI).
        let m = parse_dist_metadata(include_str!(
            "../../tests/data/frameworks/jax_cuda13_plugin-0.12.0.1.METADATA"
        ))
        .unwrap();
        assert_eq!(m.name, "jax-cuda13-plugin");
        assert_eq!(m.version, "0.12.0.1");
        assert!(m
            .requires
            .contains(&("jax-cuda13-pjrt".to_string(), "==0.12.0.1".to_string())));
    }

    #[test]
    fn tensorflow_build_info_of_the_pypi_wheel() {
        // Verbatim tensorflow/python/platform/build_info.py of tensorflow 2.21.0.
        let b = parse_tf_build_info(include_str!(
            "../../tests/data/frameworks/tensorflow-2.21.0.build_info.py"
        ))
        .unwrap();
        assert!(b.is_cuda_build);
        assert_eq!(b.cuda_version.as_deref(), Some("12.5.1"));
        assert_eq!(b.cudnn_version.as_deref(), Some("9"));
        assert_eq!(parse_tf_build_info("import collections\n"), None);
        // tensorflow-cpu 2.21.0's: no CUDA keys at all.
        let cpu = parse_tf_build_info(include_str!(
            "../../tests/data/frameworks/tensorflow_cpu-2.21.0.build_info.py"
        ))
        .unwrap();
        assert!(!cpu.is_cuda_build);
        assert_eq!(cpu.cuda_version, None);
    }

    #[test]
    fn release_numbers_like_jaxlib() {
        use gpukb_facts::compat::{jax_plugin_usable, release_numbers};
        assert_eq!(release_numbers("0.4.38.dev20260317"), vec![0, 4, 38]);
        assert_eq!(release_numbers("0.12.0.1"), vec![0, 12, 0, 1]);
        assert_eq!(release_numbers("0.4.30+cuda12.cudnn89"), vec![0, 4, 30]);
        assert!(jax_plugin_usable("0.12.0.1", "0.12.0.1"));
        assert!(!jax_plugin_usable("0.12.0.1", "0.12.0"));
        assert!(!jax_plugin_usable("0.9.1", "0.4.38.dev20260317"));
        assert!(!jax_plugin_usable("", ""));
    }
    /// The `NEEDED` names of a verbatim `readelf -d` listing.
    fn needed_of(readelf: &str) -> Vec<String> {
        readelf
            .lines()
            .filter(|l| l.contains("(NEEDED)"))
            .filter_map(|l| Some(l.split_once('[')?.1.trim_end_matches(']').to_string()))
            .collect()
    }

    #[test]
    fn onnxruntime_cuda_provider_sonames_name_its_cuda() {
        // readelf -d of the real providers library of two PyPI wheels.
        let cu12 = needed_of(include_str!(
            "../../tests/data/frameworks/onnxruntime_gpu-1.25.1.providers_cuda.readelf-d.txt"
        ));
        assert!(cu12.contains(&"libcublasLt.so.12".to_string()));
        assert_eq!(cuda_of_sonames(&cu12), Some((12, Some(9))));
        let cu13 = needed_of(include_str!(
            "../../tests/data/frameworks/onnxruntime_gpu-1.31.1.providers_cuda.readelf-d.txt"
        ));
        assert_eq!(cu13.len(), 13);
        // 1.31.1 dlopens cuDNN: no libcudnn among its NEEDED.
        assert_eq!(cuda_of_sonames(&cu13), Some((13, None)));
        assert_eq!(cuda_of_sonames(&["libc.so.6".to_string()]), None);
    }
}
