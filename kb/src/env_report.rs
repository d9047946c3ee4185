//! Environment reports pasted next to an error: PyTorch's and vLLM's `collect_env` output
//! (and the `lscpu` section inside it), `nvidia-smi`'s table, `nvcc --version`, `pip
//! freeze`, `pip list` and `conda list`, and the command line that printed one. An issue
//! template asks for them, so a large share of real pastes carry one; their lines
//! describe the machine (library names, versions, CPU flags), not the failure, and their
//! words pull the ranking towards whatever entry shares them. This module takes a report's
//! lines out of the text that is matched when the rest of the paste still holds something,
//! keeping the lines of a report that are themselves a symptom (`Is CUDA available: False`,
//! a `+cpu` build, no driver or GPU collected, `No MIG devices found`, `ERR!`, a process
//! holding GPU memory). A paste that is only a report is kept whole. The report's lines are
//! handed back apart ([`split_reports`]): they still say which machine the paste came from.

use std::borrow::Cow;

/// `collect_env`'s keys (torch/utils/collect_env.py; vLLM's collect_env adds its own).
const COLLECT_ENV_KEYS: &[&str] = &[
    "PyTorch version",
    "Is debug build",
    "CUDA used to build PyTorch",
    "ROCM used to build PyTorch",
    "OS",
    "GCC version",
    "Clang version",
    "CMake version",
    "Libc version",
    "Python version",
    "Python platform",
    "Is CUDA available",
    "CUDA runtime version",
    "CUDA_MODULE_LOADING set to",
    "GPU models and configuration",
    "Nvidia driver version",
    "cuDNN version",
    "HIP runtime version",
    "MIOpen runtime version",
    "Is XNNPACK available",
    "Versions of relevant libraries",
    "CPU",
    "ROCM Version",
    "Neuron SDK Version",
    "vLLM Version",
    "vLLM Build Flags",
    "Aphrodite Version",
    "GPU Topology",
    "CUDA Archs",
    "Caching allocator config",
    "Is a ROCm GPU available",
    "Is XPU available",
];

/// Fewest report lines that make a report (a stray `OS: Linux` line is left alone).
const MIN_REPORT_LINES: usize = 3;

/// The text without the environment reports it carries (see the module doc).
pub fn without_reports(text: &str) -> Cow<'_, str> {
    split_reports(text).0
}

/// The text without the environment reports it carries, and the reports' lines apart
/// (every line of a report, its symptoms too; empty when none was taken out).
pub fn split_reports(text: &str) -> (Cow<'_, str>, String) {
    if !might_hold_report(text) {
        return (text.into(), String::new());
    }
    let lines: Vec<&str> = text.lines().collect();
    let report = report_lines(&lines);
    let n = report.iter().filter(|r| **r == Line::Report).count();
    let rest_holds_text = lines
        .iter()
        .zip(&report)
        .any(|(l, r)| *r == Line::Other && !l.trim().is_empty());
    if n < MIN_REPORT_LINES || !rest_holds_text {
        return (text.into(), String::new());
    }
    let mut out = String::with_capacity(text.len());
    let mut reports = String::new();
    for (l, r) in lines.iter().zip(&report) {
        if *r != Line::Other {
            reports.push_str(l);
            reports.push('\n');
        }
        if *r != Line::Report {
            out.push_str(l);
            out.push('\n');
        }
    }
    (out.into(), reports)
}

/// Cheap test first: most pastes carry no report.
fn might_hold_report(text: &str) -> bool {
    text.contains("PyTorch version: ")
        || text.contains("NVIDIA-SMI ")
        || text.contains("Cuda compiler driver")
        || text.contains("Package ")
        || text.contains("# Name ")
        || text.contains("==")
        || text.contains("[pip3] ")
        || text.contains("[conda] ")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// Part of a report: describes the machine.
    Report,
    /// Part of a report, and a symptom: kept.
    Symptom,
    /// Not part of a report.
    Other,
}

