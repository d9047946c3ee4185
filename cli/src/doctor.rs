//! `gpukb doctor`: fingerprints the machine, evaluates every rule of the
//! knowledge base against it, and reports the broken links of the chain
//! (driver → CUDA → libraries → framework → kernel image) with the
//! diagnoses that explain them.

use crate::machine::MachineArgs;
use crate::style::Style;
use gpukb_kb::rules::{self, Verdict};
use std::io::Write;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Print JSON instead of a report.
    #[arg(long)]
    pub json: bool,
}

/// Facts that describe the setting rather than a fault.
const CONTEXT: &[&str] = &[
    "in_container",
    "wsl",
    "on_jetson",
    "mig_enabled",
    "secure_boot_enabled",
];

/// Layers in the order the chain breaks.
const LAYERS: &[&str] = &[
    "hardware",
    "driver",
    "container_wsl",
    "runtime",
    "jetson",
    "framework",
    "kernel_image",
    "toolchain",
    "memory",
    "multi_gpu",
];

#[derive(Debug, serde::Serialize)]
struct Finding {
    check: String,
    meaning: String,
    fact: String,
    layer: String,
    diagnoses: Vec<(String, String)>,
}

pub fn run(args: &DoctorArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let fp = crate::machine::fingerprint(&args.machine)?;
    let facts = crate::facts::machine_facts(&fp);
    let kb = gpukb_kb::Kb::open()?;
    let mut entries = Vec::new();
    for s in kb.list(None)? {
        if let Some(e) = kb.entry(&s.id)? {
            if !e.conditions.is_empty() {
                entries.push(e);
            }
        }
    }
    let mut findings = Vec::new();
    let mut context = Vec::new();
    let mut undecided = 0;
    for (name, meaning) in rules::PREDICATES {
        let fact = match rules::evaluate(name, &facts) {
            Verdict::Confirmed(fact) => fact,
            Verdict::RuledOut(_) => continue,
            Verdict::Unknown => {
                undecided += 1;
                continue;
            }
        };
        if CONTEXT.contains(name) {
            context.push(fact);
            continue;
        }
        let related: Vec<&gpukb_kb::Entry> = entries
            .iter()
            .filter(|e| e.conditions.iter().any(|c| c.when == *name))
            .collect();
        // The layer most of the related diagnoses belong to.
        let layer = LAYERS
            .iter()
            .max_by_key(|l| related.iter().filter(|e| e.layer == **l).count())
            .filter(|l| related.iter().any(|e| e.layer == **l))
            .map_or("runtime", |l| l)
            .to_string();
        findings.push(Finding {
            check: name.to_string(),
            meaning: meaning.to_string(),
            fact,
            layer,
            diagnoses: related
                .iter()
                .map(|e| (e.id.clone(), e.title.clone()))
                .collect(),
        });
    }
    findings.sort_by_key(|f| {
        LAYERS
            .iter()
            .position(|l| *l == f.layer)
            .unwrap_or(LAYERS.len())
    });
    if args.json {
        serde_json::to_writer_pretty(
            &mut *out,
            &serde_json::json!({
                "machine": crate::report::headline(&fp),
                "context": context,
                "findings": findings,
                "undecided_checks": undecided,
            }),
        )?;
        writeln!(out)?;
    } else {
        let s = Style::detect();
        writeln!(
            out,
            "{}",
            s.bold(&format!("gpukb doctor: {}", args.machine.describe()))
        )?;
        writeln!(out, "{}", crate::report::headline(&fp))?;
        for c in &context {
            writeln!(out, "  {}", s.dim(c))?;
        }
        if findings.is_empty() {
            writeln!(
                out,
                "\n{} ({} checks; {undecided} could not be decided from what was observed)",
                s.green("No broken link found by gpukb's rules"),
                rules::PREDICATES.len()
            )?;
        }
        for f in &findings {
            writeln!(
                out,
                "\n{} {}",
                s.yellow(&format!("[{}]", f.layer)),
                s.bold(&f.fact)
            )?;
            writeln!(
                out,
                "  {}",
                s.dim(&format!("check {}: {}", f.check, f.meaning))
            )?;
            for (id, title) in f.diagnoses.iter().take(4) {
                writeln!(
                    out,
                    "  → {title}  {}",
                    s.dim(&format!("(gpukb kb show {id})"))
                )?;
            }
        }
    }
    Ok(if findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
