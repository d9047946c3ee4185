//! `gpukb diff A B`: what changed between two machines or two moments, in
//! stack terms. A and B are capture directories, fingerprint files, or
//! snapshots `@ID` of the history (`--db`). Exit 0 same, 1 differ, 2 trouble.

use gpukb_monitor::diff::{compare, Side};
use gpukb_monitor::snapshot::Snapshot;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
#[command(after_help = "Exit status: 0 the same, 1 something changed, 2 gpukb could not compare.")]
pub struct DiffArgs {
    /// The older side: a capture directory, a fingerprint file, or @ID.
    #[arg(value_name = "A")]
    pub before: String,
    /// The newer side.
    #[arg(value_name = "B")]
    pub after: String,
    /// The history that @ID refers to (default: as `gpukb agent`).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Print JSON: {changes: [{what, label, before, after, meaning}], not_compared: [...]}.
    #[arg(long)]
    pub json: bool,
}

fn load(spec: &str, db: &Option<PathBuf>, kb: &gpukb_kb::Kb) -> anyhow::Result<Snapshot> {
    if let Some(id) = spec.strip_prefix('@') {
        let id: i64 = id.parse().map_err(|_| {
            anyhow::anyhow!("{spec}: a snapshot is @ and a number (gpukb history lists them)")
        })?;
        let path = crate::history::db_path(db)?;
        let store = gpukb_monitor::store::Store::open_existing(&path)?;
        return Ok(store.snapshot(id)?);
    }
    let p = Path::new(spec);
    let machine = crate::machine::MachineArgs {
        root: None,
        replay: p.join("capture.json").is_file().then(|| p.to_path_buf()),
        fingerprint: (!p.join("capture.json").is_file()).then(|| p.to_path_buf()),
        timeout: 5.0,
    };
    anyhow::ensure!(
        !(machine.fingerprint.is_some() && p.is_dir()),
        "{spec}: a directory without capture.json (give a capture directory written by `gpukb capture`, a fingerprint file, or @ID)"
    );
    let fp = crate::machine::fingerprint(&machine)?;
    Ok(gpukb_monitor::snapshot::judge(
        fp,
        &machine.describe(),
        Some(kb),
        gpukb_monitor::time::now(),
    ))
}

pub fn run(args: &DiffArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let kb = gpukb_kb::Kb::open()?;
    let a = load(&args.before, &args.db, &kb)?;
    let b = load(&args.after, &args.db, &kb)?;
    let d = compare(
        &Side {
            fingerprint: &a.fingerprint,
            diagnosis: &a.diagnosis,
        },
        &Side {
            fingerprint: &b.fingerprint,
            diagnosis: &b.diagnosis,
        },
    );
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &d)?;
        writeln!(out)?;
    } else if d.is_empty() {
        writeln!(
            out,
            "no stack change between {} and {}",
            args.before, args.after
        )?;
    } else {
        writeln!(
            out,
            "{} changes from {} to {}:",
            d.changes.len(),
            args.before,
            args.after
        )?;
        crate::history::render_changes(&d.changes, out)?;
        if !d.not_compared.is_empty() {
            writeln!(
                out,
                "  {} facts not compared (one side could not observe them)",
                d.not_compared.len()
            )?;
        }
    }
    Ok(ExitCode::from(u8::from(!d.is_empty())))
}