/// Classifies each line.
fn report_lines(lines: &[&str]) -> Vec<Line> {
    let mut out = vec![Line::Other; lines.len()];
    let mut in_collect_env = false;
    let mut in_cpu = false;
    let mut in_cudnn_paths = false;
    let mut in_package_table = false;
    let mut in_processes = false;
    for (i, raw) in lines.iter().enumerate() {
        let l = raw.trim();
        if is_package_table_header(l) {
            in_package_table = true;
            out[i] = Line::Report;
            continue;
        }
        if in_package_table {
            if is_package_table_row(l) {
                out[i] = Line::Report;
                continue;
            }
            in_package_table = false;
        }
        if is_nvcc_version_line(l) {
            out[i] = Line::Report;
            continue;
        }
        if l.starts_with("Collecting environment information") {
            in_collect_env = true;
            out[i] = Line::Report;
            continue;
        }
        if let Some((key, value)) = l.split_once(':') {
            if COLLECT_ENV_KEYS.contains(&key) {
                in_collect_env = true;
                in_cpu = key == "CPU";
                in_cudnn_paths = key == "cuDNN version";
                out[i] = if is_symptom(key, value.trim()) {
                    Line::Symptom
                } else {
                    Line::Report
                };
                continue;
            }
        }
        if in_collect_env {
            if in_cudnn_paths && l.starts_with('/') && l.contains(".so") {
                out[i] = Line::Report;
                continue;
            }
            in_cudnn_paths = false;
            if in_cpu && is_lscpu_line(l) {
                out[i] = Line::Report;
                continue;
            }
            in_cpu = false;
        }
        if l.starts_with("| Processes:") {
            in_processes = true;
        }
        if is_smi_table_line(l) {
            out[i] = if smi_row_is_symptom(l, in_processes) {
                Line::Symptom
            } else {
                Line::Report
            };
        } else {
            in_processes = false;
            if is_package_line(l) {
                out[i] = Line::Report;
            }
        }
    }
    // The command that printed a report goes with it (`$ nvidia-smi` says nothing more);
    // backwards, so the command goes with the date line nvidia-smi prints first. One pass:
    // a paste of blank lines costs no more than its length.
    let mut next_is_report = false;
    for i in (0..lines.len()).rev() {
        if lines[i].trim().is_empty() {
            continue;
        }
        if next_is_report && runs_a_report(lines[i]) {
            out[i] = Line::Report;
        }
        next_is_report = out[i] == Line::Report;
    }
    // pip freeze lines count only in runs (one `x==1` line may be the error's own text)
    let is_freeze = |l: &str| is_freeze_line(l.trim());
    let mut i = 0;
    while i < lines.len() {
        let run = lines[i..].iter().take_while(|l| is_freeze(l)).count();
        if run >= MIN_REPORT_LINES {
            out[i..i + run].fill(Line::Report);
        }
        i += run.max(1);
    }
    out
}

/// A command line (after a shell prompt, if any) that prints a report, or the date line
/// `nvidia-smi` prints above its table (`Mon Nov 30 05:41:44 2026`).
fn runs_a_report(line: &str) -> bool {
    let l = line.trim();
    if is_smi_date(l) {
        return true;
    }
    let l = l
        .split_once(['$', '#', '>'])
        .filter(|(prompt, _)| {
            !prompt.contains(' ') || prompt.ends_with(':') || prompt.contains('@')
        })
        .map_or(l, |(_, cmd)| cmd)
        .trim();
    let l = l.strip_prefix("sudo ").unwrap_or(l).trim();
    matches!(
        l,
        "nvidia-smi"
            | "python -m torch.utils.collect_env"
            | "python3 -m torch.utils.collect_env"
            | "python collect_env.py"
            | "python3 collect_env.py"
            | "vllm collect-env"
            | "pip freeze"
            | "pip3 freeze"
            | "pip list"
            | "pip3 list"
            | "conda list"
            | "nvcc --version"
            | "nvcc -V"
    )
}

/// `Mon Nov 30 05:41:44 2026`: a weekday, a month, a day, a time and a year.
fn is_smi_date(l: &str) -> bool {
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    let w: Vec<&str> = l.split_whitespace().collect();
    w.len() == 5
        && DAYS.contains(&w[0])
        && w[1].len() == 3
        && w[2].len() <= 2
        && w[2].bytes().all(|b| b.is_ascii_digit())
        && w[3].len() == 8
        && w[3].bytes().filter(|b| *b == b':').count() == 2
        && w[4].len() == 4
        && w[4].bytes().all(|b| b.is_ascii_digit())
}

/// A report line that states the failure itself: no CUDA, a CPU-only build, no driver or
/// GPU the report could collect.
fn is_symptom(key: &str, value: &str) -> bool {
    match key {
        "Is CUDA available" => value == "False",
        "PyTorch version" => value.contains("+cpu"),
        "CUDA used to build PyTorch" => value == "None" || value == "Could not collect",
        "GPU models and configuration" | "Nvidia driver version" => value == "Could not collect",
        _ => false,
    }
}

