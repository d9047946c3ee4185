//! Extracts typed signals from a normalised paste: error-code names (CUresult, cudaError_t,
//! NVML, cuBLAS, cuDNN, NCCL), numeric codes next to CUDA context and the number a named CUDA
//! runtime call returned, Xid numbers, sm_XX targets and compute capabilities, sonames, and
//! framework names.

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
    /// NVIDIA driver releases the paste names (`535.104.05`; `550.54` after "driver").
    pub driver_versions: Vec<String>,
    /// GPU models the paste names, lower-case words (`rtx 4090`, `a100`, `h200`).
    pub gpu_models: Vec<String>,
    /// PyTorch builds the paste names (`2.5.1+cu124`, `2.7.0`).
    pub torch_versions: Vec<String>,
    /// Library versions the paste says its process loaded (`cudnn 9.14.0` from "found
    /// runtime version (9, 14, 0)", `nccl 2.21.5` from "NCCL version 2.21.5").
    #[serde(default)]
    pub loaded_libraries: Vec<LoadedLibrary>,
    /// Absolute paths of shared libraries the paste names.
    #[serde(default)]
    pub library_paths: Vec<String>,
    /// Shared libraries the paste says its process could not open, by file name
    /// (`libcudnn.so.9` from "libcudnn.so.9: cannot open shared object file").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_libraries: Vec<String>,
    /// Environment settings the paste shows (`CUDA_VISIBLE_DEVICES=GPU-…`).
    #[serde(default)]
    pub env_settings: Vec<EnvSetting>,
    /// The native source location an error is reported from (`convolutional_kernels.cu:138`,
    /// `line 167 in file …/ops.cu`) when the paste names no PyTorch code: the failing code
    /// is a program's or library's own, not the PyTorch build's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_source: Option<String>,
}

/// A library version the paste says a process loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LoadedLibrary {
    /// Library family, lower case: `cudnn`, `nccl`.
    pub library: String,
    /// `9.14.0`.
    pub version: String,
}

/// An environment variable setting shown in the paste.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct EnvSetting {
    /// `CUDA_VISIBLE_DEVICES`.
    pub name: String,
    /// Its value, quotes removed (may be empty).
    pub value: String,
}

impl Signals {
    /// Takes the facts that say which machine a paste came from (driver releases, GPU
    /// models, torch builds) from `other` (an environment report's signals), and nothing
    /// that is evidence for a cause.
    pub fn adopt_machine(&mut self, other: Signals) {
        for (mine, theirs) in [
            (&mut self.driver_versions, other.driver_versions),
            (&mut self.gpu_models, other.gpu_models),
            (&mut self.torch_versions, other.torch_versions),
        ] {
            for v in theirs {
                if !mine.contains(&v) {
                    mine.push(v);
                }
            }
        }
    }

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
/// go-nvml (the device plugin, the container toolkit, GPU operator, dcgm-exporter) prints an
/// NVML return code without its `NVML_` prefix: `Failed to initialize NVML:
/// ERROR_LIBRARY_NOT_FOUND`. Read only on lines that name NVML.
static GO_NVML_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bERROR_([A-Z][A-Z_]+)\b").expect("static regex"));
/// A cudaError_t name printed without its `cudaError` prefix, right after "CUDA error".
static CUDA_ERROR_BARE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i:\bcuda ?error)[ \t:.]+([A-Z][a-z]+(?:[A-Z][a-z]+)+)\b").expect("static regex")
});
/// A CUresult name as other languages' bindings print it, read only on lines that name CUDA:
/// Julia's CUDA.jl drops the `CUDA_` prefix (`(code 209, ERROR_NO_BINARY_FOR_GPU)`).
static CUDA_ERROR_UNPREFIXED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bERROR_([A-Z][A-Z0-9_]+)\b").expect("static regex"));
/// Rust's CUDA crates (cust, rustacuda, rust-gpu-tools) print the result as a CamelCase variant
/// of their error type: `Cuda(NoBinaryForGpu)`, `CudaError::InvalidPtx`.
static CUDA_ERROR_CAMEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i:\bcuda\w*)(?:\(|::)((?:[A-Z][a-z0-9]+){2,})\b").expect("static regex")
});
static CUDA_NUM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i-u)\b(?:error|code|err|returned|result|status)[ \t]*(?:code[ \t]*)?[=:#]?[ \t]*\(?[ \t]*([0-9]{1,4})\b",
    )
    .expect("static regex")
});
/// The number a CUDA runtime call returned, in the forms its callers print it: `cudaGetDeviceCount
/// returned 35`, `cudaMalloc failed with error code 2`, glog's `error == cudaSuccess (35 vs. 0)`
/// and `cudaSuccess == cudaStat (0 vs. 35)`, ONNX Runtime's `CUDA failure 35:`. Unlike
/// [`CUDA_NUM`] the number is the call's cudaError_t, not any number after "error".
static CUDA_CALL_NUM: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
    regex::bytes::Regex::new(concat!(
        r"(?-u)\bcuda[A-Z][A-Za-z]+(?:_v\d+)?\b(?:\(\))?[^\n]{0,30}?\b(?:returned|returns|failed with error(?: code)?|error code|error)[ \t]*[:=#]?[ \t]*\(?([0-9]{1,4})\b",
        r"|==[ \t]*cudaSuccess[ \t]*\(([0-9]{1,4}) vs\.? 0\)",
        r"|cudaSuccess[ \t]*==[ \t]*\w+[ \t]*\(0 vs\.? ([0-9]{1,4})\)",
        r"|\bCUDA failure ([0-9]{1,4}):",
    ))
    .expect("static regex")
});

