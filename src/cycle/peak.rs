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
//!
//! Four readings a second are not always enough for that: a document of
//! 600 KB kept per request, served 700 times a second, fills 400 MB
//! between two readings, and under Node 24's `--heap-limit 512MB` (a
//! 704 MB limit, of which 512 MB old space) the target died between the
//! reading below half and the next, 3 runs in 5. So the brake also looks
//! ahead (`Ahead`): it is pulled when the heap, at the pace it grew since
//! the last reading, would pass the point before the reading after next.
//! And a heap the inspector could not read in time (a target in a long
//! collection answers late) is estimated from rss, which /proc always
//! gives.

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
    let mut ahead = Ahead::default();
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
        let heap = ahead.heap_soon(&reading, tokio::time::Instant::now());
        let past = |value: u64, at: Option<u64>| at.is_some_and(|at| value > at);
        if !peak.braked
            && (past(heap, watch.brake_heap_at) || past(reading.rss, watch.brake_rss_at))
        {
            peak.braked = true;
            brake.pull();
        }
    }
    peak
}

/// How far ahead the brake looks: the reading after next, should the
/// next one be late (a read may take `HEAP_READING_LIMIT`).
const LOOK_AHEAD: Duration = Duration::from_millis(
    2 * PEAK_INTERVAL.as_millis() as u64 + HEAP_READING_LIMIT.as_millis() as u64,
);

/// The heap as the brake judges it: the one read, or estimated from rss;
/// then where it will be by `LOOK_AHEAD` at the pace it grew since the
/// last reading. A growing heap commits pages, so rss grows at least as
/// it does; an estimate that counts native growth too only brakes
/// earlier, and an early brake only makes a cycle shorter.
#[derive(Default)]
struct Ahead {
    /// The first reading of both the heap and rss: the estimate's anchor.
    anchor: Option<(u64, u64)>,
    /// The last heap judged, and when.
    last: Option<(u64, tokio::time::Instant)>,
}

impl Ahead {
    fn heap_soon(&mut self, reading: &Peak, now: tokio::time::Instant) -> u64 {
        let read = reading.heap_total > 0;
        if read && reading.rss > 0 && self.anchor.is_none() {
            self.anchor = Some((reading.heap_used, reading.rss));
        }
        let heap = match (read, self.anchor) {
            (true, _) => reading.heap_used,
            (false, Some((heap, rss))) => heap + reading.rss.saturating_sub(rss),
            (false, None) => return 0,
        };
        let soon = match self.last {
            Some((was, then)) if heap > was && now > then => {
                let pace = (heap - was) as f64 / (now - then).as_secs_f64();
                heap + (pace * LOOK_AHEAD.as_secs_f64()) as u64
            }
            _ => heap,
        };
        self.last = Some((heap, now));
        soon
    }
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
    if let Some(rss) = watch.pid.and_then(crate::platform::procfs::resident_bytes) {
        reading.rss = rss;
        reading.samples = 1;
    }
    reading
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

    fn heap(used: u64, rss: u64) -> Peak {
        Peak {
            heap_used: used,
            heap_total: used + 1,
            rss,
            samples: 1,
            braked: false,
        }
    }

    #[test]
    fn the_brake_looks_ahead_at_the_pace_the_heap_grows() {
        const MB: u64 = 1 << 20;
        let mut ahead = Ahead::default();
        let start = tokio::time::Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        assert_eq!(ahead.heap_soon(&heap(100 * MB, 150 * MB), at(0)), 100 * MB);
        // 100 MB in 250 ms: by the look-ahead's 700 ms, 280 MB more.
        let soon = ahead.heap_soon(&heap(200 * MB, 250 * MB), at(250));
        assert_eq!(soon / MB, 480);
        // A heap that fell (a collection) is judged as it is.
        assert_eq!(ahead.heap_soon(&heap(60 * MB, 250 * MB), at(500)), 60 * MB);
        // Not read in time: rss's growth since the first reading, on the
        // first heap read (100 MB + 300 MB).
        let unread = Peak {
            heap_total: 0,
            heap_used: 0,
            ..heap(0, 450 * MB)
        };
        assert!(ahead.heap_soon(&unread, at(750)) >= 400 * MB);
    }

    #[tokio::test]
    async fn nothing_to_read_is_no_peak() {
        let sampler = PeakSampler::start(PeakWatch::default(), Brake::default());
        tokio::time::sleep(PEAK_INTERVAL).await;
        assert_eq!(sampler.finish().await, None);
    }
}