/// `Architecture: x86_64`, `Vulnerability Spectre v2: Mitigation; …` (lscpu, under
/// collect_env's `CPU:`), not an error's `Name: message`.
fn is_lscpu_line(l: &str) -> bool {
    let Some((key, _)) = l.split_once(':') else {
        return false;
    };
    let lower = key.to_ascii_lowercase();
    !key.is_empty()
        && key.len() <= 40
        && key.split_whitespace().count() <= 5
        && !["error", "exception", "warn", "fail", "fatal"]
            .iter()
            .any(|w| lower.contains(w))
        && key.starts_with(|c: char| c.is_ascii_alphabetic())
}

/// A line `nvcc --version` prints.
fn is_nvcc_version_line(l: &str) -> bool {
    l == "nvcc: NVIDIA (R) Cuda compiler driver"
        || (l.starts_with("Copyright (c) ") && l.ends_with(" NVIDIA Corporation"))
        || (l.starts_with("Built on ") && !l[9..].contains(' '))
        || l.starts_with("Cuda compilation tools, release ")
        || (l.starts_with("Build cuda_") && !l[11..].contains(' '))
}

/// The header of `pip list` (`Package  Version`, then its rule of dashes) or `conda list`
/// (`# packages in environment at …:`, `# Name  Version  Build  Channel`).
fn is_package_table_header(l: &str) -> bool {
    let words: Vec<&str> = l.split_whitespace().collect();
    (words.first() == Some(&"Package") && words.get(1) == Some(&"Version"))
        || (l.starts_with("# packages in environment at "))
        || (words.first() == Some(&"#")
            && words.get(1) == Some(&"Name")
            && words.get(2) == Some(&"Version"))
        || (l.len() > 10
            && l.starts_with("---")
            && l.contains(" -")
            && l.bytes().all(|b| b == b'-' || b == b' '))
}

/// A row of `pip list` or `conda list`: a package name, then a version.
fn is_package_table_row(l: &str) -> bool {
    let mut words = l.split_whitespace();
    let (Some(name), Some(version)) = (words.next(), words.next()) else {
        return false;
    };
    words.clone().count() <= 3
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && version.starts_with(|c: char| c.is_ascii_digit())
}

/// `[pip3] torch==2.5.1`, `[conda] pytorch 2.5.1 py3.10_cuda12.4 pytorch`.
fn is_package_line(l: &str) -> bool {
    ["[pip3] ", "[pip] ", "[conda] "]
        .iter()
        .any(|p| l.starts_with(p))
}

/// `numpy==1.26.4`, `torch @ file:///…` (pip freeze).
fn is_freeze_line(l: &str) -> bool {
    let (name, version) = match l.split_once("==").or_else(|| l.split_once(" @ ")) {
        Some(p) => p,
        None => return false,
    };
    !name.is_empty()
        && !version.trim().is_empty()
        && !version.contains(' ')
        && name.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'[' | b']' | b',')
        })
}

/// A row of nvidia-smi's table that shows the failure: no MIG device, a value the driver
/// could not read (`ERR!`), a process holding GPU memory.
fn smi_row_is_symptom(l: &str, in_processes: bool) -> bool {
    l.contains("No MIG devices found")
        || l.contains("ERR!")
        || (in_processes && l.contains("MiB") && !l.contains("GPU Memory"))
}

