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
//! GPU's settings and reboots belong to the host. The harm tests
//! (`cli/tests/harm.rs`, `tests/tests/variants/harm.rs`) run every command
//! string of `kb/entries` and of the doctor's fixes over fixtures and
//! generated machines through [`effects_of`]: an unclassified line fails them.

use regex::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

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

/// What running one command does to a machine.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    DriverInstall,
    DriverRemove,
    ModuleBuild,
    ModuleLoad,
    ModuleUnload,
    Reboot,
    MokChange,
    BootConfig,
    PackageHold,
    SystemPackageInstall,
    SystemPackageRemove,
    PythonEnvInstall,
    PythonEnvRemove,
    GpuReset,
    GpuConfig,
    ServiceChange,
    ContainerConfig,
    SystemConfig,
    ProcessKill,
    WindowsAction,
    ContainerRun,
    /// Reads, prints, builds in the working tree, sets a shell variable.
    Inert,
}

/// Driver and kernel-module packages (a pattern that names them, too).
const DRIVER_PACKAGES: &str = r"(<DRIVER_PACKAGE>|\$DRVPKG|nvidia-driver|nvidia-open|nvidia-dkms|nvidia-kernel|linux-(modules|objects|signed)-nvidia|libnvidia-(compute|gl|decode|encode|extra|fbc|cfg)|nvidia-utils|nvidia-headless|nvidia-compute-utils|cuda-drivers|kmod-nvidia|nvidia-fabricmanager|nvidia-gfxG|nvidia-l4t|'?\^?nvidia-\*|\*nvidia\*|'\^nvidia-|xserver-xorg-video-nvidia)";

/// The effect table: the first pattern that matches one shell segment
/// (`sudo` and leading `VAR=value` stripped) decides.
const EFFECTS: &[(Effect, &str)] = &[
    (
        Effect::DriverRemove,
        r"^(apt|apt-get|dnf|yum|zypper|snap)\s+(-y\s+)?(purge|remove|autoremove|rm)\b.*DRV",
    ),
    (Effect::DriverRemove, r"^(/usr/bin/)?nvidia-uninstall\b"),
    (
        Effect::DriverInstall,
        r"^(apt|apt-get|dnf|yum|zypper)\s+(-y\s+)?(module\s+)?(install|in|reinstall|upgrade|switch-to)\b.*DRV",
    ),
    (
        Effect::DriverInstall,
        r"^ubuntu-drivers\s+(install|autoinstall)\b",
    ),
    (
        Effect::DriverInstall,
        r"^(sh\s+)?\.?/?NVIDIA-Linux-\S*\.run\b",
    ),
    (
        Effect::SystemPackageInstall,
        r"^(dpkg\s+-i\b|sh\s+cuda_\S+\.run\b|dnf\s+config-manager\b|gpg\b|RUN\s|FROM\s)",
    ),
    (
        Effect::WindowsAction,
        r"^(winget\b|reg\s+add\b|copy\b|del\b|mklink\b|where(\.exe)?\b|set\s+PATH|%\w+%|\$env:\w+|Where-Object\b|\.\\\S+\.exe\b|cmd(\.exe)?\s+/[ck]\b|\S*vcvars\S*\.bat|cl$|wsl(\.exe)?\s+--(update|shutdown|install|set-version|set-default-version))",
    ),
    (
        Effect::SystemConfig,
        r"^sh\s+-c\b|tee\s+(-a\s+)?/(lib|usr/lib)/udev/|^nvidia-ctk\s+system\b|^(swapon|mkswap|fallocate)\b|^systemctl\s+(--user\s+)?isolate\b",
    ),
    (Effect::ProcessKill, r"^(kill|pkill)\b"),
    (
        Effect::ModuleBuild,
        r"^dkms\s+(autoinstall|install|build)\b",
    ),
    (
        Effect::ModuleUnload,
        r"^(rmmod\b|modprobe\s+(-r|--remove)\b)",
    ),
    (
        Effect::ModuleLoad,
        r"^(modprobe\b|nvidia-modprobe\b|insmod\b)",
    ),
    (
        Effect::Reboot,
        r"^(reboot\b|shutdown\s+-r\b|systemctl\s+reboot\b)",
    ),
    (
        Effect::MokChange,
        r"^mokutil\s+--(import|delete|disable-validation|enable-validation|reset)\b",
    ),
    (
        Effect::BootConfig,
        r"^(update-initramfs\b|dracut\b|grub-mkconfig\b|update-grub\b|systemctl\s+set-default\b|nvpmodel\s+-m\b)|tee\s+(-a\s+)?/etc/(modprobe\.d|default/grub)",
    ),
    (Effect::PackageHold, r"^apt-mark\s+(hold|unhold)\b"),
    // A whole-system update (kernel and driver included, as the distribution allows).
    (
        Effect::SystemPackageInstall,
        r"^(dnf|yum)\s+(-y\s+)?(update|upgrade)\b",
    ),
    (
        Effect::SystemPackageInstall,
        r"^(apt|apt-get|dnf|yum|zypper|snap)\s+(-y\s+)?(install|in|reinstall)\b",
    ),
    (
        Effect::SystemPackageRemove,
        r"^(apt|apt-get|dnf|yum|zypper|snap)\s+(-y\s+)?(purge|remove|autoremove)\b",
    ),
    (
        Effect::PythonEnvInstall,
        r"^mim\s+install\b|^((python3?|py|python_embeded\\python\.exe)\s+-m\s+)?(pip3?|uv\s+pip)\s+install\b|^(conda|mamba|micromamba)\s+(install|create|update)\b|^pixi\s+(install|add|update)\b",
    ),
    (
        Effect::PythonEnvRemove,
        r"^((python3?|py)\s+-m\s+)?(pip3?|uv\s+pip)\s+uninstall\b|^(conda|mamba)\s+remove\b",
    ),
    (Effect::GpuReset, r"^nvidia-smi\s+(-r\b|--gpu-reset\b)"),
    (
        Effect::GpuConfig,
        r"^nvidia-smi\s+(-mig\b|mig\s+-(c|d)|-pm\b|-pl\b|-lgc\b|-rgc\b|-c\b|-e\b|-ac\b)|^jetson_clocks$",
    ),
    (
        Effect::ServiceChange,
        r"^systemctl\s+(--user\s+)?(enable|disable|start|stop|restart|mask|unmask|daemon-reload)\b|^nvidia-cuda-mps-control\b",
    ),
    (
        Effect::ContainerConfig,
        r"^nvidia-ctk\s+(runtime|cdi\s+generate|config)\b",
    ),
    (
        Effect::SystemConfig,
        r"^(ldconfig\s*$|ldconfig\s+[^-]|ln\s+-s|mknod\b|chmod\b|chown\b|usermod\b|mkdir\b|rm\b|sed\s+-i\b|cp\b|mv\b)|tee\s+(-a\s+)?/etc/",
    ),
    (
        Effect::ContainerRun,
        r"^(docker|podman|nerdctl|jetson-containers|kubectl|helm)\b",
    ),
];

