#![no_main]
//! Any text: request templates and scenario files parse to a value or an
//! error, never a panic, and a parsed template renders.
use libfuzzer_sys::fuzz_target;

use leakcheck::load::Scenario;
use leakcheck::load::template::{NoCaptures, RenderContext, Rng, Template};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(template) = Template::parse(&text, None) {
        let mut rng = Rng::new(0);
        let mut ctx = RenderContext {
            sequence: 7,
            rng: &mut rng,
            captures: &NoCaptures,
        };
        let _ = template.render(&mut Vec::new(), &mut ctx);
    }
    let _ = Scenario::parse(&text, "fuzz.json", "127.0.0.1:1");
});
