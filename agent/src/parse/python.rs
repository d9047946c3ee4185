//! Python packaging files read without running Python: `torch/version.py`,
//! `*.dist-info/METADATA`, `pyvenv.cfg`.

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
}
