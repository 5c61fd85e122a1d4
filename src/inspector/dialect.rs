//! The two inspector protocols leakcheck speaks. V8's (Chrome DevTools
//! Protocol) is spoken by Node, Deno and Chromium; Bun runs JavaScriptCore
//! and speaks WebKit's, which shares the message framing and
//! `Runtime.evaluate` but differs where leakcheck cares:
//!
//! | need                 | V8                                  | WebKit (Bun)                                  |
//! |----------------------|-------------------------------------|-----------------------------------------------|
//! | a thrown evaluation  | `exceptionDetails`                  | `wasThrown: true`, the error in `result`      |
//! | await a promise      | `awaitPromise: true`                | `Runtime.awaitPromise` on the returned object |
//! | full collection      | `HeapProfiler.collectGarbage`       | `Heap.gc` (a synchronous full collection)     |
//! | heap snapshot        | `HeapProfiler.takeHeapSnapshot`     | none in V8's format: `Bun.generateHeapSnapshot("v8")` evaluated in the target |
//! | allocation sampling  | `HeapProfiler.startSampling`        | none                                          |
//! | workers              | `NodeWorker` (Node)                 | none                                          |
//!
//! Which one a session speaks is learned once, when the runtime is
//! identified (`crate::runtime::identify`), and travels with the handle.

/// The protocol of one inspector session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// Chrome DevTools Protocol: Node, Deno, Chromium.
    #[default]
    V8,
    /// WebKit's inspector protocol: Bun.
    WebKit,
}

impl Dialect {
    /// Whether the session has V8's `HeapProfiler` domain (snapshots by
    /// stream, the sampling heap profiler).
    pub fn has_heap_profiler(self) -> bool {
        self == Dialect::V8
    }
}
