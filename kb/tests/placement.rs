//! Search's fixes fit the platform the paste names (issue 25 §5), over
//! generated pastes: every KB example as written, and again with a line that
//! names each platform (a WSL2 kernel, a Jetson's L4T release, a container's
//! root prompt). Every printed fix is checked against the effect table
//! (`gpukb_doctor::effect`): under WSL2 nothing installs, builds or loads a Linux
//! driver or module or reboots Linux on the machine itself; inside a container
//! a host-only fix runs on the container's host; on a Jetson no desktop
//! driver package is printed; a native-Windows paste (a PowerShell prompt) gets
//! no apt or Jetson fix and its Windows fixes and confirm commands first or alone,
//! a container or Jetson none of them; alternatives form one group numbered from 1.
#![allow(clippy::disallowed_methods)] // tests read the example files

use gpukb_doctor::effect::{effects_of, Effect};
use gpukb_doctor::fixes::Platform;
use gpukb_doctor::RunsOn;
use gpukb_kb::placement::posix_only_reasons;
use gpukb_kb::Kb;
use std::path::Path;

/// Every example paste of the KB (`# source:` lines dropped).
fn examples() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&root).unwrap().flatten().collect();
    dirs.sort_by_key(|d| d.file_name());
    for d in dirs {
        let mut files: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().collect();
        files.sort_by_key(|f| f.file_name());
        // The first example of each entry: every entry's mechanism, in CI time.
        for f in files.into_iter().take(1) {
            let t = std::fs::read_to_string(f.path()).unwrap_or_default();
            let t: String = t
                .lines()
                .filter(|l| !l.starts_with("# source:"))
                .map(|l| format!("{l}\n"))
                .collect();
            out.push((f.path().display().to_string(), t));
        }
    }
    out
}

const MARKERS: &[(&str, &str)] = &[
    ("wsl2", "$ uname -r\n5.15.167.4-microsoft-standard-WSL2\n"),
    ("windows", "PS C:\\Users\\me\\proj> python train.py\n"),
    ("jetson", "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64 (Jetson Orin NX)\n"),
    ("container", "root@3f2a9c1b7d4e:/workspace# python train.py\n"),
];

fn problems(kb: &Kb, name: &str, platform: &str, text: &str, withheld: &mut usize) -> Vec<String> {
    let mut out = Vec::new();
    let hits = kb.search(text, None, 5).unwrap();
    // The command that tells the first causes apart runs where the paste's process ran.
    if platform == "windows" {
        let r = kb.rank(&kb.analyze(text.as_bytes()), None, 5).unwrap();
        if let Some(d) = r.distinguish.filter(|d| {
            !gpukb_kb::placement::is_windows_command(&d.command)
                && !posix_only_reasons(&d.command).is_empty()
        }) {
            out.push(format!(
                "{name} [windows]: tells causes apart with `{}`",
                d.command
            ));
        }
    }
    *withheld += hits.iter().map(|h| h.withheld_fixes.len()).sum::<usize>();
    for h in &hits {
        let mut options = Vec::new();
        for f in &h.fixes {
            if let Some(c) = &f.choice {
                options.push(c.option);
            }
            for s in &f.fix.steps {
                let Ok(es) = effects_of(s) else { continue };
                let here = f.runs_on == RunsOn::ThisMachine;
                let bad = es.iter().any(|e| match platform {
                    "wsl2" => here && (e.forbidden_in_wsl() || *e == Effect::Reboot),
                    "container" => here && e.host_only(),
                    "jetson" => here && *e == Effect::DriverInstall && s.contains("nvidia-driver"),
                    _ => false,
                });
                if bad {
                    out.push(format!(
                        "{name} [{platform}] {}: `{s}` printed for {:?}",
                        h.id, f.runs_on
                    ));
                }
            }
        }
        // Windows fixes and confirm commands only where Windows is, and first there.
        let windows_fix: Vec<bool> = h
            .fixes
            .iter()
            .map(|f| f.fix.platform == "windows")
            .collect();
        let windows_confirm =
            |c: &gpukb_kb::model::Confirm| gpukb_kb::placement::is_windows_command(&c.command);
        let elsewhere = match platform {
            "container" | "jetson" => {
                windows_fix.contains(&true) || h.confirm.iter().any(windows_confirm)
            }
            "windows" => {
                h.fixes
                    .iter()
                    .any(|f| matches!(f.fix.platform.as_str(), "apt" | "jetson"))
                    || windows_fix.windows(2).any(|w| !w[0] && w[1])
                    || (h.confirm.iter().any(windows_confirm)
                        && !h.confirm.iter().all(windows_confirm))
                    // Nothing printed that only a Linux shell runs.
                    || h.fixes.iter().any(|f| {
                        f.fix.platform != "windows"
                            && f.fix.steps.iter().any(|s| !posix_only_reasons(s).is_empty())
                    })
                    || h.confirm.iter().any(|c| {
                        !windows_confirm(c) && !posix_only_reasons(&c.command).is_empty()
                    })
            }
            _ => false,
        };
        if elsewhere {
            out.push(format!(
                "{name} [{platform}] {}: a fix or confirm command for another OS, or the Windows fixes not first",
                h.id
            ));
        }
        let want: Vec<u32> = (1..=options.len() as u32).collect();
        if h.fixes.len() > 1 && options != want {
            out.push(format!("{name} [{platform}] {}: options {options:?}", h.id));
        }
    }
    out
}

