#![no_main]
//! Any bytes: response head parsing and chunked framing never panic.
use leakcheck::net::response::{ChunkedDecoder, parse_head};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_head(data, false);
    let _ = parse_head(data, true);
    let mut decoder = ChunkedDecoder::default();
    for piece in data.chunks(7) {
        if decoder.feed(piece).is_err() {
            break;
        }
    }
});