/// The cudaError_t numbers CUDA runtime calls in `text` returned ([`CUDA_CALL_NUM`]'s forms),
/// at most a few, zero (cudaSuccess) left out.
pub fn cuda_call_numbers(text: &str) -> Vec<i64> {
    let mut out = Vec::new();
    // Building the regex costs more than most pastes' search: only where a form can be.
    let names_a_call = text
        .as_bytes()
        .windows(5)
        .any(|w| w.starts_with(b"cuda") && w[4].is_ascii_uppercase());
    if !names_a_call && !text.contains("CUDA failure ") {
        return out;
    }
    for c in CUDA_CALL_NUM.captures_iter(text.as_bytes()) {
        let n = c
            .iter()
            .skip(1)
            .flatten()
            .next()
            .and_then(|m| std::str::from_utf8(m.as_bytes()).ok())
            .and_then(|d| d.parse::<i64>().ok());
        if let Some(n) = n.filter(|n| *n > 0) {
            push_unique(&mut out, n);
        }
    }
    out
}
static NCCL_NUM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:error|code|result)\b[^0-9\n]{0,20}\(?([0-9])\)?").expect("static regex")
});
static ARCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i-u)\b((?:sm|compute)_[0-9]{2,3}[af]?)\b").expect("static regex")
});
static CAPABILITY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i-u)capability[ \t]*(?:of[ \t]*|is[ \t]*|:[ \t]*)?([0-9]{1,2}\.[0-9])\b")
        .expect("static regex")
});
static SONAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i-u)\b(lib[a-z0-9_+\-]+\.so(?:\.[0-9]+)*|[a-z0-9_]+\.dll)\b")
        .expect("static regex")
});

