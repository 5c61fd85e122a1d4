// leakcheck's count of the requests a Deno or Bun server begins, loaded
// with --preload before the app's own modules (written by leakcheck to a
// private folder, removed with its run). Node publishes each request a
// server begins on diagnostics_channel; Deno.serve and Bun.serve do not, so
// their handlers are wrapped: one number, nothing kept per request.
// `counting` stays false until a server is known to be counted, so that a
// server this cannot see reads as "unknown", never as zero requests.
(() => {
  const key = Symbol.for('leakcheck.served');
  if (globalThis[key]) return;
  const s = { n: 0, counting: false, uncountable: false };
  Object.defineProperty(globalThis, key, { value: s });
  // The wrapper keeps the handler's arity: Deno builds the Request only
  // for a handler that declares a parameter.
  const count = (handler) => {
    if (typeof handler !== 'function') return handler;
    const counted = function () {
      s.n += 1;
      return handler.apply(this, arguments);
    };
    Object.defineProperty(counted, 'length', { value: handler.length });
    return counted;
  };
  if (typeof Deno !== 'undefined' && typeof Deno.serve === 'function') {
    const serve = Deno.serve;
    Deno.serve = function (...args) {
      s.counting = true;
      const counted = args.map((a) =>
        typeof a === 'function'
          ? count(a)
          : a && typeof a === 'object' && typeof a.handler === 'function'
            ? { ...a, handler: count(a.handler) }
            : a,
      );
      return serve.apply(this, counted);
    };
  }
  if (typeof Bun !== 'undefined' && typeof Bun.serve === 'function') {
    const serve = Bun.serve;
    // A route answered by a static Response never reaches a handler.
    const countRoute = (value) => {
      if (typeof value === 'function') return count(value);
      if (value && typeof value === 'object' && !(value instanceof Response)) {
        const methods = {};
        for (const [method, handler] of Object.entries(value)) {
          if (typeof handler !== 'function') s.uncountable = true;
          methods[method] = count(handler);
        }
        return methods;
      }
      s.uncountable = true;
      return value;
    };
    Bun.serve = function (options, ...rest) {
      if (options && typeof options === 'object') {
        s.counting = true;
        options = { ...options };
        if (typeof options.fetch === 'function') options.fetch = count(options.fetch);
        if (options.routes && typeof options.routes === 'object') {
          const routes = {};
          for (const [path, value] of Object.entries(options.routes)) routes[path] = countRoute(value);
          options.routes = routes;
        }
      }
      return serve.call(this, options, ...rest);
    };
  }
  // node:http under either runtime, where the runtime publishes Node's channel.
  try {
    process
      .getBuiltinModule('node:diagnostics_channel')
      .subscribe('http.server.request.start', () => {
        s.counting = true;
        s.n += 1;
      });
  } catch (e) {}
})();
