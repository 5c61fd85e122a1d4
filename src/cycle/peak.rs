//! The peak sampler: during a cycle's load, the target's heap (through the
//! inspector's `Runtime.getHeapUsage`, which reads without collecting) and
//! its rss (`/proc/PID/statm`) four times a second, keeping the highest
//! of each. A settled reading says what the target keeps; the peak says
//! whether it survives serving: a route that keeps nothing but peaks past
//! its container's limit dies all the same.
//!
//! The sampler is also the loop's brake: when the heap or rss passes half
//! of a limit in force, it pulls the cycle's brake, the load stops
//! starting requests, and the cycle is read with the units it completed.
//! A leak that would kill the target inside one cycle is then measured,
//! not waited for.

use std::time::Duration;

use tokio::sync::oneshot;

use super::workload::Brake;
use crate::inspector::Inspector;
use crate::model::{Peak, Sample};

/// 4 Hz: the floor for catching a peak that lasts a fraction of a
/// second under 10 connections, at one small CDP round trip and one
/// 60-byte file read each time (their cost: BENCHMARKS.md).
pub const PEAK_INTERVAL: Duration = Duration::from_millis(250);
/// One heap reading may take this long before the sample skips it (a
/// busy target answers the inspector between two JavaScript tasks).
const HEAP_READING_LIMIT: Duration = Duration::from_millis(200);

/// What the sampler reads, and where it brakes.
#[derive(Clone, Default)]
pub struct PeakWatch {
    pub inspector: Option<Inspector>,
    pub pid: Option<u32>,
    /// Pull `brake` when the heap passes this many bytes.
    pub brake_heap_at: Option<u64>,
    /// Pull `brake` when rss passes this many bytes.
    pub brake_rss_at: Option<u64>,
}

impl PeakWatch {
    /// Whether there is anything to read.
    pub fn reads(&self) -> bool {
        self.inspector.is_some() || self.pid.is_some()
    }

    /// Samples one cycle that starts at the settled reading `from`, braking
    /// only at the points it can cross (`headroom::crossable`).
    pub fn start_from(&self, from: Option<&Sample>, brake: Brake) -> PeakSampler {
        let mut watch = self.clone();
        if let Some(from) = from {
            let points = (watch.brake_heap_at, watch.brake_rss_at);
            (watch.brake_heap_at, watch.brake_rss_at) = super::headroom::crossable(points, from);
        }
        PeakSampler::start(watch, brake)
    }
}

/// A sampler running beside one cycle's load.
pub struct PeakSampler {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Peak>,
}

impl PeakSampler {
    pub fn start(watch: PeakWatch, brake: Brake) -> PeakSampler {
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(sample_until(watch, brake, stopped));
        PeakSampler { stop, task }
    }

    /// Stops sampling and returns the peak (none when nothing was read).
    pub async fn finish(self) -> Option<Peak> {
        let _ = self.stop.send(());
        let peak = self.task.await.ok()?;
        (peak.samples > 0).then_some(peak)
    }
}

async fn sample_until(watch: PeakWatch, brake: Brake, mut stopped: oneshot::Receiver<()>) -> Peak {
    let mut peak = Peak::default();
    let mut tick = tokio::time::interval(PEAK_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            _ = tick.tick() => {}
        }
        let reading = read_once(&watch).await;
        if reading.samples == 0 {
            continue;
        }
        peak = peak.max(reading);
        let past = |value: u64, at: Option<u64>| at.is_some_and(|at| value > at);
        if !peak.braked
            && (past(reading.heap_used, watch.brake_heap_at)
                || past(reading.rss, watch.brake_rss_at))
        {
            peak.braked = true;
            brake.pull();
        }
    }
    peak
}

/// One reading of the heap and rss; `samples` is 0 when neither answered.
async fn read_once(watch: &PeakWatch) -> Peak {
    let mut reading = Peak::default();
    if let Some(inspector) = &watch.inspector {
        let usage = inspector
            .call_within(
                "Runtime.getHeapUsage",
                serde_json::json!({}),
                HEAP_READING_LIMIT,
            )
            .await;
        if let Ok(usage) = usage {
            let bytes = |key: &str| usage[key].as_f64().unwrap_or(0.0) as u64;
            reading.heap_used = bytes("usedSize");
            reading.heap_total = bytes("totalSize");
            reading.samples = 1;
        }
    }
    if let Some(rss) = watch.pid.and_then(rss_of) {
        reading.rss = rss;
        reading.samples = 1;
    }
    reading
}

/// Resident bytes of a process from `/proc/PID/statm` (its second field,
/// in pages).
fn rss_of(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    crate::probe::parse_statm_resident(&text).map(|pages| pages * page_size())
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions; it returns -1 on error.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn samples_this_process_and_brakes_past_the_bound() {
        let watch = PeakWatch {
            inspector: None,
            pid: Some(std::process::id()),
            brake_heap_at: None,
            brake_rss_at: Some(1),
        };
        let brake = Brake::default();
        let sampler = PeakSampler::start(watch, brake.clone());
        tokio::time::sleep(PEAK_INTERVAL * 2).await;
        let peak = sampler.finish().await.expect("this process has an rss");
        assert!(peak.rss > 1 << 20 && peak.samples >= 1, "{peak:?}");
        assert!(peak.braked && brake.pulled());
    }

    #[tokio::test]
    async fn nothing_to_read_is_no_peak() {
        let sampler = PeakSampler::start(PeakWatch::default(), Brake::default());
        tokio::time::sleep(PEAK_INTERVAL).await;
        assert_eq!(sampler.finish().await, None);
    }
}
