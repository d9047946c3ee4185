//! Version files of an installed CUDA toolkit and of the OS:
//!
//! * `/usr/local/cuda-X.Y/version.txt` (CUDA ≤ 11.0, JetPack 4): `CUDA Version
//!   10.2.300`.
//! * `/usr/local/cuda-X.Y/version.json` (CUDA ≥ 11.1, JetPack 5+): a JSON
//!   object with `cuda`, `cuda_cudart`, `cuda_nvcc`, ... each holding
//!   `{"name": ..., "version": ...}`. The `cuda` entry is sometimes a date
//!   (`11.8.20220929`), so the runtime's own version is preferred.
//! * `/etc/os-release` (`VERSION_ID="22.04"`).

use crate::error::{clip, JetsonError};

/// Parse `version.txt`: `CUDA Version 10.2.300` → `10.2.300`.
pub fn parse_cuda_version_txt(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v = l.trim().strip_prefix("CUDA Version")?.trim();
        let ok = !v.is_empty()
            && v.len() <= 32
            && v.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && v.bytes().next().is_some_and(|b| b.is_ascii_digit());
        ok.then(|| v.to_string())
    })
}

/// Parse `version.json` and return the toolkit version: `cuda_cudart`, else
/// `cuda_nvcc`, else `cuda`.
pub fn parse_cuda_version_json(text: &str) -> Result<String, JetsonError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| JetsonError::BadCudaVersionFile {
            reason: clip(&e.to_string(), 200),
        })?;
    for key in ["cuda_cudart", "cuda_nvcc", "cuda"] {
        if let Some(v) = value
            .get(key)
            .and_then(|c| c.get("version"))
            .and_then(|v| v.as_str())
        {
            let v = v.trim();
            if !v.is_empty() && v.len() <= 32 && v.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            {
                return Ok(v.to_string());
            }
        }
    }
    Err(JetsonError::BadCudaVersionFile {
        reason: "no cuda_cudart/cuda_nvcc/cuda version".into(),
    })
}

/// `X.Y` from a `/usr/local/cuda-X.Y` directory name.
pub fn cuda_dir_version(dir_name: &str) -> Option<String> {
    let v = dir_name.strip_prefix("cuda-")?;
    let mut it = v.split('.');
    let ok = matches!((it.next(), it.next(), it.next()),
        (Some(a), Some(b), None) if !a.is_empty() && !b.is_empty() && a.len() <= 3 && b.len() <= 3
            && a.bytes().all(|c| c.is_ascii_digit()) && b.bytes().all(|c| c.is_ascii_digit()));
    ok.then(|| v.to_string())
}

/// `VERSION_ID` of `/etc/os-release` (`22.04`), quotes removed.
pub fn parse_os_release_version_id(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v = l.trim().strip_prefix("VERSION_ID=")?;
        let v = v.trim().trim_matches('"').trim_matches('\'').trim();
        (!v.is_empty() && v.len() <= 32).then(|| v.to_string())
    })
}

/// `ID` of `/etc/os-release` (`ubuntu`).
pub fn parse_os_release_id(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v = l.trim().strip_prefix("ID=")?;
        let v = v.trim().trim_matches('"').trim();
        (!v.is_empty() && v.len() <= 32).then(|| v.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn txt() {
        assert_eq!(
            parse_cuda_version_txt("CUDA Version 10.2.300\n").as_deref(),
            Some("10.2.300")
        );
        assert_eq!(parse_cuda_version_txt("CUDA Version \n"), None);
        assert_eq!(parse_cuda_version_txt(""), None);
    }

    #[test]
    fn json() {
        let j = r#"{ "cuda" : { "name" : "CUDA SDK", "version" : "11.8.20220929" },
                     "cuda_cudart" : { "name" : "CUDA Runtime (cudart)", "version" : "11.8.89" } }"#;
        assert_eq!(parse_cuda_version_json(j).unwrap(), "11.8.89");
        let j = r#"{ "cuda" : { "name" : "CUDA SDK", "version" : "12.2.140" } }"#;
        assert_eq!(parse_cuda_version_json(j).unwrap(), "12.2.140");
        assert!(parse_cuda_version_json("").is_err());
        assert!(parse_cuda_version_json("{").is_err());
        assert!(parse_cuda_version_json("[]").is_err());
        assert!(parse_cuda_version_json(r#"{"cuda":{"version":"x; rm -rf"}}"#).is_err());
    }

    #[test]
    fn dirs_and_os() {
        assert_eq!(cuda_dir_version("cuda-12.6").as_deref(), Some("12.6"));
        assert_eq!(cuda_dir_version("cuda"), None);
        assert_eq!(cuda_dir_version("cuda-12"), None);
        assert_eq!(cuda_dir_version("cuda-12.6.1"), None);
        let os = "NAME=\"Ubuntu\"\nVERSION_ID=\"20.04\"\nID=ubuntu\n";
        assert_eq!(parse_os_release_version_id(os).as_deref(), Some("20.04"));
        assert_eq!(parse_os_release_id(os).as_deref(), Some("ubuntu"));
        assert_eq!(parse_os_release_version_id(""), None);
    }
}
