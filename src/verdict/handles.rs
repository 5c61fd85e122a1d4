//! Handles and listeners as leaks. The method's last row says growth that
//! memory does not show is "still a leak": a timer started per request and
//! never cleared, a socket to an upstream never closed, a listener added
//! per request and never removed. Each keeps little memory, so heapUsed
//! may stay within its noise for a long time, while the process runs out of
//! file descriptors or spends its event loop on dead timers first.
//!
//! The counts (`active_resources.<Type>`, `listeners.process.<event>`,
//! `listeners.server.<event>`) are fitted per unit of work like memory.
//! A count that grows by half a handle per request or more is one left
//! behind by a large share of requests: that is the `handle-growth` row.

use crate::model::{MetricFit, ResourceFamily, Series, Trend};

/// Handles (or listeners) per unit of work from which growth is a leak:
/// at least every second request leaves one behind.
pub const HANDLE_GROWTH_PER_UNIT: f64 = 0.5;

/// The handle and listener series that grow by the rule, fastest first.
pub fn growing_handles(fits: &[MetricFit]) -> Vec<&MetricFit> {
    let mut growing: Vec<&MetricFit> = fits
        .iter()
        .filter(|f| {
            f.metric.is_resource()
                && f.trend == Trend::Growing
                && f.slope_bytes_per_request >= HANDLE_GROWTH_PER_UNIT
        })
        .collect();
    growing.sort_by(|a, b| {
        b.slope_bytes_per_request
            .total_cmp(&a.slope_bytes_per_request)
    });
    growing
}

/// "1.00 `Timeout` per request is never cleared".
pub fn describe(fit: &MetricFit, unit: &str) -> String {
    let name = fit.metric.name();
    let rate = fit.slope_bytes_per_request;
    let Series::Resource(resource) = &fit.metric else {
        return format!("{rate:.2} per {unit} ({name})");
    };
    let kind = resource.name.as_str();
    let (what, fate) = match resource.family {
        ResourceFamily::ActiveResource => {
            let fate = match kind {
                "Timeout" | "Immediate" => "is never cleared (clearTimeout/clearInterval)",
                k if k.contains("Socket") || k.contains("TCP") || k.contains("Pipe") => {
                    "is never closed (end or destroy the socket, or pool it)"
                }
                _ => "is never released",
            };
            (format!("`{kind}`"), fate)
        }
        ResourceFamily::Dom => {
            let fate = match kind {
                "JSEventListeners" => {
                    "is added and never removed (removeEventListener, or an AbortSignal)"
                }
                _ => {
                    "stays alive after the iteration (detached from the page but still referenced, or never removed)"
                }
            };
            (format!("`{kind}`"), fate)
        }
        ResourceFamily::Listener => {
            let (target, event) = kind.split_once('.').unwrap_or(("", kind));
            (
                format!("`{event}` listener on {target}"),
                "is added and never removed (off/removeListener, or once)",
            )
        }
    };
    format!("{rate:.2} {what} per {unit} {fate} ({name})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Resource;

    fn fit(name: &str, slope: f64, trend: Trend) -> MetricFit {
        MetricFit {
            metric: Series::Resource(Resource::parse(name).expect("a resource name")),
            slope_bytes_per_request: slope,
            increments: Vec::new(),
            noise_bytes: 4.0,
            growth_per_cycle_bytes: slope * 1000.0,
            fitted_from_cycle: 2,
            trend,
        }
    }

    #[test]
    fn half_a_handle_per_request_that_keeps_growing_is_a_leak() {
        let fits = [
            fit("active_resources.Timeout", 1.0, Trend::Growing),
            fit("active_resources.TCPSocketWrap", 0.1, Trend::Growing),
            fit("listeners.process.exit", 0.9, Trend::Flat),
            fit("active_resources.FSReqCallback", 2.0, Trend::Growing),
        ];
        let grow: Vec<&str> = growing_handles(&fits)
            .iter()
            .map(|f| f.metric.name())
            .collect();
        assert_eq!(
            grow,
            ["active_resources.FSReqCallback", "active_resources.Timeout"]
        );
    }

    #[test]
    fn words_say_what_to_release() {
        let timer = describe(
            &fit("active_resources.Timeout", 1.0, Trend::Growing),
            "request",
        );
        assert!(
            timer.starts_with("1.00 `Timeout` per request is never cleared"),
            "{timer}"
        );
        let socket = describe(
            &fit("active_resources.TCPSocketWrap", 2.0, Trend::Growing),
            "request",
        );
        assert!(socket.contains("never closed"), "{socket}");
        let listener = describe(
            &fit("listeners.process.exit", 1.0, Trend::Growing),
            "request",
        );
        assert!(
            listener.contains("`exit` listener on process"),
            "{listener}"
        );
    }
}
