//! `gpukb history`: the snapshots and events the agent stored, oldest first;
//! where that history database is ([`db_path`]) and how a stored change is
//! rendered ([`render_changes`]), for `gpukb agent` and `gpukb diff` too.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// The history database (default: as `gpukb agent`).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Only what happened in this last stretch (`1h`, `7d`).
    #[arg(long, value_name = "DUR")]
    pub since: Option<String>,
    /// Print JSON: {snapshots: [{id, at, verdict, summary}], events: [{id, at, kind, what, before, after, meaning, acked_at, note}]}.
    #[arg(long)]
    pub json: bool,
}

/// The history path: `--db`, else the default rules.
#[allow(clippy::disallowed_methods)] // where gpukb keeps its own state, not machine state
pub fn db_path(db: &Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(p) = db {
        // The history goes where the user said, in a directory that exists: a
        // typo in --db should not leave a new directory tree behind.
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            anyhow::ensure!(
                dir.is_dir(),
                "--db {}: the directory {} does not exist (create it first)",
                p.display(),
                dir.display()
            );
        }
        return Ok(p.clone());
    }
    gpukb_monitor::paths::default_db(&|k| std::env::var(k).ok(), gpukb_monitor::paths::is_root())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no --db given and neither STATE_DIRECTORY, XDG_STATE_HOME nor HOME is set"
            )
        })
}

pub fn run(args: &HistoryArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let since = match &args.since {
        Some(s) => {
            Some(gpukb_monitor::time::now() - gpukb_monitor::duration::parse(s)?.as_secs() as i64)
        }
        None => None,
    };
    let path = db_path(&args.db)?;
    let store = gpukb_monitor::store::Store::open_existing(&path)?;
    let h = store.history(since)?;
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &h)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{} snapshots, {} events in {}",
        h.snapshots.len(),
        h.events.len(),
        path.display()
    )?;
    for s in &h.snapshots {
        writeln!(
            out,
            "  @{:<5} {}  {:<8} {}",
            s.id,
            gpukb_monitor::time::rfc3339(s.at),
            s.verdict,
            s.summary
        )?;
    }
    if !h.events.is_empty() {
        writeln!(out, "events:")?;
    }
    for e in &h.events {
        writeln!(
            out,
            "  {}  #{:<4} {:<8} {}: {} -> {}{}{}",
            gpukb_monitor::time::rfc3339(e.at),
            e.id,
            e.kind,
            e.what,
            e.before.as_deref().unwrap_or("absent"),
            e.after.as_deref().unwrap_or("absent"),
            if e.meaning.is_empty() {
                String::new()
            } else {
                format!("\n      {}", e.meaning)
            },
            match (e.acked_at, &e.note) {
                (Some(t), note) => format!(
                    "\n      acknowledged {}{}",
                    gpukb_monitor::time::rfc3339(t),
                    note.as_deref()
                        .map(|n| format!(": {n}"))
                        .unwrap_or_default()
                ),
                (None, _) => String::new(),
            }
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Changes, one per line, with their meaning.
pub fn render_changes(
    changes: &[gpukb_monitor::diff::Change],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for c in changes {
        writeln!(
            out,
            "    {} ({}): {} -> {}",
            c.what,
            c.label,
            c.before.as_deref().unwrap_or("absent"),
            c.after.as_deref().unwrap_or("absent")
        )?;
        if !c.meaning.is_empty() {
            writeln!(out, "      means: {}", c.meaning)?;
        }
    }
    Ok(())
}
