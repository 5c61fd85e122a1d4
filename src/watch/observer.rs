//! The observer `watch` installs in the target through its inspector: a
//! `PerformanceObserver` of garbage collections that, after each major
//! (mark-compact) collection the target runs on its own, records
//! `process.memoryUsage()` with the young generation left out (what a
//! settled reading measures: live old-generation objects), the handles the
//! target holds, and its count of HTTP requests begun, into a bounded ring.
//! leakcheck drains the ring every few seconds; nothing runs in the target
//! between collections, so its cost is one small object per major
//! collection and a counter per request.
//!
//! `--force-gc-every` collects with `gc()` (obtained in a context of its
//! own, see `INSTALL`), not the inspector's all-available-garbage
//! collection, whose shrunk young generation costs the target after it.
//! A collection leakcheck forces (`--force-gc-every`) is recorded once, as
//! a forced reading with the pause leakcheck measured: the observer skips
//! the major collections it sees inside the forced window (V8 runs two
//! for one `HeapProfiler.collectGarbage`, flagged like natural ones).
//!
//! `stop` removes everything: the observer is disconnected, the
//! diagnostics channel unsubscribed, the ring emptied and the global
//! deleted, so a detached target runs as before.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::inspector::{Inspector, InspectorError};

/// Readings kept in the target between two drains: at one major
/// collection a second (a busy heap) and a drain every few seconds, a ring
/// of 4 096 never overflows; bounded so that a leakcheck that dies leaves
/// a few hundred KB behind at most (about 150 B a reading).
pub const RING: usize = 4096;

/// How often, and how far apart, the install is tried on a target that is
/// still starting: two seconds in all.
const STARTING_TRIES: u32 = 20;
const STARTING_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// The global the observer hangs from (a registered symbol: invisible to
/// `Object.keys(globalThis)` and to the app's own code).
const KEY: &str = "Symbol.for('leakcheck.watch')";

