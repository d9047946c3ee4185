//! Named predicates over [`MachineFacts`] that entries reference in `[[conditions]] when = ...`.
//! Each returns Confirmed/RuledOut with a sentence naming the facts, or Unknown when the
//! facts needed are missing. The list is [`PREDICATES`] (also documented in kb/FORMAT.md).

use serde::Serialize;

use crate::facts::{GpuFacts, MachineFacts, TorchFacts};

/// The outcome of one predicate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", content = "because", rename_all = "snake_case")]
pub enum Verdict {
    /// The facts show the condition holds.
    Confirmed(String),
    /// The facts show it does not hold.
    RuledOut(String),
    /// The facts needed are missing.
    Unknown,
}

/// Every predicate name with a one-line meaning.
pub const PREDICATES: &[(&str, &str)] = &[
    ("torch_lacks_gpu_arch", "a GPU's compute capability is covered by neither the SASS nor the PTX of an installed CUDA torch build"),
    ("gpu_older_than_torch_archs", "a GPU is older than the oldest architecture of an installed CUDA torch build"),
    ("driver_older_than_torch_cuda", "the driver's CUDA version cannot run the CUDA version torch was built with"),
    ("no_driver", "no NVIDIA kernel module / driver is present"),
    ("nouveau_loaded", "the nouveau module is loaded"),
    ("uvm_not_loaded", "nvidia is loaded but nvidia_uvm is not"),
    ("torch_cpu_only", "an installed torch is a CPU-only build"),
    ("cuda_visible_devices_hides_gpus", "CUDA_VISIBLE_DEVICES is empty, -1 or names no existing GPU"),
    ("in_container", "running inside a container"),
    ("wsl", "running under WSL2"),
    ("on_jetson", "running on a Jetson"),
    ("pcie_link_downtrained", "a GPU's PCIe link runs below its maximum width or generation"),
    ("ecc_errors", "a GPU reports uncorrected ECC errors or failed row remapping"),
    ("mig_enabled", "MIG mode is enabled on a GPU"),
    ("thermal_or_power_throttling", "a GPU's clocks are held down by a thermal or power reason"),
    ("duplicate_library_versions", "several versions of the same CUDA library are installed"),
    ("cuda_init_failed", "cuInit did not return CUDA_SUCCESS"),
    ("nvml_driver_mismatch", "NVML reports a driver/library version mismatch"),
    ("secure_boot_enabled", "Secure Boot is enabled"),
    ("no_gpu_visible", "the driver is loaded but no NVIDIA GPU is listed"),
];

/// Whether `name` is a known predicate.
pub fn is_predicate(name: &str) -> bool {
    PREDICATES.iter().any(|(n, _)| *n == name)
}

