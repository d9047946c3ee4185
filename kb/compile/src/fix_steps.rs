//! The rules an entry's fix steps obey where the right command depends on
//! the machine: a step never hard-codes a driver branch or flavour, nor an
//! unpinned CUDA wheel index (cu126 has no Blackwell kernels; `-open` refuses
//! pre-Turing GPUs). It names the fact instead, through one of the typed
//! [`PLACEHOLDERS`] the diagnosis computes (kb-audit E7, E8; issue 25 §3).

use std::sync::OnceLock;

use regex::Regex;

/// A machine-dependent value an entry's step names instead of hard-coding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placeholder {
    /// As written in a step: `<DRIVER_PACKAGE>`.
    pub token: &'static str,
    /// The fact that fills it and who computes it.
    pub fact: &'static str,
}

/// Every typed placeholder (kb/FORMAT.md, "Machine-dependent steps").
pub const PLACEHOLDERS: &[Placeholder] = &[
    Placeholder {
        token: "<DRIVER_PACKAGE>",
        fact: "the driver package for this machine's GPUs: branch and kernel-module flavour (gpukb_facts::driver_choice::recommend; nvidia-driver-580-open, nvidia-driver-470)",
    },
    Placeholder {
        token: "<BRANCH>",
        fact: "the driver branch for this machine's GPUs and CUDA version (gpukb_facts::driver_choice::recommend)",
    },
    Placeholder {
        token: "<TORCH_PIN>",
        fact: "the pinned torch build for this machine's GPUs and driver, as gpukb plan prints it (torch==… torchvision==… --index-url https://download.pytorch.org/whl/cuNNN; gpukb_facts::plan over PlannerFacts::from_fingerprint)",
    },
    Placeholder {
        token: "<CUXXX>",
        fact: "the CUDA variant of the installed torch (the part of torch.__version__ after the +) or the one a step's comment names",
    },
];

fn hard_branch() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)\b(?:nvidia-driver|nvidia-dkms|nvidia-kernel-(?:open|source|common)|nvidia-headless(?:-no-dkms)?|nvidia-utils|nvidia-compute-utils|linux-(?:modules|objects|signed)-nvidia|libnvidia-(?:compute|gl|decode|encode)|cuda-drivers|nvidia-fabricmanager)-([0-9]{3})\b")
            .expect("valid")
    })
}

fn cuda_index() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"download\.pytorch\.org/whl/(?:nightly/|test/)?cu[0-9]{3}\b").expect("valid")
    })
}

