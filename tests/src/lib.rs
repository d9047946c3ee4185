//! End-to-end tests of gpukb over recorded machine fixtures live in
//! `tests/tests/`; this library only locates the fixtures.

use std::path::PathBuf;

/// `tests/fixtures/<name>` in this repository.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}