/// Evaluates predicate `name` on `f`. Unknown names give [`Verdict::Unknown`].
pub fn evaluate(name: &str, f: &MachineFacts) -> Verdict {
    match name {
        "torch_lacks_gpu_arch" => torch_lacks_gpu_arch(f),
        "gpu_older_than_torch_archs" => gpu_older_than_torch_archs(f),
        "driver_older_than_torch_cuda" => driver_older_than_torch_cuda(f),
        "no_driver" => no_driver(f),
        "nouveau_loaded" => match f.nouveau_loaded {
            Some(true) => Verdict::Confirmed("the nouveau kernel module is loaded".into()),
            Some(false) => Verdict::RuledOut("nouveau is not loaded".into()),
            None => Verdict::Unknown,
        },
        "uvm_not_loaded" => match (f.kernel_module_loaded, f.uvm_loaded) {
            (Some(true), Some(false)) => {
                Verdict::Confirmed("nvidia is loaded but nvidia_uvm is not".into())
            }
            (_, Some(true)) => Verdict::RuledOut("nvidia_uvm is loaded".into()),
            _ => Verdict::Unknown,
        },
        "torch_cpu_only" => torch_cpu_only(f),
        "cuda_visible_devices_hides_gpus" => cuda_visible_devices_hides_gpus(f),
        "in_container" => match &f.container {
            Some(c) => Verdict::Confirmed(format!("running inside a container ({c})")),
            None if populated(f) => Verdict::RuledOut("not running in a container".into()),
            None => Verdict::Unknown,
        },
        "wsl" => {
            if f.wsl {
                Verdict::Confirmed("running under WSL2".into())
            } else if populated(f) {
                Verdict::RuledOut("not running under WSL".into())
            } else {
                Verdict::Unknown
            }
        }
        "on_jetson" => match &f.jetson {
            Some(j) => Verdict::Confirmed(format!(
                "this is a Jetson ({}, L4T {})",
                j.module.as_deref().unwrap_or("module unknown"),
                j.l4t.as_deref().unwrap_or("?")
            )),
            None if populated(f) => Verdict::RuledOut("this is not a Jetson".into()),
            None => Verdict::Unknown,
        },
        "pcie_link_downtrained" => pcie_link_downtrained(f),
        "ecc_errors" => ecc_errors(f),
        "mig_enabled" => per_gpu_flag(
            f,
            |g| g.mig_enabled,
            "has MIG mode enabled",
            "MIG is disabled on every GPU",
        ),
        "thermal_or_power_throttling" => throttling(f),
        "duplicate_library_versions" => duplicate_library_versions(f),
        "cuda_init_failed" => match f.cuda_init.as_deref() {
            Some("CUDA_SUCCESS") => Verdict::RuledOut("cuInit returned CUDA_SUCCESS".into()),
            Some(r) => Verdict::Confirmed(format!("cuInit returned {r}")),
            None => Verdict::Unknown,
        },
        "nvml_driver_mismatch" => match f.nvml_error.as_deref() {
            Some(e) if e.to_lowercase().contains("mismatch") => {
                Verdict::Confirmed(format!("NVML fails to initialise: {e}"))
            }
            Some(_) => Verdict::Unknown,
            None if f.driver_version.is_some() => Verdict::RuledOut(format!(
                "NVML initialises and reports driver {}",
                f.driver_version.as_deref().unwrap_or("")
            )),
            None => Verdict::Unknown,
        },
        "secure_boot_enabled" => match f.secure_boot {
            Some(true) => Verdict::Confirmed("Secure Boot is enabled".into()),
            Some(false) => Verdict::RuledOut("Secure Boot is disabled".into()),
            None => Verdict::Unknown,
        },
        "no_gpu_visible" => {
            if !f.gpus.is_empty() {
                Verdict::RuledOut(format!(
                    "{} GPU(s) visible ({})",
                    f.gpus.len(),
                    f.gpus[0].name
                ))
            } else if f.kernel_module_loaded == Some(true) || f.driver_version.is_some() {
                Verdict::Confirmed("the NVIDIA driver is present but lists no GPU".into())
            } else {
                Verdict::Unknown
            }
        }
        _ => Verdict::Unknown,
    }
}

/// Whether the facts came from a real probe (anything beyond the defaults).
fn populated(f: &MachineFacts) -> bool {
    f.driver_version.is_some()
        || !f.gpus.is_empty()
        || f.kernel_module_loaded.is_some()
        || !f.torch.is_empty()
        || f.cuda_init.is_some()
}

/// A parsed `sm_90a` / `compute_80` target: (major, minor, suffix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// Major compute capability.
    pub major: u32,
    /// Minor compute capability.
    pub minor: u32,
    /// `a` (arch-specific), `f` (family-specific) or none.
    pub suffix: Option<char>,
}

/// Parses `sm_90a`, `sm_120`, `compute_80`, `8.6`, `90`.
pub fn parse_target(s: &str) -> Option<Target> {
    let s = s.trim().to_ascii_lowercase();
    let rest = s
        .strip_prefix("sm_")
        .or_else(|| s.strip_prefix("compute_"))
        .unwrap_or(&s);
    if let Some((a, b)) = rest.split_once('.') {
        return Some(Target {
            major: a.parse().ok()?,
            minor: b.parse().ok()?,
            suffix: None,
        });
    }
    let (digits, suffix) = match rest.chars().last()? {
        c @ ('a' | 'f') => (&rest[..rest.len() - 1], Some(c)),
        _ => (rest, None),
    };
    if digits.len() < 2 || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (ma, mi) = digits.split_at(digits.len() - 1);
    Some(Target {
        major: ma.parse().ok()?,
        minor: mi.parse().ok()?,
        suffix,
    })
}