/// The requirement words of a `pip install` / `uv pip install` command (the
/// words after `install` that are neither options nor option values), up to
/// a `#` comment.
fn requirements(command: &str) -> Vec<&str> {
    let code = command.split(" #").next().unwrap_or(command);
    let mut words = code.split_whitespace();
    if !words.by_ref().any(|w| w == "install") {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut skip_value = false;
    for w in words {
        if skip_value {
            skip_value = false;
            continue;
        }
        if w.starts_with('-') {
            // Options that take a separate value.
            skip_value = matches!(
                w,
                "--index-url"
                    | "-i"
                    | "--extra-index-url"
                    | "-f"
                    | "--find-links"
                    | "-r"
                    | "-c"
                    | "--constraint"
                    | "--requirement"
                    | "--target"
                    | "--prefix"
            );
            continue;
        }
        if w == "&&" || w == ";" || w == "|" {
            break;
        }
        out.push(w);
    }
    out
}

/// What is wrong with one step (or a note), if anything.
pub fn step_problems(step: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(m) = hard_branch().find(step) {
        out.push(format!(
            "hard-codes driver branch {:?}: the branch and flavour depend on the GPU (R470 Kepler, R580 last for Maxwell-Volta, -open only Turing+); write <DRIVER_PACKAGE> (or <BRANCH>)",
            m.as_str()
        ));
    }
    if step.contains("nvidia-driver-<BRANCH>-open") {
        out.push(
            "hard-codes the -open flavour (pre-Turing GPUs refuse it): write <DRIVER_PACKAGE>"
                .into(),
        );
    }
    if let Some(m) = cuda_index().find(step) {
        let unpinned: Vec<&str> = requirements(step)
            .into_iter()
            .filter(|r| !r.contains("==") && !r.starts_with('<'))
            .collect();
        if step.contains("pip install") && !unpinned.is_empty() {
            out.push(format!(
                "installs {} unpinned from the CUDA wheel index {:?} (an index fixes the CUDA, not the release: cu126 has no Blackwell kernels); pin every package (==) or write <TORCH_PIN>",
                unpinned.join(" "),
                m.as_str()
            ));
        }
    }
    out
}

/// The code of a command: what comes before its trailing ` #` comment (a step that is
/// only a comment has none).
fn code_part(command: &str) -> &str {
    let t = command.trim_start();
    if t.starts_with('#') {
        return "";
    }
    match command.find(" #") {
        Some(i) => &command[..i],
        None => command,
    }
}

fn cmd_only() -> &'static [(Regex, &'static str)] {
    static R: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    R.get_or_init(|| {
        [
            (r"%[A-Za-z_][A-Za-z0-9_()]*%", "expands a variable cmd's way (%NAME%): PowerShell reads it literally; write $env:NAME"),
            (r"(?i)^\s*set\s+[A-Za-z_][A-Za-z0-9_]*=", "sets a variable cmd's way (set NAME=…): in PowerShell that is Set-Variable, not the environment; write $env:NAME = \"…\""),
            (r"(?i)(?:^|[;&|]\s*)where\s+[^.\s]", "calls `where`, which PowerShell resolves to Where-Object: write where.exe"),
            (r"(?i)(?:^|[;&|]\s*)mklink\b", "calls mklink, a cmd built-in PowerShell lacks: write cmd /c mklink … or New-Item -ItemType SymbolicLink"),
            (r"&&|\|\|", "chains with && or ||, which Windows PowerShell 5.1 (the one Windows ships) refuses: use ; or separate steps"),
            (r#"(?i)^\s*(?:"[^"]+\.bat"|\S+\.bat)\s*$"#, "runs a .bat file, whose environment PowerShell does not keep: write cmd /k \"…\\x.bat\" and the next steps in that prompt"),
        ]
        .into_iter()
        .map(|(p, why)| (Regex::new(p).expect("valid"), why))
        .collect()
    })
}

/// What is wrong with a command printed for Windows: the KB writes them for PowerShell,
/// the shell Windows Terminal opens (and the one where a trailing `# note` is a
/// comment; in cmd it is passed to the program as arguments), so cmd-only syntax in the
/// code part would not run as printed. A step that must run in cmd says so by starting
/// with `cmd /c` or `cmd /k`.
pub fn windows_problems(command: &str) -> Vec<String> {
    let code = code_part(command);
    if code.trim_start().to_ascii_lowercase().starts_with("cmd /") {
        return Vec::new();
    }
    cmd_only()
        .iter()
        .filter(|(re, _)| re.is_match(code))
        .map(|(_, why)| format!("Windows command {:?} {why}", code.trim()))
        .collect()
}

/// What only a POSIX shell on Linux runs, and why PowerShell does not ([`posix_only_reasons`]).
fn posix_only() -> &'static [(Regex, &'static str)] {
    static R: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    R.get_or_init(|| {
        [
            (r"(?:^|[;&|]\s*)(?:export|unset|source)\s", "sets the environment a POSIX shell's way (export, unset, source)"),
            (r"(?:^|[;&|]\s*)[A-Za-z_][A-Za-z0-9_]*=", "assigns a shell variable (NAME=…)"),
            (r"\$\(|\$\{|`", "substitutes a command or a parameter the POSIX way ($(…), ${…}, backticks)"),
            (r"\$[A-Za-z_][A-Za-z0-9_]*(?:[^A-Za-z0-9_:]|$)", "expands $NAME, which PowerShell reads as its own variable, not the environment"),
            (r"/dev/null|~/|(?:^|[\s=:\x22'])/(?:usr|etc|opt|proc|sys|dev|var|tmp|home|lib|lib64|root|run|boot)\b", "names a Linux path"),
            (r"&&|\|\|", "chains with && or ||, refused by Windows PowerShell 5.1"),
            (r"(?:^|[;&|]\s*)(?:sudo|apt|apt-get|dpkg|dnf|yum|modprobe|rmmod|lsmod|systemctl|journalctl|dmesg|ldconfig|ldd|ln|chmod|chown|make|nproc|update-alternatives|mokutil|reboot|lspci|grep|awk|sed|xargs|head|tail|find|readlink|which|sh|bash|fuser|nvidia-ctk|snap|\.|\./\S+)(?:\s|$)", "runs a program or shell built-in Windows lacks"),
            (r"(?:^|[;&|]\s*)gpukb(?:\s|$)", "runs gpukb, which runs on Linux (and in WSL2), not on Windows"),
        ]
        .into_iter()
        .map(|(p, why)| (Regex::new(p).expect("valid"), why))
        .collect()
    })
}

/// Why a command written for Linux would not run as printed in Windows PowerShell (a
/// pip or conda step read by someone on native Windows): POSIX shell syntax, a Linux
/// path, or a program Windows lacks. Empty when it runs there as it is (`pip install
/// …`, `python -c "…"`, `nvidia-smi`, a comment).
pub fn posix_only_reasons(command: &str) -> Vec<&'static str> {
    let code = code_part(command);
    posix_only()
        .iter()
        .filter(|(re, _)| re.is_match(code))
        .map(|(_, why)| *why)
        .collect()
}

