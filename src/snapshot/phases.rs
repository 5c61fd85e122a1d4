//! Phase times of the snapshot engine on stderr, when `LEAKCHECK_PHASES`
//! is set: what BENCHMARKS.md's breakdowns of `inspect` and `diff` quote,
//! and the first thing to read before making the engine faster.

use std::sync::OnceLock;
use std::time::Instant;

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("LEAKCHECK_PHASES").is_some())
}

/// When the first phase started: each line also says when its phase began
/// and ended after it, which shows what ran beside what.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Prints `name` and its time when dropped (if enabled).
pub(crate) struct Phase {
    name: &'static str,
    started: Instant,
    cpu: f64,
}

/// CPU seconds the process has used, all threads, user and kernel.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0.0;
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

impl Phase {
    pub(crate) fn start(name: &'static str) -> Phase {
        if enabled() {
            epoch();
        }
        Phase {
            name,
            started: Instant::now(),
            cpu: if enabled() { cpu_seconds() } else { 0.0 },
        }
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        if enabled() {
            let status = crate::platform::procfs::own_status_text().unwrap_or_default();
            let field = |key: &str| {
                status
                    .lines()
                    .find(|l| l.starts_with(key))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|kb| kb.parse::<u64>().ok())
                    .map_or(0, |kb| kb / 1024)
            };
            eprintln!(
                "  phase {:<28} {:>7.3} s  cpu {:>6.3} s  rss {:>5} MiB  peak {:>5} MiB  at {:.3}-{:.3} s",
                self.name,
                self.started.elapsed().as_secs_f64(),
                cpu_seconds() - self.cpu,
                field("VmRSS:"),
                field("VmHWM:"),
                (self.started - epoch()).as_secs_f64(),
                epoch().elapsed().as_secs_f64(),
            );
        }
    }
}
