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
pub mod kb_cmd;
pub mod machine;
pub mod plan;
pub mod probe;
pub mod report;
pub mod search;
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
}

/// Runs gpukb with `args`, writing results to `out`.
pub fn run(cli: &Cli, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Search(a) => search::run(a, out),
        Command::Explain(a) => explain::run(a, out),
        Command::Doctor(a) => doctor::run(a, out),
        Command::Fingerprint(a) => fingerprint::run(a, out),
        Command::Capture(a) => capture::run(a, out),
        Command::Probe(a) => probe::run(a, out),
        Command::Plan(a) => plan::run(a, out),
        Command::Kb(a) => kb_cmd::run(a, out),
        Command::Agent(a) => agent::run(a, out),
        Command::History(a) => history::run(a, out),
        Command::Diff(a) => diff::run(a, out),
    }
}
