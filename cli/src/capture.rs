//! `gpukb capture -o DIR`: records everything a fingerprint observes (files
//! read, command outputs, NVML and CUDA answers) so `--replay DIR` reproduces
//! it on any machine; also writes `DIR/fingerprint.json`. With `--redact`
//! every private value is replaced consistently first
//! (`gpukb_agent::redact`), and `--from CAPTURE --redact` rewrites a capture
//! taken before.

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
    #[arg(long, conflicts_with = "from")]
    pub probe: bool,
    /// Replace hostnames, ids, serials, GPU UUIDs, user names and paths under
    /// home directories, and secrets by stable tokens of the same length, in
    /// every file of the capture: it still replays to the same diagnosis.
    #[arg(long)]
    pub redact: bool,
    /// Redact this capture (written by `gpukb capture`) instead of this machine.
    #[arg(long, value_name = "CAPTURE", requires = "redact")]
    pub from: Option<PathBuf>,
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
    let what = match &args.from {
        Some(f) => format!("the capture {}", f.display()),
        None => "this machine".into(),
    };
    let privacy = if args.redact {
        "Private values are replaced by tokens (pseudonymised, not anonymous)."
    } else {
        "It holds hostnames and paths of this machine (`--redact` replaces them)."
    };
    writeln!(
        out,
        "Captured {what} into {} (replay it anywhere with `gpukb doctor --replay {}`). {privacy}",
        dir.display(),
        dir.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Fingerprints this machine (or reads `--from`), recording into `dir`,
/// redacted with `--redact`.
#[allow(clippy::disallowed_methods)] // writes the user's output directory, not machine state
fn write_into(args: &CaptureArgs, dir: &std::path::Path) -> anyhow::Result<()> {
    use gpukb_agent::host::CaptureData;
    let (data, fp, probe) = match &args.from {
        Some(from) => {
            let data = CaptureData::read(from)
                .with_context(|| format!("cannot read the capture {}", from.display()))?;
            let probe = crate::machine::read_user_file(&from.join("probe.json"), 64 << 20)?;
            (data, None, probe)
        }
        None => {
            let machine = crate::machine::MachineArgs {
                root: None,
                replay: None,
                fingerprint: None,
                timeout: args.timeout,
            };
            let host = std::sync::Arc::new(machine.host(true)?);
            let fp = gpukb_agent::fingerprint(host.clone(), &crate::machine::deadlines(&machine));
            let data = host.capture()?;
            let probe = if args.probe { measure_probe(&fp) } else { None };
            (data, Some(fp), probe)
        }
    };
    let (data, probe) = if args.redact {
        let mut learner = gpukb_agent::redact::Learner::new();
        learner.capture(&data);
        let redaction = learner.finish();
        let probe = match probe {
            Some(text) => {
                let v: serde_json::Value =
                    serde_json::from_str(&text).context("probe.json is not JSON")?;
                Some(serde_json::to_string_pretty(&redaction.json(&v))?)
            }
            None => None,
        };
        (redaction.capture(&data)?, probe)
    } else {
        (data, probe)
    };
    data.write(dir)
        .with_context(|| format!("cannot write the capture to {}", dir.display()))?;
    // The fingerprint of what was written: a redacted capture replays to the
    // redacted fingerprint.
    let fp = match fp.filter(|_| !args.redact) {
        Some(fp) => fp,
        None => {
            let host = gpukb_agent::host::Host::replay(dir).with_context(|| {
                format!(
                    "cannot replay the capture just written to {}",
                    dir.display()
                )
            })?;
            let machine = crate::machine::MachineArgs {
                root: None,
                replay: Some(dir.to_path_buf()),
                fingerprint: None,
                timeout: args.timeout,
            };
            gpukb_agent::fingerprint(
                std::sync::Arc::new(host),
                &crate::machine::deadlines(&machine),
            )
        }
    };
    let json = serde_json::to_string_pretty(&fp)?;
    std::fs::write(dir.join("fingerprint.json"), json + "\n")
        .with_context(|| format!("cannot write {}", dir.join("fingerprint.json").display()))?;
    if let Some(p) = probe {
        std::fs::write(dir.join("probe.json"), p.trim_end().to_string() + "\n")
            .with_context(|| format!("cannot write {}", dir.join("probe.json").display()))?;
    }
    Ok(())
}

/// `gpukb probe --quick` on this machine's GPUs, as JSON (`None`, said on
/// stderr, when it cannot run).
fn measure_probe(fp: &gpukb_agent::Fingerprint) -> Option<String> {
    let opts = crate::probe::ProbeArgs {
        quick: true,
        ..Default::default()
    };
    match crate::probe::measure(&opts, Some(fp)) {
        Ok(r) => Some(r.to_json()),
        Err(e) => {
            eprintln!(
                "{} (the capture has no probe.json)",
                crate::probe::error_line(&e)
            );
            None
        }
    }
}
