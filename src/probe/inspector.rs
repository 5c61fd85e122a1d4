//! The probe that needs nothing from the app: the Node inspector forces
//! collections (`HeapProfiler.collectGarbage`, no `--expose-gc` needed) and
//! evaluates `process.memoryUsage()` in the target.

use async_trait::async_trait;
use serde_json::Value;

use super::parts::{self, Parts};
use super::served::SERVED_COUNTER;
use super::{Probe, ProbeError};
use crate::inspector::Inspector;
use crate::model::{ProbeKind, Sample};

/// A counter: a JavaScript expression read at every sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Counter {
    pub name: String,
    pub expression: String,
}

pub struct InspectorProbe {
    pub inspector: Inspector,
    counters: Vec<Counter>,
    sample_expression: String,
    /// Worker threads and child processes, read beside the main isolate.
    parts: Option<Parts>,
    runtime: crate::runtime::Runtime,
}

impl InspectorProbe {
    pub fn new(inspector: Inspector, counters: Vec<Counter>) -> InspectorProbe {
        let sample_expression = build_expression(&counters);
        InspectorProbe {
            inspector,
            counters,
            sample_expression,
            parts: None,
            runtime: crate::runtime::Runtime::Node,
        }
    }

    /// Reads a Deno or Bun target: its served count is the preload's,
    /// since neither publishes Node's channel.
    pub fn on(mut self, runtime: crate::runtime::Runtime) -> InspectorProbe {
        self.runtime = runtime;
        if runtime != crate::runtime::Runtime::Node {
            self.sample_expression = self
                .sample_expression
                .replace(SERVED_COUNTER, crate::runtime::PRELOADED_SERVED);
        }
        self
    }

    /// Reads the target's worker threads and child processes too.
    pub fn with_parts(mut self, parts: Parts) -> InspectorProbe {
        self.parts = Some(parts);
        self
    }

    fn known_parts(&self) -> Vec<parts::Part> {
        self.parts.as_ref().map(Parts::all).unwrap_or_default()
    }

    /// `process.version` of the target, e.g. `v20.20.2`.
    pub async fn node_version(&self) -> Result<String, ProbeError> {
        let value = self.inspector.evaluate("process.version").await?;
        Ok(value.as_str().unwrap_or("unknown").to_string())
    }
}

/// Counts the target's handles by type and the listeners on `process` and
/// on its servers, as `{ "active_resources.Timeout": 3, … }`. Servers are
/// found among the active handles (`process._getActiveHandles`, which Node
/// 20 and 22 still have); each part is guarded so one failing does not
/// lose the others.
pub const RESOURCES: &str = "(() => { const r = {}; \
    const add = (k, n) => { r[k] = (r[k] || 0) + n; }; \
    try { for (const t of process.getActiveResourcesInfo()) add('active_resources.' + t, 1); } catch (e) {} \
    try { for (const e of process.eventNames()) if (typeof e === 'string') \
      add('listeners.process.' + e, process.listenerCount(e)); } catch (e) {} \
    try { for (const h of (process._getActiveHandles ? process._getActiveHandles() : [])) \
      if (h && typeof h.listen === 'function' && typeof h.eventNames === 'function') \
        for (const e of h.eventNames()) if (typeof e === 'string') \
          add('listeners.server.' + e, h.listenerCount(e)); } catch (e) {} \
    return r; })()";

/// One expression for the whole sample, so a reading is one round trip.
/// The first reading also starts counting the HTTP requests the target
/// begins serving (`http.server.request.start` of `diagnostics_channel`,
/// Node 20 and 22), in one small object under a registered symbol: a
/// subscriber that keeps nothing per request.
/// Each counter is evaluated on its own so one failing counter does not
/// lose the memory figures. A counter that throws, or returns anything but
/// a finite number (`undefined` from a typo, a Map instead of its size),
/// comes back as `{ error }` with what it did, so the report can say why
/// the series is empty instead of showing a silent null.
fn build_expression(counters: &[Counter]) -> String {
    let mut body =
        format!("const m = process.memoryUsage(); const c = []; const served = {SERVED_COUNTER}; ");
    body.push_str(
        "const show = (r) => { try { return typeof r === 'object' && r !== null \
           ? (r.constructor ? r.constructor.name : 'object') : String(r); } \
           catch (e) { return typeof r; } };",
    );
    for counter in counters {
        body.push_str(&format!(
            "try {{ const r = ({}); \
               if ((typeof r === 'number' || typeof r === 'bigint') && Number.isFinite(Number(r))) c.push(Number(r)); \
               else c.push({{ error: 'returned ' + typeof r + ' ' + show(r).slice(0, 80) + ', not a finite number' }}); \
             }} catch (e) {{ c.push({{ error: 'threw ' + String(e && e.stack ? e.stack.split('\\n')[0] : e).slice(0, 200) }}); }}",
            counter.expression
        ));
    }
    body.push_str(
        "return [m.rss, m.heapTotal, m.heapUsed, m.external, m.arrayBuffers, c, served, ",
    );
    body.push_str(RESOURCES);
    body.push_str(", process.pid];");
    format!("(() => {{ {body} }})()")
}