static DRIVER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[^0-9.])([3-9][0-9]{2}\.[0-9]{2,3}(?:\.[0-9]{2,3})?)(?:$|[^0-9.]|\.[^0-9])")
        .expect("static regex")
});
// ASCII mode (`-u`): the names are ASCII, and Unicode word boundaries and case
// folding make these regexes several times costlier to build on every search.
static GEFORCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i-u)\b(rtx|gtx)[ \t]?([0-9]{3,4})(?:[ \t]?(ti|super))?\b").expect("static regex")
});
static DATACENTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i-u)\b(a100|a800|a10g|a10|a30|a40|a16|a2|h100|h800|h200|h20|gh200|gb200|gb300|gb10",
        r"|b200|b100|b300|l40s|l40|l4|t4|v100|p100|p40|p4|k80|m60)\b"
    ))
    .expect("static regex")
});
static TORCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i-u)(?:\btorch(?:==|[ \t]+version:?[ \t]*|[ \t]+|-)v?([0-9]\.[0-9]{1,2}\.[0-9]{1,2}(?:\+(?:cu[0-9]{2,3}|cpu))?)\b",
        r"|\b([0-9]\.[0-9]{1,2}\.[0-9]{1,2}\+cu[0-9]{2,3})\b)"
    ))
    .expect("static regex")
});

static RUNTIME_LIB: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)(cudnn)[^\n]{0,160}?found runtime version \(([0-9]+), ([0-9]+), ([0-9]+)\)",
        r"|loaded runtime (cudnn) library:?[ \t]*([0-9]+)\.([0-9]+)\.([0-9]+)",
        r"|\b(nccl) version:?[ \t]*([0-9]+)\.([0-9]+)\.([0-9]+)"
    ))
    .expect("static regex")
});
/// A shared library the loader could not open: glibc's `NAME: cannot open shared object
/// file`, `ldd`'s `NAME => not found`, or `Could not load library NAME` (cuDNN 8).
static MISSING_LIB: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:^|[^A-Za-z0-9._+-])(lib[A-Za-z0-9_+-]+\.so(?:\.[0-9]+)*)(?:: cannot open shared object file| => not found)|Could not load library (lib[A-Za-z0-9_+-]+\.so(?:\.[0-9]+)*)",
    )
    .expect("static regex")
});

static LIB_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:^|[^A-Za-z0-9._~/-])(/(?:[A-Za-z0-9._+-]+/)+lib[A-Za-z0-9_+-]+\.so(?:\.[0-9]+)*)",
    )
    .expect("static regex")
});
/// A C, C++ or CUDA source file at a line, as CUDA error-check macros print it
/// (`file.cu:138`, `file.cu(138)`, `file.cu 138`, `file: x.cu : f() : line: 138`,
/// `at line 167 in file x.cu`).
static NATIVE_SOURCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)[\w.\-]+\.(?:cu|cuh|cpp|cc|cxx|hpp)(?:\s*:\s*\d+|\(\d+\)|[ \t]+\d+\b|\s*[:,]?[^\n]{0,80}?\bline:?\s*\d+)",
        r"|\bline \d+ (?:in|of) file \S+?\.(?:cu|cpp|cc)\b"
    ))
    .expect("static regex")
});
/// PyTorch's own sources (ATen, c10) in a path or a symbol.
static TORCH_SOURCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\baten[/\\]|\bc10(?:[/\\]|::)").expect("static regex"));
static ENV_SET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?-u:\b)(CUDA_VISIBLE_DEVICES|NVIDIA_VISIBLE_DEVICES|LD_LIBRARY_PATH|LD_PRELOAD|CUDA_HOME)",
        r"=(\x22[^\x22\n]*\x22|'[^'\n]*'|[^ \t\n;&|]*)"
    ))
    .expect("static regex")
});

/// The CUDA code table (`kb/tables/cuda_errors.csv`: API, number, name, ...), so a name read
/// from another binding's spelling is kept only when CUDA has it.
const CUDA_ERRORS_CSV: &str = include_str!("../tables/cuda_errors.csv");

/// Whether `name` is a CUresult or cudaError_t name of the code table.
fn is_cuda_error_name(name: &str) -> bool {
    CUDA_ERRORS_CSV.contains(&format!(",{name},"))
}

