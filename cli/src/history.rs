//! `gpukb history`: the snapshots and events the agent stored, oldest first.

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

pub fn run(args: &HistoryArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let since = match &args.since {
        Some(s) => {
            Some(gpukb_monitor::time::now() - gpukb_monitor::duration::parse(s)?.as_secs() as i64)
        }
        None => None,
    };
    let path = crate::agent::db_path(&args.db)?;
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