/// Whether a confirm command is one to run on Windows: its comment or code says
/// Windows/PowerShell, or it names a Windows drive path or a `.exe` outside WSL.
pub fn is_windows_command(command: &str) -> bool {
    let comment = command.strip_prefix(code_part(command)).unwrap_or("");
    let code = code_part(command);
    comment.contains("Windows") && !comment.contains("Linux")
        || comment.contains("PowerShell")
        || code.contains(":\\")
        || code.contains("%\\")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_coded_branches_and_unpinned_indexes_are_refused() {
        // kb-audit E7 and E8, verbatim from the entries they were in.
        assert_eq!(
            step_problems("sudo apt install nvidia-driver-570-open   # Blackwell needs -open")
                .len(),
            1
        );
        assert_eq!(step_problems("pip install torch torchvision xformers --index-url https://download.pytorch.org/whl/cu126").len(), 1);
        assert_eq!(
            step_problems("sudo apt install nvidia-driver-<BRANCH>-open").len(),
            1
        );
        assert_eq!(step_problems("pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu118   # drivers R450-R520").len(), 1);
        // Pinned, or named by a placeholder: fine.
        assert!(step_problems("pip install torch==2.7.1 torchvision==0.22.1 --index-url https://download.pytorch.org/whl/cu118").is_empty());
        assert!(step_problems("sudo apt install <DRIVER_PACKAGE>").is_empty());
        assert!(step_problems("pip install --force-reinstall <TORCH_PIN>").is_empty());
        assert!(step_problems(
            "pip install xformers --index-url https://download.pytorch.org/whl/<CUXXX>"
        )
        .is_empty());
        assert!(step_problems("ls /usr/local/cuda-12.8   # nvidia-smi shows 580").is_empty());
    }

    #[test]
    fn linux_shell_steps_are_told_from_ones_that_run_in_powershell() {
        // Verbatim steps of pip, conda and config fixes in the KB.
        for posix in [
            "export LD_LIBRARY_PATH=$(python -c 'import os, nvidia.cudnn; print(os.path.dirname(nvidia.cudnn.__file__))')/lib:$LD_LIBRARY_PATH",
            "V=$(python -c 'import torch;print(torch.__version__)')   # the installed torch",
            "pip install --force-reinstall \"torch==${V%%+*}\" --index-url https://download.pytorch.org/whl/$CU",
            "pip show nvidia-cudnn-cu12 nvidia-cudnn-cu13 2>/dev/null | grep -E 'Name|Version'",
            "unset LD_LIBRARY_PATH",
            "python -m venv ~/venv-torch && . ~/venv-torch/bin/activate",
            "conda list | grep -i -E 'cpuonly|pytorch'",
            "sudo ldconfig",
            "ls /usr/local/cuda/lib64",
            "gpukb fingerprint",
        ] {
            assert!(!posix_only_reasons(posix).is_empty(), "{posix}");
        }
        for both in [
            "pip install --force-reinstall <TORCH_PIN>",
            "python -c \"import torch; print(torch.__version__, torch.version.cuda)\"",
            "nvidia-smi   # the driver's CUDA version, top right",
            "# install the Visual C++ Redistributable",
            "conda install -c conda-forge cudnn=9",
            "$env:CUDA_PATH = \"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.6\"",
            "pip uninstall -y onnxruntime onnxruntime-gpu; pip install onnxruntime-gpu==1.20.1",
        ] {
            assert!(
                posix_only_reasons(both).is_empty(),
                "{both}: {:?}",
                posix_only_reasons(both)
            );
        }
    }

    #[test]
    fn windows_commands_are_powershell_as_printed() {
        // The forms the KB had before this rule, each wrong in PowerShell.
        for bad in [
            "where cudnn64_9.dll   # Windows",
            "set PATH=%CUDA_PATH%\\bin\\x64;%PATH%",
            "where cl && cl 2>&1 | findstr Version & nvcc --version",
            "mklink libcuda.so.1 libcuda.so.1.1",
            "\"C:\\Program Files\\VC\\Auxiliary\\Build\\vcvars64.bat\"",
            "dir \"%ProgramFiles%\\Microsoft Visual Studio\"   # Windows",
        ] {
            assert!(!windows_problems(bad).is_empty(), "{bad}");
        }
        for good in [
            "where.exe cudnn64_9.dll   # Windows, cmd or PowerShell",
            "$env:PATH = \"$env:CUDA_PATH\\bin\\x64;$env:PATH\"   # %PATH% in cmd",
            "cmd /c mklink libcuda.so.1 libcuda.so.1.1",
            "# set PATH=... in cmd",
            "reg add \"HKLM\\System\" /v TdrDelay /t REG_DWORD /d 60 /f",
        ] {
            assert!(
                windows_problems(good).is_empty(),
                "{good}: {:?}",
                windows_problems(good)
            );
        }
        assert!(is_windows_command(
            "where.exe zlibwapi.dll   # Windows, cmd or PowerShell"
        ));
        assert!(is_windows_command(
            "dir \"%CUDA_PATH%\\bin\\x64\\nvrtc64_*.dll\""
        ));
        assert!(!is_windows_command(
            "free -h; swapon --show   # Linux; on Windows: Task Manager"
        ));
        assert!(!is_windows_command("stat -fc %T /sys/fs/cgroup"));
    }
}