#[async_trait]
impl Probe for InspectorProbe {
    fn kind(&self) -> ProbeKind {
        ProbeKind::Inspector
    }

    fn inspector(&self) -> Option<&Inspector> {
        Some(&self.inspector)
    }

    async fn pid(&mut self) -> Option<u32> {
        let value = self.inspector.evaluate("process.pid").await.ok()?;
        value.as_u64().and_then(|pid| u32::try_from(pid).ok())
    }

    async fn start_loop_stats(&mut self) -> Result<(), ProbeError> {
        // Deno's and Bun's histograms record nothing (the runtime gaps say so).
        if self.runtime != crate::runtime::Runtime::Node {
            return Ok(());
        }
        Ok(super::loop_stats::start(&self.inspector).await?)
    }

    async fn take_loop_stats(&mut self) -> Result<Option<crate::model::LoopStats>, ProbeError> {
        Ok(super::loop_stats::take(&self.inspector).await?)
    }

    async fn stop_loop_stats(&mut self) {
        // The target may be gone or going; nothing is lost if it keeps them.
        let _ = super::loop_stats::stop(&self.inspector).await;
    }

    fn isolate_inspector(&self, id: &str) -> Option<Inspector> {
        self.parts.as_ref()?.inspector_of(id)
    }

    async fn collect_garbage(&mut self) -> Result<(), ProbeError> {
        self.inspector.collect_garbage().await?;
        // A worker or child that exited meanwhile is missing from this
        // reading, and so has no series to judge; it is not an error.
        for part in self.known_parts() {
            let _ = parts::collect(&part).await;
        }
        Ok(())
    }

    async fn sample(&mut self) -> Result<Sample, ProbeError> {
        let value = self.inspector.evaluate(&self.sample_expression).await?;
        let malformed = || ProbeError::Malformed(value.to_string());
        let fields = value.as_array().ok_or_else(malformed)?;
        let figure = |i: usize| {
            fields
                .get(i)
                .and_then(Value::as_f64)
                .map(|v| v as u64)
                .ok_or_else(malformed)
        };
        let counter_values = fields
            .get(5)
            .and_then(Value::as_array)
            .ok_or_else(malformed)?;
        let mut counters = std::collections::BTreeMap::new();
        let mut counter_errors = std::collections::BTreeMap::new();
        for (counter, value) in self.counters.iter().zip(counter_values) {
            counters.insert(counter.name.clone(), value.as_f64());
            if let Some(error) = value.get("error").and_then(Value::as_str) {
                counter_errors.insert(counter.name.clone(), error.to_string());
            }
        }
        if let Some(parts) = self.parts.as_mut() {
            parts.refresh().await;
        }
        let mut isolates = Vec::new();
        let mut served = fields.get(6).and_then(Value::as_u64);
        for part in self.known_parts() {
            if let Ok((reading, part_served)) = parts::read(&part).await {
                isolates.push(reading);
                // A cluster's workers serve what its primary accepts.
                if let (Some(total), Some(more)) = (served.as_mut(), part_served) {
                    *total += more;
                }
            }
        }
        let resources = fields
            .get(7)
            .and_then(Value::as_object)
            .map(|all| {
                all.iter()
                    .filter_map(|(name, count)| Some((name.clone(), count.as_f64()?)))
                    .collect()
            })
            .unwrap_or_default();
        let rss = figure(0)?;
        let heap_total = figure(1)?;
        let pid = fields.get(8).and_then(Value::as_u64);
        let rss_parts = match pid {
            Some(pid) => split_rss(pid as u32, rss, heap_total).await,
            None => None,
        };
        Ok(Sample {
            rss_parts,
            resources,
            isolates,
            counter_errors,
            served,
            rss,
            heap_total,
            heap_used: figure(2)?,
            external: figure(3)?,
            array_buffers: figure(4)?,
            counters,
        })
    }
}

/// The target's rss split from its smaps, when the pid the target reports
/// is a process here whose smaps add up to that rss (within a quarter: the
/// two are read a moment apart). A target in another pid namespace (a
/// container, a tunnel) reports a pid that is not its own here.
async fn split_rss(pid: u32, rss: u64, heap_total: u64) -> Option<crate::model::RssParts> {
    let parts = super::smaps::read(pid, heap_total).await?;
    let total = parts.total() as f64;
    let close = (total - rss as f64).abs() <= 0.25 * rss as f64;
    close.then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expression_reads_memory_and_guards_each_counter() {
        let counters = vec![Counter {
            name: "sessions".into(),
            expression: "globalThis.s.size".into(),
        }];
        let text = build_expression(&counters);
        assert!(text.starts_with("(() => {"));
        assert!(text.contains("process.memoryUsage()"));
        assert!(text.contains("try { const r = (globalThis.s.size);"));
        assert!(text.contains(SERVED_COUNTER));
    }

    #[test]
    fn a_counter_is_evaluated_as_written() {
        let counters = vec![Counter {
            name: "braces".into(),
            expression: "'{SERVED}'.length".into(),
        }];
        let text = build_expression(&counters);
        assert!(text.contains("try { const r = ('{SERVED}'.length);"));
        assert_eq!(text.matches("leakcheck.served").count(), 1);
    }
}
