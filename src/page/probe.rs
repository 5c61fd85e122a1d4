//! Reading a page's memory: the JS heap and the ArrayBuffer backing stores
//! off it (`Runtime.getHeapUsage`: `usedSize`, `backingStorageSize`, as
//! heapUsed and arrayBuffers), the renderer processes' rss (from /proc,
//! when leakcheck started the browser), and the renderer's counts of DOM
//! nodes, documents and JS event listeners
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
    /// The browser leakcheck started; its renderers' rss is read. `None`
    /// with `--connect` (the browser may be another machine's).
    browser_pid: Option<u32>,
    /// Where the current cycle's loop statistics started.
    loop_mark: Option<super::loop_stats::Mark>,
}

impl PageProbe {
    /// Enables the domains the readings use.
    pub async fn new(page: Inspector, browser_pid: Option<u32>) -> Result<PageProbe, ProbeError> {
        page.call("Performance.enable", json!({})).await?;
        page.call("Page.enable", json!({})).await?;
        Ok(PageProbe {
            page,
            browser_pid,
            loop_mark: None,
        })
    }
}

/// The summed anonymous rss of the browser's renderer processes: with one
/// tab, the page's renderer and the spare ones Chromium keeps ready, whose
/// memory holds still. The anonymous part only: the file-backed part is
/// Chromium's own binary mapped in (about 100 MB a renderer), the same at
/// every reading. Blink's own heap (`embedderHeapUsedSize`) is not read:
/// after the forced collection it still moved ±160 KB between readings of
/// a page that keeps nothing (fixed.html), more than most leaks per cycle.
fn renderers_rss(browser: u32) -> u64 {
    crate::platform::procfs::all_pids()
        .into_iter()
        .filter(|&pid| {
            crate::platform::procfs::command_line(pid).contains("--type=renderer")
                && crate::platform::procfs::descends_from(pid, browser)
        })
        .filter_map(crate::platform::procfs::status_text)
        .filter_map(|status| crate::probe::proc::parse_status(&status))
        .map(|sample| {
            let anon = sample.counters.get("rss_anon").copied().flatten();
            anon.map_or(sample.rss, |bytes| bytes as u64)
        })
        .sum()
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
            // Chromium 120 and later; older ones read 0, as before.
            array_buffers: figure("backingStorageSize"),
            rss: self.browser_pid.map_or(0, renderers_rss),
            resources,
            ..Sample::default()
        })
    }
}
