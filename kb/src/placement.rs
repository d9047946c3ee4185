//! Where a search answer's fixes run, and which of them fit the platform the
//! failing machine is on. The platform is the one the paste names (a WSL2
//! kernel, `/usr/lib/wsl/lib`, a Jetson/L4T, a Windows path or DLL, a
//! container's prompt), else the detected machine's. Each KB fix is judged by
//! the effects of its steps ([`gpukb_doctor::effect`]) with the doctor's rules: under
//! WSL2 a fix that installs, builds, loads or removes a Linux NVIDIA driver or
//! module, or reboots Linux, is withheld (with why) and the Windows driver
//! step takes its place; inside a container a host-only fix runs on the
//! container's host; on a Jetson a desktop driver package is withheld; on
//! native Windows a Linux driver fix is withheld, and where it only installed a
//! driver the Windows driver update takes its place (a cause whose fix is
//! kernel-side goes after the others there), an apt or Jetson fix is left out, a fix
//! with a step only a Linux shell runs is listed as withheld with that step (the cause
//! keeps its place), and the Windows fixes go first; on a Linux machine (bare metal,
//! container, Jetson) a Windows fix is left out (the left-out ones are not listed as
//! withheld: they are for another operating system, not a harm avoided). Confirm
//! commands follow the same line ([`place_confirms`]). A hit's fixes are alternatives of
//! one choice group. The embedded KB's steps were classified when it was built
//! ([`step_effects`]); only a step changed since (a filled placeholder, a KB
//! directory being linted) is classified here.

use crate::model::{Confirm, Fix};
use gpukb_doctor::effect::{effects_or_worst, Effect, RunsOn};
use gpukb_doctor::fixes::Platform;
use gpukb_doctor::Choice;
use regex::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

mod memo {
    include!(concat!(env!("OUT_DIR"), "/step_effects.rs"));
}

/// The effects of one printed step: as the build classified it for a step of the
/// embedded KB, else classified now ([`effects_or_worst`]: an unknown command counts
/// as the worst).
pub fn step_effects(step: &str) -> Vec<Effect> {
    match memo::STEP_EFFECTS.binary_search_by(|r| step_text(r).cmp(step)) {
        Ok(i) => decode(step_codes(&memo::STEP_EFFECTS[i])),
        Err(_) => filled_effects(step).unwrap_or_else(|| effects_or_worst(step)),
    }
}

/// The effects of a KB step filled with this machine's values, as the build classified
/// its filled form: the values must have their representatives' shapes.
fn filled_effects(step: &str) -> Option<Vec<Effect>> {
    memo::FILLED_EFFECTS.iter().find_map(|r| {
        let values = crate::fill_step::values_in(step_text(r), step)?;
        values
            .iter()
            .enumerate()
            .all(|(i, v)| v.is_none_or(|v| crate::fill_step::value_has_its_shape(i, v)))
            .then(|| decode(step_codes(r)))
    })
}

/// Every KB step with a placeholder the machine fills, with the effects the build gave
/// its filled form (for the test that holds them to the table).
pub fn filled_templates() -> impl Iterator<Item = (&'static str, Vec<Effect>)> {
    memo::FILLED_EFFECTS
        .iter()
        .map(|r| (step_text(r), decode(step_codes(r))))
}

/// Effects from the build's encoding (indices into `Effect::ALL`).
fn decode(codes: &[u8]) -> Vec<Effect> {
    codes
        .iter()
        .filter_map(|c| Effect::ALL.get(usize::from(*c)).copied())
        .collect()
}

/// Every step the build classified (for the test that holds the build to the table).
pub fn classified_steps() -> impl Iterator<Item = &'static str> {
    memo::STEP_EFFECTS.iter().map(step_text)
}

/// The step a row of the build's tables names.
fn step_text(r: &[u32; 4]) -> &'static str {
    memo::STEP_TEXT
        .get(r[0] as usize..(r[0] + r[1]) as usize)
        .unwrap_or("")
}

/// The effect codes of a row of the build's tables.
fn step_codes(r: &[u32; 4]) -> &'static [u8] {
    memo::STEP_CODES
        .get(r[2] as usize..(r[2] + r[3]) as usize)
        .unwrap_or(&[])
}