/// Commands with no effect on the machine beyond the working tree: reads,
/// queries, builds, runs of the user's own program, shell variables.
const INERT: &str = r"^(#|P$|Q$|S$|\.\.\.|[A-Za-z_]+=\S*$|apt-get\s+-y\s+update|\S*/nvidia-smi\b|autotag\b|ds_report\b|ollama\b|python3?\s+-W\b|\S+\.py\b|swapon\s+--show|ldconfig\s+-p|dirname\b|:\$|/\S*lib:\$|ls\b|cat\b|grep\b|egrep\b|awk\b|sed\s+[^-]|sed\s+-n|head\b|tail\b|sort\b|uniq\b|wc\b|tr\b|cut\b|paste\b|echo\b|printf\b|nvidia-smi\b|python3?\s+-c\b|python3?\s+(-m\s+venv\b|\S+\.py\b)|python3?\s+-m\s+(torch\.utils\.collect_env|xformers\.info|pip\s+(list|show|check|freeze|debug|download|index)|bitsandbytes)|uv\s+venv\b|pip3?\s+(list|show|check|freeze|debug|download|index)\b|conda\s+(list|info|env\s+list)\b|uname\b|lspci\b|lsmod\b|modinfo\b|dmesg\b|journalctl\b|ldd\b|readlink\b|realpath\b|find\b|which\b|command\s+-v|type\b|dpkg\s+(-l|-L|-S|--list|--print-architecture)|dpkg-query\b|rpm\s+-q|apt-cache\b|apt\s+(list|policy|show|search)\b|apt(-get)?\s+update\b|dnf\s+(list|info|check-update|module\s+list|nvidia-plugin)|ubuntu-drivers\s+(devices|list)|mokutil\s+--(sb-state|list-enrolled|test-key)|nvcc\b|ptxas\b|cuobjdump\b|nvdisasm\b|gpukb\b|export\b|unset\b|env\b|set\b|cd\b|true\b|false\b|test\b|\[|if\b|then\b|else\b|fi\b|for\b|do\b|done\b|ps\b|fuser\b|lsof\b|systemctl\s+(status|is-active|is-enabled|list-units|cat)\b|nvidia-ctk\s+(--version|cdi\s+list)|nvidia-container-cli\b|dcgmi\b|nvpmodel\s+-q|jetson_clocks\s+--show|tegrastats\b|curl\b|wget\b|git\s+clone\b|cmake\b|\./configure\b|make\b|ninja\b|python3?\s+setup\.py\b|torchrun\b|deepspeed\b|runsc\s+nvproxy\s+list-supported-drivers\b|vllm\b|trtexec\b|compute-sanitizer\b|nsys\b|ncu\b|stat\b|id\b|groups\b|getent\b|nproc\b|free\b|df\b|du\b|mount\b|ulimit\b|bash\s+\S+\.sh|source\b|\.\s|jq\b|deactivate\b|conda\s+activate\b|hostname\b|ip\b|ibv_devinfo\b|ibstat\b|ofed_info\b|numactl\b|nvidia-bug-report\.sh|wsl\s+(-l|--list|--status|--version)|ffmpeg\b[^|;&]*-f\s+null\s+-(\s|$)|ffmpeg\s+(-hide_banner\s+)?-(hwaccels|decoders|encoders|h)\b)";

