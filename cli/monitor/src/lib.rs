//! `gpukb agent`'s engine: gpukb running unattended.
//!
//! It owns the monitoring loop ([`daemon`]), the snapshot of the stack
//! ([`snapshot`]: a fingerprint from `gpukb-agent` judged by
//! `gpukb_doctor`), the comparison of two snapshots in stack terms
//! ([`stack`], [`diff`]), the history store in SQLite ([`store`]), the
//! kernel-log reader for Xid events ([`kernel_log`]), telemetry
//! ([`telemetry`], [`jetson`]), the optional canary ([`canary`]), the Xid
//! policy that turns kernel-log events into a hardware verdict
//! ([`xid_policy`]), the exporters ([`metrics`], [`http`]), and the one-shot
//! pass `--once` runs ([`once`]) with its Node Problem Detector rules
//! ([`npd`]). The data
//! these parts hand each other (telemetry samples, the canary's GPU facts)
//! lives in [`model`], which depends on none of them.
//!
//! Why a crate of its own, here: the dependencies point one way.
//! `gpukb-facts` ← `gpukb-agent` (the observer) ← `gpukb-monitor` → `gpukb-kb`
//! (the judge) and `gpukb` (the CLI) → `gpukb-monitor`. The agent crate
//! stays the observer and never learns about SQLite, Prometheus or the
//! diagnosis; the KB never learns about history; the CLI only parses flags,
//! prints and picks exit codes. Nothing here judges a machine: every verdict
//! and every "what it means" comes from the `Diagnosis`.
// Only the `gpukb` binary prints (cli); libraries return what they found.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod canary;
pub mod daemon;
pub mod diff;
pub mod duration;
pub mod error;
pub mod http;
pub mod jetson;
pub mod kernel_log;
pub mod metrics;
pub mod model;
pub mod npd;
pub mod once;
pub mod paths;
pub mod snapshot;
pub mod stack;
pub mod store;
pub mod telemetry;
pub mod time;
pub mod xid_policy;

pub use error::MonitorError;