/// The rules of the platform a paste names.
fn rules_of(p: Option<Platform>) -> &'static str {
    match p {
        Some(Platform::Wsl2) => "wsl2",
        Some(Platform::Container) => "container",
        Some(Platform::Jetson) => "jetson",
        Some(Platform::Windows) => "windows",
        _ => "",
    }
}

#[test]
fn search_prints_only_fixes_that_fit_the_platform_the_paste_names() {
    let kb = Kb::open().unwrap();
    let ex = examples();
    assert!(ex.len() > 200, "only {} examples", ex.len());
    let mut bad = Vec::new();
    let mut withheld = 0;
    for (name, text) in &ex {
        let mut none = 0;
        let named = gpukb_kb::placement::paste_platform(text).map(|n| n.platform);
        bad.extend(problems(&kb, name, rules_of(named), text, &mut none));
        if named.is_none() {
            assert_eq!(
                none, 0,
                "{name}: a paste naming no platform had fixes withheld"
            );
        }
        for (platform, marker) in MARKERS {
            let t = format!("{marker}{text}");
            // The paste's own platform words may name another one first (a Jetson
            // log under a container prompt is judged as a Jetson's).
            let named = gpukb_kb::placement::paste_platform(&t).map(|n| n.platform);
            assert!(
                named.is_some(),
                "{name}: the {platform} marker was not seen"
            );
            bad.extend(problems(&kb, name, rules_of(named), &t, &mut withheld));
        }
    }
    println!(
        "{} pastes x {} platforms; {withheld} fixes withheld",
        ex.len(),
        MARKERS.len() + 1
    );
    assert!(
        withheld > 100,
        "the platform markers withheld only {withheld} fixes"
    );
    assert!(
        bad.is_empty(),
        "{} problems:\n{}",
        bad.len(),
        bad[..bad.len().min(40)].join("\n")
    );
}

#[test]
fn a_wsl2_paste_gets_the_windows_driver_before_any_kernel_module_cause() {
    let kb = Kb::open().unwrap();
    let t = "$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. \
             Make sure that the latest NVIDIA driver is installed and running.\n$ uname -r\n\
             5.15.153.1-microsoft-standard-WSL2\n";
    let hits = kb.search(t, None, 5).unwrap();
    assert_eq!(hits[0].id, "wsl2-linux-driver-installed-inside");
    for h in &hits {
        for f in &h.fixes {
            for s in &f.fix.steps {
                let es = effects_of(s).unwrap();
                assert!(
                    !es.contains(&Effect::DriverInstall) || f.runs_on != RunsOn::ThisMachine,
                    "{}: {s}",
                    h.id
                );
            }
        }
    }
    // nouveau, Secure Boot and DKMS causes need a Linux kernel module: after the rest.
    let pos = |id: &str| hits.iter().position(|h| h.id == id);
    if let (Some(n), Some(l)) = (
        pos("nouveau-owns-gpu-probe-skipped"),
        pos("nvidia-smi-cannot-find-libnvidia-ml"),
    ) {
        assert!(
            n > l,
            "{:?}",
            hits.iter().map(|h| &h.id).collect::<Vec<_>>()
        );
    }
}

