//! What a printed command does to a machine, and where it may run.
//!
//! Every fix gpukb prints (the doctor's computed steps and the KB entries'
//! steps that `search` prints) is a shell line a user will type. This module
//! owns the one table that maps such a line to its [`Effect`] (installs a
//! driver, loads a module, reboots, changes a Secure Boot key, installs into a
//! Python env, only reads…) and the rule that says which effects a platform
//! forbids on the machine itself: under WSL2 no Linux NVIDIA driver or module
//! is installed, built, loaded or removed (NVIDIA's CUDA on WSL guide: the
//! driver is the Windows one); inside a container the driver, its modules, the
//! GPU's settings and reboots belong to the host. The harm test
//! (`kb/tests/harm.rs`) runs every command string of `kb/entries` and of the
//! doctor's fixes over fixtures through [`effect_of`]: an unclassified line
//! fails it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a fix step runs.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RunsOn {
    /// The machine gpukb observed (or the one the paste came from).
    #[default]
    ThisMachine,
    /// The host that runs this container (the driver, its modules, reboots).
    ContainerHost,
    /// Windows, under which this WSL2 distribution runs (the GPU driver).
    WindowsHost,
    /// The firmware's screens at boot (UEFI setup, the MOK manager).
    Firmware,
    /// An x86 host that reflashes a Jetson (SDK Manager, `flash.sh`).
    FlashHost,
}

impl RunsOn {
    /// The words the text output puts before a step that runs elsewhere.
    pub fn prefix(self) -> Option<&'static str> {
        match self {
            RunsOn::ThisMachine => None,
            RunsOn::ContainerHost => Some("on the container's host"),
            RunsOn::WindowsHost => Some("in Windows"),
            RunsOn::Firmware => Some("in the firmware at boot"),
            RunsOn::FlashHost => Some("on an x86 host that flashes the Jetson"),
        }
    }
}

/// What one shell line does. Ordered by how much it changes: a step's effect
/// is the largest of its lines'.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// A comment, or text for a person (no command).
    Comment,
    /// Reads and prints (`nvidia-smi`, `ldconfig -p`, `cat`, `python3 -c 'import …'`).
    Inspect,
    /// Changes this shell's or this user's environment (`export`, `unset`, a venv).
    Environment,
    /// Builds or fetches sources in the user's directories (`git clone`, `make`, `cmake`).
    Build,
    /// Installs into or removes from a Python environment (`pip`, `conda`, `uv`).
    PythonEnv,
    /// Starts or changes containers (`docker run`, `kubectl`, `nvidia-ctk`).
    Container,
    /// A command typed in Windows (PowerShell, `wsl --update`, `wsl --shutdown`).
    Windows,
    /// Installs or removes system packages other than the driver (`apt install cuda-toolkit-13-0`).
    SystemPackage,
    /// Changes system configuration (`ldconfig`, `/etc/…`, `systemctl` of a service).
    SystemConfig,
    /// Changes a GPU's settings (reset, MIG mode, persistence, clocks).
    GpuSetting,
    /// Loads, unloads or blacklists a kernel module, or rebuilds the initramfs.
    KernelModule,
    /// Installs, builds, removes or holds the NVIDIA driver or its kernel modules.
    DriverPackage,
    /// Imports or removes a Secure Boot key.
    SecureBootKey,
    /// Reboots the machine.
    Reboot,
    /// Reflashes a Jetson.
    Flash,
}

impl Effect {
    /// True for what only the machine that owns the kernel and the GPU may do
    /// (inside a container: the host).
    pub fn host_only(self) -> bool {
        matches!(
            self,
            Effect::GpuSetting
                | Effect::KernelModule
                | Effect::DriverPackage
                | Effect::SecureBootKey
                | Effect::Reboot
                | Effect::Flash
        )
    }

    /// True for what must never run inside WSL2: the Linux NVIDIA driver and
    /// its kernel modules (a WSL2 kernel has none by design).
    pub fn forbidden_in_wsl(self) -> bool {
        matches!(
            self,
            Effect::KernelModule | Effect::DriverPackage | Effect::SecureBootKey | Effect::Flash
        )
    }
}