/// Every regex of the table, compiled once.
struct Tables {
    effects: Vec<(Effect, Regex)>,
    inert: Regex,
    code: Regex,
    prose: Regex,
    comment: Regex,
    quoted: Regex,
    token: Regex,
    subshell: Regex,
    sudo: Regex,
    assign: Regex,
    whole_token: Regex,
    split: Regex,
}

/// Compiles a pattern of the table (fixed strings: a test compiles each).
fn re(p: &str) -> Regex {
    Regex::new(p).unwrap_or_else(|e| unreachable!("effect table pattern {p:?}: {e}"))
}

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| Tables {
        effects: EFFECTS
            .iter()
            .map(|(e, p)| (*e, re(&p.replace("DRV", DRIVER_PACKAGES))))
            .collect(),
        inert: re(INERT),
        code: re(r#"^[A-Za-z_][A-Za-z0-9_.\[\]'"]*\s*(=|\()|^(import|from|def|return|with|torch\.|cuda[A-Z]|print\(|\)|\}|\{|//|/\*|\*|@|os\.|jax\.|tf\.)"#),
        prose: re(r"::|->|;\s*$|^\s*(int|auto|const|void|struct)\s|\{\s*\}|cudaDevAttr|^[A-Z][a-z]+ (the|a|an|your|with|from|on|in|it|[a-z]+ [a-z]+) |^[A-Za-z.]+: |^[a-z_]+ = |^[a-z_]+\.[a-z_]+\("),
        comment: re(r"\s#\s|\s{2,}#"),
        quoted: re(r#"'[^']*'|"(?:[^"\\]|\\.)*"|<[^<>]*>"#),
        token: re("\u{1}([0-9]+)\u{2}"),
        subshell: re(r"\$\(([^()]*)\)"),
        sudo: re(r"^(sudo\s+(-E\s+)?)+"),
        assign: re(r"^[A-Za-z_][A-Za-z0-9_]*=\S*\s+(\S)"),
        whole_token: re("^\u{1}[0-9]+\u{2}$"),
        split: re(r"&&|\|\||;|\||`"),
    })
}

/// A step that is code (C++, Python) or a sentence, not a shell command.
fn is_code_or_prose(step: &str) -> bool {
    tables().prose.is_match(step.trim())
}

/// The shell segments of one command line: comments cut, quoted strings and
/// `<PLACEHOLDER>`s kept whole, `$(...)` classified on its own, split at
/// `&&`, `||`, `;`, `|` and backquotes, `sudo` and `VAR=value` prefixes
/// stripped.
fn segments(step: &str) -> Vec<String> {
    let t = tables();
    let s = step.trim();
    if s.starts_with('#') {
        return vec!["#".into()];
    }
    let code = t.comment.split(s).next().unwrap_or(s).to_string();
    // Quoted strings and placeholders become single tokens, restored per segment.
    let mut kept: Vec<String> = Vec::new();
    let mut code = t
        .quoted
        .replace_all(&code, |c: &regex::Captures| {
            kept.push(c[0].to_string());
            format!("\u{1}{}\u{2}", kept.len() - 1)
        })
        .into_owned();
    let restore = |x: &str| {
        t.token
            .replace_all(x, |c: &regex::Captures| {
                c[1].parse::<usize>()
                    .ok()
                    .and_then(|i| kept.get(i))
                    .cloned()
                    .unwrap_or_default()
            })
            .into_owned()
    };
    let mut out = Vec::new();
    while let Some(m) = t.subshell.captures(&code) {
        let inner = restore(&m[1]);
        out.extend(segments(&inner));
        let Some(whole) = m.get(0) else { break };
        let r = whole.range();
        code.replace_range(r, "S");
    }
    for seg in t.split.split(&code) {
        let mut w = t.sudo.replace(seg.trim(), "").into_owned();
        while let Some(at) = t
            .assign
            .captures(&w)
            .and_then(|c| c.get(1))
            .map(|m| m.start())
        {
            w = w[at..].to_string();
        }
        let w = t.sudo.replace(&w, "").into_owned();
        if !w.is_empty() {
            let whole = t.whole_token.is_match(&w);
            out.push(if whole { "P".into() } else { restore(&w) });
        }
    }
    out
}

