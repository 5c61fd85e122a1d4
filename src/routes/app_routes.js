// Runs in the target with `this` the live instances of one framework's
// router (Runtime.callFunctionOn), `framework` naming it. Answers
// [[METHOD, path], ...] with paths as the router declares them.
function (framework) {
  const out = [];
  const add = (method, path) => {
    if (typeof path !== 'string') return;
    const clean = path.length > 1 ? path.replace(/\/+$/, '') : path;
    out.push([String(method).toUpperCase(), clean.replace(/\/{2,}/g, '/')]);
  };
  const instances = Array.from(this);
  // Express: routers nest (app.use('/api', router)); walk from the ones
  // no other router holds, carrying the mount path.
  const express = (mountOf) => {
    const nested = new Set();
    const inner = (layer) => layer.handle?.stack ? layer.handle : layer.handle?._router;
    for (const router of instances) for (const layer of router.stack ?? []) {
      const child = inner(layer);
      if (child) nested.add(child);
    }
    const walk = (router, prefix, depth) => {
      if (depth > 8) return;
      for (const layer of router.stack ?? []) {
        if (layer.route) {
          for (const path of [].concat(layer.route.path)) {
            for (const method of Object.keys(layer.route.methods ?? {})) {
              add(method === '_all' ? 'ALL' : method, prefix + path);
            }
          }
        } else if (inner(layer)) {
          walk(inner(layer), prefix + mountOf(layer), depth + 1);
        }
      }
    };
    for (const router of instances) if (!nested.has(router)) walk(router, '', 0);
  };
  // Express 4 keeps a mount path only as its regular expression:
  // /^\/api\/?(?=\/|$)/i, parameters as (?:([^\/]+?)).
  const mount4 = (layer) => {
    if (!layer.regexp || layer.regexp.fast_slash) return '';
    let key = 0;
    return layer.regexp.source
      .replace(/^\^/, '')
      .replace(/\\\/\?\(\?=\\\/\|\$\)$/, '')
      .replace(/\(\?:\(\[\^\\\/\]\+\?\)\)/g, () => ':' + (layer.keys?.[key++]?.name ?? 'param'))
      .replace(/\\(.)/g, '$1');
  };
  const mount5 = (layer) => (typeof layer.rawPath === 'string' && !layer.slash ? layer.rawPath : '');
  if (framework === 'express 4') express(mount4);
  else if (framework === 'express 5') express(mount5);
  else if (framework === 'fastify') {
    // Fastify's not-found handler is a router of its own: `/*` and `/`
    // for every method, not routes of the app.
    const notFound = (table) => table.some((route) => route.path.endsWith('*'))
      && table.every((route) => ['', '/', '*', '/*'].includes(route.path));
    for (const router of instances) {
      const table = router.routes ?? [];
      if (notFound(table)) continue;
      for (const route of table) add(route.method, route.path);
    }
  } else if (framework === 'koa') {
    for (const router of instances) for (const layer of router.stack ?? []) {
      for (const method of layer.methods ?? []) add(method, layer.path);
    }
  } else if (framework === 'hapi') {
    for (const core of instances) for (const route of core.router?.table?.() ?? []) {
      add(route.method === '*' ? 'ALL' : route.method, route.path);
    }
  }
  return out;
}
