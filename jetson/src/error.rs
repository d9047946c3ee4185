//! Typed errors of the Jetson parsers and of [`crate::observe`].
//!
//! Parsers never panic: anything they cannot understand becomes one of these
//! variants (or, for best-effort parsers, an empty result).

use serde::{Deserialize, Serialize};

/// Everything that can go wrong while parsing Jetson files.
#[derive(
    Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum JetsonError {
    /// The input was empty (or only whitespace / NUL bytes).
    #[error("{what}: empty input")]
    Empty {
        /// Which file or parser.
        what: String,
    },
    /// `/etc/nv_tegra_release` has no `# R<major> (release), REVISION: ...` line.
    #[error("not an nv_tegra_release file: first line is {first_line:?}")]
    NotTegraRelease {
        /// The first non-empty line (truncated to 120 characters).
        first_line: String,
    },
    /// The `REVISION:` field is missing or not `<minor>[.<patch>]`.
    #[error("nv_tegra_release: bad or missing REVISION in {line:?}")]
    BadRevision {
        /// The offending line (truncated to 120 characters).
        line: String,
    },
    /// A string that should be an L4T version (`35.4.1`, `R36.4`) is not one.
    #[error("not an L4T version: {text:?}")]
    BadVersion {
        /// The offending text (truncated to 120 characters).
        text: String,
    },
    /// A CUDA `version.json` that is not JSON or has no version in it.
    #[error("CUDA version.json: {reason}")]
    BadCudaVersionFile {
        /// What was wrong.
        reason: String,
    },
    /// A file the caller could not read (permissions, I/O error).
    #[error("{path}: unreadable: {message}")]
    Unreadable {
        /// Absolute path as asked for.
        path: String,
        /// The reader's message.
        message: String,
    },
}

/// Shorten `s` to at most `max` characters, for error messages.
pub(crate) fn clip(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}
