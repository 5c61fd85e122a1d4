//! Allocation sites that name the route handler, not its caller.
//!
//! V8's sampling heap profiler records the JavaScript frames of each
//! sampled allocation, but not the frames TurboFan inlined: once a hot
//! handler is inlined into the server's dispatcher, its allocations are
//! charged to the dispatcher. On the demo after 3 × 20 000 requests the top
//! site read `(anonymous) demo-server.mjs:72` (the `createServer` callback)
//! with 3 192 KB, and `/leak` came second with 72 KB.
//!
//! So before the sampled cycle, on a target leakcheck launched (and will
//! stop), inlining is turned off and the optimized code thrown away:
//! `v8.setFlagsFromString('--no-turbo-inlining')` through the inspector's
//! command-line API (which provides `require` even in an ES module), then
//! starting and stopping precise coverage, which makes V8 deoptimize every
//! function (optimized code does not count calls). Functions re-optimize
//! during the cycle, without inlining. Tried by hand on Node 20 and 22:
//! the same loop charged 9.8 MB to the dispatcher before, 6.2 MB to the
//! handler after; the flag alone, without the deoptimization, is not
//! enough (the old code keeps its inlined frames).
//!
//! A target leakcheck attached to keeps running after leakcheck leaves, so
//! its JIT is left alone there.

use serde_json::json;

use crate::inspector::{Inspector, InspectorError};

const NO_INLINING: &str = "require('v8').setFlagsFromString('--no-turbo-inlining'), true";

/// Turns inlining off and deoptimizes everything; `Ok(false)` when the
/// target offers no `require` to set the flag with (the sites are then
/// read as V8 reports them).
pub async fn stop_inlining(inspector: &Inspector) -> Result<bool, InspectorError> {
    // A target collecting its own coverage (c8, `NODE_V8_COVERAGE`, which
    // it inherits from leakcheck) would lose it when coverage is stopped.
    if std::env::var_os("NODE_V8_COVERAGE").is_some() {
        return Ok(false);
    }
    match inspector.evaluate_in_console(NO_INLINING).await {
        Ok(_) => {}
        Err(InspectorError::Evaluation { .. }) => return Ok(false),
        Err(other) => return Err(other),
    }
    inspector.call("Profiler.enable", json!({})).await?;
    inspector
        .call(
            "Profiler.startPreciseCoverage",
            json!({ "callCount": true, "detailed": false }),
        )
        .await?;
    inspector
        .call("Profiler.stopPreciseCoverage", json!({}))
        .await?;
    inspector.call("Profiler.disable", json!({})).await?;
    Ok(true)
}
