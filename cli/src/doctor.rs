//! `gpukb doctor`: reads the machine (this one, `--replay`, `--root`,
//! `--fingerprint`), asks `gpukb_doctor` for the one diagnosis, and
//! renders it: per-layer ✓ / ! / ✗ / ?, root causes first with what they
//! explain, the facts that prove each, and the fixes for this machine. Text,
//! JSON and the exit code all come from the same `Diagnosis`.

use crate::machine::MachineArgs;
use crate::style::Style;
use gpukb_doctor::{Diagnosis, Finding, Layer, Severity, Status, Verdict};
use std::io::Write;
use std::process::ExitCode;

/// Exit codes: ok 0, warning 0 (1 with --strict), failure 1, unknown 3 (nothing of the chain observed), gpukb could not run 2.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 ok or warning (1 with --strict), 1 failure, 3 unknown (nothing of the GPU chain could be observed), 2 gpukb could not run."
)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Print the diagnosis as JSON (schema: `gpukb doctor --schema`).
    #[arg(long)]
    pub json: bool,
    /// Exit 1 on warnings too.
    #[arg(long)]
    pub strict: bool,
    /// Also list the checks that could not be decided, and why.
    #[arg(long, short)]
    pub verbose: bool,
    /// Print the JSON schema of the diagnosis and exit.
    #[arg(long)]
    pub schema: bool,
    /// Run `gpukb probe` on this machine's GPUs first (module loads, smoke
    /// test, throughput) and judge what it measured too. With `--replay DIR`,
    /// a `DIR/probe.json` written by `gpukb capture --probe` is read instead.
    #[arg(long, conflicts_with_all = ["root", "fingerprint"])]
    pub probe: bool,
}

pub fn run(args: &DoctorArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    if args.schema {
        serde_json::to_writer_pretty(&mut *out, &gpukb_doctor::schema())?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let fp = crate::machine::fingerprint(&args.machine)?;
    let probe = probe_evidence(args, &fp)?;
    let kb = gpukb_kb::Kb::open()?;
    let mut d = gpukb_doctor::diagnose_with_probe(&fp, probe.as_ref(), &args.machine.describe());
    kb.link_entries(&fp, &mut d);
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &d)?;
        writeln!(out)?;
    } else {
        render(&d, &Style::detect(), args.verbose, out)?;
    }
    Ok(ExitCode::from(d.exit_code(args.strict)))
}

/// What the probe measured: a capture's `probe.json` on replay, a live run
/// with `--probe`, else nothing.
fn probe_evidence(
    args: &DoctorArgs,
    fp: &gpukb_agent::Fingerprint,
) -> anyhow::Result<Option<gpukb_facts::measured::ProbeEvidence>> {
    use gpukb_agent::fingerprint::Source;
    if let Some(dir) = &args.machine.replay {
        let path = dir.join("probe.json");
        return match crate::machine::read_user_file(&path, 64 << 20)? {
            None => Ok(None),
            Some(text) => {
                let report = gpukb_agent::probe::ProbeReport::from_json(&text)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                Ok(Some(report.evidence(Source::File {
                    path: path.display().to_string(),
                })))
            }
        };
    }
    if !args.probe {
        return Ok(None);
    }
    let opts = crate::probe::ProbeArgs {
        quick: true,
        ..Default::default()
    };
    match crate::probe::measure(&opts, Some(fp)) {
        Ok(r) => Ok(Some(r.evidence(Source::Command {
            command: "gpukb probe --quick".into(),
        }))),
        // No GPU to probe: the diagnosis says why from the fingerprint.
        Err(e) => {
            eprintln!("{}", crate::probe::error_line(&e));
            Ok(None)
        }
    }
}

