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
    /// Skip cuInit (about 0.25 s per GPU): the CUDA section then holds only the driver API version.
    #[arg(long)]
    pub quick: bool,
    /// Only the cheap facts `gpukb search` detects by default: files under /sys, /proc and
    /// the filesystem, no NVML and no CUDA driver API (GPUs then come from the PCI bus).
    #[arg(long, conflicts_with = "quick")]
    pub cheap: bool,
    /// Also print, on stderr, how long each source took.
    #[arg(long)]
    pub timings: bool,
}

pub fn run(args: &FingerprintArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let host = std::sync::Arc::new(args.machine.host(false)?);
    let settings = if args.cheap {
        crate::machine::cheap_settings(&args.machine)
    } else {
        let mut s = crate::machine::deadlines(&args.machine);
        s.cuda_init = !args.quick;
        s
    };
    let (fp, timings) = gpukb_agent::fingerprint_timed(host, &settings);
    if args.timings {
        for t in &timings {
            let cpu = t.cpu.map_or(String::new(), |c| {
                format!("  {:7.1} ms CPU", c.as_secs_f64() * 1000.0)
            });
            eprintln!(
                "gpukb: {:<22} {:7.1} ms{cpu}",
                t.what,
                t.wall.as_secs_f64() * 1000.0
            );
        }
    }
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &fp)?;
        writeln!(out)?;
    } else {
        let style = Style::detect();
        report::write_fingerprint(out, &fp, &args.machine.describe(), style)?;
    }
    Ok(ExitCode::SUCCESS)
}
