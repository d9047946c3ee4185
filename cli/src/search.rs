//! `gpukb search`: paste an error (arguments or stdin), get ranked diagnoses with why they
//! matched, how to confirm them, and the fixes. Machine facts (detected, a fingerprint file
//! or a replayed capture) confirm or rule out candidates.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gpukb_kb::{Hit, Kb, Query, Ranking};

/// Arguments of `gpukb search`.
#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// The error text; read from stdin when omitted or `-`.
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
    #[arg(long, value_name = "DIR", conflicts_with_all = ["no_detect", "root"])]
    pub replay: Option<PathBuf>,
    /// Use the machine facts of a copied root filesystem (files only).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["no_detect", "fingerprint"])]
    pub root: Option<PathBuf>,
    /// Do not look at this machine; rank on the text alone.
    #[arg(long)]
    pub no_detect: bool,
    /// Also print, on stderr, how long each step took.
    #[arg(long)]
    pub timings: bool,
}

impl SearchArgs {
    /// The machine input, or `None` for text alone.
    fn machine(&self) -> Option<crate::machine::MachineArgs> {
        if self.no_detect {
            return None;
        }
        Some(crate::machine::MachineArgs {
            root: self.root.clone(),
            replay: self.replay.clone(),
            fingerprint: self.fingerprint.clone(),
            timeout: 3.0,
        })
    }
}

/// Whose machine facts search read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FactsFrom {
    /// This machine, observed now.
    ThisMachine,
    /// A capture directory (`--replay`).
    Capture,
    /// A fingerprint file (`--fingerprint`).
    FingerprintFile,
    /// A root filesystem (`--root`).
    Root,
    /// An environment report in the paste (`collect_env`, `nvidia-smi`): used when no
    /// machine's facts were, for the checks it shows the facts of.
    PastedReport,
    /// No machine (`--no-detect`).
    None,
}

/// Whose machine facts search used, and whether it applied them.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct FactsUse {
    /// `this_machine`, `capture`, `fingerprint_file`, `root`, `pasted_report` or `none`.
    #[schemars(with = "String")]
    pub from: FactsFrom,
    /// The capture directory or fingerprint file.
    pub path: Option<String>,
    /// Whether the facts took part in the ranking.
    pub applied: bool,
    /// Why (not).
    pub reason: String,
    /// Facts the paste and the machine agree on.
    pub agrees: Vec<String>,
    /// Facts where the paste and the machine differ.
    pub contradicts: Vec<String>,
}

impl FactsUse {
    fn none(reason: &str) -> FactsUse {
        FactsUse {
            from: FactsFrom::None,
            path: None,
            applied: false,
            reason: reason.into(),
            agrees: Vec::new(),
            contradicts: Vec::new(),
        }
    }
    /// The facts of a report in the paste, used because no machine's were (`unused`: why).
    fn pasted_report(report: &str, shows: &str, unused: &str) -> FactsUse {
        FactsUse {
            from: FactsFrom::PastedReport,
            path: Some(report.to_string()),
            applied: true,
            reason: format!(
                "it shows {shows}; checks resting on anything else stay undecided; no machine's facts were used: {unused}"
            ),
            agrees: Vec::new(),
            contradicts: Vec::new(),
        }
    }
    /// How the machine is named in sentences.
    fn describe(&self) -> String {
        match (self.from, &self.path) {
            (FactsFrom::PastedReport, Some(p)) => p.clone(),
            (FactsFrom::Capture, Some(p)) => format!("the capture {p}"),
            (FactsFrom::FingerprintFile, Some(p)) => format!("the fingerprint {p}"),
            (FactsFrom::Root, Some(p)) => format!("the root filesystem {p}"),
            _ => "this machine".into(),
        }
    }
}

/// Runs `gpukb search`: exit 0 when something matched, 1 when nothing did.
pub fn run(args: &SearchArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    run_with(args, out, crate::style::Style::detect().color)
}

