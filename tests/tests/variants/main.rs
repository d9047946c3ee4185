//! Generated variants of every platform-dependent check (see [`gen`]): the
//! doctor must name each broken machine's root cause first and leave each
//! healthy control without a finding above info. A fixed 30 % of the
//! variants (by the hash of their name) is held out: the doctor's checks are
//! tuned on the other part only, and the test reports both scores.
//!
//! `GPUKB_VARIANT_SEED=N` replays another seed (the seed is printed);
//! `GPUKB_VARIANT_SHOW=tuning` prints every tuning variant's outcome (the
//! held-out part's are never printed, only its score and how many missed).
#![allow(clippy::disallowed_methods)] // tests read fixtures and the environment

mod gen;
mod harm;
mod machine;

use gen::{held_out, Input, Variant};
use gpukb_doctor::{diagnose, Severity};

/// The default seed (any other replays through `GPUKB_VARIANT_SEED`).
const SEED: u64 = 0x5eed_2026_1202;

/// The scores this test may not fall below (a ratchet: raise them as checks
/// improve). Issue 20's target is 90 % on both parts. Before the platform
/// checks (main at 701daa7): tuning 31/43, held out 13/17; with them and the
/// driver variants (2026-12-04): tuning 45/45, held out 17/17.
const FLOOR_TUNING: f64 = 0.95;
const FLOOR_HELD_OUT: f64 = 0.9;

/// What the doctor made of one variant.
struct Scored {
    name: String,
    right: bool,
    said: String,
}

fn judge(v: &Variant) -> Scored {
    let fp = match &v.input {
        Input::Capture(m) => m.observe(),
        Input::Observed(fp) => (**fp).clone(),
    };
    let d = diagnose(&fp, "generated variant");
    let first = d.findings.first();
    let said = match first {
        Some(f) => format!("{} [{:?}] {}", f.check, f.severity, f.title),
        None => "no finding".into(),
    };
    let right = match v.expect {
        Some(check) => first.is_some_and(|f| f.check.name() == check && f.root_cause),
        None => d.findings.iter().all(|f| f.severity == Severity::Info),
    };
    Scored {
        name: v.name.clone(),
        right,
        said,
    }
}

fn score(s: &[&Scored]) -> f64 {
    if s.is_empty() {
        return 1.0;
    }
    s.iter().filter(|x| x.right).count() as f64 / s.len() as f64
}

