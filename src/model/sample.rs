//! What one reading of the target holds, and the names of the series the
//! verdict fits: the memory figures of `process.memoryUsage()` and the
//! user's counters.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One reading of `process.memoryUsage()`, in bytes, plus any counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub rss: u64,
    pub heap_total: u64,
    pub heap_used: u64,
    pub external: u64,
    pub array_buffers: u64,
    /// User counters (`--counter NAME=EXPR`), by name; `null` when the
    /// expression failed at that reading.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, Option<f64>>,
    /// Why a counter is `null` at this reading: what its expression threw
    /// or returned instead of a number.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counter_errors: BTreeMap<String, String>,
    /// HTTP requests the target began serving since leakcheck started
    /// counting (`http.server.request.start`, read through the inspector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<u64>,
    /// The target's handles and listeners at this reading, by series name:
    /// `active_resources.Timeout` (from `process.getActiveResourcesInfo()`),
    /// `listeners.process.exit`, `listeners.server.request`. A name absent
    /// at a reading counts 0 there.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, f64>,
    /// The target's other isolates at this reading: worker threads and
    /// child Node processes (inspector targets that have them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub isolates: Vec<super::IsolateSample>,
    /// rss split by what owns the pages (`/proc/PID/smaps`), when the
    /// target's smaps could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_parts: Option<super::RssParts>,
}

/// The five memory figures, for code that walks them all in one order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    Rss,
    HeapTotal,
    HeapUsed,
    External,
    ArrayBuffers,
}

impl Metric {
    pub const ALL: [Metric; 5] = [
        Metric::Rss,
        Metric::HeapTotal,
        Metric::HeapUsed,
        Metric::External,
        Metric::ArrayBuffers,
    ];

    /// The name `process.memoryUsage()` gives it, which is also its name
    /// in the JSON result.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Rss => "rss",
            Metric::HeapTotal => "heapTotal",
            Metric::HeapUsed => "heapUsed",
            Metric::External => "external",
            Metric::ArrayBuffers => "arrayBuffers",
        }
    }

    fn from_label(label: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.label() == label)
    }
}

impl Sample {
    pub fn get(&self, metric: Metric) -> u64 {
        match metric {
            Metric::Rss => self.rss,
            Metric::HeapTotal => self.heap_total,
            Metric::HeapUsed => self.heap_used,
            Metric::External => self.external,
            Metric::ArrayBuffers => self.array_buffers,
        }
    }

    /// The value of a series at this reading; `None` for a counter that
    /// is missing or failed here.
    pub fn value(&self, series: &Series) -> Option<f64> {
        match series {
            Series::Memory(metric) => Some(self.get(*metric) as f64),
            Series::Counter(name) => *self.counters.get(name)?,
            Series::Resource(resource) => Some(
                self.resources
                    .get(resource.full_name())
                    .copied()
                    .unwrap_or(0.0),
            ),
            Series::RssPart(part) => Some(self.rss_parts?.get(*part) as f64),
        }
    }
}

/// A series the verdict fits: a memory figure, a user's counter, or a
/// count of handles or listeners. In the JSON it is the figure's name
/// (`heapUsed`), the counter's name, or the resource's (`active_resources.
/// Timeout`, `listeners.process.exit`); the CLI refuses counters named like
/// a memory figure or under the resource prefixes, so they never mix.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Series {
    Memory(Metric),
    Counter(String),
    Resource(Resource),
    /// A part of rss (`rss.malloc`), from the target's smaps.
    RssPart(super::RssPart),
}

/// The families of counted series leakcheck reads by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ResourceFamily {
    /// A Node handle or request type (`process.getActiveResourcesInfo()`).
    ActiveResource,
    /// Listeners of one event on one of Node's emitters (`process.exit`).
    Listener,
    /// A page's DOM count (`Performance.getMetrics`: Nodes, Documents,
    /// JSEventListeners).
    Dom,
}

impl ResourceFamily {
    pub const ALL: [ResourceFamily; 3] = [
        ResourceFamily::ActiveResource,
        ResourceFamily::Listener,
        ResourceFamily::Dom,
    ];

    /// What its series' names start with in the JSON (and in `Sample.resources`).
    pub fn prefix(self) -> &'static str {
        match self {
            ResourceFamily::ActiveResource => "active_resources.",
            ResourceFamily::Listener => "listeners.",
            ResourceFamily::Dom => "dom.",
        }
    }
}

