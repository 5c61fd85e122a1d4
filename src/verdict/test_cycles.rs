//! A cycle of a route, made up for the verdict's unit tests: every
//! request answered 2xx in one second.

use crate::model::{CycleResult, LoadReport, Sample, StatusCounts};

pub fn cycle(n: u32, requests: u64, after_load: Sample, after_gc: Sample) -> CycleResult {
    let load = LoadReport {
        duration_s: 1.0,
        requests,
        responses: requests,
        requests_per_second: requests as f64,
        status: StatusCounts {
            s2xx: requests,
            ..StatusCounts::default()
        },
        ..LoadReport::default()
    };
    CycleResult {
        cycle: n,
        requests,
        responses: requests,
        errors: 0,
        non_2xx: 0,
        duration_s: 1.0,
        after_load,
        after_gc,
        load,
        units: requests,
        served: None,
        driver: None,
        event_loop: None,
        gc: None,
        read_at_s: None,
        peak: None,
    }
}
