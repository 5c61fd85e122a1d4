//! The probe for apps that expose their own `/mem` and `/gc` endpoints, as
//! the method's demo server does: `GET /gc` forces a collection (the app runs
//! `global.gc()`, so it needs `--expose-gc`), `GET /mem` returns
//! `process.memoryUsage()` as JSON.
//!
//! Units: the method's demo server reports MB with one decimal, others report
//! bytes. A Node heap is never below 1 MB, so a `heapUsed` under 100 000 is
//! read as MB and converted (losing the precision the app dropped). Every
//! other numeric field of `/mem` (the demo's `kept`) becomes a counter.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::{Probe, ProbeError};
use crate::model::{ProbeKind, Sample};
use crate::net::http_get;
use crate::units::MB;

/// Above this, `heapUsed` is in bytes; below, in MB (see the module docs).
const MB_UNIT_BELOW: f64 = 100_000.0;
/// Fields that are the five memory figures, in the spellings apps use.
const MEMORY_FIELDS: [(&str, &str); 10] = [
    ("rss", "rss"),
    ("heapTotal", "heap_total"),
    ("heapUsed", "heap_used"),
    ("external", "external"),
    ("arrayBuffers", "array_buffers"),
    ("heap_total", "heap_total"),
    ("heap_used", "heap_used"),
    ("array_buffers", "array_buffers"),
    ("rss_bytes", "rss"),
    ("heapUsedBytes", "heap_used"),
];
const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(60);

pub struct EndpointsProbe {
    addr: SocketAddr,
    mem_path: String,
    gc_path: String,
}

impl EndpointsProbe {
    /// `base_path` is the URL path the endpoints hang under (`""` for `/mem`).
    pub fn new(addr: SocketAddr, base_path: &str) -> EndpointsProbe {
        let base = base_path.trim_end_matches('/');
        EndpointsProbe {
            addr,
            mem_path: format!("{base}/mem"),
            gc_path: format!("{base}/gc"),
        }
    }

    async fn get_json(&self, path: &str) -> Result<Value, ProbeError> {
        let (status, body) = http_get(self.addr, path, ENDPOINT_TIMEOUT).await?;
        if !(200..300).contains(&status) {
            let hint = if path == self.gc_path {
                " (does the app run global.gc()? start it with --expose-gc)"
            } else {
                ""
            };
            return Err(ProbeError::Endpoint(format!(
                "GET {path} answered {status}{hint}"
            )));
        }
        serde_json::from_str(&body).map_err(|_| {
            ProbeError::Endpoint(format!("GET {path} did not return JSON: {body:.200}"))
        })
    }
}

/// Reads a `/mem` answer into a sample (see the module docs for units).
pub fn parse_mem(value: &Value) -> Result<Sample, ProbeError> {
    let object = value.as_object().ok_or_else(|| {
        ProbeError::Endpoint(format!("/mem returned {value:.200}, not an object"))
    })?;
    let mut figures: BTreeMap<&str, f64> = BTreeMap::new();
    let mut counters = BTreeMap::new();
    for (key, field) in object {
        let Some(number) = field.as_f64() else {
            continue;
        };
        match MEMORY_FIELDS.iter().find(|(name, _)| name == key) {
            Some((_, canonical)) => {
                figures.insert(canonical, number);
            }
            None => {
                counters.insert(key.clone(), Some(number));
            }
        }
    }
    let heap_used = *figures
        .get("heap_used")
        .ok_or_else(|| ProbeError::Endpoint("/mem has no heapUsed field".to_string()))?;
    let scale = if heap_used < MB_UNIT_BELOW { MB } else { 1.0 };
    let get = |name: &str| (figures.get(name).copied().unwrap_or(0.0) * scale).round() as u64;
    Ok(Sample {
        rss: get("rss"),
        heap_total: get("heap_total"),
        heap_used: get("heap_used"),
        external: get("external"),
        array_buffers: get("array_buffers"),
        counters,
        ..Sample::default()
    })
}

#[async_trait]
impl Probe for EndpointsProbe {
    fn kind(&self) -> ProbeKind {
        ProbeKind::Endpoints
    }

    async fn collect_garbage(&mut self) -> Result<(), ProbeError> {
        self.get_json(&self.gc_path.clone()).await.map(|_| ())
    }

    async fn sample(&mut self) -> Result<Sample, ProbeError> {
        parse_mem(&self.get_json(&self.mem_path.clone()).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn method_mb_figures_become_bytes_and_kept_a_counter() {
        let value = json!({"rss":53.6,"heapTotal":8.3,"heapUsed":6.6,"external":3.6,"arrayBuffers":0.1,"kept":20000});
        let sample = parse_mem(&value).unwrap();
        assert_eq!(sample.heap_used, (6.6 * MB).round() as u64);
        assert_eq!(sample.counters["kept"], Some(20000.0));
    }

    #[test]
    fn byte_figures_stay_bytes() {
        let value =
            json!({"rss": 56_000_000, "heapUsed": 7_000_000, "external": 1, "arrayBuffers": 0});
        let sample = parse_mem(&value).unwrap();
        assert_eq!(sample.heap_used, 7_000_000);
        assert!(sample.counters.is_empty());
    }

    #[test]
    fn missing_heap_used_is_an_error() {
        assert!(parse_mem(&json!({"rss": 1})).is_err());
        assert!(parse_mem(&json!([1, 2])).is_err());
    }
}
