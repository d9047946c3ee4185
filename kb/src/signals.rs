//! Extracts typed signals from a normalised paste: error-code names (CUresult, cudaError_t,
//! NVML, cuBLAS, cuDNN, NCCL), numeric codes next to CUDA context, Xid numbers, sm_XX
//! targets and compute capabilities, sonames, and framework names.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::tokenize;

/// Signals found in a paste.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Signals {
    /// Symbolic code names, e.g. `CUDA_ERROR_NO_BINARY_FOR_GPU`, `ncclSystemError`.
    pub code_names: Vec<String>,
    /// Numbers next to "error"/"code" on a line that mentions CUDA, e.g. 803.
    pub cuda_numbers: Vec<i64>,
    /// NCCL result numbers, e.g. `NCCL error ... (2)`.
    pub nccl_numbers: Vec<i64>,
    /// Xid numbers from kernel logs.
    pub xids: Vec<i64>,
    /// `sm_XX` / `compute_XX` targets.
    pub archs: Vec<String>,
    /// Compute capabilities written as `X.Y`.
    pub capabilities: Vec<String>,
    /// Shared-library names (`libcudart.so.12`, `cudart64_110.dll`).
    pub sonames: Vec<String>,
    /// Frameworks and tools named.
    pub frameworks: Vec<String>,
}

impl Signals {
    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        *self == Signals::default()
    }
}

static NAMES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\b(CUDA_ERROR_[A-Z0-9_]+|CUDA_SUCCESS|cudaError[A-Z][A-Za-z0-9]+|NVML_ERROR_[A-Z_]+",
        r"|CUBLAS_STATUS_[A-Z_]+|CUDNN_STATUS_[A-Z_]+",
        r"|nccl(?:UnhandledCudaError|SystemError|InternalError|InvalidArgument|InvalidUsage|RemoteError|InProgress))\b"
    ))
    .expect("static regex")
});
static CUDA_NUM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:error|code|err|returned|result|status)[ \t]*(?:code[ \t]*)?[=:#]?[ \t]*\(?[ \t]*([0-9]{1,4})\b",
    )
    .expect("static regex")
});
static NCCL_NUM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:error|code|result)\b[^0-9\n]{0,20}\(?([0-9])\)?").expect("static regex")
});
static ARCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b((?:sm|compute)_[0-9]{2,3}[af]?)\b").expect("static regex")
});
static CAPABILITY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)capability[ \t]*(?:of[ \t]*|is[ \t]*|:[ \t]*)?([0-9]{1,2}\.[0-9])\b")
        .expect("static regex")
});
static SONAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(lib[a-z0-9_+\-]+\.so(?:\.[0-9]+)*|[a-z0-9_]+\.dll)\b")
        .expect("static regex")
});

const MAX_EACH: usize = 32;

fn push_unique<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if v.len() < MAX_EACH && !v.contains(&x) {
        v.push(x);
    }
}

/// Extracts signals from normalised text.
pub fn extract(text: &str) -> Signals {
    let mut s = Signals::default();
    // Cheap substring checks before each regex: building a regex costs more than a short
    // paste's whole search.
    let lower_all = text.to_ascii_lowercase();
    let has = |n: &str| lower_all.contains(n);
    if [
        "cuda_",
        "cudaerror",
        "nvml_error",
        "cublas_status",
        "cudnn_status",
        "nccl",
    ]
    .iter()
    .any(|n| has(n))
    {
        for m in NAMES.find_iter(text) {
            push_unique(&mut s.code_names, m.as_str().to_string());
        }
    }
    for line in text.lines() {
        if !line.bytes().any(|b| b.is_ascii_digit()) {
            continue;
        }
        let lower = line.to_ascii_lowercase();
        if lower.contains("cuda") || lower.contains("cublas") || lower.contains("cudnn") {
            for c in CUDA_NUM.captures_iter(line) {
                if let Some(n) = c.get(1).and_then(|m| m.as_str().parse::<i64>().ok()) {
                    if n > 0 {
                        push_unique(&mut s.cuda_numbers, n);
                    }
                }
            }
        }
        if lower.contains("nccl") {
            for c in NCCL_NUM.captures_iter(line) {
                if let Some(n) = c.get(1).and_then(|m| m.as_str().parse::<i64>().ok()) {
                    if n > 0 {
                        push_unique(&mut s.nccl_numbers, n);
                    }
                }
            }
        }
    }
    for (t, _, _) in tokenize::err_tokens(text) {
        if let Some(n) = t.strip_prefix("xid_").and_then(|n| n.parse::<i64>().ok()) {
            push_unique(&mut s.xids, n);
        }
    }
    if has("sm_") || has("compute_") {
        for m in ARCH.captures_iter(text) {
            push_unique(&mut s.archs, m[1].to_ascii_lowercase());
        }
    }
    if has("capability") {
        for m in CAPABILITY.captures_iter(text) {
            push_unique(&mut s.capabilities, m[1].to_string());
        }
    }
    let mut sonames = BTreeSet::new();
    if has(".so") || has(".dll") {
        for m in SONAME.captures_iter(text) {
            if sonames.len() < MAX_EACH {
                sonames.insert(m[1].to_string());
            }
        }
    }
    s.sonames = sonames.into_iter().collect();
    s.frameworks = crate::model::frameworks_in(text)
        .into_iter()
        .map(String::from)
        .collect();
    s
}
