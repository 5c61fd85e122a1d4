#![no_main]
//! Any text: the flag parsers for counts, sizes and durations never panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = leakcheck::units::parse_count(&text);
    let _ = leakcheck::units::parse_bytes(&text);
    let _ = leakcheck::units::parse_duration(&text);
});