/// A KB fix as search prints it: where it runs, and its place among the
/// alternatives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlacedFix {
    #[serde(flatten)]
    pub fix: Fix,
    /// Where the fix's steps run.
    #[serde(default)]
    pub runs_on: RunsOn,
    /// Its place among the hit's alternative fixes (run one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<Choice>,
}

impl PlacedFix {
    /// A fix before [`place`] judged it: this machine, no group.
    pub fn unplaced(fix: Fix) -> PlacedFix {
        PlacedFix {
            fix,
            runs_on: RunsOn::ThisMachine,
            choice: None,
        }
    }
}

/// A fix not printed for this platform, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WithheldFix {
    pub title: String,
    pub why: String,
}

/// The platform a paste states, and the words that state it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named {
    pub platform: Platform,
    pub because: &'static str,
}

/// The platforms a paste can name: the words that say so, lower-case literals one of which
/// the paste must contain before the pattern is compiled and run (most pastes name none, and
/// compiling the four patterns took a good part of a search), and the pattern.
const PLATFORM_PATTERNS: [(Platform, &str, &[&str], &str); 4] = [
    (
        Platform::Wsl2,
        "the paste names WSL (a WSL2 kernel, /usr/lib/wsl/lib, ld.wsl.conf, /dev/dxg, libdxcore, or a Windows drive mounted at /mnt/<letter>/)",
        &["microsoft-standard", "/usr/lib/wsl/", "wsl", "/dev/dxg", "libdxcore", "/mnt/"],
        r"(?i)microsoft-standard|/usr/lib/wsl/|\bwsl ?2?\b|ld\.wsl\.conf|/dev/dxg|libdxcore|/mnt/[a-z]/",
    ),
    (
        Platform::Jetson,
        "the paste names a Jetson (Jetson, L4T, JetPack, Tegra, nvgpu)",
        &["jetson", "l4t", "jetpack", "tegra", "nvgpu"],
        r"(?i)\bjetson\b|\bl4t\b|\bjetpack\b|\btegra|nv_tegra_release|\bnvgpu\b",
    ),
    (
        Platform::Windows,
        "the paste names Windows (a drive-letter path, a .dll or .exe)",
        &[":\\", ".dll", "nvidia-smi.exe"],
        r"(?i)\b[a-z]:\\[a-z0-9_$. -]|\b[a-z0-9_]+64_[0-9]+\.dll\b|\.dll\b|\bnvidia-smi\.exe\b|\bPS [A-Z]:\\",
    ),
    (
        Platform::Container,
        "the paste comes from inside a container (a container's root prompt, /.dockerenv, 'inside the container')",
        &["root@", "/.dockerenv", "container"],
        r"(?im)\broot@[0-9a-f]{12}:|/\.dockerenv|\binside (?:a|the|my) (?:docker |podman )?container\b",
    ),
];

/// Pattern `i` of [`PLATFORM_PATTERNS`], compiled on first use (ASCII: the words are ASCII).
fn platform_regex(i: usize) -> Option<&'static Regex> {
    static COMPILED: [OnceLock<Option<Regex>>; 4] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    COMPILED
        .get(i)?
        .get_or_init(|| {
            regex::RegexBuilder::new(PLATFORM_PATTERNS[i].3)
                .unicode(false)
                .build()
                .ok()
        })
        .as_ref()
}

/// The platform the paste names, if it names one (WSL2 first: a WSL paste
/// shows Windows paths too).
pub fn paste_platform(text: &str) -> Option<Named> {
    let lower = text.to_ascii_lowercase();
    PLATFORM_PATTERNS
        .iter()
        .enumerate()
        .filter(|(_, (_, _, words, _))| words.iter().any(|w| lower.contains(w)))
        .find(|(i, _)| platform_regex(*i).is_some_and(|r| r.is_match(text)))
        .map(|(_, (platform, because, _, _))| Named {
            platform: *platform,
            because,
        })
}

pub use gpukb_kb_compile::fix_steps::{is_windows_command, posix_only_reasons};

