//! `--timings`: the wall time and the CPU time (user+sys, all threads) of each
//! step of one command, and the process's resident memory after it, printed on stderr (never on stdout, which may be
//! JSON). Used by `gpukb search` and `gpukb agent --once`.

use std::time::Instant;

/// Step timer; prints nothing unless switched on.
pub struct Steps {
    on: bool,
    last: Instant,
    start: Instant,
    last_cpu: Option<f64>,
}

/// CPU time (user+sys) of this process so far, in ms, from `getrusage`.
fn cpu_ms() -> Option<f64> {
    let mut r = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: RUSAGE_SELF and a pointer to a rusage the kernel fills.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, r.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: getrusage succeeded, so it wrote the struct.
    let r = unsafe { r.assume_init() };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    Some(ms(r.ru_utime) + ms(r.ru_stime))
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
        if on {
            let cpu = cpu_ms().map_or("CPU ?".to_string(), |c| format!("{c:7.2} ms CPU"));
            let rss = rss_mb().map_or(String::new(), |(r, p)| {
                format!("RSS {r:6.1} MB (peak {p:.1})")
            });
            eprintln!(
                "gpukb: {:<26} {:>10} {cpu}   {rss}",
                "exec to this command", ""
            );
        }
        Steps {
            on,
            last: now,
            start: now,
            last_cpu: if on { cpu_ms() } else { None },
        }
    }

    /// Ends the step `what`.
    pub fn done(&mut self, what: &str) {
        let now = Instant::now();
        if self.on {
            let ms = (now - self.last).as_secs_f64() * 1000.0;
            let cpu_now = cpu_ms();
            let cpu = match (cpu_now, self.last_cpu) {
                (Some(a), Some(b)) => format!("{:7.2} ms CPU", a - b),
                _ => format!("{:>14}", "CPU ?"),
            };
            self.last_cpu = cpu_now;
            match rss_mb() {
                Some((rss, peak)) => eprintln!(
                    "gpukb: {what:<26} {ms:7.2} ms {cpu}   RSS {rss:6.1} MB (peak {peak:.1})"
                ),
                None => eprintln!("gpukb: {what:<26} {ms:7.2} ms {cpu}"),
            }
        }
        self.last = now;
    }

    /// Prints the time since the timer started.
    pub fn total(&self) {
        if self.on {
            let cpu = cpu_ms().map_or("CPU ?".to_string(), |c| format!("{c:.2} ms CPU since exec"));
            eprintln!(
                "gpukb: {:<26} {:7.2} ms {cpu}",
                "total (after start-up)",
                self.start.elapsed().as_secs_f64() * 1000.0
            );
        }
    }
}