const INSTALL: &str = r#"(() => {
  const key = Symbol.for('leakcheck.watch');
  if (globalThis[key]) return { installed: false, counting: globalThis[key].counting };
  const load = (name) => process.getBuiltinModule ? process.getBuiltinModule(name) : require(name);
  const { PerformanceObserver, constants, performance } = load('node:perf_hooks');
  const v8 = load('node:v8');
  const dc = load('node:diagnostics_channel');
  const state = { ring: [], seq: 0, dropped: 0, served: 0,
                  forcedFrom: null, forcedTo: null, counting: false };
  const count = () => { state.served += 1; };
  // Deno and Bun publish no request channel: leakcheck's preload counts a
  // server it launched; one it attached to has no count (null, not 0).
  const preloaded = globalThis[Symbol.for('leakcheck.served')];
  const other = typeof Deno !== 'undefined' || typeof Bun !== 'undefined';
  const served = () => other
    ? (preloaded && preloaded.counting && !preloaded.uncountable ? preloaded.n : null)
    : (state.counting ? state.served : null);
  if (!other) {
    try { dc.subscribe('http.server.request.start', count); state.counting = true; } catch (e) {}
  }
  const handles = () => {
    const out = {};
    for (const name of (process.getActiveResourcesInfo ? process.getActiveResourcesInfo() : [])) {
      const series = 'active_resources.' + name;
      out[series] = (out[series] || 0) + 1;
    }
    return out;
  };
  state.read = (pause, forced) => {
    const m = process.memoryUsage();
    let young = 0;
    try {
      for (const s of v8.getHeapSpaceStatistics()) if (s.space_name === 'new_space') young = s.space_used_size;
    } catch (e) {}
    state.seq += 1;
    state.ring.push({ seq: state.seq, at_ms: Date.now(), heap_used: m.heapUsed - young,
      heap_total: m.heapTotal, external: m.external, array_buffers: m.arrayBuffers, rss: m.rss,
      pause_ms: pause, forced, served: served(), resources: handles() });
    if (state.ring.length > __RING__) { state.ring.shift(); state.dropped += 1; }
  };
  const inForcedWindow = (start) => state.forcedFrom !== null && start >= state.forcedFrom
    && (state.forcedTo === null || start <= state.forcedTo);
  if (!other) state.observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = entry.detail ? entry.detail.kind : entry.kind;
      if (kind !== constants.NODE_PERFORMANCE_GC_MAJOR || inForcedWindow(entry.startTime)) continue;
      state.read(entry.duration, false);
    }
  });
  if (!other) state.observer.observe({ entryTypes: ['gc'] });
  // A plain full collection for --force-gc-every, as `gc()` makes it:
  // the inspector's own (HeapProfiler.collectGarbage) collects "all
  // available garbage", shrinking the young generation, which then costs
  // the target more scavenges for seconds after. The flag matters only
  // while the context is made, and is put back at once.
  // Bun collects by Bun.gc(true); Deno has no such call: the inspector
  // collects for it (`collect` answers null).
  if (typeof Bun !== 'undefined') state.gc = () => Bun.gc(true);
  else if (!other) {
    try {
      v8.setFlagsFromString('--expose-gc');
      state.gc = load('node:vm').runInNewContext('gc');
    } finally {
      v8.setFlagsFromString('--no-expose-gc');
    }
  }
  state.collect = () => {
    if (!state.gc) return null;
    const t = performance.now(); state.gc(); return performance.now() - t;
  };
  state.forceFrom = () => { state.forcedFrom = performance.now(); state.forcedTo = null; };
  state.forced = (pause) => { state.forcedTo = performance.now(); state.read(pause, true); };
  state.drain = (after) => JSON.stringify({ readings: state.ring.filter((r) => r.seq > after),
    dropped: state.dropped });
  state.stop = () => {
    if (state.observer) state.observer.disconnect();
    if (state.counting) dc.unsubscribe('http.server.request.start', count);
    state.ring.length = 0;
    delete globalThis[key];
    return true;
  };
  Object.defineProperty(globalThis, key, { value: state, configurable: true });
  return { installed: true, counting: state.counting };
})()"#;

/// One reading the observer took after a major collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// Numbered from 1 in the order taken; gaps are readings the ring
    /// dropped.
    pub seq: u64,
    /// When it was taken, milliseconds since the Unix epoch (the target's
    /// clock, which is this machine's).
    pub at_ms: f64,
    /// `heapUsed` minus the young generation: the live old generation
    /// right after the collection.
    pub heap_used: u64,
    pub heap_total: u64,
    pub external: u64,
    pub array_buffers: u64,
    pub rss: u64,
    /// The collection's pause (`PerformanceEntry.duration`; for a forced
    /// one, leakcheck's round trip).
    pub pause_ms: f64,
    pub forced: bool,
    /// HTTP requests the target began serving since the observer was
    /// installed; `None` without diagnostics_channel.
    pub served: Option<u64>,
    /// `active_resources.<type>` counts.
    #[serde(default)]
    pub resources: BTreeMap<String, f64>,
}

/// What one drain returned.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Drained {
    pub readings: Vec<Reading>,
    /// Readings the ring dropped since the observer was installed.
    pub dropped: u64,
}

/// The observer in one target, through one inspector session.
#[derive(Clone)]
pub struct Observer {
    inspector: Inspector,
    /// The last reading drained.
    last_seq: u64,
}

impl Observer {
    /// Installs the observer (or finds the one a previous watch left).
    /// A command leakcheck just started announces its inspector before
    /// Node has finished loading its own modules: `node:perf_hooks` then
    /// throws ("Class extends value undefined"), seen once in a few dozen
    /// launches. The install is tried again while the target starts.
    pub async fn install(inspector: &Inspector) -> Result<Observer, InspectorError> {
        let script = INSTALL.replace("__RING__", &RING.to_string());
        let mut tries = 0;
        loop {
            match inspector.evaluate_in_console(&script).await {
                Ok(_) => break,
                Err(InspectorError::Evaluation { .. }) if tries < STARTING_TRIES => {
                    tries += 1;
                    tokio::time::sleep(STARTING_PAUSE).await;
                }
                Err(error) => return Err(error),
            }
        }
        Ok(Observer {
            inspector: inspector.clone(),
            last_seq: 0,
        })
    }

