//! The target's own count of the HTTP requests it began serving, read at
//! every reading of the main process and of each child.

/// Counts the HTTP requests the target begins serving from the first
/// reading on; `null` where diagnostics_channel is missing.
pub const SERVED_COUNTER: &str = "(() => { \
    const k = Symbol.for('leakcheck.served'); let s = globalThis[k]; \
    if (!s) { s = { n: 0 }; \
      try { const dc = process.getBuiltinModule \
          ? process.getBuiltinModule('node:diagnostics_channel') : require('diagnostics_channel'); \
        dc.subscribe('http.server.request.start', () => { s.n += 1; }); \
      } catch (e) { s.n = -1; } \
      Object.defineProperty(globalThis, k, { value: s }); } \
    return s.n < 0 ? null : s.n; })()";