/// A line the table does not know: the harm test fails on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no effect is known for the command `{0}`")]
pub struct Unclassified(pub String);

/// The driver and kernel-module package names (Debian/Ubuntu, RHEL, SUSE, the
/// runfile, DKMS); never the container toolkit's `nvidia-container-*` /
/// `libnvidia-container*`.
fn names_driver_package(line: &str) -> bool {
    const DRIVER: &[&str] = &[
        "nvidia-driver",
        "nvidia-dkms",
        "nvidia-kernel",
        "linux-modules-nvidia",
        "linux-objects-nvidia",
        "linux-signatures-nvidia",
        "cuda-drivers",
        "nvidia-open",
        "kmod-nvidia",
        "akmod-nvidia",
        "xorg-x11-drv-nvidia",
        "nvidia-compute-g06",
        "nvidia-gl-g06",
        "nvidia-fabricmanager",
        "nvidia-fabric-manager",
        "libnvidia-compute",
        "libnvidia-gl",
        "nvidia-utils",
        "nvidia-headless",
        "nvidia-persistenced",
        "<driver_package>",
        "$drvpkg",
        "${drvpkg",
        "nvidia-*",
        "'^nvidia",
        "\"^nvidia",
        "^(nvidia",
        "'nvidia-",
        "nvidia-l4t",
        "nvidia-jetpack",
        "nvidia-imex",
    ];
    let l = line.to_ascii_lowercase();
    DRIVER.iter().any(|d| l.contains(d))
}

/// The words of a line after `sudo`, `env A=B`, leading `A=B` assignments and
/// `timeout N`.
fn command_words(line: &str) -> Vec<&str> {
    let mut w: Vec<&str> = line.split_whitespace().collect();
    loop {
        match w.first() {
            Some(&"sudo") | Some(&"env") | Some(&"-E") | Some(&"command") | Some(&"exec") => {
                w.remove(0);
            }
            Some(&"timeout") if w.len() > 1 => {
                w.drain(..2);
            }
            Some(x) if x.contains('=') && !x.starts_with('-') && !x.starts_with('\'') => {
                w.remove(0);
            }
            _ => return w,
        }
    }
}

/// The effect of one shell line (a `# comment` tail is ignored; `a && b`,
/// `a; b` and `a | b` take the largest effect of their parts).
pub fn effect_of(line: &str) -> Result<Effect, Unclassified> {
    let code = strip_comment(line).trim();
    if code.is_empty() {
        return Ok(Effect::Comment);
    }
    let mut worst = Effect::Comment;
    for part in split_commands(code) {
        let e = effect_of_simple(part.trim()).ok_or_else(|| Unclassified(line.to_string()))?;
        worst = worst.max(e);
    }
    Ok(worst)
}

/// `cmd   # note` → `cmd`; a `#` inside quotes or `$#`/`${#` stays.
fn strip_comment(line: &str) -> &str {
    let (mut sq, mut dq) = (false, false);
    let b = line.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'\'' if !dq => sq = !sq,
            b'"' if !sq => dq = !dq,
            b'#' if !sq && !dq && (i == 0 || b[i - 1].is_ascii_whitespace()) => {
                return &line[..i];
            }
            _ => {}
        }
    }
    line
}

/// Splits on `&&`, `||`, `;` and `|` outside quotes and `$(…)`.
fn split_commands(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut sq, mut dq, mut depth) = (false, false, 0i32);
    let b = code.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' if !dq => sq = !sq,
            b'"' if !sq => dq = !dq,
            b'(' if !sq && !dq => depth += 1,
            b')' if !sq && !dq => depth -= 1,
            b'&' | b'|' | b';' if !sq && !dq && depth == 0 => {
                out.push(&code[start..i]);
                let two = i + 1 < b.len() && (b[i + 1] == b'&' || b[i + 1] == b'|');
                i += if two { 2 } else { 1 };
                start = i;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&code[start..]);
    out.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

