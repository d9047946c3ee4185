//! End-to-end tests of gpukb over recorded machine fixtures live in
//! `tests/tests/`; this library locates the fixtures, holds the seeded
//! generator the fuzz and corruption runs share, and runs the real programs
//! the differential tests compare with.

use std::path::PathBuf;
use std::process::Command;

/// Runs `cmd` (a compiler, `localedef`, a built program) and returns its stdout; a command
/// that cannot start or fails stops the test with its stderr.
#[allow(clippy::disallowed_methods)] // the differential tests run real programs
pub fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `tests/fixtures/<name>` in this repository.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// xorshift64*: a tiny, stable PRNG (no dependency, the same sequence on every
/// machine), so a printed seed replays a fuzz or corruption run exactly.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}