/// Runs `gpukb search` with colour decided by the caller.
pub fn run_with(args: &SearchArgs, out: &mut dyn Write, color: bool) -> anyhow::Result<ExitCode> {
    if let Some(m) = args.machine() {
        crate::machine::ensure_named_paths_exist(&m)?;
    }
    // This machine's cheap facts are read on a thread while the paste is read and ranked,
    // and the tables judging them reads are parsed on another (once facts arrive, judging
    // them is what the answer waits for).
    let pending = args.machine().map(Pending::start);
    if pending.is_some() {
        std::thread::spawn(gpukb_facts::load_tables);
    }
    let from_stdin = args.text.is_empty() || args.text == ["-"];
    let input: Vec<u8> = if from_stdin {
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            eprintln!("gpukb search: reading the error text from stdin (paste it, then Ctrl-D; or pass it as arguments)");
        }
        read_window(&mut std::io::stdin().lock()).context("reading the error text from stdin")?
    } else {
        let mut w = gpukb_kb::window::PasteWindow::new();
        w.push(args.text.join(" ").as_bytes());
        w.finish()
    };
    let mut steps = crate::steps::Steps::new(args.timings);
    steps.done("read the paste");
    let kb = Kb::open().context("opening the embedded knowledge base")?;
    steps.done("open the knowledge base");
    kb.prepare()?;
    steps.done("load signatures");
    let q = kb.analyze(&input);
    steps.done("analyse the paste");
    let limit = args.limit.clamp(1, 100);
    let evidence = kb.evidence(&q)?;
    let text_only = kb.rank_evidence(&q, &evidence, None, limit)?;
    steps.done("rank on text");
    let (ranking, mut facts) = with_machine(&kb, &q, &evidence, limit, text_only, pending)?;
    if let (false, Some((report, shows))) = (facts.applied, &ranking.reported) {
        let unused = match facts.from {
            FactsFrom::None => "--no-detect".to_string(),
            _ => facts
                .reason
                .trim_end_matches("; ranking on text")
                .to_string(),
        };
        facts = FactsUse::pasted_report(report, shows, &unused);
    }
    steps.done("machine facts");
    if args.json {
        write_json(out, &q, &ranking, &facts)?;
    } else {
        write_human(out, &q, &ranking.results, color)?;
        write_machine_notes(out, &q, &ranking, &facts, color)?;
    }
    steps.done("write the answer");
    steps.total();
    // One search per process: freeing the in-memory database, index and matcher
    // (about a tenth of a `--no-detect` run) would only delay the exit.
    std::mem::forget(kb);
    Ok(if ranking.results.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// What observing the machine gave.
enum Observed {
    /// This machine shows no trace of an NVIDIA GPU (its other facts were not read).
    NoNvidiaGpu,
    Facts(Box<gpukb_agent::Fingerprint>),
}

/// Observes the machine: for this machine, a glance for an NVIDIA GPU first.
fn observe(machine: &crate::machine::MachineArgs, detected: bool) -> anyhow::Result<Observed> {
    // A machine without any trace of an NVIDIA GPU cannot be the paste's.
    if detected
        && machine
            .host(false)
            .is_ok_and(|h| gpukb_agent::shows_no_nvidia_gpu(&h))
    {
        return Ok(Observed::NoNvidiaGpu);
    }
    // By default only cheap facts: no NVML, no CUDA driver API (checks that need them stay
    // unknown).
    Ok(Observed::Facts(Box::new(
        crate::machine::fingerprint_cheap(machine)?,
    )))
}

/// The machine's facts for search: this machine's are read on a thread from the start
/// (files only, a few milliseconds, alongside ranking the text); a capture, fingerprint
/// file or root the user named is read when needed (it may share stdin with the paste).
enum Pending {
    Thread(
        crate::machine::MachineArgs,
        std::thread::JoinHandle<anyhow::Result<Observed>>,
    ),
    Later(crate::machine::MachineArgs),
}

impl Pending {
    fn start(machine: crate::machine::MachineArgs) -> Pending {
        if machine.replay.is_some() || machine.fingerprint.is_some() || machine.root.is_some() {
            return Pending::Later(machine);
        }
        let m = machine.clone();
        Pending::Thread(machine, std::thread::spawn(move || observe(&m, true)))
    }

    fn machine(&self) -> &crate::machine::MachineArgs {
        match self {
            Pending::Thread(m, _) | Pending::Later(m) => m,
        }
    }

    fn get(self) -> anyhow::Result<Observed> {
        match self {
            Pending::Thread(_, h) => h
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("observing this machine failed"))),
            Pending::Later(m) => observe(&m, false),
        }
    }
}

