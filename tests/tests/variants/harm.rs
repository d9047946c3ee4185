//! The harm review as a test (issue 25): every fix step the doctor prints for
//! every generated variant and every recorded capture under `tests/fixtures`
//! is mapped to its effect ([`gpukb_doctor::effect::effects_of`]); an unclassified
//! command fails, and so does a step whose effect the platform forbids where
//! it says it runs: under WSL2 nothing installs, builds, loads or removes a
//! Linux NVIDIA driver or module and nothing reboots Linux; inside a container
//! no step marked for this machine installs a driver, touches a module or a
//! GPU setting, or reboots. Alternatives are one group, never one block.

use gpukb_agent::Fingerprint;
use gpukb_doctor::effect::{effects_of, Effect};
use gpukb_doctor::{diagnose, fixes::Platform, RunsOn, View};

/// The harm of one machine's printed fixes: one line per problem.
pub(crate) fn problems(name: &str, fp: &Fingerprint) -> Vec<String> {
    let d = diagnose(fp, name);
    let platform = Platform::of(&View::new(fp));
    let mut out = Vec::new();
    for f in &d.findings {
        let mut groups = std::collections::BTreeMap::new();
        for s in &f.fixes {
            if let Some(c) = &s.choice {
                groups
                    .entry(c.group.clone())
                    .or_insert_with(Vec::new)
                    .push(c.option);
            }
            for c in &s.commands {
                let es = match effects_of(c) {
                    Ok(es) => es,
                    Err(u) => {
                        out.push(format!("{name}: {}: {u}", f.id));
                        continue;
                    }
                };
                let here = s.runs_on == RunsOn::ThisMachine;
                for e in es {
                    let bad = match platform {
                        Platform::Wsl2 => {
                            (here && (e.forbidden_in_wsl() || e == Effect::Reboot))
                                || (s.runs_on == RunsOn::ContainerHost)
                        }
                        Platform::Container => here && e.host_only(),
                        Platform::Jetson => here && c.contains("nvidia-driver-"),
                        Platform::Machine | Platform::Windows => s.runs_on == RunsOn::WindowsHost,
                    };
                    if bad {
                        out.push(format!(
                            "{name}: {}: `{c}` ({e:?}) printed to run on {:?} under {platform:?}",
                            f.id, s.runs_on
                        ));
                    }
                }
            }
        }
        for (g, opts) in groups {
            if opts.len() < 2 || opts.first() != Some(&1) {
                out.push(format!(
                    "{name}: {}: choice group {g} has options {opts:?}",
                    f.id
                ));
            }
        }
        // Consecutive alternatives ("Or …") are always a choice group.
        if f.fixes.iter().skip(1).any(|s| s.text.starts_with("Or "))
            && f.fixes.iter().any(|s| s.choice.is_none())
        {
            out.push(format!(
                "{name}: {}: alternatives printed as one block",
                f.id
            ));
        }
    }
    out
}
