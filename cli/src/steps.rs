//! `--timings`: the wall time of each step of one command, and the process's
//! resident memory after it, printed on stderr (never on stdout, which may be
//! JSON). Used by `gpukb search` and `gpukb agent --once`.

use std::time::Instant;

/// Step timer; prints nothing unless switched on.
pub struct Steps {
    on: bool,
    last: Instant,
    start: Instant,
}

/// Resident and peak resident memory in MB, from `/proc/self/status` (Linux);
/// `None` where it cannot be read.
#[allow(clippy::disallowed_methods)] // gpukb's own process, not machine state
fn rss_mb() -> Option<(f64, f64)> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = |key: &str| -> Option<f64> {
        let line = s.lines().find(|l| l.starts_with(key))?;
        line[key.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    };
    Some((kb("VmRSS:")? / 1000.0, kb("VmHWM:")? / 1000.0))
}

impl Steps {
    /// A timer starting now.
    pub fn new(on: bool) -> Steps {
        let now = Instant::now();
        Steps {
            on,
            last: now,
            start: now,
        }
    }

    /// Ends the step `what`.
    pub fn done(&mut self, what: &str) {
        let now = Instant::now();
        if self.on {
            let ms = (now - self.last).as_secs_f64() * 1000.0;
            match rss_mb() {
                Some((rss, peak)) => {
                    eprintln!("gpukb: {what:<26} {ms:7.2} ms   RSS {rss:6.1} MB (peak {peak:.1})")
                }
                None => eprintln!("gpukb: {what:<26} {ms:7.2} ms"),
            }
        }
        self.last = now;
    }

    /// Prints the time since the timer started.
    pub fn total(&self) {
        if self.on {
            eprintln!(
                "gpukb: {:<26} {:7.2} ms",
                "total (after start-up)",
                self.start.elapsed().as_secs_f64() * 1000.0
            );
        }
    }
}
