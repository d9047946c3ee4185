//! The `gpukb` binary: parses arguments, runs, and turns errors into a
//! one-line message and exit status 2.

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = gpukb_cli::Cli::parse();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
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
