// The same leak on Node, Deno and Bun, each on its own server API
// (node:http, Deno.serve, Bun.serve): /remember?id=N keeps 1 KB per
// request in a module-level Map, /health keeps nothing.
// usage: node leak.mjs PORT | deno run -A leak.mjs PORT | bun leak.mjs PORT
const port = Number(globalThis.Deno ? Deno.args[0] : process.argv[2]);
const kept = new Map();
const answer = (path, id) => {
  if (path === '/remember') kept.set(id, 'x'.repeat(1000) + id);
  return `ok ${kept.size}\n`;
};
if (globalThis.Deno) {
  Deno.serve({ hostname: '127.0.0.1', port, onListen() {} }, (request) => {
    const url = new URL(request.url);
    return new Response(answer(url.pathname, url.searchParams.get('id')));
  });
} else if (globalThis.Bun) {
  Bun.serve({
    hostname: '127.0.0.1',
    port,
    fetch(request) {
      const url = new URL(request.url);
      return new Response(answer(url.pathname, url.searchParams.get('id')));
    },
  });
} else {
  const { createServer } = await import('node:http');
  createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    res.end(answer(url.pathname, url.searchParams.get('id')));
  }).listen(port, '127.0.0.1');
}