/// Whether SASS for `t` runs on a device of capability `cc` (CUDA binary compatibility:
/// same major and minor <= device; `a` only on the exact arch; `f` within the family).
pub fn sass_runs_on(t: Target, cc: (u32, u32)) -> bool {
    match t.suffix {
        Some('a') => (t.major, t.minor) == cc,
        _ => t.major == cc.0 && t.minor <= cc.1,
    }
}

/// Whether PTX for `t` can be JIT-compiled for `cc` (PTX of an arch <= the device).
pub fn ptx_runs_on(t: Target, cc: (u32, u32)) -> bool {
    t.suffix.is_none() && (t.major, t.minor) <= cc
}

fn sm(cc: (u32, u32)) -> String {
    format!("sm_{}{}", cc.0, cc.1)
}

fn torch_label(t: &TorchFacts) -> String {
    format!("torch {}", t.version)
}

fn arch_span(t: &TorchFacts) -> String {
    let mut v: Vec<Target> = t.sass.iter().filter_map(|s| parse_target(s)).collect();
    v.sort_by_key(|t| (t.major, t.minor));
    let sass = match (v.first(), v.last()) {
        (Some(a), Some(b)) if v.len() > 1 => {
            format!("sm_{}{}..sm_{}{}", a.major, a.minor, b.major, b.minor)
        }
        (Some(a), _) => format!("sm_{}{}", a.major, a.minor),
        _ => "no SASS".into(),
    };
    if t.ptx.is_empty() {
        format!("it carries {sass}, no PTX")
    } else {
        format!("it carries {sass} and PTX {}", t.ptx.join(" "))
    }
}

fn gpus_with_cc(f: &MachineFacts) -> Vec<(&GpuFacts, (u32, u32))> {
    f.gpus
        .iter()
        .filter_map(|g| g.cc.map(|cc| (g, cc)))
        .collect()
}

fn cuda_torches(f: &MachineFacts) -> Vec<&TorchFacts> {
    f.torch
        .iter()
        .filter(|t| t.cuda.is_some() && !(t.sass.is_empty() && t.ptx.is_empty()))
        .collect()
}

fn torch_covers(t: &TorchFacts, cc: (u32, u32)) -> bool {
    t.sass
        .iter()
        .filter_map(|s| parse_target(s))
        .any(|s| sass_runs_on(s, cc))
        || t.ptx
            .iter()
            .filter_map(|s| parse_target(s))
            .any(|p| ptx_runs_on(p, cc))
}

fn torch_lacks_gpu_arch(f: &MachineFacts) -> Verdict {
    let gpus = gpus_with_cc(f);
    let torches = cuda_torches(f);
    if gpus.is_empty() || torches.is_empty() {
        return Verdict::Unknown;
    }
    for t in &torches {
        for (g, cc) in &gpus {
            if !torch_covers(t, *cc) {
                return Verdict::Confirmed(format!(
                    "{} has no kernels for {} ({}) ({})",
                    torch_label(t),
                    sm(*cc),
                    g.name,
                    arch_span(t)
                ));
            }
        }
    }
    let (g, cc) = gpus[0];
    Verdict::RuledOut(format!(
        "{} runs on {} ({}): {}",
        torch_label(torches[0]),
        sm(cc),
        g.name,
        arch_span(torches[0])
    ))
}

fn gpu_older_than_torch_archs(f: &MachineFacts) -> Verdict {
    let gpus = gpus_with_cc(f);
    let torches = cuda_torches(f);
    if gpus.is_empty() || torches.is_empty() {
        return Verdict::Unknown;
    }
    for t in &torches {
        let min = t
            .sass
            .iter()
            .chain(t.ptx.iter())
            .filter_map(|s| parse_target(s))
            .map(|s| (s.major, s.minor))
            .min();
        for (g, cc) in &gpus {
            if let Some(min) = min {
                if *cc < min && !torch_covers(t, *cc) {
                    return Verdict::Confirmed(format!(
                        "{} ({}) is older than the oldest architecture of {} ({})",
                        g.name,
                        sm(*cc),
                        torch_label(t),
                        sm(min)
                    ));
                }
            }
        }
    }
    Verdict::RuledOut(format!(
        "{} is not older than the builds' architectures",
        gpus[0].0.name
    ))
}