/// The effect of one segment; `None` when the table does not know it.
fn classify(seg: &str) -> Option<Effect> {
    let t = tables();
    if let Some((e, _)) = t.effects.iter().find(|(_, r)| r.is_match(seg)) {
        return Some(*e);
    }
    (t.inert.is_match(seg) || t.code.is_match(seg)).then_some(Effect::Inert)
}

/// A line the table does not know: the harm tests fail on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no effect is known for {unknown:?} in `{line}`")]
pub struct Unclassified {
    pub line: String,
    /// The shell segments the table does not know.
    pub unknown: Vec<String>,
}

/// Every effect of one printed command line, in order; `Err` names the
/// segments the table does not know.
pub fn effects_of(step: &str) -> Result<Vec<Effect>, Unclassified> {
    if is_code_or_prose(step) {
        return Ok(vec![Effect::Inert]);
    }
    let mut known = Vec::new();
    let mut unknown = Vec::new();
    for seg in segments(step) {
        match classify(&seg) {
            Some(e) => known.push(e),
            None => unknown.push(seg),
        }
    }
    if unknown.is_empty() {
        Ok(known)
    } else {
        Err(Unclassified {
            line: step.to_string(),
            unknown,
        })
    }
}

/// Every effect of one printed line, where a line the table does not know
/// counts as a driver install: a fix is never judged safe by default. The
/// doctor's placement and search's use this.
pub fn effects_or_worst(step: &str) -> Vec<Effect> {
    effects_of(step).unwrap_or_else(|_| vec![Effect::DriverInstall])
}

impl Effect {
    /// Every effect, in declaration order: `Effect::ALL[e as usize] == e` (the build
    /// writes fix steps' effects as these indices).
    pub const ALL: [Effect; 22] = [
        Effect::DriverInstall,
        Effect::DriverRemove,
        Effect::ModuleBuild,
        Effect::ModuleLoad,
        Effect::ModuleUnload,
        Effect::Reboot,
        Effect::MokChange,
        Effect::BootConfig,
        Effect::PackageHold,
        Effect::SystemPackageInstall,
        Effect::SystemPackageRemove,
        Effect::PythonEnvInstall,
        Effect::PythonEnvRemove,
        Effect::GpuReset,
        Effect::GpuConfig,
        Effect::ServiceChange,
        Effect::ContainerConfig,
        Effect::SystemConfig,
        Effect::ProcessKill,
        Effect::WindowsAction,
        Effect::ContainerRun,
        Effect::Inert,
    ];

    /// True for what only the machine that owns the kernel and the GPU may do
    /// (inside a container: its host).
    pub fn host_only(self) -> bool {
        matches!(
            self,
            Effect::DriverInstall
                | Effect::DriverRemove
                | Effect::ModuleBuild
                | Effect::ModuleLoad
                | Effect::ModuleUnload
                | Effect::Reboot
                | Effect::MokChange
                | Effect::BootConfig
                | Effect::GpuReset
                | Effect::GpuConfig
        )
    }

