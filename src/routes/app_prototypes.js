// Runs in the target (Runtime.evaluate, the console's API in scope): the
// prototypes of the routers loaded, found by their module's file in the
// CommonJS cache, which also holds what an ES module app imported from
// npm. Answers [[framework, prototype], ...]; leakcheck asks the
// inspector for each prototype's live instances (Runtime.queryObjects).
(() => {
  const modules = (globalThis.process?.getBuiltinModule?.('node:module')) ?? require('module');
  const cache = modules._cache ?? modules.createRequire(process.cwd() + '/').cache;
  const wanted = [
    ['express 4', '/express/lib/router/index.js', (m) => m],
    ['express 5', '/node_modules/router/index.js', (m) => m.prototype],
    ['fastify', '/find-my-way/index.js', (m) => m.prototype],
    ['koa', '/@koa/router/lib/router.js', (m) => (m.default ?? m).prototype],
    ['hapi', '/@hapi/hapi/lib/core.js', (m) => m.prototype],
  ];
  const found = [];
  for (const file of Object.keys(cache)) {
    for (const [framework, suffix, prototypeOf] of wanted) {
      if (!file.endsWith(suffix)) continue;
      try {
        const prototype = prototypeOf(cache[file].exports);
        if (prototype) found.push([framework, prototype]);
      } catch {}
    }
  }
  return found;
})()