fn parse_major_minor(s: &str) -> Option<(u32, u32)> {
    let mut it = s.trim().split('.');
    let a = it.next()?.trim().parse().ok()?;
    let b = it.next().and_then(|x| x.trim().parse().ok()).unwrap_or(0);
    Some((a, b))
}

fn driver_older_than_torch_cuda(f: &MachineFacts) -> Verdict {
    let Some(dc) = f.driver_cuda else {
        return Verdict::Unknown;
    };
    let mut ruled = None;
    for t in &f.torch {
        let Some(tc) = t.cuda.as_deref().and_then(parse_major_minor) else {
            continue;
        };
        let drv = f.driver_version.as_deref().unwrap_or("?");
        // Minor-version compatibility (CUDA >= 11): any same-major runtime runs.
        let too_old = dc.0 < tc.0 || (tc.0 <= 10 && dc < tc);
        if too_old {
            return Verdict::Confirmed(format!(
                "driver {drv} supports CUDA up to {}.{} but {} needs CUDA {}.{}",
                dc.0,
                dc.1,
                torch_label(t),
                tc.0,
                tc.1
            ));
        }
        ruled.get_or_insert_with(|| {
            if dc >= tc {
                format!(
                    "driver {drv} supports CUDA {}.{} >= the {}.{} of {}",
                    dc.0, dc.1, tc.0, tc.1, torch_label(t)
                )
            } else {
                format!(
                    "driver {drv} (CUDA {}.{}) runs {} (CUDA {}.{}) through minor-version compatibility",
                    dc.0, dc.1, torch_label(t), tc.0, tc.1
                )
            }
        });
    }
    ruled.map_or(Verdict::Unknown, Verdict::RuledOut)
}

fn no_driver(f: &MachineFacts) -> Verdict {
    match (f.kernel_module_loaded, f.driver_version.as_deref()) {
        (_, Some(v)) => Verdict::RuledOut(format!("NVIDIA driver {v} is installed")),
        (Some(false), None) => Verdict::Confirmed(
            "no NVIDIA kernel module is loaded and no driver version was found".into(),
        ),
        (Some(true), None) => Verdict::RuledOut("the nvidia kernel module is loaded".into()),
        (None, None) => Verdict::Unknown,
    }
}

fn torch_cpu_only(f: &MachineFacts) -> Verdict {
    if f.torch.is_empty() {
        return Verdict::Unknown;
    }
    if let Some(t) = f.torch.iter().find(|t| t.cuda.is_none()) {
        return Verdict::Confirmed(format!("{} is a CPU-only build", torch_label(t)));
    }
    let t = &f.torch[0];
    Verdict::RuledOut(format!(
        "{} is built with CUDA {}",
        torch_label(t),
        t.cuda.as_deref().unwrap_or("?")
    ))
}

fn cuda_visible_devices_hides_gpus(f: &MachineFacts) -> Verdict {
    let Some(v) = f.env.get("CUDA_VISIBLE_DEVICES") else {
        return if populated(f) {
            Verdict::RuledOut("CUDA_VISIBLE_DEVICES is not set".into())
        } else {
            Verdict::Unknown
        };
    };
    let t = v.trim();
    if t.is_empty()
        || t == "-1"
        || t.eq_ignore_ascii_case("nodevfiles")
        || t.eq_ignore_ascii_case("none")
    {
        return Verdict::Confirmed(format!("CUDA_VISIBLE_DEVICES=\"{v}\" hides every GPU"));
    }
    if f.gpus.is_empty() {
        return Verdict::Unknown;
    }
    let n = f.gpus.len();
    let first = t.split(',').next().unwrap_or("").trim();
    if let Ok(i) = first.parse::<usize>() {
        if i >= n {
            return Verdict::Confirmed(format!(
                "CUDA_VISIBLE_DEVICES=\"{v}\" names GPU {i} but there are {n} GPU(s) (0..{})",
                n - 1
            ));
        }
    }
    Verdict::RuledOut(format!(
        "CUDA_VISIBLE_DEVICES=\"{v}\" names an existing GPU"
    ))
}

