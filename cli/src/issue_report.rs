//! `gpukb report`: the Markdown a maintainer asks for in a GitHub issue.
//! One summary table (GPUs, driver and its CUDA, torch and what it loads,
//! platform, gpukb and KB version, when the facts were taken), the doctor's
//! verdict, then the text and JSON fingerprints in collapsed `<details>`
//! blocks; redacted by default (`gpukb_agent::redact`), under 60,000
//! characters on stdout (GitHub rejects issue bodies over 65,536) with cut
//! notes, whole with `-o FILE`.
//!
//! Read ([`gather`]), judge (`gpukb_doctor`), render ([`render`]),
//! redact, cut ([`fit`]): each its own function.

use crate::machine::MachineArgs;
use crate::style::Style;
use anyhow::Context;
use gpukb_agent::fingerprint::{Fingerprint, Observed};
use gpukb_doctor::{Diagnosis, Verdict};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The most characters written on stdout (GitHub's limit is 65,536).
pub const MAX_CHARS: usize = 60_000;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Paste the output into the issue. Redaction replaces private values by stable tokens (pseudonymisation, not anonymity). Exit status: 0 when the report was written (whatever the verdict), 2 when gpukb could not run."
)]
pub struct ReportArgs {
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Keep hostnames, ids, serials, GPU UUIDs, user names, home paths and secrets as they are.
    #[arg(long)]
    pub no_redact: bool,
    /// Write the whole report to FILE (nothing cut) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// What a report is made of.
pub struct Inputs {
    pub fp: Fingerprint,
    /// When the facts were taken, or why that is not known.
    pub taken: String,
    /// The capture, when the input is one (its values are learnt for redaction).
    pub capture: Option<gpukb_agent::host::CaptureData>,
    pub describe: String,
}

/// Reads the machine the arguments name.
pub fn gather(m: &MachineArgs) -> anyhow::Result<Inputs> {
    let fp = crate::machine::fingerprint(m)?;
    let (taken, capture) = match (&m.replay, &m.root, &m.fingerprint) {
        (Some(dir), _, _) => {
            let c = gpukb_agent::host::CaptureData::read(dir)
                .with_context(|| format!("cannot read the capture {}", dir.display()))?;
            let taken = c.journal.taken_at.clone().map_or_else(
                || "not recorded (a capture written before gpukb recorded the time)".into(),
                |t| format!("{t} (when the capture was taken)"),
            );
            (taken, Some(c))
        }
        (_, Some(_), _) => (
            format!(
                "{} (now, from the files under the root directory)",
                gpukb_agent::host::now_utc()
            ),
            None,
        ),
        (_, _, Some(_)) => ("not recorded in a fingerprint file".into(), None),
        _ => (format!("{} (now)", gpukb_agent::host::now_utc()), None),
    };
    Ok(Inputs {
        fp,
        taken,
        capture,
        describe: m.describe(),
    })
}

pub fn run(args: &ReportArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let inputs = gather(&args.machine)?;
    let kb = gpukb_kb::Kb::open()?;
    let mut d = gpukb_doctor::diagnose(&inputs.fp, &inputs.describe);
    kb.link_entries(&inputs.fp, &mut d);
    let redaction = (!args.no_redact).then(|| learn(&inputs));
    let note = match &redaction {
        Some(r) => format!(
            "on: {} private values and every path component under home directories replaced by stable tokens (pseudonymisation, not anonymity)",
            r.len()
        ),
        None => "off (`--no-redact`): hostnames, ids and paths appear as they are".into(),
    };
    let whole = render(&inputs, &d, &note)?;
    let whole = match &redaction {
        Some(r) => r.text(&whole),
        None => whole,
    };
    match &args.output {
        Some(path) => {
            write_file(path, &whole)?;
            writeln!(
                out,
                "Wrote the report ({} characters) to {}.{}",
                whole.chars().count(),
                path.display(),
                if whole.chars().count() > 65_536 {
                    " It is longer than a GitHub issue body may be (65,536): attach it as a file."
                } else {
                    ""
                }
            )?;
        }
        None => out.write_all(fit(&whole, MAX_CHARS).as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::disallowed_methods)] // the file the user named with -o
fn write_file(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The private values of the input: the fingerprint's, and the capture's.
pub fn learn(inputs: &Inputs) -> gpukb_agent::redact::Redaction {
    let mut l = gpukb_agent::redact::Learner::new();
    if let Ok(v) = serde_json::to_value(&inputs.fp) {
        l.json(&v);
    }
    if let Some(c) = &inputs.capture {
        l.capture(c);
    }
    l.finish()
}

fn shown<T>(o: &Observed<T>, f: impl Fn(&T) -> String) -> String {
    match o {
        Observed::Found { value, .. } => f(value),
        Observed::Absent { note, .. } => format!("none ({note})"),
        Observed::Failed { error, .. } => format!("could not tell: {error}"),
        Observed::Unobservable { reason, .. } => format!("not observed: {reason}"),
    }
}

/// `2 × NVIDIA H200 (CC 9.0), NVIDIA L4 (CC 8.9)`: equal neighbours counted.
fn counted(items: &[String]) -> String {
    let mut out: Vec<(usize, &str)> = Vec::new();
    for i in items {
        match out.last_mut() {
            Some((n, last)) if *last == i.as_str() => *n += 1,
            _ => out.push((1, i)),
        }
    }
    out.iter()
        .map(|(n, s)| {
            if *n == 1 {
                s.to_string()
            } else {
                format!("{n} × {s}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A table cell: one line, pipes escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The summary rows: (label, value).
pub fn summary(i: &Inputs) -> Vec<(&'static str, String)> {
    let fp = &i.fp;
    let mut rows = Vec::new();
    let gpus = match (fp.nvml.value(), fp.cuda.value()) {
        (Some(n), _) if !n.gpus.is_empty() => n
            .gpus
            .iter()
            .map(|g| {
                format!(
                    "{} (CC {}{})",
                    g.name,
                    g.compute_capability
                        .as_ref()
                        .map_or("?".into(), |c| c.to_string()),
                    g.memory_total_mib
                        .map_or(String::new(), |m| format!(", {m} MiB"))
                )
            })
            .collect::<Vec<_>>(),
        (_, Some(c)) if !c.devices.is_empty() => c
            .devices
            .iter()
            .map(|d| format!("{} (CC {})", d.name, d.compute_capability))
            .collect::<Vec<_>>(),
        _ => vec![shown(&fp.nvml, |_| "no GPU visible to NVML".into())],
    };
    rows.push(("GPUs", counted(&gpus)));
    let driver = match fp.nvml.value() {
        Some(n) => format!(
            "{}, runs CUDA up to {}",
            n.driver_version, n.cuda_driver_version
        ),
        None => shown(&fp.driver.version, |v| v.to_string()),
    };
    rows.push(("Driver", driver));
    rows.push((
        "CUDA driver API",
        shown(&fp.cuda, |c| {
            format!(
                "{}, cuInit {}",
                c.driver_version,
                shown(&c.init, |s| s.clone())
            )
        }),
    ));
    let mut torch = Vec::new();
    let mut loads = Vec::new();
    for env in &fp.python {
        let Some(t) = &env.torch else { continue };
        let archs = shown(&t.kernels, |k| {
            let mut a = k.sass.join(" ");
            if !k.ptx.is_empty() {
                a.push_str(&format!(" + PTX {}", k.ptx.join(" ")));
            }
            a
        });
        torch.push(format!(
            "{} (CUDA {}) in {}; compiled for {archs}",
            t.version,
            t.cuda
                .as_ref()
                .map_or("none: CPU build".into(), |c| c.to_string()),
            env.site_packages
        ));
        for l in &t.loads {
            loads.push(match (&l.path, &l.version) {
                (Some(_), Some(v)) => format!("{} {v}", l.soname),
                (Some(_), None) => format!("{} (version unknown)", l.soname),
                (None, _) => format!("{} NOT FOUND", l.soname),
            });
        }
    }
    rows.push((
        "PyTorch",
        if torch.is_empty() {
            "none found".into()
        } else {
            torch.join("; ")
        },
    ));
    if !loads.is_empty() {
        loads.sort();
        loads.dedup();
        rows.push(("Libraries torch loads", loads.join(", ")));
    }
    let h = &fp.host;
    let id = |s: &String| s.clone();
    rows.push((
        "OS",
        format!(
            "{}; kernel {}; {}; glibc {}",
            shown(&h.os, id),
            shown(&h.kernel, id),
            shown(&h.arch, id),
            shown(&h.glibc, id)
        ),
    ));
    rows.push((
        "Container / WSL",
        format!("{} / {}", shown(&h.container, id), shown(&h.wsl, id)),
    ));
    rows.push((
        "Jetson",
        shown(&fp.jetson, |j| {
            format!(
                "{}, L4T {}, JetPack {}",
                j.module
                    .as_ref()
                    .and_then(|m| m.name.clone())
                    .or_else(|| j.model.clone())
                    .unwrap_or_else(|| "module unknown".into()),
                j.l4t.as_ref().map_or("?".into(), |l| l.version.to_string()),
                j.jetpack.as_ref().map_or("?", |p| p.version.as_str())
            )
        }),
    ));
    rows.push(("gpukb", crate::version_line()));
    rows.push(("Facts taken", i.taken.clone()));
    rows.push(("Input", i.describe.clone()));
    rows
}

/// The whole report (before redaction and cutting).
pub fn render(i: &Inputs, d: &Diagnosis, redaction_note: &str) -> anyhow::Result<String> {
    use std::fmt::Write as _;
    let mut s = String::new();
    writeln!(s, "### gpukb report\n")?;
    writeln!(s, "| | |\n|---|---|")?;
    for (k, v) in summary(i) {
        writeln!(s, "| {k} | {} |", cell(&v))?;
    }
    writeln!(s, "| Redaction | {} |", cell(redaction_note))?;
    let (mark, word) = match d.verdict {
        Verdict::Ok => ("✓", "ok"),
        Verdict::Warning => ("!", "warning"),
        Verdict::Failure => ("✗", "failure"),
        Verdict::Unknown => ("?", "unknown"),
    };
    writeln!(s, "\n#### Doctor: {mark} {word}: {}\n", d.summary)?;
    let mut doctor = Vec::new();
    crate::doctor::render(d, &Style::plain(), false, &mut doctor)?;
    writeln!(s, "```text\n{}```", String::from_utf8_lossy(&doctor))?;
    let mut text = Vec::new();
    crate::report::write_fingerprint(&mut text, &i.fp, &i.describe, Style::plain())?;
    details(
        &mut s,
        "Fingerprint (text)",
        "text",
        &String::from_utf8_lossy(&text),
    )?;
    let json = serde_json::to_string_pretty(&i.fp)?;
    details(&mut s, "Fingerprint (JSON)", "json", &json)?;
    Ok(s)
}

fn details(s: &mut String, title: &str, lang: &str, body: &str) -> std::fmt::Result {
    use std::fmt::Write as _;
    write!(
        s,
        "\n<details><summary>{title}</summary>\n\n```{lang}\n{}\n```\n</details>\n",
        body.trim_end()
    )
}

/// Where the bodies of the collapsed blocks lie: byte ranges.
fn blocks(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(d) = text[from..].find("<details><summary>") {
        let d = from + d;
        let Some(fence) = text[d..].find("\n```") else {
            break;
        };
        let Some(eol) = text[d + fence + 1..].find('\n') else {
            break;
        };
        let start = d + fence + 1 + eol + 1;
        let Some(end) = text[start..].find("\n```\n</details>") else {
            break;
        };
        out.push((start, start + end));
        from = start + end;
    }
    out
}

/// The report cut to at most `max` characters: the collapsed blocks, last
/// first, lose their tails (at a line end), each with a note saying how much
/// was cut and that `-o FILE` writes the whole.
pub fn fit(whole: &str, max: usize) -> String {
    let mut text = whole.to_string();
    for (start, end) in blocks(whole).into_iter().rev() {
        let over = text.chars().count().saturating_sub(max);
        if over == 0 {
            break;
        }
        let body = &text[start..end];
        let body_chars = body.chars().count();
        let keep = body_chars.saturating_sub(over + 160);
        let mut cut: String = body.chars().take(keep).collect();
        match cut.rfind('\n') {
            Some(nl) => cut.truncate(nl),
            None => cut.clear(),
        }
        let dropped = body_chars - cut.chars().count();
        let note = format!(
            "{}… {dropped} more characters cut here (GitHub takes at most 65,536 per issue): `gpukb report -o FILE` writes the whole report",
            if cut.is_empty() { "" } else { "\n" }
        );
        text.replace_range(start..end, &format!("{cut}{note}"));
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn fit_cuts_the_last_block_first_and_says_so() {
        let mut whole = String::from("head\n");
        super::details(&mut whole, "A", "text", &"short line\n".repeat(10)).unwrap();
        super::details(&mut whole, "B", "json", &"a long json line\n".repeat(5000)).unwrap();
        let whole = whole;
        let cut = super::fit(&whole, 10_000);
        assert!(cut.chars().count() <= 10_000, "{}", cut.chars().count());
        assert!(cut.contains(&"short line\n".repeat(10)));
        assert!(cut.contains("more characters cut here"));
        assert!(cut.trim_end().ends_with("</details>"));
        assert_eq!(cut.matches("```").count(), 4);
        // Short enough: unchanged.
        assert_eq!(super::fit(&whole, 1_000_000), whole);
    }
}
