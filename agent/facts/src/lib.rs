//! The gpukb fact model, at the bottom of the crate graph: what a machine is
//! ([`fingerprint::Fingerprint`], every fact an [`fingerprint::Observed`] with
//! its [`fingerprint::Source`]), the typed vocabulary facts are written in
//! ([`version`], [`target`]), and the one CUDA compatibility engine
//! ([`compat`]) that the probe, the doctor and the planner ([`plan`], over
//! the sourced tables in [`builds`] and [`gpus`]) all use, with the machines
//! it plans for read from a fingerprint ([`machine`]) or from a description
//! ([`described`]).
//!
//! Values serialise as the strings users read (`"9.0"`, `"13.0"`,
//! `"580.159.04"`, `"sm_90a"`), so the JSON stays readable.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// Only the `gpukb` binary prints (cli); libraries return what they found.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod builds;
pub mod compat;
pub mod described;
pub mod driver_choice;
pub mod fingerprint;
pub mod gpus;
pub mod machine;
pub mod measured;
pub mod plan;
pub mod read;
pub mod reported;
mod schema_doc;
pub mod select;
pub mod target;
pub mod version;

pub use fingerprint::{Fingerprint, Observed, Source};
pub use version::{ComputeCapability, CudaVersion, DriverVersion};

/// Parses the embedded tables that judging a machine reads: the torch and Jetson builds, the
/// containers, the GPU and PCI id tables and the driver branches' minimum releases. Each is
/// parsed once per process, on first use; a caller that will judge a machine's facts can call
/// this on another thread while it waits for them, so the judging does not wait for the parse.
pub fn load_tables() {
    let _ = builds::torch_wheels();
    let _ = builds::jetson_wheels();
    let _ = builds::containers();
    let _ = gpus::gpu_table();
    gpus::load_pci_rows();
    driver_choice::load_min_releases();
}
