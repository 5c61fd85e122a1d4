#![no_main]
//! Any bytes: the smaps split, heaptrack's record and V8's perf map parsers
//! never panic, and a record's stacks are walked without panicking.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = leakcheck::probe::smaps::parse(&text);
    let map = leakcheck::diagnosis::native::perf_map::PerfMap::parse(&text);
    let _ = map.name_at(0x1000);
    if let Ok(record) = leakcheck::diagnosis::native::trace::read(data, 0, u64::MAX) {
        for growth in &record.growth {
            let _ = record.stack(growth.trace);
        }
    }
});
