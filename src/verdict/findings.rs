//! The findings beside a verdict: what else the readings say (warm-up,
//! garbage not yet collected, untouched pages, failed requests, counters
//! that could not be read, identical requests, a served count that does not
//! match). Each is worded with its figures and what it means for the verdict.

use super::classify::Context;
use super::metric::RETENTION_SIGMAS;
use crate::model::{Finding, FindingKind, Series, Trend, VerdictKind};
use crate::units::{MB, mb};

/// A collection pause longer than this delays every request behind it
/// past what a user notices on a fast route.
const GC_PAUSE_MS: f64 = 50.0;
/// Collections taking more than this share of a cycle's load time.
const GC_SHARE: f64 = 0.1;
/// Wall time over this many times the CPU time of the same pauses is a
/// thread waiting for a core: a collector's own pause runs on the CPU.
const BUSY_RATIO: f64 = 2.0;

impl Context<'_> {
    /// Every finding the readings support, in the order the reports list
    /// them; each check is a function of its own below.
    pub(super) fn findings(&self, kind: VerdictKind) -> Vec<Finding> {
        let mut out: Vec<Finding> = Vec::new();
        out.extend(self.no_forced_gc());
        out.extend(self.failed_counters());
        out.extend(self.collector_pauses());
        out.extend(self.handle_growth());
        out.extend(self.fixed_request(kind));
        out.extend(self.served_mismatch());
        out.extend(self.load_errors());
        out.extend(self.left_start_url());
        out.extend(self.warm_up(kind));
        out.extend(self.garbage_pending(kind));
        out.extend(self.converging(kind));
        out.extend(self.untouched_pages());
        out.extend(super::slowdown::finding(
            self.cycles,
            self.options.unit.name(),
            kind,
        ));
        out
    }

    /// Read from /proc: every reading includes garbage.
    fn no_forced_gc(&self) -> Option<Finding> {
        self.proc_only.then(|| {
            Finding::new(
                FindingKind::NoForcedGc,
                "read from /proc without forced collections: every reading includes garbage, so \
                 only steady growth across cycles means anything",
            )
        })
    }

    /// A `--counter` whose expression failed, once per counter.
    fn failed_counters(&self) -> Vec<Finding> {
        let readings = std::iter::once(self.baseline).chain(
            self.cycles
                .iter()
                .flat_map(|c| [&c.after_load, &c.after_gc]),
        );
        let mut failed: Vec<(&String, &String, usize)> = Vec::new();
        for sample in readings {
            for (name, error) in &sample.counter_errors {
                match failed.iter_mut().find(|(n, _, _)| *n == name) {
                    Some(entry) => entry.2 += 1,
                    None => failed.push((name, error, 1)),
                }
            }
        }
        failed
            .into_iter()
            .map(|(name, error, count)| {
                Finding::new(
                    FindingKind::CounterFailed,
                    format!(
                        "counter {name} could not be read at {count} reading(s): its expression \
                         {error}; fix the --counter expression so that it returns a number"
                    ),
                )
            })
            .collect()
    }

    /// Long collector pauses, or, when the clock alone says so, a busy machine.
    fn collector_pauses(&self) -> Option<Finding> {
        if let Some(message) = self.gc_pauses() {
            Some(Finding::new(FindingKind::GcPauses, message))
        } else {
            self.busy_machine()
                .map(|message| Finding::new(FindingKind::BusyMachine, message))
        }
    }

    fn handle_growth(&self) -> Vec<Finding> {
        super::handles::growing_handles(self.fits)
            .into_iter()
            .map(|fit| {
                Finding::new(
                    FindingKind::HandleGrowth,
                    super::handles::describe(fit, self.options.unit.name()),
                )
            })
            .collect()
    }

    /// A clean verdict over identical requests cannot see a keyed cache.
    fn fixed_request(&self, kind: VerdictKind) -> Option<Finding> {
        (self.options.fixed_request && kind == VerdictKind::NoRetention).then(|| {
            Finding::new(
                FindingKind::FixedRequest,
                "every request was identical: a cache, map or list keyed by the URL, a user or \
                 the body holds one entry under identical requests and cannot grow; vary the \
                 request, e.g. --route '/item?id={n}' (the book's \"Traffic and scenarios\" page, docs/src/traffic.md)",
            )
        })
    }

    /// The target's own count of requests begun disagrees with what was sent.
    fn served_mismatch(&self) -> Option<Finding> {
        for (index, cycle) in self.cycles.iter().enumerate() {
            let Some(served) = cycle.served_by_builtin_load() else {
                continue;
            };
            // Every answered request was begun; at most every sent one was,
            // but a request hung up on (`--abort`) may be begun by the
            // target only after the cycle's reading: counted in the next.
            let answered = cycle.responses;
            let sent = cycle.requests;
            let late_arrivals = index
                .checked_sub(1)
                .map_or(0, |previous| self.cycles[previous].load.aborted)
                + cycle.load.aborted;
            if served < answered || served > sent + late_arrivals {
                return Some(Finding::new(
                    FindingKind::ServedMismatch,
                    format!(
                        "cycle {}: the target counted {served} requests begun, leakcheck sent \
                         {sent} and {answered} were answered: a process leakcheck does not read \
                         serves this port too (a cluster worker without an inspector, another \
                         server), or something else sends it traffic",
                        cycle.cycle
                    ),
                ));
            }
        }
        None
    }

    fn load_errors(&self) -> Option<Finding> {
        let errors: u64 = self.cycles.iter().map(|c| c.errors).sum();
        let non_2xx: u64 = self.cycles.iter().map(|c| c.non_2xx).sum();
        if errors + non_2xx == 0 {
            return None;
        }
        let message = match self.options.unit {
            crate::model::Unit::Iteration if non_2xx == 0 => format!(
                "{errors} iterations failed: a failed iteration may do less work than a \
                 complete one, so the figures understate a leak"
            ),
            _ => format!(
                "{errors} errors and {non_2xx} non-2xx responses during load: failed requests \
                 may do less work than good ones, so the figures understate a leak"
            ),
        };
        Some(Finding::new(FindingKind::LoadErrors, message))
    }

    /// A page's iterations that ended away from the start URL.
    fn left_start_url(&self) -> Option<Finding> {
        let away = self
            .cycles
            .iter()
            .find_map(|c| c.load.ended_away_at.as_deref())?;
        let ended: u64 = self.cycles.iter().map(|c| c.load.ended_away).sum();
        let returned: u64 = self.cycles.iter().map(|c| c.load.returned_to_start).sum();
        Some(Finding::new(
            FindingKind::LeftStartUrl,
            format!(
                "{ended} iterations ended at {away}, not at the start URL: the next began \
                 there, and a navigation replaces the document, so what the start page kept \
                 was not read; end the actions where they began (`back`, or `goto` the start \
                 URL){}",
                if returned > 0 {
                    format!("; {returned} failed ones were taken back to the start URL")
                } else {
                    String::new()
                }
            ),
        ))
    }

    /// The first cycle's growth, set aside by the fit.
    fn warm_up(&self, kind: VerdictKind) -> Option<Finding> {
        let heap = self.fit(&Series::HEAP_USED)?;
        let first = heap.increments.first().copied().unwrap_or(0.0);
        (heap.fitted_from_cycle == 1
            && first > RETENTION_SIGMAS * heap.noise_bytes
            && kind != VerdictKind::Retention)
            .then(|| {
                Finding::new(
                    FindingKind::WarmUp,
                    format!(
                        "the first cycle grew heapUsed by {} once (JIT code, lazy \
                         initialisation); not counted",
                        mb(first)
                    ),
                )
            })
    }

    /// heapUsed high after load and low after the forced collection.
    fn garbage_pending(&self, kind: VerdictKind) -> Option<Finding> {
        self.fit(&Series::HEAP_USED)?;
        let pending = self
            .cycles
            .iter()
            .map(|c| c.after_load.heap_used as f64 - c.after_gc.heap_used as f64)
            .fold(0.0, f64::max);
        (pending > MB && kind != VerdictKind::Retention).then(|| {
            Finding::new(
                FindingKind::GarbagePending,
                format!(
                    "heapUsed was up to {} higher after load than after the forced collection: \
                     garbage no collection had reached yet, not retention",
                    mb(pending)
                ),
            )
        })
    }

    fn converging(&self, kind: VerdictKind) -> Option<Finding> {
        let converging = self
            .fits
            .iter()
            .find(|f| f.trend == Trend::Converging && kind != VerdictKind::WorkingSet)?;
        Some(Finding::new(
            FindingKind::Converging,
            format!(
                "{} grew and levelled off: a working set, not a leak",
                converging.metric
            ),
        ))
    }

    /// arrayBuffers grew while rss did not: pages not written yet.
    fn untouched_pages(&self) -> Option<Finding> {
        let grown = |m: &Series| -> f64 {
            let first = self.baseline.value(m).unwrap_or(0.0);
            let last = self
                .cycles
                .last()
                .and_then(|c| c.after_gc.value(m))
                .unwrap_or(first);
            last - first
        };
        let buffers = grown(&Series::ARRAY_BUFFERS);
        let rss = grown(&Series::RSS);
        (buffers > 4.0 * MB && rss < buffers / 2.0).then(|| {
            Finding::new(
                FindingKind::UntouchedPages,
                format!(
                    "arrayBuffers grew {} but rss only {}: buffers whose pages were never \
                     written are not resident yet; rss will rise when they are",
                    mb(buffers),
                    mb(rss)
                ),
            )
        })
    }

    /// The cycle whose collections stalled requests most, worded, when a
    /// pause exceeded `GC_PAUSE_MS` or collections took over `GC_SHARE`
    /// of the cycle's load.
    fn gc_pauses(&self) -> Option<String> {
        // CPU time when V8 gave it: a descheduled thread is not a pause.
        let stalled = |c: &&crate::model::CycleResult| {
            c.gc.as_ref().is_some_and(|gc| {
                let (total, max) = (
                    gc.cpu_total_ms.unwrap_or(gc.total_ms),
                    gc.cpu_max_ms.unwrap_or(gc.max_ms),
                );
                max > GC_PAUSE_MS || total > GC_SHARE * c.duration_s * 1000.0
            })
        };
        let worst = self.cycles.iter().filter(stalled).max_by(|a, b| {
            let max = |c: &crate::model::CycleResult| c.gc.as_ref().map_or(0.0, |g| g.max_ms);
            max(a).total_cmp(&max(b))
        })?;
        let gc = worst.gc.as_ref()?;
        let p99 = worst.load.latency_ms.as_ref().map_or(String::new(), |l| {
            format!(" (p99 latency {:.1} ms in that cycle)", l.p99)
        });
        Some(format!(
            "cycle {}: {} GC pauses stopped the target {:.0} ms in all ({:.0} % of its {:.1} s \
             load), the longest {:.1} ms: requests queued behind them{p99}; a smaller live heap \
             or less garbage per request shortens them",
            worst.cycle,
            gc.count,
            gc.total_ms,
            100.0 * gc.total_ms / (worst.duration_s * 1000.0).max(1.0),
            worst.duration_s,
            gc.max_ms
        ))
    }

    /// A cycle whose pauses look long by the clock but not by the CPU:
    /// the wall time crossed the gc-pauses bar, the thread's CPU time did
    /// not, and the wall time is over `BUSY_RATIO` times the CPU time.
    fn busy_machine(&self) -> Option<String> {
        let worst = self.cycles.iter().find(|c| {
            c.gc.as_ref().is_some_and(|gc| {
                let by_clock =
                    gc.max_ms > GC_PAUSE_MS || gc.total_ms > GC_SHARE * c.duration_s * 1000.0;
                gc.cpu_total_ms
                    .is_some_and(|cpu| by_clock && gc.total_ms > BUSY_RATIO * cpu.max(0.001))
            })
        })?;
        let gc = worst.gc.as_ref()?;
        Some(format!(
            "cycle {}: the {} GC pauses took {:.0} ms by the clock but {:.0} ms of CPU: the \
             target's thread waited for a core, so the machine was busy (other processes, CPU \
             limits), not the collector; compare latencies on a quiet machine",
            worst.cycle,
            gc.count,
            gc.total_ms,
            gc.cpu_total_ms.unwrap_or(0.0)
        ))
    }
}
