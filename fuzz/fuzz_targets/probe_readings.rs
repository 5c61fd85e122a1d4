#![no_main]
//! Any bytes: the /mem (endpoint probe), /proc status and statm, and
//! cgroup parsers never panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = leakcheck::probe::parse_mem(&value);
    }
    let text = String::from_utf8_lossy(data);
    let _ = leakcheck::probe::parse_status(&text);
    let _ = leakcheck::platform::procfs::parse_statm_resident(&text);
    let _ = leakcheck::platform::cgroup::parse_proc_cgroup(&text);
    let _ = leakcheck::platform::cgroup::parse_limit(&text);
    let _ = leakcheck::platform::cgroup::parse_oom_kills(&text);
});
