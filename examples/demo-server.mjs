// leakcheck's demo target: one route per row of the reading table.
//
//   node examples/demo-server.mjs [port]        (default 9750, or $PORT)
//   node --expose-gc examples/demo-server.mjs   (to make /gc and /reset collect)
//
// Every route answers on 127.0.0.1 only. /mem and /gc report bytes, not MB,
// so that the endpoint probe reads exact figures.
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? process.env.PORT ?? 9750);

// Module-scope holders: what the leaking routes keep alive.
const keptRequests = [];
const keptBuffers = [];

function memory() {
  const usage = process.memoryUsage();
  return {
    rss: usage.rss,
    heapTotal: usage.heapTotal,
    heapUsed: usage.heapUsed,
    external: usage.external,
    arrayBuffers: usage.arrayBuffers,
    kept: keptRequests.length + keptBuffers.length,
  };
}

function sendJson(res, value) {
  const body = JSON.stringify(value);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function collect() {
  if (typeof globalThis.gc === 'function') globalThis.gc();
}

const routes = {
  // Allocates a few hundred objects and drops them: a working set, nothing kept.
  '/churn': (req, res) => {
    const rows = Array.from({ length: 500 }, (_, i) => ({ i, label: `row-${i}` }));
    sendJson(res, { rows: rows.length });
  },
  // Keeps a record of every request, with a copy of its headers: about 0.4 KB each.
  '/leak': (req, res) => {
    keptRequests.push({ at: Date.now(), url: req.url, headers: { ...req.headers }, body: 'x'.repeat(512) });
    sendJson(res, { kept: keptRequests.length });
  },
  // Keeps a 64 KB buffer whose pages are never written: arrayBuffers grows, rss barely.
  '/buffers': (req, res) => {
    keptBuffers.push(Buffer.allocUnsafe(65536));
    sendJson(res, { kept: keptBuffers.length });
  },
  // Keeps a 64 KB buffer filled with a byte: every page is touched, so rss grows too.
  '/buffers-filled': (req, res) => {
    keptBuffers.push(Buffer.alloc(65536, 7));
    sendJson(res, { kept: keptBuffers.length });
  },
  '/mem': (req, res) => sendJson(res, memory()),
  '/gc': (req, res) => {
    collect();
    sendJson(res, memory());
  },
  '/reset': (req, res) => {
    keptRequests.length = 0;
    keptBuffers.length = 0;
    collect();
    sendJson(res, memory());
  },
};

const server = createServer((req, res) => {
  const handler = routes[req.url.split('?')[0]];
  if (handler) return handler(req, res);
  res.writeHead(404, { 'content-length': 0 });
  res.end();
});

server.keepAliveTimeout = 30_000;
server.listen(port, '127.0.0.1', () => console.log(`demo-server listening on 127.0.0.1:${port}`));

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