/// CUresult / cudaError_t names written the way Julia and Rust bindings print them, as the
/// C names the code table holds; a spelling that names no CUDA code is not kept.
fn cuda_names_of_other_bindings(text: &str, names: &mut Vec<String>) {
    let mut keep = |name: String| {
        if is_cuda_error_name(&name) {
            push_unique(names, name);
        }
    };
    for line in text
        .lines()
        .filter(|l| l.to_ascii_lowercase().contains("cuda"))
    {
        if line.contains("ERROR_") {
            for c in CUDA_ERROR_UNPREFIXED.captures_iter(line) {
                keep(format!("CUDA_ERROR_{}", &c[1]));
            }
        }
        if line.contains('(') || line.contains("::") {
            for c in CUDA_ERROR_CAMEL.captures_iter(line) {
                keep(format!("CUDA_ERROR_{}", snake_upper(&c[1])));
                keep(format!("cudaError{}", &c[1]));
            }
        }
    }
}

/// `NoBinaryForGpu` -> `NO_BINARY_FOR_GPU`.
fn snake_upper(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for (i, ch) in camel.chars().enumerate() {
        if i > 0 && ch.is_ascii_uppercase() {
            out.push('_');
        }
        out.push(ch.to_ascii_uppercase());
    }
    out
}

const MAX_EACH: usize = 32;

/// Library versions, library paths and environment settings the paste states: the
/// facts of the failing process that search compares with the machine model.
fn process_facts(text: &str, lower: &str, s: &mut Signals) {
    if lower.contains("runtime version")
        || lower.contains("runtime cudnn")
        || lower.contains("nccl version")
    {
        for c in RUNTIME_LIB.captures_iter(text) {
            let groups: Vec<&str> = c.iter().skip(1).flatten().map(|m| m.as_str()).collect();
            if let [lib, a, b, d] = groups[..] {
                push_unique(
                    &mut s.loaded_libraries,
                    LoadedLibrary {
                        library: lib.to_ascii_lowercase(),
                        version: format!("{a}.{b}.{d}"),
                    },
                );
            }
        }
    }
    if lower.contains(".so") {
        for c in LIB_PATH.captures_iter(text) {
            push_unique(&mut s.library_paths, c[1].to_string());
        }
        if lower.contains("cannot open shared object")
            || lower.contains("=> not found")
            || lower.contains("could not load library")
        {
            for c in MISSING_LIB.captures_iter(text) {
                if let Some(m) = c.get(1).or_else(|| c.get(2)) {
                    push_unique(&mut s.missing_libraries, m.as_str().to_string());
                }
            }
        }
    }
    if text.contains('=')
        && (lower.contains("_devices=") || lower.contains("ld_") || lower.contains("cuda_home="))
    {
        for c in ENV_SET.captures_iter(text) {
            let v = c[2].trim_matches(|q| q == '"' || q == '\'');
            push_unique(
                &mut s.env_settings,
                EnvSetting {
                    name: c[1].to_string(),
                    value: v.to_string(),
                },
            );
        }
    }
}

/// Whether lower-cased `text` may hold a name `DATACENTER` matches: every one starts a
/// word with one of `ahbltvpkm` and a digit, or with `gh`/`gb` and a digit. Checked before
/// the regex is built, which costs more than a short paste's whole search.
fn may_name_datacenter_gpu(text: &[u8]) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    text.iter().enumerate().any(|(i, &b)| {
        let starts = i == 0 || !word(text[i - 1]);
        let digit_at = |j: usize| text.get(j).is_some_and(|c| c.is_ascii_digit());
        starts
            && ((b"ahbltvpkm".contains(&b) && digit_at(i + 1))
                || (b == b'g' && matches!(text.get(i + 1), Some(b'h' | b'b')) && digit_at(i + 2)))
    })
}