/// The effects the build wrote for each fix step are the ones the doctor's table gives
/// that step now (the build includes the same file; this holds the encoding to it), and
/// every step of every KB fix was classified.
#[test]
fn the_build_classified_every_fix_step_as_the_table_does() {
    use gpukb_doctor::effect::effects_or_worst;
    use gpukb_kb::placement::{classified_steps, step_effects};
    let steps: Vec<&str> = classified_steps().collect();
    assert!(steps.len() > 500, "only {} steps classified", steps.len());
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "not sorted");
    for s in &steps {
        assert_eq!(step_effects(s), effects_or_worst(s), "{s}");
    }
    let kb = Kb::open().unwrap();
    for summary in kb.list(None).unwrap() {
        let e = kb.entry(&summary.id).unwrap().unwrap();
        for f in &e.fixes {
            for s in &f.steps {
                assert!(steps.binary_search(&s.as_str()).is_ok(), "{}: {s}", e.id);
            }
        }
    }
    // a step the build never saw is classified now
    assert_eq!(
        step_effects("sudo apt-get install -y nvidia-driver-999-not-in-the-kb"),
        vec![Effect::DriverInstall]
    );
}

/// Every value the machine's facts can fill a placeholder with: each driver package and
/// branch the driver table's branches give, and every torch pin the planner's tables can
/// recommend (each wheel's pinned install, each Jetson wheel URL, the Jetson indexes).
fn fill_domain() -> [Vec<String>; 3] {
    let branches = [
        340, 390, 418, 440, 450, 460, 470, 495, 510, 515, 525, 530, 535, 545, 550, 555, 560, 565,
        570, 575, 580, 590, 595, 600,
    ];
    let packages = branches
        .iter()
        .flat_map(|b| {
            [
                format!("nvidia-driver-{b}"),
                format!("nvidia-driver-{b}-open"),
            ]
        })
        .collect();
    let mut pins: Vec<String> = gpukb_facts::builds::torch_wheels()
        .iter()
        .filter_map(|w| {
            gpukb_facts::plan::pip_command(w)
                .strip_prefix("pip install ")
                .map(str::to_string)
        })
        .collect();
    pins.extend(
        gpukb_facts::builds::jetson_wheels()
            .iter()
            .map(|w| w.wheel_url.clone())
            .filter(|u| !u.is_empty()),
    );
    pins.push("torch torchvision --index-url https://pypi.jetson-ai-lab.io/jp6/cu126".into());
    pins.push("torch --index-url https://pypi.jetson-ai-lab.io/sbsa/cu130".into());
    [
        packages,
        branches.iter().map(|b| b.to_string()).collect(),
        pins,
    ]
}

/// A step filled with any value the machine's facts can give does what the build said
/// the filled form of its KB step does (the build classified it with one representative
/// value), and search takes that answer without compiling the effect table: every such
/// value has its representative's shape.
#[test]
fn a_filled_step_does_what_its_representative_does() {
    use gpukb_doctor::effect::effects_or_worst;
    use gpukb_kb::fill_step::{fill_step, value_has_its_shape, values_in, REPRESENTATIVE};
    use gpukb_kb::placement::{filled_templates, step_effects};
    let domain = fill_domain();
    assert!(domain[2].len() > 50, "{} torch pins", domain[2].len());
    let templates: Vec<_> = filled_templates().collect();
    assert!(templates.len() >= 15, "{} templates", templates.len());
    let mut checked = 0;
    for (template, built) in &templates {
        for (i, values) in domain.iter().enumerate() {
            for v in values {
                assert!(value_has_its_shape(i, v), "placeholder {i}: {v:?}");
                let mut with = REPRESENTATIVE.map(Some);
                with[i] = Some(v.as_str());
                let filled = fill_step(template, with);
                if filled == *template {
                    continue;
                }
                assert_eq!(
                    values_in(template, &filled).map(|_| ()),
                    Some(()),
                    "{filled}"
                );
                assert_eq!(&effects_or_worst(&filled), built, "{filled}");
                assert_eq!(&step_effects(&filled), built, "{filled}");
                checked += 1;
            }
        }
    }
    assert!(checked > 2000, "{checked} filled steps");
    // A value of another shape is classified as printed, not by its template.
    let odd = fill_step(
        "pip install <TORCH_PIN>   # the pinned CUDA build for this GPU and driver (gpukb plan)",
        [None, None, Some("torch && sudo reboot")],
    );
    assert!(step_effects(&odd).contains(&Effect::Reboot), "{odd}");
    assert!(!value_has_its_shape(0, "nvidia-driver-580; reboot"));
    assert!(!value_has_its_shape(1, "580-open"));
}
