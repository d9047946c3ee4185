//! A harm review as a test (issue 25 §7): one table ([`EFFECTS`], [`INERT`])
//! maps each command gpukb prints to its effect on a machine: a driver or
//! module package installed or removed, a module loaded or unloaded, a
//! reboot, a MOK change, an install into a Python env, ... Every command
//! string in `kb/entries` and every command the fix code prints over the
//! fixtures under `tests/fixtures` (through `gpukb doctor`) is classified;
//! an unclassified command fails the test, so a new command is reviewed
//! when it is written.
#![allow(clippy::disallowed_methods)] // tests read fixture trees and run the binary

use regex::Regex;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// What running one command does to a machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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
        r"^(apt|apt-get|dnf|yum|zypper)\s+(-y\s+)?(install|in|reinstall|upgrade)\b.*DRV",
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
        r"^(winget\b|reg\s+add\b|copy\b|del\b|mklink\b|where\b|set\s+PATH|%\w+%|\S*vcvars\S*\.bat|cl$|wsl(\.exe)?\s+--(update|shutdown|install))",
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
        r"^mim\s+install\b|^((python3?|py|python_embeded\\python\.exe)\s+-m\s+)?(pip3?|uv\s+pip)\s+install\b|^(conda|mamba|micromamba)\s+(install|create|update)\b",
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
const INERT: &str = r"^(#|P$|Q$|S$|\.\.\.|[A-Za-z_]+=\S*$|apt-get\s+-y\s+update|\S*/nvidia-smi\b|autotag\b|ds_report\b|ollama\b|python3?\s+-W\b|\S+\.py\b|swapon\s+--show|ldconfig\s+-p|dirname\b|:\$|/\S*lib:\$|ls\b|cat\b|grep\b|egrep\b|awk\b|sed\s+[^-]|sed\s+-n|head\b|tail\b|sort\b|uniq\b|wc\b|tr\b|cut\b|paste\b|echo\b|printf\b|nvidia-smi\b|python3?\s+-c\b|python3?\s+(-m\s+venv\b|\S+\.py\b)|python3?\s+-m\s+(torch\.utils\.collect_env|xformers\.info|pip\s+(list|show|check|freeze|debug)|bitsandbytes)|pip3?\s+(list|show|check|freeze|debug|download|index)\b|conda\s+(list|info|env\s+list)\b|uname\b|lspci\b|lsmod\b|modinfo\b|dmesg\b|journalctl\b|ldd\b|readlink\b|realpath\b|find\b|which\b|command\s+-v|type\b|dpkg\s+(-l|-L|-S|--list)|dpkg-query\b|rpm\s+-q|apt-cache\b|apt\s+(list|policy|show|search)\b|apt(-get)?\s+update\b|dnf\s+(list|info|check-update)|ubuntu-drivers\s+(devices|list)|mokutil\s+--(sb-state|list-enrolled|test-key)|nvcc\b|ptxas\b|cuobjdump\b|nvdisasm\b|gpukb\b|export\b|unset\b|env\b|set\b|cd\b|true\b|false\b|test\b|\[|if\b|then\b|else\b|fi\b|for\b|do\b|done\b|ps\b|fuser\b|lsof\b|systemctl\s+(status|is-active|is-enabled|list-units|cat)\b|nvidia-ctk\s+(--version|cdi\s+list)|nvidia-container-cli\b|dcgmi\b|nvpmodel\s+-q|jetson_clocks\s+--show|tegrastats\b|curl\b|wget\b|git\s+clone\b|cmake\b|make\b|ninja\b|python3?\s+setup\.py\b|torchrun\b|vllm\b|trtexec\b|compute-sanitizer\b|nsys\b|ncu\b|stat\b|id\b|groups\b|getent\b|nproc\b|free\b|df\b|du\b|mount\b|ulimit\b|bash\s+\S+\.sh|source\b|\.\s|jq\b|deactivate\b|conda\s+activate\b|hostname\b|ip\b|ibv_devinfo\b|ibstat\b|numactl\b|nvidia-bug-report\.sh|wsl\s+(-l|--list|--status|--version))";

/// The effect patterns, then INERT, code and prose.
type Tables = (Vec<(Effect, Regex)>, Regex, Regex, Regex);

fn compiled() -> &'static Tables {
    static R: OnceLock<Tables> = OnceLock::new();
    R.get_or_init(|| {
        let effects = EFFECTS
            .iter()
            .map(|(e, p)| (*e, Regex::new(&p.replace("DRV", DRIVER_PACKAGES)).unwrap()))
            .collect();
        let code = Regex::new(r#"^[A-Za-z_][A-Za-z0-9_.\[\]'"]*\s*(=|\()|^(import|from|def|return|with|torch\.|cuda[A-Z]|print\(|\)|\}|\{|//|/\*|\*|@|os\.|jax\.|tf\.)"#).unwrap();
        let prose = Regex::new(r"::|->|;\s*$|^\s*(int|auto|const|void|struct)\s|\{\s*\}|cudaDevAttr|^[A-Z][a-z]+ (the|a|an|your|with|from|on|in|it|[a-z]+ [a-z]+) |^[A-Za-z.]+: |^[a-z_]+ = |^[a-z_]+\.[a-z_]+\(").unwrap();
        (effects, Regex::new(INERT).unwrap(), code, prose)
    })
}