#[test]
fn generated_variants_root_cause_first_and_healthy_controls_clean() {
    let seed = std::env::var("GPUKB_VARIANT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED);
    let variants = gen::generate(seed);
    let platforms: std::collections::BTreeSet<_> = variants.iter().map(|v| v.platform).collect();
    assert_eq!(
        platforms.len(),
        5,
        "every platform has variants: {platforms:?}"
    );
    let names: std::collections::BTreeSet<_> = variants.iter().map(|v| v.name.clone()).collect();
    assert_eq!(names.len(), variants.len(), "variant names are unique");
    let scored: Vec<(bool, Scored)> = variants
        .iter()
        .map(|v| (held_out(&v.name), judge(v)))
        .collect();
    let tuning: Vec<&Scored> = scored.iter().filter(|(h, _)| !h).map(|(_, s)| s).collect();
    let held: Vec<&Scored> = scored.iter().filter(|(h, _)| *h).map(|(_, s)| s).collect();
    let show = std::env::var("GPUKB_VARIANT_SHOW").is_ok_and(|v| v == "tuning");
    for s in &tuning {
        if show || !s.right {
            println!(
                "{} {}: {}",
                if s.right { "ok  " } else { "MISS" },
                s.name,
                s.said
            );
        }
    }
    let (t, h) = (score(&tuning), score(&held));
    println!(
        "seed {seed:#x}: tuning part {}/{} = {:.0} %, held-out part {}/{} = {:.0} % ({} missed)",
        tuning.iter().filter(|s| s.right).count(),
        tuning.len(),
        t * 100.0,
        held.iter().filter(|s| s.right).count(),
        held.len(),
        h * 100.0,
        held.iter().filter(|s| !s.right).count(),
    );
    assert!(
        held.len() * 10 >= variants.len() * 2,
        "the held-out part is about 30 %"
    );
    assert!(
        t >= FLOOR_TUNING - 1e-9,
        "tuning part {:.0} % fell below {:.0} %",
        t * 100.0,
        FLOOR_TUNING * 100.0
    );
    assert!(
        h >= FLOOR_HELD_OUT - 1e-9,
        "held-out part {:.0} % fell below {:.0} %",
        h * 100.0,
        FLOOR_HELD_OUT * 100.0
    );
}

/// Every generated variant and every recorded capture, observed once for all
/// the tests of this file that go over them.
fn all_machines() -> &'static [(String, gpukb_agent::Fingerprint)] {
    static M: std::sync::OnceLock<Vec<(String, gpukb_agent::Fingerprint)>> =
        std::sync::OnceLock::new();
    M.get_or_init(|| {
        let mut v: Vec<(String, gpukb_agent::Fingerprint)> = gen::generate(SEED)
            .into_iter()
            .map(|v| {
                let fp = match &v.input {
                    Input::Capture(m) => m.observe(),
                    Input::Observed(fp) => (**fp).clone(),
                };
                (v.name, fp)
            })
            .collect();
        for name in recorded_captures() {
            v.push((name.clone(), machine::Machine::load(&name).observe()));
        }
        v
    })
}

