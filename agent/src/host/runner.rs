//! The one command runner: every command gpukb runs has a timeout and its
//! stdout, stderr and exit status captured.
#![allow(clippy::disallowed_methods)] // part of the host seam

use super::{EnvRegistry, HostError};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MAX_OUTPUT: u64 = 8 << 20;

/// What a finished command printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommandOutput {
    /// The program as found on `PATH`.
    pub program: String,
    /// Exit code; `None` when killed by a signal.
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl CommandOutput {
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }
}

fn find_program(name: &str, env: &EnvRegistry) -> Option<String> {
    if name.contains('/') {
        return Path::new(name).is_file().then(|| name.to_string());
    }
    env.path_dirs()
        .into_iter()
        .map(|d| format!("{}/{}", d.trim_end_matches('/'), name))
        .find(|p| Path::new(p).is_file())
}

pub(super) fn run(
    argv: &[&str],
    env: &EnvRegistry,
    timeout: Duration,
) -> Result<Option<CommandOutput>, HostError> {
    let Some((name, args)) = argv.split_first() else {
        return Ok(None);
    };
    let Some(program) = find_program(name, env) else {
        return Ok(None);
    };
    let shown = argv.join(" ");
    let mut child = Command::new(&program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("LC_ALL", "C")
        .spawn()
        .map_err(|e| HostError::Spawn {
            command: shown.clone(),
            message: e.to_string(),
        })?;
    let out = child.stdout.take().map(drain);
    let err = child.stderr.take().map(drain);
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(HostError::Timeout {
                    what: format!("`{shown}`"),
                    seconds: timeout.as_secs_f64(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => {
                return Err(HostError::Spawn {
                    command: shown,
                    message: e.to_string(),
                })
            }
        }
    };
    let collect = |h: Option<std::thread::JoinHandle<Vec<u8>>>| {
        h.and_then(|h| h.join().ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    Ok(Some(CommandOutput {
        program,
        status: status.code(),
        stdout: collect(out),
        stderr: collect(err),
    }))
}

fn drain<R: Read + Send + 'static>(r: R) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.take(MAX_OUTPUT).read_to_end(&mut buf);
        buf
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env() -> EnvRegistry {
        EnvRegistry::from_map(BTreeMap::from([("PATH".into(), "/usr/bin:/bin".into())]))
    }

    #[test]
    fn captures_output_and_status() {
        let o = run(
            &["sh", "-c", "echo out; echo err >&2; exit 3"],
            &env(),
            Duration::from_secs(5),
        )
        .unwrap()
        .unwrap();
        assert_eq!(o.stdout, "out\n");
        assert_eq!(o.stderr, "err\n");
        assert_eq!(o.status, Some(3));
    }

    #[test]
    fn a_missing_program_is_absent() {
        assert_eq!(
            run(&["no-such-gpukb-tool"], &env(), Duration::from_secs(1)).unwrap(),
            None
        );
    }

    #[test]
    fn a_hung_command_times_out() {
        let t = Instant::now();
        let e = run(&["sleep", "30"], &env(), Duration::from_millis(200)).unwrap_err();
        assert!(matches!(e, HostError::Timeout { .. }), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
