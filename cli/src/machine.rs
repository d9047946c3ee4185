//! Which machine a command looks at: this one (live), a copied root
//! filesystem (`--root DIR`), or a capture (`--replay DIR`).

use anyhow::Context;
use gpukb_agent::host::{Host, LiveOptions};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments shared by every command that observes a machine.
#[derive(Debug, Clone, clap::Args)]
pub struct MachineArgs {
    /// Treat DIR as `/`: a copied root filesystem (files only: no commands, no libraries).
    #[arg(long, value_name = "DIR", conflicts_with = "replay")]
    pub root: Option<PathBuf>,
    /// Replay a directory written by `gpukb capture` (another machine, exactly as captured).
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,
    /// Seconds a command such as nvidia-smi may run before it is reported as hung.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub timeout: f64,
}

impl MachineArgs {
    /// How this machine is described in reports.
    pub fn describe(&self) -> String {
        match (&self.root, &self.replay) {
            (Some(r), _) => format!("root filesystem {}", r.display()),
            (_, Some(r)) => format!("capture {}", r.display()),
            _ => "this machine".into(),
        }
    }

    /// Opens the host seam for these arguments.
    pub fn host(&self, recording: bool) -> anyhow::Result<Host> {
        if let Some(dir) = &self.replay {
            return Host::replay(dir).with_context(|| format!("cannot replay {}", dir.display()));
        }
        if let Some(dir) = &self.root {
            anyhow::ensure!(dir.is_dir(), "--root {}: not a directory", dir.display());
            return Ok(Host::root_dir(dir));
        }
        anyhow::ensure!(
            self.timeout.is_finite() && self.timeout > 0.0 && self.timeout <= 600.0,
            "--timeout must be between 0 and 600 seconds"
        );
        let host = Host::live(LiveOptions {
            command_timeout: Duration::from_secs_f64(self.timeout),
            ..LiveOptions::default()
        });
        Ok(if recording { host.recording() } else { host })
    }
}

/// Fingerprints the machine these arguments name.
pub fn fingerprint(args: &MachineArgs) -> anyhow::Result<gpukb_agent::Fingerprint> {
    let host = std::sync::Arc::new(args.host(false)?);
    Ok(gpukb_agent::fingerprint(host, &deadlines(args)))
}

pub(crate) fn deadlines(args: &MachineArgs) -> gpukb_agent::Settings {
    let mut d = gpukb_agent::Settings::default();
    let t = Duration::from_secs_f64(args.timeout.clamp(0.1, 600.0));
    d.nvml = d.nvml.max(t);
    d.cuda = d.cuda.max(t);
    d.files = d.files.max(t * 2);
    d
}