/// Fix platforms whose steps only run on Linux: a native-Windows paste leaves them out.
const LINUX_ONLY_FIXES: &[&str] = &["apt", "jetson"];

/// A step without its trailing `# note`.
fn code_of(step: &str) -> &str {
    let cut = crate::fill_step::comment_start(step).unwrap_or(step.len());
    step[..cut].trim()
}

/// For a native-Windows paste, a pip, conda or config fix with a step only a Linux shell
/// runs (`export LD_LIBRARY_PATH=…`) is not printed, but its title is, with why: the cause
/// may well be the one (Python.h missing), only the commands are not typed for
/// PowerShell. It says nothing about whether the cause can happen there.
fn linux_shell_withheld(fix: &Fix) -> Option<WithheldFix> {
    let (step, why) = linux_shell_step(fix)?;
    Some(WithheldFix {
        title: fix.title.clone(),
        why: format!(
            "written for a Linux shell, not for PowerShell as printed: `{}` {why}",
            code_of(step)
        ),
    })
}

/// For a fix that is not written for Windows, its first step that needs a POSIX shell, a
/// Linux path or a Linux program ([`posix_only_reasons`]) and why: it would not run as
/// printed in PowerShell.
fn linux_shell_step(fix: &Fix) -> Option<(&str, &'static str)> {
    if fix.platform == "windows" {
        return None;
    }
    fix.steps
        .iter()
        .find_map(|s| Some((s.as_str(), *posix_only_reasons(s).first()?)))
}

/// The confirm commands to print for `platform`: a Linux machine (bare metal, container,
/// Jetson) drops the ones written for Windows; a native-Windows paste keeps only those
/// when the entry has any, else the unmarked ones that run in PowerShell as printed
/// (`python -c "…"`, `nvidia-smi`; not `ldconfig -p | grep …`); WSL2, or no platform
/// known, keeps all.
pub fn place_confirms(platform: Option<Platform>, confirms: Vec<Confirm>) -> Vec<Confirm> {
    let windows = |c: &Confirm| is_windows_command(&c.command);
    match platform {
        Some(Platform::Machine | Platform::Container | Platform::Jetson) => {
            confirms.into_iter().filter(|c| !windows(c)).collect()
        }
        Some(Platform::Windows) if confirms.iter().any(windows) => {
            confirms.into_iter().filter(windows).collect()
        }
        Some(Platform::Windows) => confirms
            .into_iter()
            .filter(|c| posix_only_reasons(&c.command).is_empty())
            .collect(),
        _ => confirms,
    }
}

/// The words for a platform in a withheld fix's reason.
fn platform_words(p: Platform) -> &'static str {
    match p {
        Platform::Wsl2 => "WSL2 (the driver is the Windows one; a Linux NVIDIA driver or module inside WSL breaks CUDA)",
        Platform::Jetson => "a Jetson (its driver is part of L4T, upgraded with JetPack)",
        Platform::Windows => "Windows (a Linux driver package does not apply)",
        Platform::Container => "a container",
        Platform::Machine => "this machine",
    }
}

/// The fix WSL2 and native Windows get in place of the Linux driver fixes they withhold.
fn windows_driver_fix(platform: Platform) -> Fix {
    if platform == Platform::Windows {
        return Fix {
            platform: "windows".into(),
            title: "Install or update the NVIDIA driver for Windows (the Linux driver steps do not apply here)".into(),
            steps: vec!["# the current driver for this GPU from nvidia.com/drivers or the NVIDIA App (Game Ready, Studio or RTX Enterprise), then restart the application".into()],
            note: None,
        };
    }
    Fix {
        platform: "windows".into(),
        title: "Install or update the NVIDIA driver in Windows, never a Linux driver inside WSL2 (WSL2 reaches it through /usr/lib/wsl/lib)".into(),
        steps: vec!["wsl --shutdown   # in PowerShell after the Windows driver update, then reopen the WSL shell".into()],
        note: None,
    }
}

/// Effects that act on the Linux kernel's side of the driver (modules, boot, Secure Boot
/// keys): a cause whose fix needs them cannot be the cause under WSL2 or native Windows.
fn kernel_side(e: Effect) -> bool {
    matches!(
        e,
        Effect::ModuleBuild
            | Effect::ModuleLoad
            | Effect::ModuleUnload
            | Effect::MokChange
            | Effect::BootConfig
    )
}