fn effect_of_simple(part: &str) -> Option<Effect> {
    let words = command_words(part);
    let Some(&cmd0) = words.first() else {
        // Only assignments: `FOO=bar`.
        return Some(Effect::Environment);
    };
    let cmd = cmd0.rsplit('/').next().unwrap_or(cmd0);
    let args = &words[1..];
    let has = |a: &str| args.contains(&a);
    let line = part;
    let l = line.to_ascii_lowercase();
    Some(match cmd {
        "reboot" | "shutdown" | "poweroff" => Effect::Reboot,
        "systemctl" if has("reboot") || has("kexec") => Effect::Reboot,
        "mokutil"
            if has("--import")
                || has("--delete")
                || has("--disable-validation")
                || has("--reset") =>
        {
            Effect::SecureBootKey
        }
        "mokutil" => Effect::Inspect,
        "modprobe" | "rmmod" | "insmod" | "depmod" | "nvidia-modprobe" | "update-initramfs"
        | "dracut" | "mkinitcpio" => Effect::KernelModule,
        "dkms" if has("status") => Effect::Inspect,
        "dkms" => Effect::DriverPackage,
        "ubuntu-drivers" if has("list") || has("devices") => Effect::Inspect,
        "ubuntu-drivers" => Effect::DriverPackage,
        "nvidia-installer" | "nvidia-uninstall" => Effect::DriverPackage,
        "sh" | "bash" if l.contains("nvidia-linux") && l.contains(".run") => Effect::DriverPackage,
        "sh" | "bash" if l.contains("cuda_") && l.contains(".run") => {
            if l.contains("--toolkit") && !l.contains("--driver") {
                Effect::SystemPackage
            } else {
                Effect::DriverPackage
            }
        }
        "apt" | "apt-get" | "dnf" | "yum" | "zypper" | "pacman" | "rpm" | "dpkg" | "apt-mark" => {
            package_effect(cmd, args, line)
        }
        "sdkmanager" | "flash.sh" | "l4t_initrd_flash.sh" => Effect::Flash,
        "nvidia-smi" => {
            let set = args.iter().any(|a| {
                matches!(
                    *a,
                    "-r" | "--gpu-reset"
                        | "-pm"
                        | "-mig"
                        | "-e"
                        | "-c"
                        | "-lgc"
                        | "-rgc"
                        | "-lmc"
                        | "-rmc"
                        | "-pl"
                        | "-ac"
                        | "-rac"
                        | "--persistence-mode"
                        | "--ecc-config"
                        | "--compute-mode"
                        | "--lock-gpu-clocks"
                        | "--power-limit"
                ) || a.starts_with("--gpu-reset")
                    || a.starts_with("-pm=")
                    || a.starts_with("--persistence-mode=")
            });
            let mig_change = has("mig")
                && args
                    .iter()
                    .any(|a| matches!(*a, "-cgi" | "-dgi" | "-cci" | "-dci" | "-C"));
            if set || mig_change {
                Effect::GpuSetting
            } else {
                Effect::Inspect
            }
        }
        "nvidia-persistenced" => Effect::GpuSetting,
        "tee" | "cp" | "mv" | "ln" | "rm" | "install" | "sed" | "chmod" | "chown" | "mkdir"
        | "touch" | "truncate" | "cat" | "echo" | "printf"
            if writes_system_path(line) =>
        {
            if l.contains("modprobe.d") || l.contains("blacklist") {
                Effect::KernelModule
            } else {
                Effect::SystemConfig
            }
        }
        "ldconfig" if has("-p") || has("--print-cache") => Effect::Inspect,
        "ldconfig"
        | "update-alternatives"
        | "alternatives"
        | "sysctl"
        | "usermod"
        | "groupadd"
        | "setenforce"
        | "grubby"
        | "update-grub"
        | "grub-mkconfig"
        | "grub2-mkconfig"
        | "udevadm"
        | "swapoff"
        | "swapon"
        | "mount"
        | "umount"
        | "chcon"
        | "restorecon"
        | "timedatectl"
        | "hostnamectl" => {
            let reads = (cmd == "sysctl" && !args.iter().any(|a| a.contains('=') || *a == "-w"))
                || (cmd == "update-alternatives"
                    && (has("--display") || has("--list") || has("--query")))
                || (cmd == "udevadm" && has("info"));
            if reads {
                Effect::Inspect
            } else {
                Effect::SystemConfig
            }
        }
        "systemctl" | "service" => {
            if args.iter().any(|a| {
                matches!(
                    *a,
                    "status" | "is-active" | "is-enabled" | "list-units" | "cat" | "show"
                )
            }) {
                Effect::Inspect
            } else if l.contains("nvidia-persistenced") {
                Effect::GpuSetting
            } else {
                Effect::SystemConfig
            }
        }
        "journalctl"
        | "dmesg"
        | "lspci"
        | "lsmod"
        | "modinfo"
        | "uname"
        | "cat"
        | "grep"
        | "egrep"
        | "ls"
        | "ll"
        | "find"
        | "readlink"
        | "realpath"
        | "ldd"
        | "readelf"
        | "objdump"
        | "nm"
        | "strings"
        | "file"
        | "stat"
        | "head"
        | "tail"
        | "less"
        | "awk"
        | "sort"
        | "uniq"
        | "wc"
        | "cut"
        | "tr"
        | "paste"
        | "xargs"
        | "which"
        | "type"
        | "whereis"
        | "env"
        | "printenv"
        | "echo"
        | "printf"
        | "nvcc"
        | "cuobjdump"
        | "nvdisasm"
        | "ptxas"
        | "nvidia-debugdump"
        | "nvidia-bug-report.sh"
        | "dcgmi"
        | "tegrastats"
        | "jetson_release"
        | "jtop"
        | "cat-file"
        | "id"
        | "groups"
        | "getent"
        | "df"
        | "du"
        | "free"
        | "top"
        | "htop"
        | "ps"
        | "pgrep"
        | "lsof"
        | "fuser"
        | "test"
        | "["
        | "true"
        | "false"
        | "sleep"
        | "wait"
        | "date"
        | "hostname"
        | "lscpu"
        | "nproc"
        | "numactl"
        | "nvtop"
        | "gpustat"
        | "ibstat"
        | "ibv_devinfo"
        | "ibv_devices"
        | "lsb_release"
        | "dpkg-query"
        | "apt-cache"
        | "apt-config"
        | "rpm -q"
        | "getconf"
        | "gpukb"
        | "deviceQuery"
        | "./deviceQuery"
        | "bandwidthTest"
        | "nvbandwidth"
        | "all_reduce_perf"
        | "./build/all_reduce_perf"
        | "nsys"
        | "ncu"
        | "compute-sanitizer"
        | "cuda-memcheck"
        | "gdb"
        | "strace"
        | "ltrace"
        | "sha256sum"
        | "md5sum"
        | "diff"
        | "cmp"
        | "tar"
        | "unzip"
        | "curl"
        | "wget"
        | "nl"
        | "column"
        | "jq"
        | "ulimit"
        | "locale"
        | "ip"
        | "ifconfig"
        | "ethtool"
        | "ss"
        | "netstat"
        | "ping"
        | "mst"
        | "mlxlink"
        | "nvidia-container-cli"
        | "bootctl"
        | "efibootmgr"
        | "sbverify"
        | "kmod"
        | "lshw"
        | "dmidecode"
        | "hwloc-ls"
        | "lstopo"
        | "nvidia-settings"
        | "clinfo"
        | "vulkaninfo"
        | "glxinfo"
        | "eglinfo"
        | "systemd-detect-virt"
        | "virt-what"
        | "openssl"
        | "base64"
        | "xxd"
        | "od"
        | "hexdump"
        | "time"
        | "watch"
        | "lsblk"
        | "mountpoint"
        | "findmnt"
        | "getfacl"
        | "capsh"
        | "sestatus"
        | "getenforce"
        | "aa-status"
        | "pip3-list"
        | "uptime"
        | "last"
        | "w"
        | "who"
        | "tmux"
        | "screen"
        | "ssh" => Effect::Inspect,
        "export" | "unset" | "source" | "." | "cd" | "conda"
            if cmd != "conda" || is_conda_env(args) =>
        {
            Effect::Environment
        }
        "alias" | "set" | "deactivate" | "pushd" | "popd" | "read" | "local" | "declare"
        | "for" | "do" | "done" | "if" | "then" | "fi" | "else" | "while" | "case" | "esac" => {
            Effect::Environment
        }
        "pip" | "pip3" | "pipx" | "conda" | "mamba" | "micromamba" | "uv" | "poetry" | "pdm"
        | "pixi" | "easy_install" | "virtualenv" => {
            if is_python_read_only(cmd, args) {
                Effect::Inspect
            } else {
                Effect::PythonEnv
            }
        }
        c if c.starts_with("python") => {
            if has("-m")
                && args
                    .iter()
                    .any(|a| matches!(*a, "pip" | "venv" | "ensurepip"))
            {
                if args.iter().any(|a| matches!(*a, "install" | "uninstall")) || has("venv") {
                    Effect::PythonEnv
                } else {
                    Effect::Inspect
                }
            } else if args.iter().any(|a| a.ends_with("setup.py"))
                && args
                    .iter()
                    .any(|a| matches!(*a, "install" | "develop" | "build_ext" | "bdist_wheel"))
            {
                Effect::Build
            } else {
                Effect::Inspect
            }
        }
        "git" | "make" | "cmake" | "ninja" | "cargo" | "gcc" | "g++" | "cc" | "clang" | "meson"
        | "bazel" | "./configure" | "scons" | "autoreconf" => Effect::Build,
        "docker" | "podman" | "nerdctl" | "ctr" | "crictl" | "kubectl" | "helm" | "nvidia-ctk"
        | "enroot" | "singularity" | "apptainer" | "srun" | "sbatch" | "salloc" | "scontrol"
        | "docker-compose" | "kind" | "minikube" | "microk8s" | "k3s" => {
            if cmd == "nvidia-ctk"
                && (has("runtime") && has("configure") || has("generate") || has("refresh"))
            {
                Effect::SystemConfig
            } else {
                Effect::Container
            }
        }
        "wsl"
        | "wsl.exe"
        | "powershell"
        | "powershell.exe"
        | "pwsh"
        | "winget"
        | "choco"
        | "set-executionpolicy"
        | "nvidia-smi.exe"
        | "setx"
        | "dism"
        | "bcdedit"
        | "pnputil" => Effect::Windows,
        "tee" | "cp" | "mv" | "ln" | "rm" | "install" | "sed" | "chmod" | "chown" | "mkdir"
        | "touch" | "truncate" | "unlink" | "rsync" => Effect::Environment,
        _ => return None,
    })
}

