//! Reading a page's memory: the JS heap (`Runtime.getHeapUsage`) and the
//! renderer's counts of DOM nodes, documents and JS event listeners
//! (`Performance.getMetrics`), after forced collections
//! (`HeapProfiler.collectGarbage`) as for a Node target. The counts are
//! series like a server's handles (`dom.Nodes`, `dom.Documents`,
//! `dom.JSEventListeners`): growth of either is a leak even when the heap
//! is flat.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::loop_stats::metric;
use crate::inspector::Inspector;
use crate::model::{ProbeKind, Sample};
use crate::probe::{Probe, ProbeError};

/// The `Performance.getMetrics` names read, as series `dom.<name>`.
const DOM_METRICS: [&str; 3] = ["Nodes", "Documents", "JSEventListeners"];

pub struct PageProbe {
    pub page: Inspector,
    /// Where the current cycle's loop statistics started.
    loop_mark: Option<super::loop_stats::Mark>,
}

impl PageProbe {
    /// Enables the domains the readings use.
    pub async fn new(page: Inspector) -> Result<PageProbe, ProbeError> {
        page.call("Performance.enable", json!({})).await?;
        page.call("Page.enable", json!({})).await?;
        Ok(PageProbe {
            page,
            loop_mark: None,
        })
    }
}

#[async_trait]
impl Probe for PageProbe {
    fn kind(&self) -> ProbeKind {
        ProbeKind::Inspector
    }

    fn inspector(&self) -> Option<&Inspector> {
        Some(&self.page)
    }

    async fn start_loop_stats(&mut self) -> Result<(), ProbeError> {
        self.loop_mark = Some(super::loop_stats::start(&self.page).await?);
        Ok(())
    }

    async fn take_loop_stats(&mut self) -> Result<Option<crate::model::LoopStats>, ProbeError> {
        match self.loop_mark.take() {
            Some(mark) => Ok(super::loop_stats::take(&self.page, mark).await?),
            None => Ok(None),
        }
    }

    async fn stop_loop_stats(&mut self) {
        super::loop_stats::stop(&self.page).await;
    }

    async fn collect_garbage(&mut self) -> Result<(), ProbeError> {
        self.page
            .call("HeapProfiler.collectGarbage", json!({}))
            .await?;
        Ok(())
    }

    async fn sample(&mut self) -> Result<Sample, ProbeError> {
        let heap = self.page.call("Runtime.getHeapUsage", json!({})).await?;
        let figure = |k: &str| heap.get(k).and_then(Value::as_f64).unwrap_or(0.0) as u64;
        let metrics = self.page.call("Performance.getMetrics", json!({})).await?;
        let resources = DOM_METRICS
            .iter()
            .filter_map(|name| Some((format!("dom.{name}"), metric(&metrics, name)?)))
            .collect();
        Ok(Sample {
            heap_used: figure("usedSize"),
            heap_total: figure("totalSize"),
            resources,
            ..Sample::default()
        })
    }
}