/// Every capture directory under `tests/fixtures` (relative names).
fn recorded_captures() -> Vec<String> {
    let root = gpukb_tests::fixture("");
    let mut out = Vec::new();
    for group in ["broken", "healthy"] {
        let Ok(rd) = std::fs::read_dir(root.join(group)) else {
            continue;
        };
        for e in rd.flatten() {
            if e.path().join("capture.json").is_file() {
                out.push(format!("{group}/{}", e.file_name().to_string_lossy()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_printed_fix_fits_the_platform_it_runs_on() {
    let mut problems = Vec::new();
    let mut checked = 0;
    let mut platforms = std::collections::BTreeSet::new();
    for v in gen::generate(SEED) {
        let fp = match &v.input {
            Input::Capture(m) => m.observe(),
            Input::Observed(fp) => (**fp).clone(),
        };
        platforms.insert(v.platform);
        problems.extend(harm::problems(&v.name, &fp));
        checked += 1;
    }
    for name in recorded_captures() {
        let fp = machine::Machine::load(&name).observe();
        problems.extend(harm::problems(&name, &fp));
        checked += 1;
    }
    println!("{checked} machines checked");
    assert!(checked > 80, "only {checked} machines");
    assert_eq!(platforms.len(), 5);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_driver_fix_under_wsl2_is_the_windows_driver_and_in_a_container_runs_on_the_host() {
    let vs = gen::generate(SEED);
    let find = |n: &str| {
        let v = vs
            .iter()
            .find(|v| v.name == n)
            .unwrap_or_else(|| panic!("no variant {n}"));
        match &v.input {
            Input::Capture(m) => m.observe(),
            Input::Observed(fp) => (**fp).clone(),
        }
    };
    let wsl = diagnose(
        &find("driver_older_than_torch_cuda/wsl2/r550-under-cu130"),
        "t",
    );
    let f = &wsl.findings[0];
    assert_eq!(f.check.name(), "driver_older_than_torch_cuda");
    assert_eq!(
        f.fixes[0].runs_on,
        gpukb_doctor::RunsOn::WindowsHost,
        "{:?}",
        f.fixes
    );
    assert!(f.fixes[0].text.contains("R580"), "{}", f.fixes[0].text);
    assert!(f.fixes.iter().all(|s| s
        .commands
        .iter()
        .all(|c| !c.contains("apt install nvidia-driver"))));
    let c = diagnose(
        &find("driver_older_than_torch_cuda/container/r570-under-cu130"),
        "t",
    );
    let f = &c.findings[0];
    assert_eq!(f.check.name(), "driver_older_than_torch_cuda");
    assert_eq!(
        f.fixes[0].runs_on,
        gpukb_doctor::RunsOn::ContainerHost,
        "{:#?}",
        f.fixes
    );
    assert_eq!(f.fixes[0].choice.as_ref().map(|c| c.option), Some(1));
    assert_eq!(f.fixes[1].choice.as_ref().map(|c| c.option), Some(2));
    assert_eq!(f.fixes[1].runs_on, gpukb_doctor::RunsOn::ThisMachine);
}

/// With no driver loaded (nouveau bound), the driver fix comes from the PCI
/// id: Pascal gets R580's proprietary modules, Kepler its last branch R470,
/// Hopper the open modules (kb-audit E2: both used to get `-580-open`).
#[test]
fn the_driver_fix_without_a_compute_capability_follows_the_pci_id() {
    for (id, want, not) in [
        ("0x1b06", "sudo apt install nvidia-driver-580", "-open"),
        ("0x102d", "sudo apt install nvidia-driver-470", "-open"),
        (
            "0x2335",
            "sudo apt install nvidia-driver-580-open",
            "nvidia-driver-470",
        ),
    ] {
        let mut m = machine::Machine::load("broken/nouveau-bound");
        m.file(
            "/sys/bus/pci/devices/0000:00:06.0/device",
            format!("{id}\n"),
        );
        let d = diagnose(&m.observe(), "t");
        let f = &d.findings[0];
        assert_eq!(f.check.name(), "nouveau_bound");
        let cmds: Vec<&String> = f.fixes.iter().flat_map(|s| &s.commands).collect();
        let install = cmds
            .iter()
            .find(|c| c.starts_with("sudo apt install nvidia-driver"))
            .unwrap_or_else(|| panic!("{id}: no driver install in {cmds:?}"));
        assert!(install.starts_with(want), "{id}: {install}");
        assert!(!install.contains(not), "{id}: {install}");
    }
}

/// The doctor's torch fix is `gpukb plan`'s recommendation for the same
/// fingerprint, or neither proposes one (issue 23: doctor used to plan for a
/// made-up x86_64 machine: a V100 on aarch64 got "Install torch 2.14.1+cu126").
#[test]
fn the_doctors_torch_fix_is_the_plans_recommendation() {
    use gpukb_facts::plan::{plan, PlannerFacts, TorchSpec};
    let mut machines: Vec<(String, gpukb_agent::Fingerprint)> = all_machines().to_vec();
    for name in recorded_captures() {
        let mut m = machine::Machine::load(&name);
        m.answer(
            "host.arch",
            gpukb_agent::host::Recorded::Ok(serde_json::json!("aarch64")),
        );
        machines.push((format!("{name} on aarch64"), m.observe()));
    }
    let mut proposed = 0;
    for (name, fp) in &machines {
        let p = plan(
            &[PlannerFacts::from_fingerprint(fp, "this machine")],
            &TorchSpec::default(),
        );
        let d = diagnose(fp, name);
        for f in &d.findings {
            for s in &f.fixes {
                let installs = s
                    .commands
                    .iter()
                    .find(|c| c.contains("install --force-reinstall torch=="));
                let Some(c) = installs else { continue };
                proposed += 1;
                let r = p.torch.recommended.as_ref().unwrap_or_else(|| {
                    panic!("{name}: doctor proposes `{c}` but plan recommends nothing")
                });
                assert!(
                    c.replace(" --force-reinstall", "") == r.command,
                    "{name}: doctor `{c}` vs plan `{}`",
                    r.command
                );
            }
        }
    }
    println!("{} machines, {proposed} torch fixes", machines.len());
    assert!(proposed > 5, "only {proposed} torch fixes proposed");
    assert!(machines
        .iter()
        .any(|(n, _)| n == "broken/torch-drops-volta on aarch64"));
}

/// `read: gpukb kb show …` names the entry for this finding's GPU and
/// platform (kb-audit: a V100 was sent to the Blackwell entry, a bare-metal
/// VM to a Docker one): over every generated and recorded machine, the first
/// linked entry of a root cause never names only another GPU generation, and
/// off containers it is not a container entry unless the check is one.
#[test]
fn read_names_the_entry_for_this_gpu_and_platform() {
    use gpukb_doctor::{fixes::Platform, View};
    let kb = gpukb_kb::Kb::open().unwrap();
    let machines = all_machines();
    let mut bad = Vec::new();
    let mut linked = 0;
    for (name, fp) in machines {
        let view = View::new(fp);
        let mine: Vec<&str> = view
            .gpus()
            .iter()
            .filter_map(|g| gpukb_facts::driver_choice::Generation::from_cc(g.cc?))
            .map(|g| g.word().split_whitespace().next().unwrap_or(""))
            .collect();
        let platform = Platform::of(&view);
        let mut d = diagnose(fp, name);
        kb.link_entries(fp, &mut d);
        for f in d.findings.iter().filter(|f| f.root_cause) {
            let Some(id) = f.kb_entries.first() else {
                continue;
            };
            linked += 1;
            let title = kb.entry(id).unwrap().unwrap().title;
            let named: Vec<&&str> = gpukb_kb::link::GENERATIONS
                .iter()
                .filter(|g| title.contains(**g))
                .collect();
            if !mine.is_empty() && !named.is_empty() && !named.iter().any(|g| mine.contains(g)) {
                bad.push(format!(
                    "{name}: {} -> {id} ({title}) for {mine:?}",
                    f.check
                ));
            }
            let container_entry =
                title.to_lowercase().contains("container") || title.contains("Docker");
            if platform != Platform::Container
                && container_entry
                && f.layer != gpukb_doctor::Layer::ContainerWsl
            {
                bad.push(format!(
                    "{name}: {} -> {id} ({title}) off containers",
                    f.check
                ));
            }
        }
    }
    println!("{} machines, {linked} root causes linked", machines.len());
    assert!(linked > 40, "only {linked} links");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The KB's placeholders are filled with what the doctor computes (issue 25
/// §3): over every generated and recorded machine, the driver package and
/// the torch pin search puts into a KB fix are the ones the doctor's own
/// fixes install, so a computed fix never contradicts the entry it links to.
#[test]
fn filled_placeholders_agree_with_the_doctors_computed_fixes() {
    use gpukb_kb::placement::MachineValues;
    let machines = all_machines();
    let (mut drivers, mut pins) = (0, 0);
    for (name, fp) in machines {
        let values = MachineValues::of(fp);
        // search computes only the placeholders its shown fixes name: each one alone is
        // the value `of` gives, and the others stay empty
        for (only, want) in [
            ("<DRIVER_PACKAGE>", values.driver_package.clone()),
            ("<BRANCH>", values.branch.clone()),
            ("<TORCH_PIN>", values.torch_pin.clone()),
        ] {
            let v = MachineValues::for_placeholders(fp, &[only]);
            let got = [&v.driver_package, &v.branch, &v.torch_pin];
            assert_eq!(
                got.iter().filter(|x| x.is_some()).count(),
                usize::from(want.is_some()),
                "{name} {only}"
            );
            assert!(got.iter().any(|x| **x == want), "{name} {only}");
        }
        let d = diagnose(fp, name);
        for s in d.findings.iter().flat_map(|f| &f.fixes) {
            for c in &s.commands {
                if let Some(pkg) = c.strip_prefix("sudo apt install nvidia-driver-") {
                    drivers += 1;
                    assert_eq!(
                        values.driver_package.as_deref(),
                        Some(format!("nvidia-driver-{pkg}").as_str()),
                        "{name}: doctor installs nvidia-driver-{pkg}"
                    );
                }
                if let Some(pin) = c.strip_prefix("pip install --force-reinstall torch==") {
                    pins += 1;
                    assert_eq!(
                        values.torch_pin.as_deref(),
                        Some(format!("torch=={pin}").as_str()),
                        "{name}: doctor installs torch=={pin}"
                    );
                }
            }
        }
    }
    println!(
        "{} machines: {drivers} driver installs, {pins} torch pins compared",
        machines.len()
    );
    assert!(
        drivers >= 3 && pins >= 5,
        "{drivers} driver installs, {pins} pins"
    );
}

/// What a user of a machine with each root cause typically pastes: the symptom
/// the failing program prints (often one several causes share), never the
/// cause's own name. Written per mechanism, not from any one report: (check,
/// a word the variant's name holds or "" for any, pastes).
const SYMPTOMS: &[(&str, &str, &[&str])] = &[
    (
        "mig_without_instances",
        "",
        &[
            "RuntimeError: No CUDA GPUs are available",
            "RuntimeError: CUDA error: no CUDA-capable device is detected",
        ],
    ),
    (
        "gpu_fell_off_bus",
        "",
        &[
            "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error",
            "RuntimeError: CUDA error: unknown error",
        ],
    ),
    (
        "wsl_libcuda_missing",
        "",
        &[
            "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver",
            "Could not load library libcuda.so. Error: libcuda.so: cannot open shared object file: No such file or directory",
        ],
    ),
    (
        "wsl_linux_driver_installed",
        "",
        &["NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."],
    ),
    (
        "cuda_visible_devices_hides_gpus",
        "",
        &[
            "RuntimeError: No CUDA GPUs are available",
            "cudaGetDeviceCount returned 100 -> no CUDA-capable device is detected",
        ],
    ),
    (
        "library_shadowed_by_ld_library_path",
        "nccl",
        &["ImportError: /opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommInitRankScalable"],
    ),
    (
        "library_shadowed_by_ld_library_path",
        "cuda-runtime",
        &["ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: cudaGetDriverEntryPointByVersion, version libcudart.so.12"],
    ),
    (
        "driver_not_loaded",
        "",
        &[
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
            "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver",
        ],
    ),
    (
        "driver_userspace_mismatch",
        "",
        &[
            "Failed to initialize NVML: Driver/library version mismatch",
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda driver combination",
        ],
    ),
    (
        "nvidia_uvm_not_loaded",
        "",
        &[
            "RuntimeError: CUDA error: unknown error",
            "failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error",
        ],
    ),
    (
        "container_without_gpu",
        "",
        &["RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver"],
    ),
    (
        "driver_older_than_torch_cuda",
        "",
        &["RuntimeError: The NVIDIA driver on your system is too old (found version 12080). Please update your GPU driver"],
    ),
];

/// The scores search with the machine may not fall below on the variants'
/// symptom pastes (a ratchet, like the doctor's).
const SEARCH_FLOOR_TUNING: f64 = 0.9;
const SEARCH_FLOOR_HELD_OUT: f64 = 0.85;

#[test]
fn search_with_the_machine_names_each_broken_variant_s_cause() {
    let kb = gpukb_kb::Kb::open().unwrap();
    let mut cases = [(0usize, 0usize), (0, 0)]; // (right, total): tuning, held out
    let mut misses = Vec::new();
    let mut text_right = [0usize, 0];
    for v in gen::generate(SEED) {
        let Some(check) = v.expect else { continue };
        let pastes = SYMPTOMS
            .iter()
            .find(|(c, form, _)| *c == check && v.name.contains(form))
            .unwrap_or_else(|| panic!("no symptom paste for {}: add one to SYMPTOMS", v.name))
            .2;
        let fp = match &v.input {
            Input::Capture(m) => m.observe(),
            Input::Observed(fp) => (**fp).clone(),
        };
        let facts = gpukb_kb::MachineFacts::observe(&fp, "generated variant");
        let part = usize::from(held_out(&v.name));
        for paste in pastes {
            // Right: the top answer is confirmed on this machine by the variant's
            // own root-cause check.
            let names = |hits: &[gpukb_kb::Hit]| {
                hits.first()
                    .and_then(|h| h.machine.as_ref())
                    .is_some_and(|m| m.check() == Some(check) && m.root_cause())
            };
            let with = kb.search(paste, Some(&facts), 3).unwrap();
            let right = names(&with);
            cases[part].1 += 1;
            cases[part].0 += usize::from(right);
            // The text alone, judged by the same machine's verdict of its top answer.
            let alone = kb.search(paste, None, 3).unwrap();
            let alone_id = alone.first().map(|h| h.id.clone());
            text_right[part] += usize::from(
                alone_id.is_some() && with.first().map(|h| &h.id) == alone_id.as_ref() && right,
            );
            if !right && part == 0 {
                misses.push(format!(
                    "{}: {paste:?} -> {}",
                    v.name,
                    with.first().map_or("nothing".into(), |h| h.id.clone())
                ));
            }
        }
    }
    let pct = |(r, n): (usize, usize)| if n == 0 { 1.0 } else { r as f64 / n as f64 };
    let (t, h) = (pct(cases[0]), pct(cases[1]));
    println!(
        "search with the machine on the variants' symptom pastes: tuning {}/{} = {:.0} %, held out {}/{} = {:.0} %; \
         the text alone already first on tuning {}, held out {}",
        cases[0].0, cases[0].1, t * 100.0, cases[1].0, cases[1].1, h * 100.0, text_right[0], text_right[1]
    );
    for m in &misses {
        println!("MISS {m}");
    }
    assert!(cases[0].1 >= 15 && cases[1].1 >= 5, "{cases:?}");
    assert!(
        t >= SEARCH_FLOOR_TUNING - 1e-9,
        "tuning part {:.0} %",
        t * 100.0
    );
    assert!(
        h >= SEARCH_FLOOR_HELD_OUT - 1e-9,
        "held-out part {:.0} %",
        h * 100.0
    );
}

/// A paste whose cause is the program's own (memory, an index), searched on a
/// broken machine: the machine's failure must not take the answer's place.
#[test]
fn a_broken_machine_does_not_hijack_a_paste_of_another_cause() {
    let kb = gpukb_kb::Kb::open().unwrap();
    let pastes = [
        (
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.20 GiB is free.",
            "oom",
        ),
        (
            "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], thread: [0,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.\nRuntimeError: CUDA error: device-side assert triggered",
            "device_assert_bad_index",
        ),
    ];
    let mut wrong = Vec::new();
    let mut n = 0;
    for v in gen::generate(SEED) {
        if v.expect.is_none() {
            continue;
        }
        let fp = match &v.input {
            Input::Capture(m) => m.observe(),
            Input::Observed(fp) => (**fp).clone(),
        };
        let facts = gpukb_kb::MachineFacts::observe(&fp, "generated variant");
        for (paste, category) in pastes {
            let alone = kb.search(paste, None, 1).unwrap();
            assert_eq!(
                alone.first().map(|h| h.category.as_str()),
                Some(category),
                "the text alone answers {category}"
            );
            let with = kb.search(paste, Some(&facts), 1).unwrap();
            n += 1;
            if with.first().map(|h| h.category.as_str()) != Some(category) {
                wrong.push(format!(
                    "{}: {category} paste -> {:?}",
                    v.name,
                    with.first().map(|h| &h.id)
                ));
            }
        }
    }
    assert!(n >= 40, "only {n} cases");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