fn is_conda_env(args: &[&str]) -> bool {
    matches!(args.first(), Some(&"activate") | Some(&"deactivate"))
}

fn is_python_read_only(cmd: &str, args: &[&str]) -> bool {
    let first = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .copied()
        .unwrap_or("");
    match cmd {
        "pip" | "pip3" => matches!(
            first,
            "list"
                | "show"
                | "check"
                | "freeze"
                | "debug"
                | "index"
                | "download"
                | "inspect"
                | "config"
        ),
        "conda" | "mamba" | "micromamba" => matches!(first, "list" | "info" | "search" | "config"),
        "uv" => args
            .iter()
            .any(|a| matches!(*a, "list" | "show" | "tree" | "check" | "freeze")),
        _ => false,
    }
}

/// True when a file command writes under a system directory.
fn writes_system_path(line: &str) -> bool {
    [
        "/etc/",
        "/usr/",
        "/lib/",
        "/boot/",
        "/opt/",
        "/var/lib/",
        "/sys/",
        "/proc/sys",
    ]
    .iter()
    .any(|p| line.contains(p))
        && (line.contains("tee") || !line.trim_start().starts_with("cat"))
}

fn package_effect(cmd: &str, args: &[&str], line: &str) -> Effect {
    let reads = args.iter().any(|a| {
        matches!(
            *a,
            "list"
                | "show"
                | "search"
                | "policy"
                | "-l"
                | "-L"
                | "-s"
                | "-q"
                | "-qa"
                | "-qi"
                | "-qf"
                | "info"
                | "showhold"
                | "madison"
                | "--list"
                | "-S"
                | "--status"
                | "-Q"
                | "changelog"
                | "depends"
                | "rdepends"
                | "provides"
                | "repoquery"
                | "--get-selections"
        )
    }) || (cmd == "apt-mark"
        && args.iter().any(|a| *a == "showhold" || *a == "showmanual"));
    if reads
        && !args
            .iter()
            .any(|a| matches!(*a, "install" | "remove" | "purge"))
    {
        return Effect::Inspect;
    }
    if args.iter().all(|a| {
        matches!(
            *a,
            "update" | "-y" | "-q" | "upgrade-check" | "clean" | "makecache" | "check-update"
        )
    }) {
        return Effect::SystemConfig;
    }
    if names_driver_package(line) {
        Effect::DriverPackage
    } else {
        Effect::SystemPackage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_module_reboot_and_keys_are_told_apart_from_reads() {
        let cases = [
            (
                "sudo apt install nvidia-driver-580-open",
                Effect::DriverPackage,
            ),
            ("sudo apt-get purge 'nvidia-*'", Effect::DriverPackage),
            ("sudo ubuntu-drivers install", Effect::DriverPackage),
            ("ubuntu-drivers devices", Effect::Inspect),
            (
                "sudo dkms autoinstall -k $(uname -r)",
                Effect::DriverPackage,
            ),
            ("sudo modprobe nvidia_uvm", Effect::KernelModule),
            (
                "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia",
                Effect::KernelModule,
            ),
            (
                "echo -e 'blacklist nouveau' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf",
                Effect::KernelModule,
            ),
            ("sudo reboot   # choose 'Enroll MOK'", Effect::Reboot),
            (
                "sudo mokutil --import /var/lib/shim-signed/mok/MOK.der",
                Effect::SecureBootKey,
            ),
            ("mokutil --sb-state", Effect::Inspect),
            ("sudo nvidia-smi -r -i 0", Effect::GpuSetting),
            ("sudo nvidia-smi -mig 0", Effect::GpuSetting),
            ("nvidia-smi -q -d ECC", Effect::Inspect),
            (
                "pip install --force-reinstall torch==2.11.0",
                Effect::PythonEnv,
            ),
            ("pip show torch", Effect::Inspect),
            (
                "python3 -c 'import torch; print(torch.cuda.is_available())'",
                Effect::Inspect,
            ),
            (
                "export LD_LIBRARY_PATH=/usr/local/cuda/lib64",
                Effect::Environment,
            ),
            ("sudo apt install cuda-toolkit-13-0", Effect::SystemPackage),
            (
                "sudo apt install nvidia-container-toolkit",
                Effect::SystemPackage,
            ),
            (
                "sudo apt update && sudo apt install nvidia-driver-470",
                Effect::DriverPackage,
            ),
            (
                "docker run --gpus all nvcr.io/nvidia/pytorch:25.01-py3",
                Effect::Container,
            ),
            ("wsl --update", Effect::Windows),
            (
                "# UEFI setup -> Security -> Secure Boot: Disabled",
                Effect::Comment,
            ),
            (
                "sudo sh NVIDIA-Linux-x86_64-580.95.05.run",
                Effect::DriverPackage,
            ),
        ];
        for (line, want) in cases {
            assert_eq!(effect_of(line), Ok(want), "{line}");
        }
        assert!(effect_of("frobnicate --all").is_err());
    }

    #[test]
    fn the_container_toolkit_is_not_a_driver_package() {
        assert_eq!(
            effect_of("sudo apt install nvidia-container-toolkit libnvidia-container1"),
            Ok(Effect::SystemPackage)
        );
    }

    #[test]
    fn platforms_forbid_what_belongs_elsewhere() {
        assert!(Effect::DriverPackage.forbidden_in_wsl());
        assert!(!Effect::Reboot.forbidden_in_wsl());
        assert!(Effect::Reboot.host_only());
        assert!(!Effect::PythonEnv.host_only());
    }
}
