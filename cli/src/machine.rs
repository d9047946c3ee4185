//! Which machine a command looks at: this one (live), a copied root
//! filesystem (`--root DIR`), a capture (`--replay DIR`), or a fingerprint
//! file (`--fingerprint FILE`, schema 1 or 2).

use anyhow::Context;
use gpukb_agent::host::{Host, LiveOptions};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments shared by every command that observes a machine.
#[derive(Debug, Clone, clap::Args)]
pub struct MachineArgs {
    /// Treat DIR as `/`: a copied root filesystem (files only: no commands, no libraries).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["replay", "fingerprint"])]
    pub root: Option<PathBuf>,
    /// Replay a directory written by `gpukb capture` (another machine, exactly as captured).
    #[arg(long, value_name = "DIR", conflicts_with = "fingerprint")]
    pub replay: Option<PathBuf>,
    /// Judge a fingerprint written by `gpukb fingerprint --json` (schema 1 or 2).
    #[arg(long, value_name = "FILE")]
    pub fingerprint: Option<PathBuf>,
    /// Seconds a command such as nvidia-smi may run before it is reported as hung.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub timeout: f64,
}

impl MachineArgs {
    /// How this machine is described in reports.
    pub fn describe(&self) -> String {
        match (&self.root, &self.replay, &self.fingerprint) {
            (Some(r), _, _) => format!("root filesystem {}", r.display()),
            (_, Some(r), _) => format!("capture {}", r.display()),
            (_, _, Some(f)) => format!("fingerprint file {}", f.display()),
            _ => "this machine".into(),
        }
    }

    /// Opens the host seam for these arguments.
    pub fn host(&self, recording: bool) -> anyhow::Result<Host> {
        self.host_caching_in(recording, cache_dir())
    }

    /// Like [`MachineArgs::host`], caching ELF summaries of a live machine's
    /// large libraries in `elf_cache` (`gpukb agent` uses its own directory).
    #[allow(clippy::disallowed_methods)] // stats the directory the user named
    pub fn host_caching_in(
        &self,
        recording: bool,
        elf_cache: Option<PathBuf>,
    ) -> anyhow::Result<Host> {
        if let Some(dir) = &self.replay {
            return Host::replay(dir).with_context(|| format!("cannot replay {}", dir.display()));
        }
        anyhow::ensure!(
            self.fingerprint.is_none(),
            "--fingerprint gives facts, not a machine to observe"
        );
        if let Some(dir) = &self.root {
            match std::fs::metadata(dir) {
                Err(_) => anyhow::bail!("--root {}: no such directory", dir.display()),
                Ok(m) if !m.is_dir() => anyhow::bail!("--root {}: not a directory", dir.display()),
                Ok(_) => {}
            }
            anyhow::ensure!(
                !dir.join("capture.json").is_file(),
                "--root {}: this is a capture written by `gpukb capture`: use --replay {0}",
                dir.display()
            );
            let looks_like_root = ["etc", "usr", "proc", "sys", "lib", "opt"]
                .iter()
                .any(|d| dir.join(d).exists());
            anyhow::ensure!(
                looks_like_root,
                "--root {}: it looks empty (no etc, usr, lib, opt, proc or sys in it): give the root directory of a copied filesystem",
                dir.display()
            );
            if let Some(parent) = dir.parent().filter(|p| p.join("capture.json").is_file()) {
                anyhow::bail!(
                    "--root {}: these are the files of a capture, without its NVML/CUDA answers: use --replay {}",
                    dir.display(),
                    parent.display()
                );
            }
            return Ok(Host::root_dir(dir));
        }
        anyhow::ensure!(
            self.timeout.is_finite() && (0.1..=600.0).contains(&self.timeout),
            "--timeout {}: must be at least 0.1 s and at most 600 s",
            self.timeout
        );
        let host = Host::live(LiveOptions {
            command_timeout: Duration::from_secs_f64(self.timeout),
            elf_cache,
            ..LiveOptions::default()
        });
        Ok(if recording { host.recording() } else { host })
    }
}

/// Where gpukb caches ELF summaries of large libraries: `$XDG_CACHE_HOME/gpukb`, else
/// `~/.cache/gpukb`; none when `GPUKB_NO_CACHE` is set or neither variable is.
#[allow(clippy::disallowed_methods)] // gpukb's own settings, not facts about the machine
pub fn cache_dir() -> Option<PathBuf> {
    if std::env::var_os("GPUKB_NO_CACHE").is_some() {
        return None;
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("gpukb"))
}

/// Fingerprints the machine these arguments name (or reads the file).
pub fn fingerprint(args: &MachineArgs) -> anyhow::Result<gpukb_agent::Fingerprint> {
    if let Some(path) = &args.fingerprint {
        return read_fingerprint(path);
    }
    let host = std::sync::Arc::new(args.host(false)?);
    Ok(gpukb_agent::fingerprint(host, &deadlines(args)))
}