/// One hit's fixes placed for a platform.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// The fixes to print, alternatives of one group.
    pub fixes: Vec<PlacedFix>,
    /// The fixes withheld, with why.
    pub withheld: Vec<WithheldFix>,
    /// True when the platform withheld a fix and no kept fix of the entry runs
    /// a command (what is left is prose or comments): a cause this platform
    /// cannot have, such as a kernel-module cause under WSL2.
    pub nothing_left_to_do: bool,
}

/// Places one hit's fixes for `platform` (`None`: not known, nothing
/// withheld): the fixes to print, alternatives of group `group`, and the
/// fixes withheld with why.
pub fn place(platform: Option<Platform>, group: &str, fixes: Vec<Fix>) -> Placement {
    let mut out = Vec::new();
    let mut withheld = Vec::new();
    let mut acts = false;
    // What the withheld fixes would have done: a driver install alone is the Windows
    // driver update there; a kernel-side step means the cause cannot happen there.
    let mut withheld_installs_driver = false;
    let mut withheld_kernel_side = false;
    let mut left_out = false;
    // Whether a fix was withheld for a harm it would do here (not only for its shell).
    let mut withheld_harm = false;
    for fix in fixes {
        let effects: Vec<Effect> = fix.steps.iter().flat_map(|s| step_effects(s)).collect();
        let any = |f: fn(Effect) -> bool| effects.iter().any(|e| f(*e));
        // A desktop driver package step: installs or removes a driver and is not
        // one of L4T's own packages.
        let desktop_driver = fix.steps.iter().any(|s| {
            !s.contains("l4t")
                && step_effects(s)
                    .iter()
                    .any(|e| matches!(e, Effect::DriverInstall | Effect::DriverRemove))
        });
        // A fix written for another operating system is left out without a word: a
        // Windows fix on a Linux machine, an apt or Jetson fix for a native-Windows paste.
        let foreign = match platform {
            Some(Platform::Windows) => LINUX_ONLY_FIXES.contains(&fix.platform.as_str()),
            Some(Platform::Machine | Platform::Container | Platform::Jetson) => {
                fix.platform == "windows"
            }
            _ => false,
        };
        if foreign {
            left_out = true;
            continue;
        }
        let withhold = match platform {
            Some(Platform::Wsl2) => {
                fix.platform != "windows"
                    && (any(Effect::forbidden_in_wsl) || effects.contains(&Effect::Reboot))
            }
            Some(Platform::Jetson) => desktop_driver,
            Some(Platform::Windows) => fix.platform != "windows" && any(Effect::host_only),
            _ => false,
        };
        if platform == Some(Platform::Windows) && !withhold {
            if let Some(w) = linux_shell_withheld(&fix) {
                withheld.push(w);
                continue;
            }
        }
        if withhold {
            withheld_harm = true;
            withheld_installs_driver |= effects.contains(&Effect::DriverInstall);
            withheld_kernel_side |= effects.iter().any(|e| kernel_side(*e));
            let p = platform.unwrap_or(Platform::Machine);
            withheld.push(WithheldFix {
                title: fix.title.clone(),
                why: format!(
                    "not for {}: its steps {}",
                    platform_words(p),
                    what(&effects)
                ),
            });
            continue;
        }
        // A fix written for this platform counts even when it is prose ("install
        // the driver from nvidia.com" for Windows).
        let own = matches!(
            (platform, fix.platform.as_str()),
            (Some(Platform::Wsl2 | Platform::Windows), "windows")
                | (Some(Platform::Jetson), "jetson")
        );
        acts |= own || effects.iter().any(|e| *e != Effect::Inert);
        let runs_on = match platform {
            Some(Platform::Container) if any(Effect::host_only) => RunsOn::ContainerHost,
            Some(Platform::Windows) => RunsOn::ThisMachine,
            _ if fix.platform == "windows" => RunsOn::WindowsHost,
            _ if effects.contains(&Effect::WindowsAction) => RunsOn::WindowsHost,
            _ => RunsOn::ThisMachine,
        };
        out.push(PlacedFix {
            fix,
            runs_on,
            choice: None,
        });
    }
    // A withheld driver install, with nothing kernel-side, is a cause Windows has too:
    // its remedy is the Windows driver (a driver too old for the CUDA or OptiX in use).
    let windows_remedy = matches!(platform, Some(Platform::Wsl2 | Platform::Windows))
        && withheld_installs_driver
        && !withheld_kernel_side;
    let nothing_left_to_do = (withheld_harm || left_out) && !acts && !windows_remedy;
    let has_windows_fix = out
        .iter()
        .any(|f| f.runs_on == RunsOn::WindowsHost || f.fix.platform == "windows");
    let insert = match platform {
        Some(Platform::Wsl2) => withheld_harm && !has_windows_fix,
        Some(Platform::Windows) => windows_remedy && !has_windows_fix,
        _ => false,
    };
    if let (true, Some(p)) = (insert, platform) {
        out.insert(
            0,
            PlacedFix {
                fix: windows_driver_fix(p),
                runs_on: if p == Platform::Windows {
                    RunsOn::ThisMachine
                } else {
                    RunsOn::WindowsHost
                },
                choice: None,
            },
        );
    }
    if platform == Some(Platform::Windows) {
        // The fixes written for Windows first; the others (pip, conda, config) after.
        out.sort_by_key(|f| f.fix.platform != "windows");
    }
    if out.len() > 1 {
        for (i, f) in out.iter_mut().enumerate() {
            f.choice = Some(Choice {
                group: group.to_string(),
                option: i as u32 + 1,
            });
        }
    }
    Placement {
        fixes: out,
        withheld,
        nothing_left_to_do,
    }
}