/// Driver releases in `text`: three-part releases anywhere (`535.104.05`), two-part ones
/// only within 40 characters after "driver" or "nvidia" (`driver 550.54`).
fn driver_versions(text: &str, lower: &str, out: &mut Vec<String>) {
    // every match holds `DDD.DD`: look for one before building the regex
    let digits = |w: &[u8]| w.iter().all(u8::is_ascii_digit);
    if !lower
        .as_bytes()
        .windows(6)
        .any(|w| digits(&w[..3]) && w[3] == b'.' && digits(&w[4..]))
    {
        return;
    }
    for c in DRIVER.captures_iter(text) {
        let Some(m) = c.get(1) else { continue };
        let v = m.as_str();
        let parts = v.split('.').count();
        // 40 bytes back, moved to a character boundary (the text may hold any UTF-8).
        let mut from = m.start().saturating_sub(40);
        while !lower.is_char_boundary(from) {
            from -= 1;
        }
        let before = &lower[from..m.start()];
        let named =
            before.contains("driver") || before.contains("nvidia") || before.contains("nvrm");
        if parts == 3 || named {
            push_unique(out, v.to_string());
        }
    }
}

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
    // cuda-python and some wrappers print a cudaError_t without its prefix
    // ("CUDAError InsufficientDriver"); read only right after "cuda error".
    if has("cudaerror") || has("cuda error") {
        for c in CUDA_ERROR_BARE.captures_iter(text) {
            push_unique(&mut s.code_names, format!("cudaError{}", &c[1]));
        }
    }
    if has("cuda") {
        cuda_names_of_other_bindings(text, &mut s.code_names);
    }
    if has("nvml") && text.contains("ERROR_") {
        for line in text
            .lines()
            .filter(|l| l.to_ascii_lowercase().contains("nvml"))
        {
            for c in GO_NVML_NAME.captures_iter(line) {
                push_unique(&mut s.code_names, format!("NVML_ERROR_{}", &c[1]));
            }
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
    if lower_all.bytes().any(|b| b.is_ascii_digit()) {
        driver_versions(text, &lower_all, &mut s.driver_versions);
        if has("rtx") || has("gtx") {
            for c in GEFORCE.captures_iter(text) {
                let mut m = format!("{} {}", c[1].to_ascii_lowercase(), &c[2]);
                if let Some(x) = c.get(3) {
                    m.push(' ');
                    m.push_str(&x.as_str().to_ascii_lowercase());
                }
                push_unique(&mut s.gpu_models, m);
            }
        }
        if has("torch") || has("+cu") {
            for c in TORCH.captures_iter(text) {
                if let Some(m) = c.get(1).or_else(|| c.get(2)) {
                    push_unique(&mut s.torch_versions, m.as_str().to_ascii_lowercase());
                }
            }
        }
    }
    if may_name_datacenter_gpu(lower_all.as_bytes()) {
        for c in DATACENTER.captures_iter(text) {
            push_unique(&mut s.gpu_models, c[1].to_ascii_lowercase());
        }
    }
    process_facts(text, &lower_all, &mut s);
    s.frameworks = crate::model::frameworks_in(text)
        .into_iter()
        .map(String::from)
        .collect();
    s.native_source = native_source(text, &s.frameworks);
    s
}

/// The native source location the paste's error is reported from, when the paste names no
/// PyTorch code (its name, ATen or c10).
fn native_source(text: &str, frameworks: &[String]) -> Option<String> {
    // Every extension the location regex reads starts `.c` or `.h` (`.cu`, `.cpp`, `.hpp`).
    let may_hold = [".c", ".C", ".h", ".H"].iter().any(|e| text.contains(e));
    if frameworks.iter().any(|f| f == "pytorch") || !may_hold {
        return None;
    }
    if TORCH_SOURCE.is_match(text) {
        return None;
    }
    NATIVE_SOURCE.find(text).map(|m| m.as_str().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runtime_calls_own_number_is_read_in_its_callers_forms() {
        for (text, n) in [
            ("cudaGetDeviceCount returned 35", 35),
            ("cudaMalloc failed with error code 2", 2),
            ("Check failed: error == cudaSuccess (35 vs. 0)", 35),
            (
                "Check failed: cudaSuccess == cudaStat (0 vs. 35) Cuda Error",
                35,
            ),
            ("CUDA failure 100: no CUDA-capable device is detected", 100),
            ("cudaHostRegister error: 35 ptr: 0x7efe93615b80", 35),
        ] {
            assert_eq!(cuda_call_numbers(text), vec![n], "{text}");
        }
        // a number after "error" that no CUDA call returned, and success, are not read
        assert!(cuda_call_numbers("error 35 in line 12 of main.cu").is_empty());
        assert!(cuda_call_numbers("cudaMemcpy returned 0").is_empty());
    }

    #[test]
    fn a_native_source_location_is_read_only_when_no_pytorch_code_is_named() {
        for (text, loc) in [
            (
                "Error at src/kernels/convolution_kernels.cu:138 : no kernel image is available",
                "convolution_kernels.cu:138",
            ),
            (
                r"D:\build\ops\csrc\ops.cu(412): CUDA error: no kernel image",
                "ops.cu(412)",
            ),
            (
                "CUDA status Error: file: C:/x/src/blas_kernels.cu : cuda_f32() : line: 91",
                "blas_kernels.cu : cuda_f32() : line: 91",
            ),
            (
                "Error CUDA driver version is insufficient at line 167 in file /opt/src/ops.cu",
                "line 167 in file /opt/src/ops.cu",
            ),
            (
                "[ ERROR: CUDA Runtime ] ./include/cutlass/cluster_launch.hpp:248: invalid argument",
                "cluster_launch.hpp:248",
            ),
        ] {
            assert_eq!(extract(text).native_source.as_deref(), Some(loc), "{text}");
        }
        for text in [
            // PyTorch's own sources or its name anywhere in the paste
            "RuntimeError: CUDA error at /pytorch/aten/src/ATen/native/cuda/Loss.cu:240",
            "c10::Error at csrc/cuda/kernel.cu:10: no kernel image",
            "torch 2.4.1: ops.cu:10: no kernel image is available",
            // a source file without a line, or no source file
            "compiling kernel.cu failed",
            "CUDA error: no kernel image is available for execution on the device",
        ] {
            assert_eq!(extract(text).native_source, None, "{text}");
        }
    }

    #[test]
    fn a_cuda_error_name_without_its_prefix_is_read_after_cuda_error() {
        assert_eq!(
            extract("CUDAError InsufficientDriver").code_names,
            vec!["cudaErrorInsufficientDriver"]
        );
        // a plain word after "CUDA error:" is not a name
        assert!(extract("CUDA error: out of memory").code_names.is_empty());
    }

    #[test]
    fn julia_and_rust_spellings_of_cuda_results_are_read_as_the_c_names() {
        // CUDA.jl
        let s =
            extract("ERROR: CUDA error: invalid device ordinal (code 101, ERROR_INVALID_DEVICE)");
        assert!(s
            .code_names
            .contains(&"CUDA_ERROR_INVALID_DEVICE".to_string()));
        // rust-gpu-tools / cust
        let s = extract("called `Result::unwrap()` on an `Err` value: Cuda(NoBinaryForGpu)");
        // cust's variant is the CUresult name; no cudaError_t is called NoBinaryForGpu
        assert_eq!(s.code_names, vec!["CUDA_ERROR_NO_BINARY_FOR_GPU"]);
        assert!(extract("Error: CudaError::InvalidPtx")
            .code_names
            .contains(&"CUDA_ERROR_INVALID_PTX".to_string()));
        // another API's ERROR_ words on a line without CUDA are not CUDA's
        assert!(extract("VkResult: ERROR_INCOMPATIBLE_DRIVER")
            .code_names
            .is_empty());
        // an ordinary call on a CUDA line is no result name, nor is another API's ERROR_ word
        assert!(extract("torch.cuda(Device) failed").code_names.is_empty());
        assert!(extract("cuda(LoadModelConfig) failed: ERROR_MOD_NOT_FOUND")
            .code_names
            .is_empty());
    }

    #[test]
    fn go_nvml_return_codes_are_nvml_names_only_next_to_nvml() {
        let s = extract(
            "E0612 factory.go:68] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.\n{\"msg\":\"nvml init\",\"error\":\"ERROR_UNKNOWN\"}",
        );
        assert_eq!(
            s.code_names,
            vec!["NVML_ERROR_LIBRARY_NOT_FOUND", "NVML_ERROR_UNKNOWN"]
        );
        // the prefixed form is not read twice; other libraries' ERROR_ words are not NVML's
        assert_eq!(
            extract("NVML_ERROR_LIBRARY_NOT_FOUND").code_names,
            vec!["NVML_ERROR_LIBRARY_NOT_FOUND"]
        );
        assert!(extract("curl: ERROR_TIMEOUT while fetching")
            .code_names
            .is_empty());
    }

    #[test]
    fn the_datacenter_gate_lets_every_name_through_and_stops_plain_text() {
        for name in [
            "a100", "a10g", "a2", "h200", "h20", "gh200", "gb200", "gb10", "b300", "l40s", "l4",
            "t4", "v100", "p4", "k80", "m60",
        ] {
            let text = format!("running on an nvidia {name} gpu");
            assert!(may_name_datacenter_gpu(text.as_bytes()), "{name}");
            assert_eq!(extract(&text).gpu_models, vec![name.to_string()], "{name}");
        }
        assert!(!may_name_datacenter_gpu(
            b"runtimeerror: cuda error: no kernel image is available for execution on the device"
        ));
        // inside a word (a hash, an identifier) is not a name
        assert!(!may_name_datacenter_gpu(b"sha256 deadbeefa100"));
    }

    #[test]
    fn the_paste_s_own_process_facts_are_read() {
        let s = extract(concat!(
            "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (9, 19, 0) ",
            "but found runtime version (9, 14, 0). PyTorch already comes bundled with cuDNN.\n",
            "$ CUDA_VISIBLE_DEVICES=GPU-8ad3 LD_LIBRARY_PATH='/lib/x86_64-linux-gnu' python x.py\n",
            "OSError: /usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9: cannot open shared object file\n",
            "host:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4"
        ));
        let libs: Vec<String> = s
            .loaded_libraries
            .iter()
            .map(|l| format!("{} {}", l.library, l.version))
            .collect();
        assert_eq!(libs, vec!["cudnn 9.14.0", "nccl 2.21.5"]);
        assert_eq!(
            s.library_paths,
            vec!["/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9"]
        );
        assert_eq!(s.missing_libraries, vec!["libcudnn_graph.so.9"]);
        for (text, lib) in [
            ("ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory", "libcudnn.so.9"),
            ("\tlibcublasLt.so.12 => not found", "libcublasLt.so.12"),
            ("Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file", "libcudnn_ops_infer.so.8"),
        ] {
            assert_eq!(extract(text).missing_libraries, vec![lib], "{text}");
        }
        // a library named without the loader failing on it is not missing
        assert!(extract("loaded /usr/lib/libcudnn.so.9 from the wheel")
            .missing_libraries
            .is_empty());
        let env: Vec<String> = s
            .env_settings
            .iter()
            .map(|e| format!("{}={}", e.name, e.value))
            .collect();
        assert_eq!(
            env,
            vec![
                "CUDA_VISIBLE_DEVICES=GPU-8ad3",
                "LD_LIBRARY_PATH=/lib/x86_64-linux-gnu"
            ]
        );
        // "compiled against" alone is not what the process loaded.
        assert!(extract("PyTorch was compiled against (9, 19, 0)")
            .loaded_libraries
            .is_empty());
    }

    #[test]
    fn gated_regexes_still_find_what_they_find() {
        let s = extract("torch 2.5.1+cu124 on RTX 4090, driver 550.54.15, H100");
        assert_eq!(s.torch_versions, vec!["2.5.1+cu124"]);
        assert_eq!(s.gpu_models, vec!["rtx 4090", "h100"]);
        assert_eq!(s.driver_versions, vec!["550.54.15"]);
    }
}