/// Re-ranks with the machine's Diagnosis when there is a machine to look at, a candidate
/// a check can decide, and (for detected facts) no contradiction with the paste.
fn with_machine(
    kb: &Kb,
    q: &Query,
    evidence: &gpukb_kb::TextEvidence,
    limit: usize,
    text_only: Ranking,
    pending: Option<Pending>,
) -> anyhow::Result<(Ranking, FactsUse)> {
    let Some(pending) = pending else {
        return Ok((
            text_only,
            FactsUse::none("--no-detect: ranking on the text alone"),
        ));
    };
    let machine = pending.machine().clone();
    let (from, path) = match (&machine.replay, &machine.fingerprint, &machine.root) {
        (Some(d), _, _) => (FactsFrom::Capture, Some(d.display().to_string())),
        (_, Some(f), _) => (FactsFrom::FingerprintFile, Some(f.display().to_string())),
        (_, _, Some(r)) => (FactsFrom::Root, Some(r.display().to_string())),
        _ => (FactsFrom::ThisMachine, None),
    };
    let detected = from == FactsFrom::ThisMachine;
    let mut facts = FactsUse {
        from,
        path,
        applied: false,
        reason: String::new(),
        agrees: Vec::new(),
        contradicts: Vec::new(),
    };
    if !text_only.results.iter().any(|h| !h.conditions.is_empty()) {
        facts.reason =
            "no candidate names a check that machine facts decide; its facts were not used".into();
        return Ok((text_only, facts));
    }
    let fp = match pending.get() {
        Ok(Observed::Facts(fp)) => *fp,
        Ok(Observed::NoNvidiaGpu) => {
            let none = gpukb_kb::agreement::Agreement {
                no_nvidia_gpu: true,
                ..Default::default()
            };
            facts.reason = none.reason_not_applied().unwrap_or_default();
            return Ok((text_only, facts));
        }
        Err(e) if detected => {
            facts.reason = format!("could not observe this machine ({e:#}); ranking on text");
            return Ok((text_only, facts));
        }
        Err(e) => return Err(e),
    };
    let agreement = gpukb_kb::agreement::compare(&q.signals, &fp);
    facts.agrees = agreement.agrees.clone();
    facts.contradicts = agreement.contradicts.clone();
    if detected {
        if let Some(why) = agreement.reason_not_applied() {
            facts.reason = why;
            return Ok((text_only, facts));
        }
    }
    let facts_of = gpukb_kb::MachineFacts::observe(&fp, &machine.describe());
    let ranking = kb.rank_evidence(q, evidence, Some(&facts_of), limit)?;
    facts.applied = true;
    facts.reason = match (
        detected,
        agreement.agrees.is_empty(),
        agreement.contradicts.is_empty(),
    ) {
        (true, false, _) => format!(
            "this machine agrees with the paste ({})",
            agreement.agrees.join(", ")
        ),
        (true, true, _) => "nothing in the paste contradicts this machine".into(),
        (false, _, true) => "the machine you chose".into(),
        (false, _, false) => format!(
            "the machine you chose, although it differs from the paste: {}",
            agreement.contradicts.join("; ")
        ),
    };
    Ok((ranking, facts))
}

