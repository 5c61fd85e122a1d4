#![no_main]
//! Any bytes: the /mem (endpoint probe) and /proc status parsers never panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = leakcheck::probe::parse_mem(&value);
    }
    let _ = leakcheck::probe::parse_status(&String::from_utf8_lossy(data));
});