/// A step that is code (C++, Python) or a sentence, not a shell command.
fn is_code_or_prose(step: &str) -> bool {
    compiled().3.is_match(step.trim())
}

/// The shell segments of one command line: comments cut, quoted strings and
/// `<PLACEHOLDER>`s kept whole, `$(...)` classified on its own, split at
/// `&&`, `||`, `;`, `|` and backquotes, `sudo` and `VAR=value` prefixes
/// stripped.
fn segments(step: &str) -> Vec<String> {
    let s = step.trim();
    if s.starts_with('#') {
        return vec!["#".into()];
    }
    let code = Regex::new(r"\s#\s|\s{2,}#")
        .unwrap()
        .split(s)
        .next()
        .unwrap_or(s)
        .to_string();
    // Quoted strings and placeholders become single tokens, restored per segment.
    let mut kept: Vec<String> = Vec::new();
    let mut code = Regex::new(r#"'[^']*'|"(?:[^"\\]|\\.)*"|<[^<>]*>"#)
        .unwrap()
        .replace_all(&code, |c: &regex::Captures| {
            kept.push(c[0].to_string());
            format!("\u{1}{}\u{2}", kept.len() - 1)
        })
        .into_owned();
    let restore = |t: &str| {
        Regex::new("\u{1}([0-9]+)\u{2}")
            .unwrap()
            .replace_all(t, |c: &regex::Captures| {
                kept[c[1].parse::<usize>().unwrap()].clone()
            })
            .into_owned()
    };
    let mut out = Vec::new();
    let sub = Regex::new(r"\$\(([^()]*)\)").unwrap();
    while let Some(m) = sub.captures(&code) {
        let inner = restore(&m[1]);
        out.extend(segments(&inner));
        let r = m.get(0).unwrap().range();
        code.replace_range(r, "S");
    }
    let sudo = Regex::new(r"^(sudo\s+(-E\s+)?)+").unwrap();
    let assign = Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*=\S*\s+(\S)").unwrap();
    let whole_token = Regex::new("^\u{1}[0-9]+\u{2}$").unwrap();
    for seg in Regex::new(r"&&|\|\||;|\||`").unwrap().split(&code) {
        let mut w = sudo.replace(seg.trim(), "").into_owned();
        while let Some(c) = assign.captures(&w) {
            let at = c.get(1).unwrap().start();
            w = w[at..].to_string();
        }
        let w = sudo.replace(&w, "").into_owned();
        if !w.is_empty() {
            let whole = whole_token.is_match(&w);
            out.push(if whole { "P".into() } else { restore(&w) });
        }
    }
    out
}

/// The effect of one segment; `None` when the table does not know it.
fn classify(seg: &str) -> Option<Effect> {
    let (effects, inert, code, _) = compiled();
    if let Some((e, _)) = effects.iter().find(|(_, r)| r.is_match(seg)) {
        return Some(*e);
    }
    (inert.is_match(seg) || code.is_match(seg)).then_some(Effect::Inert)
}

/// Every effect of one printed command line; `Err` names the segments the
/// table does not know.
fn effects_of(step: &str) -> Result<Vec<Effect>, Vec<String>> {
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
        Err(unknown)
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `(entry, step)` for every fix step of every KB entry.
fn kb_steps() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("kb/entries"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for f in files {
        let v: toml::Value = toml::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let id = f.file_stem().unwrap().to_string_lossy().into_owned();
        for fix in v
            .get("fixes")
            .and_then(|x| x.as_array())
            .into_iter()
            .flatten()
        {
            for s in fix
                .get("steps")
                .and_then(|x| x.as_array())
                .into_iter()
                .flatten()
            {
                out.push((id.clone(), s.as_str().unwrap().to_string()));
            }
        }
    }
    out
}

#[test]
fn the_table_knows_the_harmful_commands() {
    use Effect::*;
    let one = |s: &str| effects_of(s).unwrap_or_else(|u| panic!("{s}: {u:?}"));
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
        one("sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia"),
        [ModuleUnload]
    );
    assert_eq!(one("sudo modprobe -a nvidia nvidia_uvm"), [ModuleLoad]);
    assert_eq!(
        one("sudo mokutil --import /var/lib/shim-signed/mok/MOK.der"),
        [MokChange]
    );
    assert_eq!(one("sudo reboot"), [Reboot]);
    assert_eq!(
        one("pip install --force-reinstall <TORCH_PIN>"),
        [PythonEnvInstall]
    );
    assert_eq!(
        one("sudo apt install linux-headers-$(uname -r)"),
        [Inert, SystemPackageInstall]
    );
    assert_eq!(one("ls -d /usr/local/cuda-*"), [Inert]);
    assert!(effects_of("frobnicate --all").is_err());
}

#[test]
fn every_kb_command_is_classified() {
    let steps = kb_steps();
    assert!(steps.len() > 500, "only {} KB steps", steps.len());
    let unknown: Vec<String> = steps
        .iter()
        .filter_map(|(id, s)| effects_of(s).err().map(|u| format!("{id}: {s:?}: {u:?}")))
        .collect();
    assert!(
        unknown.is_empty(),
        "commands the harm table does not know (add them to EFFECTS or INERT):\n{}",
        unknown.join("\n")
    );
}

/// Every fixture directory with an `EXPECT.toml`, and how doctor reads it.
fn fixture_dirs() -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    for group in std::fs::read_dir(repo().join("tests/fixtures")).unwrap() {
        let g = group.unwrap().path();
        let mut dirs = vec![g.clone()];
        if let Ok(rd) = std::fs::read_dir(&g) {
            dirs.extend(rd.filter_map(|e| e.ok().map(|e| e.path())));
        }
        for d in dirs {
            let Ok(t) = std::fs::read_to_string(d.join("EXPECT.toml")) else {
                continue;
            };
            let v: toml::Value = toml::from_str(&t).unwrap();
            let flag = match v.get("input").and_then(|x| x.as_str()) {
                Some("replay") => "--replay",
                Some("root") => "--root",
                _ => continue,
            };
            out.push((d, flag));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `(fixture, finding check, fix step JSON)` for every fix doctor prints.
fn doctor_fix_steps() -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (dir, flag) in fixture_dirs() {
        let o = Command::new(env!("CARGO_BIN_EXE_gpukb"))
            .args(["doctor", flag])
            .arg(&dir)
            .arg("--json")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let v: Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        for f in v["findings"].as_array().into_iter().flatten() {
            for s in f["fixes"].as_array().into_iter().flatten() {
                out.push((
                    name.clone(),
                    f["check"].as_str().unwrap_or("").to_string(),
                    s.clone(),
                ));
            }
        }
    }
    out
}

#[test]
fn every_command_doctor_prints_over_the_fixtures_is_classified() {
    let steps = doctor_fix_steps();
    assert!(
        steps.len() > 20,
        "only {} fix steps over the fixtures",
        steps.len()
    );
    let mut unknown = Vec::new();
    let mut seen: BTreeMap<Effect, usize> = BTreeMap::new();
    for (fixture, check, s) in &steps {
        for c in s["commands"].as_array().into_iter().flatten() {
            let c = c.as_str().unwrap();
            match effects_of(c) {
                Ok(es) => es
                    .into_iter()
                    .for_each(|e| *seen.entry(e).or_default() += 1),
                Err(u) => unknown.push(format!("{fixture} {check}: {c:?}: {u:?}")),
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "commands the harm table does not know:\n{}",
        unknown.join("\n")
    );
    // The fixtures exercise the harmful kinds the table exists for.
    for e in [
        Effect::DriverInstall,
        Effect::Reboot,
        Effect::PythonEnvInstall,
        Effect::ModuleUnload,
    ] {
        assert!(
            seen.contains_key(&e),
            "no fixture prints a {e:?} fix: {seen:?}"
        );
    }
}

#[test]
fn package_holds_never_catch_the_container_toolkit() {
    // newcomer.md Problem 2: `apt-mark hold $(... | grep -E '^(nvidia-|libnvidia-)')`
    // also holds nvidia-container-toolkit and libnvidia-container1, blocking
    // their security updates.
    let grep = Regex::new(r#"grep\s+-E\s+(?:--\s+)?(?:'([^']*)'|"([^"]*)")"#).unwrap();
    let mut bad = Vec::new();
    for (id, s) in kb_steps() {
        if !effects_of(&s).is_ok_and(|e| e.contains(&Effect::PackageHold)) {
            continue;
        }
        for c in grep.captures_iter(&s) {
            let pat = c.get(1).or(c.get(2)).unwrap().as_str();
            let pat = pat.replace("${BR}", "580").replace("$BR", "580");
            let re = Regex::new(&pat).unwrap_or_else(|e| panic!("{id}: {pat}: {e}"));
            let caught: Vec<&str> = ["nvidia-container-toolkit", "libnvidia-container1"]
                .into_iter()
                .filter(|p| re.is_match(p))
                .collect();
            if !caught.is_empty() && !s.contains("grep -v container") {
                bad.push(format!("{id}: {s:?} holds {caught:?}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