/// The facts search uses: on this machine (or a copied root, or a fingerprint file) only
/// the cheap ones, neither NVML nor the CUDA driver API (`cuInit` costs a quarter of a second
/// per GPU); a capture replays everything it recorded.
pub fn fingerprint_cheap(args: &MachineArgs) -> anyhow::Result<gpukb_agent::Fingerprint> {
    if let Some(path) = &args.fingerprint {
        return read_fingerprint(path);
    }
    let host = std::sync::Arc::new(args.host(false)?);
    // A capture replays what was recorded, NVML and cuInit included, at no cost.
    let settings = if args.replay.is_some() {
        deadlines(args)
    } else {
        cheap_settings(args)
    };
    Ok(gpukb_agent::fingerprint(host, &settings))
}

/// What search's default detection reads: files only (sysfs, procfs, the
/// filesystem), neither NVML nor the CUDA driver API.
pub(crate) fn cheap_settings(args: &MachineArgs) -> gpukb_agent::Settings {
    let mut settings = deadlines(args);
    settings.cuda_init = false;
    settings.cuda_api = false;
    settings.nvml_api = false;
    settings
}

/// Reads a fingerprint file (a pipe is fine): schema 1 or 2, at most 64 MiB.
pub fn read_fingerprint(path: &std::path::Path) -> anyhow::Result<gpukb_agent::Fingerprint> {
    let bytes = read_user_bytes(path, 64 << 20)?
        .ok_or_else(|| anyhow::anyhow!("cannot read {}: no such file", path.display()))?;
    gpukb_facts::read::fingerprint_from_json(&bytes).with_context(|| {
        format!(
            "{} is not a readable gpukb fingerprint (write one with `gpukb fingerprint --json`)",
            path.display()
        )
    })
}

pub(crate) fn deadlines(args: &MachineArgs) -> gpukb_agent::Settings {
    let mut d = gpukb_agent::Settings::default();
    let t = Duration::from_secs_f64(args.timeout.clamp(0.1, 600.0));
    d.nvml = d.nvml.max(t);
    d.cuda = d.cuda.max(t);
    d.files = d.files.max(t * 2);
    d
}

/// Reads a file the user named (or one inside a capture they named), at most
/// `max` bytes; `None` when it does not exist. Pipes are read with the same cap.
#[allow(clippy::disallowed_methods)] // a file the user named, not machine state
pub fn read_user_bytes(path: &std::path::Path, max: u64) -> anyhow::Result<Option<Vec<u8>>> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    // Opened without blocking: a FIFO with no writer would otherwise block
    // `open` for ever; with O_NONBLOCK it opens, and a read sees EOF at once.
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => anyhow::bail!("cannot read {}: {e}", path.display()),
    };
    let meta = file
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?;
    anyhow::ensure!(!meta.is_dir(), "{} is a directory", path.display());
    let fifo = meta.file_type().is_fifo();
    let deadline = std::time::Instant::now() + USER_PIPE_WAIT;
    let mut bytes = Vec::new();
    let mut src = file.take(max + 1);
    let mut buf = [0u8; 64 * 1024];
    loop {
        match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                anyhow::ensure!(
                    std::time::Instant::now() < deadline,
                    "{} gave no data within {} s",
                    path.display(),
                    USER_PIPE_WAIT.as_secs()
                );
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }
    anyhow::ensure!(
        !(fifo && bytes.is_empty()),
        "{} is a named pipe with no writer (nothing to read)",
        path.display()
    );
    anyhow::ensure!(
        bytes.len() as u64 <= max,
        "{} is too large (more than {max} bytes)",
        path.display()
    );
    Ok(Some(bytes))
}

/// Fails in one line when a path the user named (`--replay`, `--fingerprint`,
/// `--root`) does not exist, before any work is done with it.
#[allow(clippy::disallowed_methods)] // paths the user named, not machine state
pub fn ensure_named_paths_exist(args: &MachineArgs) -> anyhow::Result<()> {
    for (flag, p) in [
        ("--replay", &args.replay),
        ("--fingerprint", &args.fingerprint),
        ("--root", &args.root),
    ] {
        if let Some(p) = p {
            std::fs::metadata(p).with_context(|| format!("{flag} {}", p.display()))?;
        }
    }
    Ok(())
}

/// How long a pipe the user named may take between writes.
const USER_PIPE_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Like [`read_user_bytes`], as UTF-8 text.
pub fn read_user_file(path: &std::path::Path, max: u64) -> anyhow::Result<Option<String>> {
    read_user_bytes(path, max)?
        .map(|b| {
            String::from_utf8(b)
                .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", path.display()))
        })
        .transpose()
}
