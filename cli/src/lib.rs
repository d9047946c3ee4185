//! The `gpukb` command line: the only crate that prints or picks exit codes.
//! Each subcommand lives in its own module with its clap arguments and a
//! `run` function writing to the given output.

pub mod agent;
pub mod capture;
pub mod diff;
pub mod doctor;
pub mod explain;
pub mod fingerprint;
pub mod history;
pub mod install_files;
pub mod issue_report;
pub mod kb_cmd;
pub mod machine;
pub mod plan;
pub mod probe;
pub mod report;
pub mod schemas;
pub mod search;
pub mod steps;
pub mod style;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

/// gpukb: an offline doctor for NVIDIA GPU software stacks.
#[derive(Debug, Parser)]
#[command(name = "gpukb", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// When to colour the output: auto (a terminal, NO_COLOR unset, TERM not dumb), always, never.
    #[arg(long, global = true, value_enum, default_value_t = style::ColorChoice::Auto)]
    pub color: style::ColorChoice,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Paste an error (as arguments or on stdin): the likely diagnoses, how to confirm them, and the fixes, offline.
    Search(search::SearchArgs),
    /// Explain error codes: 209, CUDA_ERROR_SYSTEM_NOT_READY, cudaErrorNoKernelImageForDevice, xid 79, nccl 2 ...
    Explain(explain::ExplainArgs),
    /// Fingerprint the machine and check every rule the knowledge base knows: which link of the chain is broken, and why.
    Doctor(doctor::DoctorArgs),
    /// Describe this machine's NVIDIA stack (driver, NVML, CUDA, libraries, PyTorch), each fact with its source.
    Fingerprint(fingerprint::FingerprintArgs),
    /// A Markdown report for a GitHub issue: summary, the doctor's verdict, the fingerprint; private values redacted.
    Report(issue_report::ReportArgs),
    /// Record what a fingerprint observes into a directory, to replay it elsewhere with --replay.
    Capture(capture::CaptureArgs),
    /// Run small CUDA kernels on the GPU: which code images load, and bandwidth/FLOP/s against what the model should reach.
    Probe(probe::ProbeArgs),
    /// Which PyTorch build to install on this machine (or captured or described ones), and why every other would fail.
    Plan(plan::PlanArgs),
    /// Browse, check and measure the knowledge base.
    Kb(kb_cmd::KbArgs),
    /// Run unattended: keep a history of the stack, notice changes and Xid events, export to Prometheus (--once for a timer).
    Agent(Box<agent::AgentArgs>),
    /// The snapshots and stack events `gpukb agent` stored.
    History(history::HistoryArgs),
    /// What changed between two captures, fingerprint files or snapshots (@ID), in stack terms.
    Diff(diff::DiffArgs),
    /// Print the JSON Schema of a JSON output (fingerprint, capture, doctor, search, probe, kb-list, kb-show).
    Schema(schemas::SchemaArgs),
    /// Write the shell completion script for bash, zsh, fish, elvish or powershell.
    Completions(install_files::CompletionsArgs),
    /// Write the gpukb(1) man page (roff) on stdout.
    Man(install_files::ManArgs),
}

/// The argument parser, with the long `--version` (the knowledge base's
/// entry count and as-of date) when `long_version` is true: that opens the
/// KB, so `main` asks for it only when `--version` is on the command line.
pub fn command_with(long_version: bool) -> clap::Command {
    use clap::CommandFactory;
    let cmd = Cli::command();
    if long_version {
        // Built once per process, when --version is asked for.
        let line: &'static str = Box::leak(version_line().into_boxed_str());
        cmd.long_version(line)
    } else {
        cmd
    }
}

/// The argument parser (as clap_complete and clap_mangen see it).
pub fn command() -> clap::Command {
    command_with(false)
}

/// `0.1.0 (knowledge base: 186 entries, as of 2026-12-01)`.
pub fn version_line() -> String {
    let entries = gpukb_kb::Kb::open()
        .and_then(|kb| kb.len())
        .map_or_else(|e| format!("unreadable: {e}"), |n| n.to_string());
    format!(
        "{} (knowledge base: {entries} entries, as of {})",
        env!("CARGO_PKG_VERSION"),
        gpukb_kb::as_of()
    )
}

/// Runs gpukb with `args`, writing results to `out`.
pub fn run(cli: &Cli, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Search(a) => search::run(a, out),
        Command::Explain(a) => explain::run(a, out),
        Command::Doctor(a) => doctor::run(a, out),
        Command::Fingerprint(a) => fingerprint::run(a, out),
        Command::Report(a) => issue_report::run(a, out),
        Command::Capture(a) => capture::run(a, out),
        Command::Probe(a) => probe::run(a, out),
        Command::Plan(a) => plan::run(a, out),
        Command::Kb(a) => kb_cmd::run(a, out),
        Command::Agent(a) => agent::run(a, out),
        Command::History(a) => history::run(a, out),
        Command::Diff(a) => diff::run(a, out),
        Command::Schema(a) => schemas::run(a, out),
        Command::Completions(a) => install_files::completions(a, out),
        Command::Man(a) => install_files::man(a, out),
    }
}