    /// The readings taken since the last drain.
    pub async fn drain(&mut self) -> Result<Drained, InspectorError> {
        let expression = format!(
            "{KEY} in globalThis ? globalThis[{KEY}].drain({}) : null",
            self.last_seq
        );
        let value = self.inspector.evaluate(&expression).await?;
        let Some(text) = value.as_str() else {
            return Err(InspectorError::Protocol {
                method: "Runtime.evaluate".into(),
                message: "the watch's observer is gone from the target (did it reload?)".into(),
            });
        };
        let drained: Drained =
            serde_json::from_str(text).map_err(|e| InspectorError::Protocol {
                method: "Runtime.evaluate".into(),
                message: format!("the observer's readings did not parse: {e}"),
            })?;
        if let Some(last) = drained.readings.last() {
            self.last_seq = last.seq;
        }
        Ok(drained)
    }

    /// Opens the window in which the observer ignores major collections
    /// (those leakcheck is about to force).
    pub async fn force_from(&self) -> Result<(), InspectorError> {
        let expression = format!("globalThis[{KEY}].forceFrom()");
        self.inspector.evaluate(&expression).await.map(drop)
    }

    /// One plain full collection in the target (`gc()`); its pause in ms.
    /// Where the target has no such call (Deno), the inspector collects,
    /// and the pause is the round trip.
    pub async fn collect(&self) -> Result<f64, InspectorError> {
        let expression = format!("globalThis[{KEY}].collect()");
        let value = self.inspector.evaluate(&expression).await?;
        if let Some(pause) = value.as_f64() {
            return Ok(pause);
        }
        let started = std::time::Instant::now();
        self.inspector.collect_garbage().await?;
        Ok(started.elapsed().as_secs_f64() * 1000.0)
    }

    /// Closes the window and records the forced collection's reading.
    pub async fn forced(&self, pause_ms: f64) -> Result<(), InspectorError> {
        let expression = format!("globalThis[{KEY}].forced({pause_ms})");
        self.inspector.evaluate(&expression).await.map(drop)
    }

    /// Removes the observer from the target.
    pub async fn remove(&self) -> Result<bool, InspectorError> {
        let expression = format!("{KEY} in globalThis ? globalThis[{KEY}].stop() : false");
        let value = self.inspector.evaluate(&expression).await?;
        Ok(value.as_bool().unwrap_or(false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drained_ring_parses_with_and_without_a_served_count() {
        let text = r#"{"readings":[{"seq":3,"at_ms":1.7e12,"heap_used":9000000,"heap_total":16000000,
            "external":1000,"array_buffers":10,"rss":50000000,"pause_ms":4.5,"forced":false,
            "served":120,"resources":{"active_resources.TCPSocketWrap":3}},
            {"seq":4,"at_ms":1.7e12,"heap_used":9100000,"heap_total":16000000,"external":1000,
            "array_buffers":10,"rss":50000000,"pause_ms":30,"forced":true,"served":null,
            "resources":{}}],"dropped":0}"#;
        let drained: Drained = serde_json::from_str(text).unwrap();
        assert_eq!(drained.readings.len(), 2);
        assert_eq!(drained.readings[0].served, Some(120));
        assert_eq!(drained.readings[1].served, None);
        assert!(drained.readings[1].forced);
        assert_eq!(
            drained.readings[0].resources["active_resources.TCPSocketWrap"],
            3.0
        );
    }

    #[test]
    fn the_ring_size_reaches_the_script() {
        let script = INSTALL.replace("__RING__", &RING.to_string());
        assert!(script.contains("> 4096"));
        assert!(!script.contains("__RING__"));
    }
}
