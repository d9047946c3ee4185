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
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) && !dir.exists() {
        anyhow::bail!(
            "capture -o {}: is a symlink to nothing (a dangling link): remove it or name another directory",
            dir.display()
        );
    }
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => anyhow::bail!(
            "capture -o {}: exists and is not a directory",
            dir.display()
        ),
        Ok(_) => {
            let empty = std::fs::read_dir(dir)
                .with_context(|| format!("capture -o {}: cannot list it", dir.display()))?
                .next()
                .is_none();
            anyhow::ensure!(
                empty,
                "capture -o {}: exists and is not empty",
                dir.display()
            );
        }
        Err(_) => {}
    }
    // Write into a sibling temporary directory and rename it at the end, so a
    // capture that fails (ENOSPC, EROFS, a signal) leaves nothing behind.
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "capture".into());
    let tmp = parent.join(format!(".{name}.gpukb-partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).with_context(|| {
        format!(
            "capture -o {}: cannot create {}",
            dir.display(),
            tmp.display()
        )
    })?;
    let result = write_into(args, &tmp);
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if dir.exists() {
        std::fs::remove_dir(dir).with_context(|| {
            format!(
                "capture -o {}: cannot replace the empty directory",
                dir.display()
            )
        })?;
    }
    if let Err(e) = std::fs::rename(&tmp, dir) {
        let _ = std::fs::remove_dir_all(&tmp);
        anyhow::bail!(
            "capture -o {}: cannot move the finished capture into place: {e}",
            dir.display()
        );
    }
    writeln!(
        out,
        "Captured this machine into {} (replay it anywhere with `gpukb fingerprint --replay {}`). It holds hostnames and paths of this machine.",
        dir.display(),
        dir.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Fingerprints this machine, recording into `dir`.
#[allow(clippy::disallowed_methods)] // writes the user's output directory, not machine state
fn write_into(args: &CaptureArgs, dir: &std::path::Path) -> anyhow::Result<()> {
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
    std::fs::write(dir.join("fingerprint.json"), json + "\n")
        .with_context(|| format!("cannot write {}", dir.join("fingerprint.json").display()))?;
    if args.probe {
        let opts = crate::probe::ProbeArgs {
            quick: true,
            ..Default::default()
        };
        match crate::probe::measure(&opts, Some(&fp)) {
            Ok(r) => std::fs::write(dir.join("probe.json"), r.to_json() + "\n")
                .with_context(|| format!("cannot write {}", dir.join("probe.json").display()))?,
            Err(e) => eprintln!(
                "{} (the capture has no probe.json)",
                crate::probe::error_line(&e)
            ),
        }
    }
    Ok(())
}
