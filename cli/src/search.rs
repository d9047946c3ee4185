//! `gpukb search`: paste an error (arguments or stdin), get ranked diagnoses with why they
//! matched, how to confirm them, and the fixes. Machine facts (detected, a fingerprint file
//! or a replayed capture) confirm or rule out candidates.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gpukb_kb::{Hit, Kb, Query};

/// Arguments of `gpukb search`.
#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// The error text; read from stdin when omitted.
    pub text: Vec<String>,
    /// Number of diagnoses to show.
    #[arg(long, default_value_t = 5)]
    pub limit: usize,
    /// Print a JSON object {query, signals, results} instead of text.
    #[arg(long)]
    pub json: bool,
    /// Use the machine facts of a fingerprint written by `gpukb fingerprint --json`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["replay", "no_detect"])]
    pub fingerprint: Option<PathBuf>,
    /// Use the machine facts of a capture directory written by `gpukb capture`.
    #[arg(long, value_name = "DIR", conflicts_with = "no_detect")]
    pub replay: Option<PathBuf>,
    /// Do not look at this machine; rank on the text alone.
    #[arg(long)]
    pub no_detect: bool,
}

impl SearchArgs {
    /// The machine input, or `None` for text alone.
    fn machine(&self) -> Option<crate::machine::MachineArgs> {
        if self.no_detect {
            return None;
        }
        Some(crate::machine::MachineArgs {
            root: None,
            replay: self.replay.clone(),
            fingerprint: self.fingerprint.clone(),
            timeout: 3.0,
        })
    }
}

/// Runs `gpukb search`: exit 0 when something matched, 1 when nothing did.
pub fn run(args: &SearchArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    run_with(args, out, crate::style::Style::detect().color)
}