/// The machine's values for the KB's typed placeholders (kb/FORMAT.md,
/// "Machine-dependent steps"), computed by the doctor's own rules: the driver
/// package and branch for these GPUs (`gpukb_facts::driver_choice`), the torch
/// pin `gpukb plan` recommends for this fingerprint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MachineValues {
    pub driver_package: Option<String>,
    pub branch: Option<String>,
    pub torch_pin: Option<String>,
}

impl MachineValues {
    /// The values for the machine a fingerprint describes (`None` where a
    /// fact is missing: the placeholder then stays, with its comment).
    pub fn of(fp: &gpukb_facts::Fingerprint) -> MachineValues {
        Self::for_placeholders(fp, &FILLED)
    }

    /// The values of the `placeholders` named (of [`FILLED`]) only: the others stay
    /// `None`. Planning the torch pin reads the wheel tables (about 40 % of judging a
    /// machine's facts), so a search computes only what the shown fixes name.
    pub fn for_placeholders(fp: &gpukb_facts::Fingerprint, placeholders: &[&str]) -> MachineValues {
        let wants = |t: &str| placeholders.contains(&t);
        let driver = (wants("<DRIVER_PACKAGE>") || wants("<BRANCH>"))
            .then(|| gpukb_doctor::fixes::driver_recommendation_for(&gpukb_doctor::View::new(fp)))
            .flatten();
        let torch_pin = wants("<TORCH_PIN>")
            .then(|| {
                let machine = gpukb_facts::plan::PlannerFacts::from_fingerprint(fp, "this machine");
                gpukb_facts::plan::plan(&[machine], &gpukb_facts::plan::TorchSpec::default())
                    .torch
                    .recommended
                    .and_then(|r| r.command.strip_prefix("pip install ").map(str::to_string))
            })
            .flatten();
        MachineValues {
            driver_package: driver
                .as_ref()
                .filter(|_| wants("<DRIVER_PACKAGE>"))
                .map(|d| d.apt_package()),
            branch: driver
                .as_ref()
                .filter(|_| wants("<BRANCH>"))
                .map(|d| d.branch.to_string()),
            torch_pin,
        }
    }
}

/// The placeholders of [`FILLED`] that some step of `fixes` names.
pub fn placeholders_in<'a>(fixes: impl IntoIterator<Item = &'a Fix>) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for fix in fixes {
        for t in FILLED {
            if !out.contains(&t) && fix.steps.iter().any(|s| s.contains(t)) {
                out.push(t);
            }
        }
    }
    out
}