    /// True for what must never run inside WSL2: installing, building,
    /// loading or unloading a Linux NVIDIA driver or module, or its keys (a
    /// WSL2 kernel has no NVIDIA module by design; the driver is Windows').
    /// Removing the packages of a Linux driver installed inside WSL is allowed:
    /// it is the fix of that root cause (NVIDIA's CUDA on WSL guide).
    pub fn forbidden_in_wsl(self) -> bool {
        matches!(
            self,
            Effect::DriverInstall
                | Effect::ModuleBuild
                | Effect::ModuleLoad
                | Effect::ModuleUnload
                | Effect::MokChange
                | Effect::BootConfig
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_effect_at_its_own_index() {
        for (i, e) in Effect::ALL.iter().enumerate() {
            assert_eq!(*e as usize, i, "{e:?}");
        }
        // every variant, as the schema derived from the enum names them (`enum` lists and
        // `const`s of documented variants), is in ALL
        fn strings_under_enum(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, x) in m {
                        if k == "const" {
                            out.extend(x.as_str().map(String::from));
                        } else if k == "enum" {
                            out.extend(
                                x.as_array()
                                    .into_iter()
                                    .flatten()
                                    .filter_map(|s| s.as_str().map(String::from)),
                            );
                        } else {
                            strings_under_enum(x, out);
                        }
                    }
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| strings_under_enum(x, out)),
                _ => {}
            }
        }
        let mut variants = Vec::new();
        strings_under_enum(
            &serde_json::to_value(schemars::schema_for!(Effect)).unwrap(),
            &mut variants,
        );
        variants.sort();
        let mut listed: Vec<String> = Effect::ALL
            .iter()
            .map(|e| {
                serde_json::to_value(e)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        listed.sort();
        assert!(!variants.is_empty());
        assert_eq!(variants, listed, "Effect::ALL must list every variant");
    }

    #[test]
    fn every_pattern_compiles() {
        for (_, p) in EFFECTS {
            assert!(
                Regex::new(&p.replace("DRV", DRIVER_PACKAGES)).is_ok(),
                "{p}"
            );
        }
        assert!(Regex::new(INERT).is_ok());
        let _ = tables();
    }

    #[test]
    fn the_table_knows_the_harmful_commands() {
        use Effect::*;
        let one = |s: &str| effects_of(s).unwrap_or_else(|u| panic!("{u}"));
        assert_eq!(
            one("sudo apt install nvidia-driver-580-open"),
            [DriverInstall]
        );
        assert_eq!(
            one("sudo apt-get purge 'nvidia-*' && sudo apt-get autoremove --purge"),
            [DriverRemove, SystemPackageRemove]
        );
        assert_eq!(one("sudo apt install <DRIVER_PACKAGE>"), [DriverInstall]);
        assert_eq!(
            one("sudo apt install cuda-toolkit-12-8"),
            [SystemPackageInstall]
        );
        assert_eq!(
            one("sudo apt install nvidia-container-toolkit"),
            [SystemPackageInstall]
        );
        assert_eq!(
            one("sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia"),
            [ModuleUnload]
        );
        assert_eq!(one("sudo modprobe -a nvidia nvidia_uvm"), [ModuleLoad]);
        assert_eq!(
            one("sudo mokutil --import /var/lib/shim-signed/mok/MOK.der"),
            [MokChange]
        );
        assert_eq!(one("sudo reboot"), [Reboot]);
        assert_eq!(one("sudo nvidia-smi -r -i 0"), [GpuReset]);
        assert_eq!(
            one("pip install --force-reinstall <TORCH_PIN>"),
            [PythonEnvInstall]
        );
        assert_eq!(
            one("sudo apt install linux-headers-$(uname -r)"),
            [Inert, SystemPackageInstall]
        );
        assert_eq!(one("wsl --shutdown   # in PowerShell"), [WindowsAction]);
        assert_eq!(
            one("sudo dnf module switch-to nvidia-driver:<BRANCH>-dkms"),
            [DriverInstall]
        );
        assert_eq!(one("sudo dnf update"), [SystemPackageInstall]);
        assert_eq!(one("dnf nvidia-plugin"), [Inert]);
        assert_eq!(
            one(".\\python_embeded\\python.exe --version"),
            [WindowsAction]
        );
        assert_eq!(one("ls -d /usr/local/cuda-*"), [Inert]);
        assert_eq!(
            one("python -m pip download --no-deps <package>==<version> -d /tmp/w"),
            [Inert]
        );
        assert_eq!(one("python -m pip index versions <package>"), [Inert]);
        assert_eq!(one("uv venv --python 3.11"), [Inert]);
        assert!(effects_of("frobnicate --all").is_err());
    }

    #[test]
    fn platforms_forbid_what_belongs_elsewhere() {
        assert!(Effect::DriverInstall.forbidden_in_wsl());
        assert!(!Effect::Reboot.forbidden_in_wsl());
        assert!(Effect::Reboot.host_only());
        assert!(Effect::GpuReset.host_only());
        assert!(!Effect::PythonEnvInstall.host_only());
        assert!(!Effect::ContainerRun.host_only());
    }
}
