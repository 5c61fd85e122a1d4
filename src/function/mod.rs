//! `leakcheck fn MODULE#EXPORT`: a function as the unit of work, for
//! library code that has no server. A harness (`harness.mjs`, written to
//! a private temporary file) runs in a Node process leakcheck starts with
//! the inspector: it imports the module (ESM or CommonJS; TypeScript
//! through the user's loader flags) and, when asked through the inspector,
//! calls the export N times, C at once, each within the timeout, awaiting
//! what it returns. The calls are the fourth `Workload` on the one loop
//! (`crate::cycle`): the same cycles, forced collections, verdicts,
//! diagnosis and reports as a route, counted in calls.

use std::time::Duration;

use async_trait::async_trait;

use crate::cycle::{CycleObserver, CycleSpec, Units, Work, WorkError, Workload};
use crate::inspector::Inspector;
use crate::model::{LoadReport, StatusCounts};

/// The harness's source, written next to nothing of the user's.
pub const HARNESS: &str = include_str!("harness.mjs");

/// How long the module may take to load (and `--setup` to run).
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(60);

/// The calls of one check.
pub struct FunctionCalls {
    pub inspector: Inspector,
    pub calls_per_cycle: u64,
    pub concurrency: u64,
    /// How long one call may take before it counts as failed.
    pub timeout: Duration,
}

/// What the harness answers for one batch of calls.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Batch {
    pub ok: u64,
    pub failed: u64,
    #[serde(default)]
    pub timed_out: u64,
    #[serde(default)]
    pub errors: Vec<String>,
    /// The batch ended at the cycle's time target, before its count.
    #[serde(default)]
    pub time_bound: bool,
    pub seconds: f64,
}

impl Batch {
    pub fn report(&self) -> LoadReport {
        let total = self.ok + self.failed;
        LoadReport {
            duration_s: self.seconds,
            requests: total,
            responses: self.ok,
            errors: self.failed,
            timeouts: self.timed_out,
            iterations: Some(self.ok),
            failed_iterations: Some(self.failed),
            iterations_per_second: Some(self.ok as f64 / self.seconds.max(1e-9)),
            failure_reasons: self.errors.clone(),
            time_bound: self.time_bound,
            requests_per_second: total as f64 / self.seconds.max(1e-9),
            status: StatusCounts {
                s2xx: self.ok,
                ..StatusCounts::default()
            },
            ..LoadReport::default()
        }
    }
}

/// Waits until the harness has loaded the module (and run `--setup`);
/// the module's own error when it could not.
pub async fn wait_loaded(inspector: &Inspector, limit: Duration) -> anyhow::Result<()> {
    // The inspector opens before the harness's first line runs.
    let started = std::time::Instant::now();
    let answer = loop {
        // Awaited only once the harness has set it: Deno answers an awaited
        // evaluation made before its main module runs with "Promise was
        // collected".
        let set = inspector
            .evaluate("typeof globalThis.__leakcheckReady !== 'undefined'")
            .await?;
        let answer = match set.as_bool() {
            Some(true) => {
                inspector
                    .evaluate_promise_within("globalThis.__leakcheckReady", limit)
                    .await?
            }
            _ => serde_json::Value::Null,
        };
        if !answer.is_null() {
            break answer;
        }
        if started.elapsed() > limit {
            anyhow::bail!("the harness did not start within {} s", limit.as_secs());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    if answer["ok"].as_bool() == Some(true) {
        return Ok(());
    }
    anyhow::bail!(
        "the module could not be loaded: {}",
        answer["error"].as_str().unwrap_or("no reason given")
    )
}

/// Runs `--teardown` in the harness, when given.
pub async fn teardown(inspector: &Inspector, limit: Duration) -> anyhow::Result<()> {
    inspector
        .evaluate_promise_within("globalThis.__leakcheck.teardown()", limit)
        .await?;
    Ok(())
}

#[async_trait]
impl Workload for FunctionCalls {
    fn planned_units(&self) -> Option<u64> {
        Some(self.calls_per_cycle)
    }

    async fn drive(
        &mut self,
        cycle: CycleSpec,
        observer: &dyn CycleObserver,
    ) -> Result<Work, WorkError> {
        let count = cycle.units_of(self.calls_per_cycle);
        let concurrency = self.concurrency.max(1);
        // Every call may take its whole timeout, a lane at a time.
        let limit = self.timeout * (count.div_ceil(concurrency) as u32).max(1) + LOAD_TIMEOUT;
        // JSON has no Infinity: a batch without a time target gets none.
        let budget = cycle
            .time
            .map_or("Infinity".to_string(), |t| t.as_millis().to_string());
        let expression = format!(
            "globalThis.__leakcheck.run({count}, {concurrency}, {}, {budget})",
            self.timeout.as_millis()
        );
        let answer = self
            .inspector
            .evaluate_promise_within(&expression, limit)
            .await
            .map_err(|e| WorkError::Harness(format!("{e:#}")))?;
        let batch: Batch = serde_json::from_value(answer)
            .map_err(|e| WorkError::Harness(format!("an answer leakcheck cannot read: {e}")))?;
        observer.load_progress(batch.ok + batch.failed, batch.failed);
        Ok(Work {
            report: batch.report(),
            driver: None,
            units: Units::Counted(batch.ok),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_batch_is_reported_in_calls_with_its_errors() {
        let batch: Batch = serde_json::from_value(json!({
            "ok": 90, "failed": 10, "timedOut": 2,
            "errors": ["TypeError: x is undefined"], "seconds": 0.5
        }))
        .unwrap();
        let report = batch.report();
        assert_eq!(
            (report.requests, report.errors, report.timeouts),
            (100, 10, 2)
        );
        assert_eq!(report.iterations, Some(90));
        assert_eq!(report.failure_reasons, ["TypeError: x is undefined"]);
    }
}
