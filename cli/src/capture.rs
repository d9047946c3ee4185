//! `gpukb capture -o DIR`: records everything a fingerprint observes (files
//! read, command outputs, NVML and CUDA answers) so `--replay DIR` reproduces
//! it on any machine; also writes `DIR/fingerprint.json`.

use anyhow::Context;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct CaptureArgs {
    /// Directory to write (created; must be empty or absent).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: PathBuf,
    /// Seconds a command such as nvidia-smi may run before it is reported as hung.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub timeout: f64,
    /// Also run `gpukb probe --quick` and store its report as `DIR/probe.json`
    /// (`gpukb doctor --replay DIR` judges it).
    #[arg(long)]
    pub probe: bool,
}

#[allow(clippy::disallowed_methods)] // writes the user's output directory, not machine state
pub fn run(args: &CaptureArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let dir = &args.output;
    if dir.exists() {
        let empty = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .next()
            .is_none();
        anyhow::ensure!(empty, "{} exists and is not empty", dir.display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let machine = crate::machine::MachineArgs {
        root: None,
        replay: None,
        fingerprint: None,
        timeout: args.timeout,
    };
    let host = std::sync::Arc::new(machine.host(true)?);
    let fp = gpukb_agent::fingerprint(host.clone(), &crate::machine::deadlines(&machine));
    host.write_capture(dir)
        .with_context(|| format!("cannot write the capture to {}", dir.display()))?;
    let json = serde_json::to_string_pretty(&fp)?;
    std::fs::write(dir.join("fingerprint.json"), json + "\n")?;
    if args.probe {
        let opts = crate::probe::ProbeArgs {
            quick: true,
            ..Default::default()
        };
        match crate::probe::measure(&opts, Some(&fp)) {
            Ok(r) => std::fs::write(dir.join("probe.json"), r.to_json() + "\n")?,
            Err(e) => eprintln!(
                "{} (the capture has no probe.json)",
                crate::probe::error_line(&e)
            ),
        }
    }
    writeln!(
        out,
        "Captured this machine into {} (replay it anywhere with `gpukb fingerprint --replay {}`).",
        dir.display(),
        dir.display()
    )?;
    Ok(ExitCode::SUCCESS)
}
