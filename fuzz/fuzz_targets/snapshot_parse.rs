#![no_main]
//! Any bytes: the snapshot parser and analyses return an error or a graph, never panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(graph) = leakcheck::snapshot::parse(data) {
        let _ = leakcheck::snapshot::inspect_graph(graph, 5, 2);
    }
});