/// One counted series: its family and its name within it (`Timeout`,
/// `process.exit`, `Nodes`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Resource {
    pub family: ResourceFamily,
    pub name: String,
    /// `prefix + name`, the key of `Sample.resources` and the JSON's name.
    full: String,
}

impl Resource {
    pub fn new(family: ResourceFamily, name: &str) -> Resource {
        Resource {
            family,
            name: name.to_string(),
            full: format!("{}{name}", family.prefix()),
        }
    }

    /// The series a `Sample.resources` key names, if it is one of ours.
    pub fn parse(full: &str) -> Option<Resource> {
        ResourceFamily::ALL.into_iter().find_map(|family| {
            let name = full.strip_prefix(family.prefix())?;
            Some(Resource::new(family, name))
        })
    }

    pub fn full_name(&self) -> &str {
        &self.full
    }
}

/// Names of the automatic handle, listener and DOM series start with these.
/// What a series' readings, and its growth per unit of work, are in: the
/// `unit` of a figure and a fit in the JSON. A count is never shown as
/// bytes (`41 B (dom.Nodes)` was a page's 41 nodes per iteration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Quantity {
    Bytes,
    Count,
}

pub const RESOURCE_PREFIXES: [&str; 3] = ["active_resources.", "listeners.", "dom."];

impl Series {
    pub const HEAP_USED: Series = Series::Memory(Metric::HeapUsed);
    pub const EXTERNAL: Series = Series::Memory(Metric::External);
    pub const ARRAY_BUFFERS: Series = Series::Memory(Metric::ArrayBuffers);
    pub const RSS: Series = Series::Memory(Metric::Rss);

    pub fn name(&self) -> &str {
        match self {
            Series::Memory(metric) => metric.label(),
            Series::Counter(name) => name,
            Series::Resource(resource) => resource.full_name(),
            Series::RssPart(part) => part.series_name(),
        }
    }

    /// A handle or listener count (`active_resources.*`, `listeners.*`).
    pub fn is_resource(&self) -> bool {
        matches!(self, Series::Resource(_))
    }

    pub fn is_memory(&self) -> bool {
        matches!(self, Series::Memory(_))
    }

    /// A part of rss (`rss.malloc`): it explains the rss row, never makes one.
    pub fn is_rss_part(&self) -> bool {
        matches!(self, Series::RssPart(_))
    }

    /// What one reading of the series measures: bytes, or a count (DOM
    /// nodes, handles, listeners, a `--counter`).
    pub fn quantity(&self) -> Quantity {
        match self {
            Series::Memory(_) | Series::RssPart(_) => Quantity::Bytes,
            Series::Counter(_) | Series::Resource(_) => Quantity::Count,
        }
    }

    /// Whether a counter may take `name` (it must not shadow a memory
    /// figure or an automatic resource series).
    pub fn is_reserved_name(name: &str) -> bool {
        Metric::from_label(name).is_some()
            || RESOURCE_PREFIXES.iter().any(|p| name.starts_with(p))
            || super::RssPart::from_series_name(name).is_some()
    }
}

impl std::fmt::Display for Series {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Series {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Series {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        if let Some(metric) = Metric::from_label(&name) {
            return Ok(Series::Memory(metric));
        }
        if let Some(part) = super::RssPart::from_series_name(&name) {
            return Ok(Series::RssPart(part));
        }
        Ok(match Resource::parse(&name) {
            Some(resource) => Series::Resource(resource),
            None => Series::Counter(name),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_round_trip_through_their_json_names() {
        for series in [
            Series::HEAP_USED,
            Series::Counter("sessions".into()),
            Series::Resource(Resource::new(ResourceFamily::ActiveResource, "Timeout")),
            Series::Resource(Resource::new(ResourceFamily::Listener, "process.exit")),
            Series::RssPart(crate::model::RssPart::Malloc),
        ] {
            let json = serde_json::to_string(&series).unwrap();
            let back: Series = serde_json::from_str(&json).unwrap();
            assert_eq!(back, series);
        }
        assert_eq!(
            serde_json::to_string(&Series::ARRAY_BUFFERS).unwrap(),
            "\"arrayBuffers\""
        );
        assert!(Series::is_reserved_name("rss"));
        assert!(!Series::is_reserved_name("sessions"));
        assert!(Series::is_reserved_name("listeners.process.exit"));
    }
}