fn pcie_link_downtrained(f: &MachineFacts) -> Verdict {
    let mut known = false;
    for g in &f.gpus {
        if let (Some(c), Some(m)) = (g.pcie_width_current, g.pcie_width_max) {
            known = true;
            if c < m {
                return Verdict::Confirmed(format!(
                    "{} runs its PCIe link at x{c} of x{m}",
                    g.name
                ));
            }
        }
        if let (Some(c), Some(m)) = (g.pcie_gen_current, g.pcie_gen_max) {
            known = true;
            if c < m {
                return Verdict::Confirmed(format!(
                    "{} runs its PCIe link at gen {c} of gen {m} (read it under load: idle GPUs lower the generation to save power)",
                    g.name
                ));
            }
        }
    }
    if known {
        Verdict::RuledOut("every GPU's PCIe link runs at its maximum width and generation".into())
    } else {
        Verdict::Unknown
    }
}

fn ecc_errors(f: &MachineFacts) -> Verdict {
    let mut known = false;
    for g in &f.gpus {
        if g.remapped_rows_failed == Some(true) {
            return Verdict::Confirmed(format!("{} reports a failed row remapping", g.name));
        }
        if let Some(n) = g.ecc_uncorrected {
            known = true;
            if n > 0 {
                return Verdict::Confirmed(format!(
                    "{} reports {n} uncorrected ECC error(s)",
                    g.name
                ));
            }
        }
        known |= g.remapped_rows_failed.is_some();
    }
    if known {
        Verdict::RuledOut("no GPU reports uncorrected ECC errors".into())
    } else {
        Verdict::Unknown
    }
}

fn per_gpu_flag(
    f: &MachineFacts,
    get: impl Fn(&GpuFacts) -> Option<bool>,
    yes: &str,
    no: &str,
) -> Verdict {
    let mut known = false;
    for g in &f.gpus {
        match get(g) {
            Some(true) => return Verdict::Confirmed(format!("{} {yes}", g.name)),
            Some(false) => known = true,
            None => {}
        }
    }
    if known {
        Verdict::RuledOut(no.into())
    } else {
        Verdict::Unknown
    }
}

fn throttling(f: &MachineFacts) -> Verdict {
    if f.gpus.is_empty() {
        return Verdict::Unknown;
    }
    for g in &f.gpus {
        if let Some(r) = g.throttle_reasons.iter().find(|r| {
            let r = r.to_lowercase();
            r.contains("thermal") || r.contains("power") || r.contains("hw_slowdown")
        }) {
            return Verdict::Confirmed(format!("{} is throttled: {r}", g.name));
        }
    }
    Verdict::RuledOut("no GPU reports a thermal or power throttle reason".into())
}

fn duplicate_library_versions(f: &MachineFacts) -> Verdict {
    if f.libraries.is_empty() {
        return Verdict::Unknown;
    }
    let mut seen: std::collections::BTreeMap<&str, Vec<(&str, &str)>> = Default::default();
    for l in &f.libraries {
        if let Some(v) = l.version.as_deref() {
            seen.entry(l.name.as_str())
                .or_default()
                .push((v, l.path.as_str()));
        }
    }
    for (name, vs) in &seen {
        let mut versions: Vec<&str> = vs.iter().map(|(v, _)| *v).collect();
        versions.sort();
        versions.dedup();
        if versions.len() > 1 {
            let where_: Vec<String> = vs.iter().map(|(v, p)| format!("{v} at {p}")).collect();
            return Verdict::Confirmed(format!(
                "{name} is installed in {} versions: {}",
                versions.len(),
                where_.join(", ")
            ));
        }
    }
    Verdict::RuledOut("each CUDA library is installed in one version".into())
}