/// A line of nvidia-smi's table: a rule (`+---+`, `|===|`) or a row between bars.
fn is_smi_table_line(l: &str) -> bool {
    let rule = l.len() > 10
        && l.starts_with(['+', '|'])
        && l.bytes().all(|b| matches!(b, b'+' | b'-' | b'=' | b'|'));
    let row = l.len() > 10 && l.starts_with('|') && l.ends_with('|');
    rule || row
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLLECT_ENV: &str = "Collecting environment information...
PyTorch version: 2.5.1+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
OS: Ubuntu 22.04.4 LTS (x86_64)
Is CUDA available: True
cuDNN version: Probably one of the following:
/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0
/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9.1.0

CPU:
Architecture:                         x86_64
Vulnerability Spectre v2:             Mitigation; Enhanced IBRS
Versions of relevant libraries:
[pip3] nvidia-cudnn-cu12==9.1.0.70
[pip3] triton==3.1.0
[conda] Could not collect
";

    #[test]
    fn a_collect_env_report_leaves_the_error() {
        let text = format!("RuntimeError: CUDA error: out of memory\n\n{COLLECT_ENV}");
        let out = without_reports(&text);
        assert_eq!(out.trim(), "RuntimeError: CUDA error: out of memory");
    }

    #[test]
    fn a_report_that_is_the_whole_paste_is_kept() {
        assert_eq!(without_reports(COLLECT_ENV), COLLECT_ENV);
    }

    #[test]
    fn symptoms_in_a_report_are_kept() {
        let report = COLLECT_ENV
            .replace("Is CUDA available: True", "Is CUDA available: False")
            .replace("2.5.1+cu124", "2.5.1+cpu");
        let text = format!("{report}\nAssertionError: Torch not compiled with CUDA enabled\n");
        let out = without_reports(&text);
        assert!(out.contains("Is CUDA available: False"));
        assert!(out.contains("PyTorch version: 2.5.1+cpu"));
        assert!(out.contains("Torch not compiled with CUDA enabled"));
        assert!(!out.contains("triton"));
        assert!(!out.contains("Spectre"));
    }

    #[test]
    fn an_error_after_the_cpu_section_is_kept() {
        let text = "PyTorch version: 2.1.0\nOS: Ubuntu\nCPU:\nArchitecture: x86_64\nRuntimeError: CUDA error: invalid device ordinal\nCUDA error: out of memory\n";
        let out = without_reports(text);
        assert_eq!(
            out.trim(),
            "RuntimeError: CUDA error: invalid device ordinal\nCUDA error: out of memory"
        );
    }

    #[test]
    fn the_nvidia_smi_table_goes_and_its_failures_stay() {
        let text = "$ nvidia-smi
Mon Nov 30 05:41:44 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.107.02             Driver Version: 550.107.02     CUDA Version: 12.4     |
|=========================================+========================+======================|
|   0  NVIDIA GeForce RTX 4090        Off |   00000000:01:00.0 Off |                  Off |
+-----------------------------------------+------------------------+----------------------+
RuntimeError: CUDA error: no kernel image is available for execution on the device
";
        let out = without_reports(text);
        assert_eq!(
            out,
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        );
        let mig = format!("{text}| MIG devices:                                |\n|  No MIG devices found                          |\n");
        assert!(without_reports(&mig).contains("No MIG devices found"));
        let failed =
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.";
        assert_eq!(without_reports(failed), failed);
    }

    #[test]
    fn nvcc_version_and_pip_list_go() {
        let text = "$ nvcc --version
nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2024 NVIDIA Corporation
Built on Thu_Mar_28_02:18:24_PDT_2024
Cuda compilation tools, release 12.4, V12.4.131
Build cuda_12.4.r12.4/compiler.34097967_0
$ pip list
Package                  Version
------------------------ ------------
nvidia-cudnn-cu12        9.1.0.70
torch                    2.5.1
OSError: libcudnn_ops.so.9: cannot open shared object file: No such file or directory
";
        assert_eq!(
            without_reports(text),
            "OSError: libcudnn_ops.so.9: cannot open shared object file: No such file or directory\n"
        );
        // a notebook's rule before a traceback is no package table
        let jupyter = "---------------------------------------------------------------------------\nRuntimeError                              Traceback (most recent call last)\n";
        assert_eq!(without_reports(jupyter), jupyter);
    }

    #[test]
    fn blank_lines_are_read_once() {
        // every line is looked at a fixed number of times: 200,000 blank lines between a
        // command and its report are no slower than 200,000 lines of text
        let text = format!(
            "a==b\n$ nvidia-smi\n{}{}\nRuntimeError: CUDA error: out of memory\n",
            "\n".repeat(200_000),
            "+-----------------+\n| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04 |\n+-----------------+"
        );
        let (rest, reports) = split_reports(&text);
        let kept: Vec<&str> = rest.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(kept, ["a==b", "RuntimeError: CUDA error: out of memory"]);
        assert!(reports.starts_with("$ nvidia-smi\n"));
    }

    #[test]
    fn pip_freeze_runs_go_and_a_single_pin_stays() {
        let text = "numpy==1.26.4\ntorch==2.5.1\ntriton==3.1.0\nImportError: libcudnn.so.9: cannot open shared object file\n";
        assert_eq!(
            without_reports(text),
            "ImportError: libcudnn.so.9: cannot open shared object file\n"
        );
        let one =
            "pip install torch==2.5.1\nERROR: No matching distribution found for torch==2.5.1\n";
        assert_eq!(without_reports(one), one);
    }
}