/// After the results: whose facts were used, what they ruled out, what stays unknown,
/// and the command that tells the top candidates apart.
fn write_machine_notes(
    out: &mut dyn Write,
    q: &Query,
    r: &Ranking,
    facts: &FactsUse,
    color: bool,
) -> anyhow::Result<()> {
    let p = Paint(color);
    if let Some(d) = &r.distinguish {
        writeln!(
            out,
            "\n{} {}",
            p.w("1", "To tell them apart:"),
            d.between.join(" vs ")
        )?;
        let ps = crate::style::prompt(
            names_windows(q) || gpukb_kb::placement::is_windows_command(&d.command),
        );
        writeln!(out, "   {ps} {}", d.command)?;
        for a in &d.answers {
            writeln!(out, "   if {} → {}", a.if_, a.then)?;
        }
    }
    if !r.ruled_out.is_empty() {
        writeln!(
            out,
            "\n{}",
            p.w(
                "33",
                &format!("Ruled out by the facts of {}:", facts.describe())
            )
        )?;
        // The environment is the same for most verdicts: said once, until it changes.
        let mut last_env: Option<String> = None;
        for h in &r.ruled_out {
            let Some(m) = &h.machine else { continue };
            writeln!(out, "   ✗ {} [{}]: {}", h.title, h.id, m.because())?;
            let ev: Vec<String> = m
                .evidence()
                .iter()
                .map(|e| format!("{} ({})", e.fact, e.source))
                .collect();
            writeln!(out, "     {} {}", p.w("2", "on:"), ev.join("; "))?;
            if let Some(env) = m.environment() {
                let line = format!(
                    "{}{}{}",
                    env.process,
                    match facts.from {
                        // A report is no process view: what it shows is said once, below.
                        FactsFrom::PastedReport => String::new(),
                        _ => format!(", {}", env.view.describe()),
                    },
                    if env.env.is_empty() {
                        String::new()
                    } else {
                        let vars: Vec<String> = env.env.iter().map(|v| short_var(v)).collect();
                        format!(", with {}", vars.join(" "))
                    }
                );
                if last_env.as_deref() != Some(line.as_str()) {
                    writeln!(out, "     {} {line}", p.w("2", "observed in:"))?;
                    last_env = Some(line);
                }
            }
        }
    }
    let process: Vec<String> = r
        .differs
        .iter()
        .filter(|d| !d.is_identity())
        .map(|d| d.sentence())
        .collect();
    if facts.applied && !process.is_empty() {
        writeln!(
            out,
            "\n{}",
            p.w(
                "33",
                "The failing process differs from what gpukb observed; ranked on the paste there:"
            )
        )?;
        for d in process {
            writeln!(out, "   ≠ {d}")?;
        }
    }
    let cuinit = r
        .undecided
        .iter()
        .filter(|(_, why)| gpukb_doctor::Unasked::NvmlAndCuinit.explains(why))
        .count();
    if facts.applied && cuinit > 0 {
        writeln!(
            out,
            "\n{cuinit} check(s) need NVML or cuInit and stay unknown here; `gpukb doctor` runs them."
        )?;
    }
    match (facts.from, facts.applied) {
        (FactsFrom::None, _) => {}
        (FactsFrom::PastedReport, _) => writeln!(
            out,
            "\n{}",
            p.w(
                "2",
                &format!("(facts of {}: {})", facts.describe(), facts.reason)
            )
        )?,
        (_, true) => writeln!(
            out,
            "\n{}",
            p.w(
                "2",
                &format!(
                    "(machine facts of {}: {}; --no-detect for text alone)",
                    facts.describe(),
                    facts.reason
                )
            )
        )?,
        (_, false) => writeln!(out, "\n{}", p.w("2", &format!("({})", facts.reason)))?,
    }
    Ok(())
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
    /// 1 for this layout; fields may be added within a version, never renamed or removed.
    pub schema_version: u32,
    /// The normalized query, at most 4,000 characters.
    pub query: String,
    /// What was recognised in the paste.
    pub signals: gpukb_kb::Signals,
    /// Whose machine facts were used, and whether they took part in the ranking.
    pub facts: FactsUse,
    /// The machine whose facts took part (`null`: none); the same as `facts` says, kept
    /// for readers of the first layout.
    pub machine_facts_from: Option<String>,
    /// The ranked diagnoses, best first; confidence never increases down the list.
    pub results: Vec<Hit>,
    /// Candidates the machine's facts rule out (not counted by `--limit`).
    pub ruled_out: Vec<Hit>,
    /// The command that tells the top candidates apart, when they differ in cause.
    pub distinguish: Option<gpukb_kb::Distinguish>,
    /// Checks the candidates need that these facts could not decide.
    pub undecided_checks: Vec<UndecidedCheck>,
    /// Facts the paste states that differ from the machine's (the failing process is not
    /// the one gpukb observed); checks resting on them were not used.
    pub process_differs: Vec<gpukb_kb::agreement::Difference>,
}

/// A check the facts could not decide, and why.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct UndecidedCheck {
    /// The doctor check.
    pub check: String,
    /// Why it stays undecided.
    pub why: String,
}

