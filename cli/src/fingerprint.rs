//! `gpukb fingerprint`: the machine's NVIDIA stack, as a report or JSON.

use crate::machine::MachineArgs;
use crate::report;
use crate::style::Style;
use std::io::Write;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct FingerprintArgs {
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Print JSON (the versioned fingerprint schema) instead of a report.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &FingerprintArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let fp = crate::machine::fingerprint(&args.machine)?;
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &fp)?;
        writeln!(out)?;
    } else {
        let style = Style::detect();
        report::write_fingerprint(out, &fp, &args.machine.describe(), style)?;
    }
    Ok(ExitCode::SUCCESS)
}
