//! The `gpukb` binary: parses arguments, runs, and turns errors into a
//! one-line message and exit status 2.

use clap::FromArgMatches;
use std::io::Write;
use std::process::ExitCode;

/// Whether fd 1 was closed when the process started (`gpukb ... >&-`). Rust's
/// runtime reopens a closed stdout on /dev/null before `main`, so this is
/// checked earlier, from `.init_array`, where the dynamic loader runs it.
static STDOUT_CLOSED_AT_START: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

extern "C" {
    fn fcntl(fd: i32, cmd: i32, ...) -> i32;
}

extern "C" fn check_stdout_open() {
    const F_GETFD: i32 = 1;
    // SAFETY: F_GETFD only queries the descriptor's flags; -1 means it is not open.
    let r = unsafe { fcntl(1, F_GETFD) };
    STDOUT_CLOSED_AT_START.store(r == -1, std::sync::atomic::Ordering::Relaxed);
}

#[used]
#[link_section = ".init_array"]
static CHECK_STDOUT: extern "C" fn() = check_stdout_open;

/// Stdout that stops writing, silently, once the reader went away (EPIPE):
/// `gpukb kb list --json | head -1` then exits with the status the command
/// itself returns. Every other write error (EBADF, ENOSPC) is still an error.
struct StopOnBrokenPipe<W: Write> {
    inner: W,
    closed: bool,
}

impl<W: Write> Write for StopOnBrokenPipe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            Err(e) => Err(std::io::Error::new(
                e.kind(),
                format!("cannot write output: {e}"),
            )),
            r => r,
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.inner.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => r,
        }
    }
}

fn main() -> ExitCode {
    // `gpukb __gpukb-cuinit-child PATH`: the doctor's child that runs cuInit in the
    // libcuda the user's process would load (gpukb_agent::collect::cuda_process).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let Some(code) = gpukb_agent::collect::cuda_process::run_if_child(&args) {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    if STDOUT_CLOSED_AT_START.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("gpukb: error: standard output is closed (nothing could be written)");
        return ExitCode::from(2);
    }
    let long_version = std::env::args_os().any(|a| a == "--version");
    let matches = gpukb_cli::command_with(long_version).get_matches();
    let cli = match gpukb_cli::Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    gpukb_cli::style::set_choice(cli.color);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(StopOnBrokenPipe {
        inner: stdout.lock(),
        closed: false,
    });
    let code = match gpukb_cli::run(&cli, &mut out) {
        Ok(code) => code,
        Err(e) => {
            let _ = out.flush();
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("gpukb: error: {}", one_line(&e));
            return ExitCode::from(2);
        }
    };
    match out.flush() {
        Ok(()) => code,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => code,
        Err(e) => {
            eprintln!("gpukb: error: cannot write output: {e}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn one_line(e: &anyhow::Error) -> String {
    let s = format!("{e:#}");
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