/// The text report.
pub fn render(d: &Diagnosis, s: &Style, verbose: bool, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{}", s.bold(&format!("gpukb doctor: {}", d.input)))?;
    writeln!(out)?;
    for l in &d.layers {
        let (mark, color): (&str, fn(&Style, &str) -> String) = match l.status {
            Status::Ok => ("✓", Style::green),
            Status::Warning => ("!", Style::yellow),
            Status::Failure => ("✗", Style::red),
            Status::CouldNotCheck => ("?", Style::dim),
            Status::NotApplicable => ("-", Style::dim),
        };
        let first = l
            .evidence
            .first()
            .map(|e| e.fact.as_str())
            .unwrap_or(match l.status {
                Status::NotApplicable => "not applicable",
                _ => "",
            });
        let status = match l.status {
            Status::CouldNotCheck => " (could not check)",
            _ => "",
        };
        writeln!(
            out,
            "[{}] {:<26} {}{}",
            color(s, mark),
            l.layer.title(),
            s.dim(first),
            s.dim(status)
        )?;
        // The framework layer names every framework build, one a line.
        if l.layer == Layer::Framework && l.status == Status::Ok {
            for e in l.evidence.iter().skip(1) {
                writeln!(out, "    {:<26} {}", "", s.dim(&e.fact))?;
            }
        }
    }
    let context: Vec<&Finding> = d
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Info)
        .collect();
    if !context.is_empty() {
        writeln!(out)?;
        for f in context {
            writeln!(out, "  {} {}", s.dim("·"), s.dim(&f.title))?;
        }
    }
    for f in d
        .findings
        .iter()
        .filter(|f| f.root_cause && f.severity != Severity::Info)
    {
        writeln!(out)?;
        let tag = match f.severity {
            Severity::Failure => s.red("✗ root cause"),
            _ => s.yellow("! warning"),
        };
        writeln!(out, "{tag} [{}] {}", f.layer.id(), s.bold(&f.title))?;
        for e in &f.evidence {
            writeln!(out, "    {} {}", e.fact, s.dim(&format!("({})", e.source)))?;
        }
        for c in d
            .findings
            .iter()
            .filter(|c| c.explained_by.as_deref() == Some(f.id.as_str()))
        {
            writeln!(out, "    {} {}", s.dim("explains:"), c.title)?;
        }
        if !f.confirm.is_empty() {
            writeln!(out, "  confirm:")?;
            for c in &f.confirm {
                writeln!(out, "    $ {c}")?;
            }
        }
        render_fixes(out, s, &f.fixes)?;
        if !f.kb_entries.is_empty() {
            writeln!(
                out,
                "  {}",
                s.dim(&format!("read: gpukb kb show {}", f.kb_entries[0]))
            )?;
        }
    }
    if verbose && !d.undecided.is_empty() {
        writeln!(out, "\nChecks not decided:")?;
        for u in &d.undecided {
            writeln!(out, "  {:<38} {}", u.check, s.dim(&u.reason))?;
        }
    }
    writeln!(out)?;
    let line = match d.verdict {
        Verdict::Ok => s.green(&format!("✓ ok: {}", d.summary)),
        Verdict::Warning => s.yellow(&format!("! warning: {}", d.summary)),
        Verdict::Failure => s.red(&format!("✗ failure: {}", d.summary)),
        Verdict::Unknown => s.dim(&format!("? unknown: {}", d.summary)),
    };
    writeln!(out, "{line}")?;
    if !verbose && !d.undecided.is_empty() {
        writeln!(
            out,
            "{}",
            s.dim(&format!(
                "{} checks could not be decided from this input (--verbose lists them)",
                d.undecided.len()
            ))
        )?;
    }
    Ok(())
}

/// The fix steps of one finding: where each runs ("on the container's host",
/// "in Windows"), and alternatives as "one of:" with every option after the
/// first commented out, so a pasted block never runs them all.
fn render_fixes(
    out: &mut dyn Write,
    s: &Style,
    fixes: &[gpukb_doctor::FixStep],
) -> std::io::Result<()> {
    let options = fixes
        .iter()
        .filter_map(|f| f.choice.as_ref().map(|c| c.option))
        .max()
        .unwrap_or(0);
    if options > 1 {
        writeln!(
            out,
            "  one of these {options} fixes (run only one; the others are commented out):"
        )?;
    }
    let mut last_option = 0;
    for fix in fixes {
        let option = fix.choice.as_ref().map_or(0, |c| c.option);
        let mut tags = Vec::new();
        if option > 0 && option != last_option {
            tags.push(format!("option {option}"));
        }
        if let Some(p) = fix.runs_on.prefix() {
            tags.push(p.to_string());
        } else if fix.for_this_machine {
            tags.push("for this machine".into());
        }
        last_option = option;
        let tags = if tags.is_empty() {
            String::new()
        } else {
            format!(" ({})", tags.join(", "))
        };
        writeln!(out, "  fix{tags}: {}", fix.text)?;
        if let Some(w) = &fix.warning {
            writeln!(out, "    {} {w}", s.yellow("warning:"))?;
        }
        let comment = if option > 1 { "# " } else { "" };
        let ps = crate::style::prompt(fix.runs_on == gpukb_doctor::RunsOn::WindowsHost);
        for c in &fix.commands {
            writeln!(out, "    {comment}{ps} {c}")?;
        }
    }
    Ok(())
}