fn write_json(out: &mut dyn Write, q: &Query, r: &Ranking, facts: &FactsUse) -> anyhow::Result<()> {
    let v = SearchOutput {
        schema_version: 1,
        query: q.normalized.chars().take(4000).collect(),
        signals: q.signals.clone(),
        facts: facts.clone(),
        machine_facts_from: facts.applied.then(|| facts.describe()),
        results: r.results.clone(),
        ruled_out: r.ruled_out.clone(),
        distinguish: r.distinguish.clone(),
        undecided_checks: r
            .undecided
            .iter()
            .map(|(check, why)| UndecidedCheck {
                check: check.clone(),
                why: why.clone(),
            })
            .collect(),
        process_differs: if facts.applied {
            r.differs.clone()
        } else {
            Vec::new()
        },
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

/// Whether the paste names native Windows: its fixes and confirm commands were placed for
/// PowerShell, and print after its prompt.
fn names_windows(q: &Query) -> bool {
    q.platform
        .is_some_and(|n| n.platform == gpukb_doctor::fixes::Platform::Windows)
}

fn write_human(out: &mut dyn Write, q: &Query, hits: &[Hit], color: bool) -> anyhow::Result<()> {
    let p = Paint(color);
    let on_windows = names_windows(q);
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
        if let Some(m) = &h.machine {
            match m.outcome() {
                gpukb_kb::RuleOutcome::Confirmed => {
                    writeln!(out, "   {} {}", p.w("32", "✓ confirmed:"), m.because())?
                }
                _ if m.check().is_some() => {
                    writeln!(out, "   {} {}", p.w("2", "? not decided:"), m.because())?
                }
                _ => {}
            }
        }
        if i == 0 {
            writeln!(out, "   {}", wrap(&h.summary, 90, "   "))?;
            for c in &h.confirm {
                let ps = crate::style::prompt(
                    on_windows || gpukb_kb::placement::is_windows_command(&c.command),
                );
                writeln!(out, "   {} {ps} {}", p.w("1", "confirm:"), c.command)?;
                if !c.expect.is_empty() {
                    writeln!(out, "            {}", p.w("2", &c.expect))?;
                }
            }
        }
        let nfix = if i == 0 { h.fixes.len() } else { 1 };
        if i == 0 && h.fixes.len() > 1 {
            writeln!(
                out,
                "   {}",
                p.w(
                    "2",
                    &format!(
                        "one of these {} fixes (run only one; the others are commented out):",
                        h.fixes.len()
                    )
                )
            )?;
        }
        for f in h.fixes.iter().take(nfix) {
            let option = f.choice.as_ref().map_or(0, |c| c.option);
            let place = f
                .runs_on
                .prefix()
                .map(|w| format!(", {w}"))
                .unwrap_or_default();
            writeln!(
                out,
                "   {} ({}{place}): {}",
                p.w("32", "fix"),
                f.fix.platform,
                f.fix.title
            )?;
            let comment = if option > 1 { "# " } else { "" };
            let ps = crate::style::prompt(
                on_windows
                    || f.fix.platform == "windows"
                    || f.runs_on == gpukb_doctor::RunsOn::WindowsHost,
            );
            for s in &f.fix.steps {
                writeln!(out, "       {comment}{ps} {s}")?;
            }
            if i == 0 {
                if let Some(n) = &f.fix.note {
                    writeln!(out, "       {}", p.w("2", n))?;
                }
            }
        }
        if i == 0 {
            for w in &h.withheld_fixes {
                writeln!(
                    out,
                    "   {} {}: {}",
                    p.w("2", "withheld:"),
                    w.title,
                    p.w("2", &w.why)
                )?;
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

/// `NAME=value` with a long value cut for the terminal (CUDA images' NVIDIA_REQUIRE_CUDA runs
/// to 2,000 characters); `--json` keeps the whole value.
fn short_var(var: &str) -> String {
    const KEEP: usize = 48;
    let Some((name, value)) = var.split_once('=') else {
        return var.to_string();
    };
    let chars = value.chars().count();
    if chars <= KEEP + 12 {
        return var.to_string();
    }
    let head: String = value.chars().take(KEEP).collect();
    format!("{name}={head}… ({chars} characters)")
}

#[cfg(test)]
mod tests {
    use super::short_var;

    #[test]
    fn a_long_variable_is_cut_and_counted_a_short_one_kept() {
        let long = format!(
            "NVIDIA_REQUIRE_CUDA=cuda>=13.0 {}",
            "brand=tesla,driver>=535 ".repeat(40)
        );
        let cut = short_var(&long);
        assert!(cut.starts_with("NVIDIA_REQUIRE_CUDA=cuda>=13.0 brand=tesla,driver>=535"));
        assert!(cut.ends_with(&format!(
            "… ({} characters)",
            long.len() - "NVIDIA_REQUIRE_CUDA=".len()
        )));
        assert!(cut.chars().count() < 100);
        assert_eq!(
            short_var("CUDA_HOME=/usr/local/cuda"),
            "CUDA_HOME=/usr/local/cuda"
        );
        assert_eq!(short_var("no-equals-sign"), "no-equals-sign");
    }
}