/// The placeholders [`fill`] fills (kb/FORMAT.md, "Machine-dependent steps").
pub use crate::fill_step::FILLED;

/// Fills a fix's placeholders with this machine's values, in the command part
/// of each step only (a trailing `# comment` that explains a placeholder keeps
/// it); returns whether any was filled.
pub fn fill(fix: &mut Fix, v: &MachineValues) -> bool {
    let values = [
        v.driver_package.as_deref(),
        v.branch.as_deref(),
        v.torch_pin.as_deref(),
    ];
    let mut filled = false;
    for step in &mut fix.steps {
        let new = crate::fill_step::fill_step(step, values);
        filled |= new != *step;
        *step = new;
    }
    filled
}

/// What a withheld fix's steps do, in words.
fn what(effects: &[Effect]) -> &'static str {
    if effects.iter().any(|e| matches!(e, Effect::DriverInstall)) {
        "install a Linux NVIDIA driver"
    } else if effects.iter().any(|e| matches!(e, Effect::DriverRemove)) {
        "remove a Linux NVIDIA driver"
    } else if effects.iter().any(|e| {
        matches!(
            e,
            Effect::ModuleBuild | Effect::ModuleLoad | Effect::ModuleUnload
        )
    }) {
        "build, load or unload an NVIDIA kernel module"
    } else if effects.contains(&Effect::MokChange) {
        "change Secure Boot keys"
    } else if effects.contains(&Effect::BootConfig) {
        "change the boot configuration"
    } else if effects.contains(&Effect::Reboot) {
        "reboot Linux"
    } else {
        "change the GPU or its driver"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(platform: &str, steps: &[&str]) -> Fix {
        Fix {
            platform: platform.into(),
            title: steps.join("; "),
            steps: steps.iter().map(|s| s.to_string()).collect(),
            note: None,
        }
    }

    #[test]
    fn pastes_name_their_platform() {
        let p = |t: &str| paste_platform(t).map(|n| n.platform);
        assert_eq!(
            p("Linux 5.15.153.1-microsoft-standard-WSL2 x86_64"),
            Some(Platform::Wsl2)
        );
        assert_eq!(p("ls /usr/lib/wsl/lib/libcuda.so.1"), Some(Platform::Wsl2));
        // WSL mounts the Windows drives at /mnt/<letter>/; a Linux mount point has a name
        assert_eq!(
            p(r#"File "/mnt/c/Users/me/proj/.venv/lib/python3.12/site-packages/x.py""#),
            Some(Platform::Wsl2)
        );
        assert_eq!(p("cp model.bin /mnt/data/models/"), None);
        assert_eq!(
            p("R36 (release), REVISION: 4.3 on Jetson Orin NX"),
            Some(Platform::Jetson)
        );
        assert_eq!(
            p(r"Could not load library cudnn_ops64_9.dll. Error code 126"),
            Some(Platform::Windows)
        );
        assert_eq!(
            p(r"File C:\Users\me\venv\lib\site-packages\torch\__init__.py"),
            Some(Platform::Windows)
        );
        assert_eq!(
            p("root@3f2a9c1b7d4e:/workspace# python train.py"),
            Some(Platform::Container)
        );
        assert_eq!(
            p("RuntimeError: CUDA error: no kernel image is available"),
            None
        );
    }

    #[test]
    fn windows_fixes_and_confirms_only_where_windows_is() {
        let cudnn = || {
            vec![
                fix("pip", &["pip install nvidia-cudnn-cu12"]),
                fix("apt", &["sudo apt-get install libcudnn9-cuda-12"]),
                fix(
                    "windows",
                    &["where.exe cudnn64_9.dll   # PowerShell or cmd"],
                ),
            ]
        };
        // A native-Windows paste: the apt fix left out (not listed as withheld), the Windows
        // fix first.
        let p = place(Some(Platform::Windows), "libcudnn", cudnn());
        let order: Vec<&str> = p.fixes.iter().map(|f| f.fix.platform.as_str()).collect();
        assert_eq!(order, ["windows", "pip"]);
        assert!(p.withheld.is_empty(), "{:?}", p.withheld);
        // A Linux machine, bare or in a container: the Windows fix left out.
        for platform in [Platform::Machine, Platform::Container, Platform::Jetson] {
            let p = place(Some(platform), "libcudnn", cudnn());
            let order: Vec<&str> = p.fixes.iter().map(|f| f.fix.platform.as_str()).collect();
            assert_eq!(order, ["pip", "apt"], "{platform:?}");
            assert!(!p.nothing_left_to_do);
        }
        // Unknown platform, or WSL2: nothing withheld for being Windows or Linux.
        assert_eq!(place(None, "libcudnn", cudnn()).fixes.len(), 3);
        assert_eq!(
            place(Some(Platform::Wsl2), "libcudnn", cudnn()).fixes.len(),
            3
        );
        // Only a Windows-only cause on a Linux machine has nothing left to do.
        let only = vec![fix(
            "windows",
            &["winget install Microsoft.VCRedist.2015+.x64"],
        )];
        assert!(place(Some(Platform::Machine), "vcredist", only).nothing_left_to_do);

        let confirm = |c: &str| Confirm {
            command: c.into(),
            expect: String::new(),
            answers: Vec::new(),
        };
        let both = || {
            vec![
                confirm("ldconfig -p | grep libcudnn"),
                confirm("where.exe cudnn64_9.dll   # Windows, PowerShell or cmd"),
            ]
        };
        let kept = |p: Option<Platform>, c: Vec<Confirm>| -> Vec<String> {
            place_confirms(p, c)
                .into_iter()
                .map(|c| c.command)
                .collect()
        };
        assert_eq!(
            kept(Some(Platform::Machine), both()),
            ["ldconfig -p | grep libcudnn"]
        );
        assert_eq!(
            kept(Some(Platform::Windows), both()),
            ["where.exe cudnn64_9.dll   # Windows, PowerShell or cmd"]
        );
        assert_eq!(kept(None, both()).len(), 2);
        assert_eq!(kept(Some(Platform::Wsl2), both()).len(), 2);
        // A Windows paste keeps an unmarked command when the entry has no Windows one.
        assert_eq!(
            kept(
                Some(Platform::Windows),
                vec![confirm("python -c \"import torch\"")]
            )
            .len(),
            1
        );
        // ... but not one only a Linux shell runs.
        assert_eq!(
            kept(
                Some(Platform::Windows),
                vec![
                    confirm("python -c \"import torch\""),
                    confirm("pip list 2>/dev/null | grep -i nvidia-")
                ]
            ),
            ["python -c \"import torch\""]
        );
    }

    #[test]
    fn a_windows_paste_gets_no_step_only_a_linux_shell_runs() {
        // Verbatim shapes of the KB's pip and config fixes.
        let fixes = || {
            vec![
                fix(
                    "pip",
                    &[
                        "pip install nvidia-cudnn-cu12==8.9.7.29",
                        "export LD_LIBRARY_PATH=$(python -c 'import os, nvidia.cudnn; print(os.path.dirname(nvidia.cudnn.__file__))')/lib:$LD_LIBRARY_PATH",
                    ],
                ),
                fix("pip", &["pip install -U ctranslate2 faster-whisper"]),
            ]
        };
        let p = place(Some(Platform::Windows), "cudnn8", fixes());
        let kept: Vec<&str> = p.fixes.iter().map(|f| f.fix.steps[0].as_str()).collect();
        assert_eq!(kept, ["pip install -U ctranslate2 faster-whisper"]);
        // Its title is still printed, with why, and the cause is not put after the others:
        // only the commands are Linux's.
        assert_eq!(p.withheld.len(), 1);
        assert!(
            p.withheld[0].why.contains("Linux shell") && p.withheld[0].why.contains("export"),
            "{:?}",
            p.withheld
        );
        let only_linux_shell = vec![fix("any", &["sudo dnf install python3-devel"])];
        assert!(!place(Some(Platform::Windows), "python-h", only_linux_shell).nothing_left_to_do);
        // On Linux both run as printed.
        assert_eq!(
            place(Some(Platform::Machine), "cudnn8", fixes())
                .fixes
                .len(),
            2
        );
    }

    #[test]
    fn wsl2_withholds_linux_driver_fixes_and_prints_the_windows_one() {
        let Placement {
            fixes: out,
            withheld,
            nothing_left_to_do,
        } = place(
            Some(Platform::Wsl2),
            "nvidia-driver-not-installed",
            vec![
                fix("apt", &["sudo ubuntu-drivers install", "sudo reboot"]),
                fix("apt", &["sudo apt-get purge 'nvidia-*'"]),
                fix("pip", &["pip install --force-reinstall <TORCH_PIN>"]),
            ],
        );
        // The install and the reboot are withheld; removing a Linux driver
        // installed inside WSL stays (that cause's own fix).
        assert_eq!(withheld.len(), 1, "{withheld:?}");
        assert!(!nothing_left_to_do);
        assert_eq!(out[0].runs_on, RunsOn::WindowsHost);
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].choice.as_ref().map(|c| c.option), Some(3));
    }

    #[test]
    fn a_driver_too_old_cause_on_windows_keeps_its_place_with_the_windows_driver_fix() {
        for platform in [Platform::Windows, Platform::Wsl2] {
            let p = place(
                Some(platform),
                "driver-too-old",
                vec![fix(
                    "driver",
                    &["sudo ubuntu-drivers install", "sudo reboot"],
                )],
            );
            assert!(!p.nothing_left_to_do, "{platform:?}");
            assert_eq!(p.withheld.len(), 1);
            assert_eq!(p.fixes.len(), 1);
            assert_eq!(p.fixes[0].fix.platform, "windows");
        }
        // The same cause with a kernel-module step cannot be the cause there.
        let p = place(
            Some(Platform::Windows),
            "module-not-built",
            vec![fix(
                "driver",
                &[
                    "sudo apt install nvidia-dkms-550",
                    "sudo dkms autoinstall",
                    "sudo reboot",
                ],
            )],
        );
        assert!(p.nothing_left_to_do);
        assert!(p.fixes.is_empty());
    }

    #[test]
    fn a_kernel_module_cause_under_wsl2_has_nothing_left_to_do() {
        let p = place(
            Some(Platform::Wsl2),
            "nouveau",
            vec![
                fix("apt", &["echo 'blacklist nouveau' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf", "sudo update-initramfs -u"]),
                fix("any", &["# add modprobe.blacklist=nouveau to the kernel command line"]),
            ],
        );
        assert!(p.nothing_left_to_do);
        assert_eq!(p.fixes[0].runs_on, RunsOn::WindowsHost);
    }

    #[test]
    fn placeholders_are_filled_in_commands_not_in_comments() {
        let mut f = fix(
            "apt",
            &[
                "sudo apt install nvidia-driver-<BRANCH>   # <BRANCH> <= 580 for Pascal",
                "# <DRIVER_PACKAGE> only",
            ],
        );
        let v = MachineValues {
            driver_package: Some("nvidia-driver-580-open".into()),
            branch: Some("580".into()),
            torch_pin: None,
        };
        assert!(fill(&mut f, &v));
        assert_eq!(
            f.steps[0],
            "sudo apt install nvidia-driver-580   # <BRANCH> <= 580 for Pascal"
        );
        assert_eq!(f.steps[1], "# <DRIVER_PACKAGE> only");
    }

    #[test]
    fn a_container_runs_host_only_fixes_on_its_host() {
        let Placement {
            fixes: out,
            withheld,
            ..
        } = place(
            Some(Platform::Container),
            "g",
            vec![fix("apt", &["sudo reboot"]), fix("pip", &["pip install x"])],
        );
        assert!(withheld.is_empty());
        assert_eq!(out[0].runs_on, RunsOn::ContainerHost);
        assert_eq!(out[1].runs_on, RunsOn::ThisMachine);
    }

    #[test]
    fn nothing_is_withheld_when_the_platform_is_unknown() {
        let Placement {
            fixes: out,
            withheld,
            ..
        } = place(
            None,
            "g",
            vec![fix("apt", &["sudo apt install <DRIVER_PACKAGE>"])],
        );
        assert!(withheld.is_empty());
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].choice, None);
    }
}