/// Runs `gpukb search` with colour decided by the caller.
pub fn run_with(args: &SearchArgs, out: &mut dyn Write, color: bool) -> anyhow::Result<ExitCode> {
    let input: Vec<u8> = if args.text.is_empty() {
        read_window(&mut std::io::stdin().lock()).context("reading the error text from stdin")?
    } else {
        let mut w = gpukb_kb::window::PasteWindow::new();
        w.push(args.text.join(" ").as_bytes());
        w.finish()
    };
    let kb = Kb::open().context("opening the embedded knowledge base")?;
    let q = kb.analyze(&input);
    let limit = args.limit.clamp(1, 100);
    let mut hits = kb.search_query(&q, None, limit)?;
    let mut facts_from: Option<String> = None;
    // Only look at the machine when a candidate has conditions that facts could decide.
    if let Some(machine) = args.machine() {
        if hits.iter().any(|h| !h.conditions.is_empty()) {
            let detected = machine.replay.is_none() && machine.fingerprint.is_none();
            match crate::machine::fingerprint(&machine) {
                Ok(fp) => {
                    let d = gpukb_kb::diagnose(&fp, &machine.describe(), None);
                    hits = kb.search_query(&q, Some(&d), limit)?;
                    facts_from = Some(machine.describe());
                }
                Err(_) if detected => {}
                Err(e) => return Err(e),
            }
        }
    }
    if args.json {
        write_json(out, &q, &hits, facts_from.as_deref())?;
    } else {
        write_human(out, &q, &hits, color)?;
        if let Some(from) = &facts_from {
            if hits.iter().any(|h| !h.verdicts.is_empty()) {
                writeln!(out, "\n(confirmed / ruled out against the facts of {from}; --no-detect for text alone)")?;
            }
        }
    }
    Ok(if hits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Reads a paste through the bounded window: head, tail and the error lines
/// of the middle, up to `READ_LIMIT` bytes (then it stops and says so).
pub fn read_window(r: &mut dyn Read) -> std::io::Result<Vec<u8>> {
    use gpukb_kb::window::{PasteWindow, READ_LIMIT};
    let mut w = PasteWindow::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        w.push(&buf[..n]);
        if w.full() {
            eprintln!(
                "gpukb: read the first {} GiB of the input and stopped; answering from what was kept",
                READ_LIMIT >> 30
            );
            break;
        }
    }
    Ok(w.finish())
}

/// What `gpukb search --json` prints (schema: `gpukb schema search`).
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct SearchOutput {
    /// The normalized query, at most 4,000 characters.
    pub query: String,
    /// Whose machine facts confirmed or ruled out the answers (`null`: none used).
    pub machine_facts_from: Option<String>,
    /// What was recognised in the paste.
    pub signals: gpukb_kb::Signals,
    /// The ranked diagnoses, best first.
    pub results: Vec<Hit>,
}

fn write_json(
    out: &mut dyn Write,
    q: &Query,
    hits: &[Hit],
    facts_from: Option<&str>,
) -> anyhow::Result<()> {
    let query: String = q.normalized.chars().take(4000).collect();
    let v = SearchOutput {
        query,
        machine_facts_from: facts_from.map(String::from),
        signals: q.signals.clone(),
        results: hits.to_vec(),
    };
    serde_json::to_writer_pretty(&mut *out, &v)?;
    writeln!(out)?;
    Ok(())
}

struct Paint(bool);
impl Paint {
    fn w(&self, code: &str, s: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

fn write_human(out: &mut dyn Write, q: &Query, hits: &[Hit], color: bool) -> anyhow::Result<()> {
    let p = Paint(color);
    if hits.is_empty() {
        if q.normalized.trim().is_empty() {
            writeln!(
                out,
                "No error text given (pass it as arguments or on stdin)."
            )?;
        } else if q.binary {
            writeln!(
                out,
                "The input looks like binary data; no diagnosis matched."
            )?;
        } else {
            writeln!(out, "No diagnosis matched. Try `gpukb explain CODE` for an error code, or paste more of the log.")?;
        }
        return Ok(());
    }
    for (i, h) in hits.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(
            out,
            "{} {}  {}",
            p.w("1", &format!("{}.", i + 1)),
            p.w("1", &h.title),
            p.w("2", &format!("[{} · {} · {}]", h.id, h.category, h.layer))
        )?;
        writeln!(out, "   confidence {:.0}%", h.confidence * 100.0)?;
        for m in h.matched.iter().take(if i == 0 { 6 } else { 3 }) {
            writeln!(out, "   {} {m}", p.w("2", "why:"))?;
        }
        for v in &h.verdicts {
            let mark = if v.outcome == "confirmed" {
                p.w("32", "✓ confirmed:")
            } else {
                p.w("33", "✗ ruled out:")
            };
            writeln!(out, "   {mark} {}", v.because)?;
        }
        if i == 0 {
            writeln!(out, "   {}", wrap(&h.summary, 90, "   "))?;
            for c in &h.confirm {
                writeln!(out, "   {} $ {}", p.w("1", "confirm:"), c.command)?;
                if !c.expect.is_empty() {
                    writeln!(out, "            {}", p.w("2", &c.expect))?;
                }
            }
        }
        let nfix = if i == 0 { h.fixes.len() } else { 1 };
        for f in h.fixes.iter().take(nfix) {
            writeln!(out, "   {} ({}): {}", p.w("32", "fix"), f.platform, f.title)?;
            for s in &f.steps {
                writeln!(out, "       $ {s}")?;
            }
            if i == 0 {
                if let Some(n) = &f.note {
                    writeln!(out, "       {}", p.w("2", n))?;
                }
            }
        }
        if i == 0 {
            for s in &h.sources {
                writeln!(out, "   {} {}", p.w("2", "source:"), s.url)?;
            }
        }
    }
    Ok(())
}

fn wrap(s: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut col = 0;
    for w in s.split_whitespace() {
        if col > 0 && col + w.len() + 1 > width {
            out.push('\n');
            out.push_str(indent);
            col = 0;
        } else if col > 0 {
            out.push(' ');
            col += 1;
        }
        out.push_str(w);
        col += w.len();
    }
    out
}
