//! `gpukb kb list|show|lint|eval`: browse, check and measure the embedded knowledge base;
//! `kb lint DIR` checks a knowledge-base directory instead, without rebuilding the binary.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gpukb_kb::Kb;

/// Arguments of `gpukb kb`.
#[derive(Debug, clap::Args)]
pub struct KbArgs {
    #[command(subcommand)]
    pub command: KbCommand,
}

/// `gpukb kb` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum KbCommand {
    /// List diagnoses (optionally of one category).
    List {
        /// Only this category.
        #[arg(long)]
        category: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one diagnosis in full.
    Show {
        /// Entry id.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check the knowledge base (exit 1 on problems): the embedded one, or the directory DIR.
    #[command(
        after_help = "DIR has the layout of the repository's kb/ (entries/*.toml, examples/<id>/*, categories.tsv, tables/*.csv). It is compiled in memory with the build's own checks; nothing is rebuilt.\nOne line per problem: FILE: ENTRY: MESSAGE (FILE: MESSAGE outside an entry).\nExit status: 0 clean, 1 problems found, 2 DIR or EVAL cannot be read."
    )]
    Lint {
        /// A knowledge-base directory to check instead of the embedded KB (e.g. kb).
        #[arg(value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Also fail on KB examples or signatures that copy paste-specific text (60+
        /// characters, or a path, host name or version) of the labelled pastes in
        /// EVAL/*.jsonl (a directory); primary-source text in EVAL/../research/data/*.csv is exempt.
        #[arg(long, value_name = "EVAL")]
        eval: Option<PathBuf>,
    },
    /// Measure search on a labelled JSONL file (fields `error`, `root_cause`, optional
    /// `machine`: a capture directory or copied root, relative to the file, as `search --replay`/`--root` read them).
    Eval {
        /// The JSONL file.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `gpukb kb ...`.
pub fn run(args: &KbArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match &args.command {
        KbCommand::List { category, json } => {
            let kb = Kb::open()?;
            if let Some(c) = category {
                let known: Vec<String> = kb.categories()?.into_iter().map(|r| r.0).collect();
                anyhow::ensure!(
                    known.iter().any(|k| k == c),
                    "unknown category {c:?}; the categories are: {}",
                    known.join(", ")
                );
            }
            let rows = kb.list(category.as_deref())?;
            if *json {
                serde_json::to_writer_pretty(&mut *out, &rows)?;
                writeln!(out)?;
            } else {
                for r in &rows {
                    writeln!(out, "{:<48} {:<34} {}", r.id, r.category, r.title)?;
                }
            }
            Ok(if rows.is_empty() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        KbCommand::Show { id, json } => {
            let kb = Kb::open()?;
            let Some(e) = kb.entry(id)? else {
                anyhow::bail!("no entry \"{id}\" (see `gpukb kb list`)");
            };
            if *json {
                serde_json::to_writer_pretty(&mut *out, &e)?;
                writeln!(out)?;
                return Ok(ExitCode::SUCCESS);
            }
            writeln!(
                out,
                "{}\n{}  [{} · {}]\n",
                e.title, e.id, e.category, e.layer
            )?;
            writeln!(out, "{}\n", e.summary)?;
            if !e.codes.is_empty() {
                writeln!(out, "codes: {}", e.codes.join(", "))?;
            }
            for s in &e.signatures {
                let kind = if s.literal.is_some() {
                    "literal"
                } else {
                    "regex"
                };
                writeln!(
                    out,
                    "signature ({kind}, weight {}): {}",
                    s.weight(),
                    s.pattern()
                )?;
            }
            for c in &e.confirm {
                let ps = crate::style::prompt(gpukb_kb::placement::is_windows_command(&c.command));
                writeln!(out, "confirm: {ps} {}\n         {}", c.command, c.expect)?;
            }
            for f in &e.fixes {
                writeln!(out, "fix ({}): {}", f.platform, f.title)?;
                let ps = crate::style::prompt(f.platform == "windows");
                for s in &f.steps {
                    writeln!(out, "    {ps} {s}")?;
                }
                if let Some(n) = &f.note {
                    writeln!(out, "    {n}")?;
                }
            }
            for c in &e.conditions {
                writeln!(out, "condition: {}", c.when)?;
            }
            for s in &e.sources {
                writeln!(out, "source: {} ({})", s.url, s.title)?;
            }
            for d in &e.doubts {
                writeln!(out, "doubt: {}\n       {} ({})", d.claim, d.note, d.source)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        KbCommand::Lint { dir, eval } => lint(dir.as_deref(), eval.as_deref(), out),
        KbCommand::Eval { file, json } => {
            let kb = Kb::open()?;
            let text = read_user_file(file)?;
            let cases = gpukb_kb::eval::parse_jsonl(&text)
                .with_context(|| format!("parsing {}", file.display()))?;
            kb.check_labels(&cases)
                .with_context(|| format!("{}", file.display()))?;
            let machines = case_machines(file, &cases)?;
            let r = kb.eval_with_machines(&cases, &machines)?;
            if *json {
                let v = serde_json::json!({
                    "file": file.display().to_string(),
                    "report": r,
                });
                serde_json::to_writer_pretty(&mut *out, &v)?;
                writeln!(out)?;
            } else {
                write_eval(out, file, &r)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `gpukb kb lint [DIR] [--eval EVAL]`: the embedded KB, or DIR compiled in memory with
/// the build's checks; one line per problem, then a count. Exit 1 on problems.
fn lint(
    dir: Option<&std::path::Path>,
    eval: Option<&std::path::Path>,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    let kb = match dir {
        Some(d) => Kb::compile_dir(d, &d.display().to_string())?,
        None => Kb::open()?,
    };
    let mut issues = kb.lint()?;
    if let Some(e) = eval {
        let (pastes, generic) = read_eval_dir(e)?;
        issues.extend(kb.lint_eval(&pastes, &generic)?);
    }
    for i in &issues {
        writeln!(out, "{i}")?;
    }
    let on_disk = match dir {
        Some(_) => format!(" of {} on disk", kb.entries_on_disk()?),
        None => String::new(),
    };
    writeln!(
        out,
        "{} entries{on_disk}, {} problem(s)",
        kb.len()?,
        issues.len()
    )?;
    Ok(if issues.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The diagnosis of each case's machine (its capture replayed), `None` for text-only cases.
fn case_machines(
    file: &std::path::Path,
    cases: &[gpukb_kb::eval::EvalCase],
) -> anyhow::Result<Vec<Option<gpukb_kb::MachineFacts>>> {
    let base = file.parent().unwrap_or(std::path::Path::new("."));
    cases
        .iter()
        .map(|c| {
            let Some(m) = &c.machine else {
                return Ok(None);
            };
            let dir = base.join(m);
            // A capture is replayed; a copied root filesystem is read as a root.
            let capture = dir.join("capture.json").is_file();
            let args = crate::machine::MachineArgs {
                root: (!capture).then(|| dir.clone()),
                replay: capture.then_some(dir),
                fingerprint: None,
                timeout: 3.0,
            };
            let fp = crate::machine::fingerprint(&args).with_context(|| {
                format!("case {}: machine {m}", c.id.as_deref().unwrap_or_default())
            })?;
            Ok(Some(gpukb_kb::MachineFacts::observe(&fp, &args.describe())))
        })
        .collect()
}

/// Writes the eval report: overall and per-category figures, strict and counting
/// `same_as`, the with-machine top-1 beside text-only, then the misses by category.
fn write_eval(
    out: &mut dyn Write,
    file: &std::path::Path,
    r: &gpukb_kb::eval::EvalReport,
) -> anyhow::Result<()> {
    let pct = |a: usize, n: usize| 100.0 * a as f64 / n.max(1) as f64;
    let k = &r.overall;
    writeln!(out, "{}: {} cases", file.display(), k.n)?;
    writeln!(
        out,
        "  strict    top-1 {:5.1}% ({:>3})  top-3 {:5.1}% ({:>3})",
        pct(k.top1, k.n),
        k.top1,
        pct(k.top3, k.n),
        k.top3
    )?;
    writeln!(
        out,
        "  same_as   top-1 {:5.1}% ({:>3})  top-3 {:5.1}% ({:>3})",
        pct(k.top1_same_as, k.n),
        k.top1_same_as,
        pct(k.top3_same_as, k.n),
        k.top3_same_as
    )?;
    let cal = &r.calibration;
    writeln!(
        out,
        "  calibration of the top-1 confidence (mean {:.2}): ECE over 10 bins {:.3} strict, {:.3} same_as",
        cal.mean_confidence, cal.ece, cal.ece_same_as
    )?;
    let m = &r.machine;
    if m.n > 0 {
        writeln!(
            out,
            "  {} case(s) with a machine: top-1 text only {:.1}% ({}), with the machine {:.1}% ({}); same_as: {:.1}% ({}) -> {:.1}% ({})",
            m.n,
            pct(m.text_top1, m.n),
            m.text_top1,
            pct(m.machine_top1, m.n),
            m.machine_top1,
            pct(m.text_top1_same_as, m.n),
            m.text_top1_same_as,
            pct(m.machine_top1_same_as, m.n),
            m.machine_top1_same_as
        )?;
    }
    writeln!(
        out,
        "\n{:<36} {:>3} {:>6} {:>6} {:>8} {:>8} {:>6}",
        "category", "n", "top-1", "top-3", "top-1 sa", "top-3 sa", "misses"
    )?;
    for (c, k) in &r.per_category {
        writeln!(
            out,
            "{c:<36} {:>3} {:>6} {:>6} {:>8} {:>8} {:>6}",
            k.n,
            k.top1,
            k.top3,
            k.top1_same_as,
            k.top3_same_as,
            k.n - k.top1
        )?;
    }
    if !r.machine_cases.is_empty() {
        writeln!(
            out,
            "\nwith a machine (top-1 text only | with the machine):"
        )?;
    }
    let show = |g: &Option<gpukb_kb::eval::Got>| {
        g.as_ref()
            .map(|g| format!("{} [{}]", g.id, g.category))
            .unwrap_or_else(|| "nothing".into())
    };
    for c in &r.machine_cases {
        let mark = |ok: bool| if ok { "right" } else { "wrong" };
        writeln!(
            out,
            "  {} expected {} (machine {})\n    text only: {} ({})\n    with machine: {} ({})",
            c.id,
            c.expected,
            c.machine,
            show(&c.text_top1),
            mark(c.text_right),
            show(&c.machine_top1),
            mark(c.machine_right)
        )?;
    }
    let mut last: Option<&str> = None;
    for m in &r.misses {
        if last.is_none() {
            writeln!(
                out,
                "\nmisses (strict top-1 category wrong), by expected category:"
            )?;
        }
        if last != Some(m.expected.as_str()) {
            writeln!(out, "  {}", m.expected)?;
            last = Some(&m.expected);
        }
        let got: Vec<String> = m
            .got
            .iter()
            .map(|g| format!("{} [{}] {:.1}", g.id, g.category, g.score))
            .collect();
        let verdict = if m.top1_same_as {
            "same_as top-1"
        } else if m.top3_same_as {
            "in top-3 (same_as)"
        } else {
            "not in top-3"
        };
        writeln!(
            out,
            "    {} ({verdict})\n      got: {}\n      text: {}",
            m.id,
            got.join(" | "),
            m.snippet
        )?;
    }
    Ok(())
}

/// One labelled case as `kb lint --eval` reads it.
#[derive(serde::Deserialize)]
struct EvalPaste {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    source: Option<String>,
    error: String,
}

/// The pastes of `dir/*.jsonl`, and the primary-source text of `dir/../research/data/*.csv`
/// (empty when that folder is absent).
#[allow(clippy::disallowed_methods)] // lists the eval folder the user named, not machine state
fn read_eval_dir(
    dir: &std::path::Path,
) -> anyhow::Result<(Vec<gpukb_kb::memorised::Paste>, String)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    if files.is_empty() {
        anyhow::bail!("{}: no *.jsonl files of labelled pastes", dir.display());
    }
    let mut pastes = Vec::new();
    for f in &files {
        let text = read_user_file(f)?;
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let c: EvalPaste = serde_json::from_str(line)
                .with_context(|| format!("{}: line {}", f.display(), i + 1))?;
            let id = c.id.unwrap_or_else(|| format!("{name}:{}", i + 1));
            pastes.push(gpukb_kb::memorised::Paste {
                source: c.source.unwrap_or_else(|| id.clone()),
                id,
                text: c.error,
            });
        }
    }
    let mut generic = String::new();
    let data = dir.join("../research/data");
    if let Ok(rd) = std::fs::read_dir(&data) {
        let mut csvs: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "csv"))
            .collect();
        csvs.sort();
        for c in csvs {
            generic.push_str(&read_user_file(&c)?);
            generic.push('\n');
        }
    }
    Ok((pastes, generic))
}

/// Reads a file the user named on the command line.
fn read_user_file(path: &std::path::Path) -> anyhow::Result<String> {
    // A labelled JSONL file: capped at 64 MiB (the reader also caps lines at 1 MiB).
    crate::machine::read_user_file(path, 64 << 20)?
        .ok_or_else(|| anyhow::anyhow!("{}: no such file", path.display()))
}
