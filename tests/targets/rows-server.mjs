// One route per row of the reading table, for the verdict tests and the
// sensitivity benchmark.
//   node tests/targets/rows-server.mjs PORT
import { createServer } from 'node:http';

const port = Number(process.argv[2]);

const kept = [];                  // /leak: a record per request (~0.7 KB; LEAK_PAD sets its string)
let smallHead = null;             // /small: a 48-byte record per request (linked, so growth is even)
let smallCount = 0;
const buffers = [];               // /buffers, /buffers-filled: 64 KB each, off the V8 heap
const bounded = new Map();        // /bounded-cache: at most BOUNDED_MAX entries, then holds
const BOUNDED_MAX = 500;
const filling = new Map();        // /filling-cache: fills over several cycles, then holds
const FILLING_MAX = Number(process.env.FILLING_MAX ?? 6000);
globalThis.sessions = new Set();  // /sessions: a counter rising with tiny entries
let sessionId = 0;
let temp = 0;

const ok = (res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': 11 });
  res.end('{"ok":true}');
};

const routes = {
  '/churn': (req, res) => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ i, label: `row-${i}` }));
    if (rows.length !== 200) throw new Error('unreachable');
    ok(res);
  },
  '/leak': (req, res) => {
    kept.push({ at: Date.now(), url: req.url, headers: { ...req.headers }, body: Buffer.alloc(Number(process.env.LEAK_PAD ?? 256), 120).toString('latin1') });
    ok(res);
  },
  '/small': (req, res, url) => {
    // Keep one 48-byte record every `every` requests: 48 / every bytes per request.
    const every = Number(url.searchParams.get('every') ?? 1);
    smallCount += 1;
    if (smallCount % every === 0) smallHead = { next: smallHead, n: smallCount, t: true };
    ok(res);
  },
  '/buffers': (req, res) => { buffers.push(Buffer.allocUnsafe(65536)); ok(res); },
  '/buffers-filled': (req, res) => { buffers.push(Buffer.alloc(65536, 7)); ok(res); },
  '/bounded-cache': (req, res) => {
    const key = `k${(temp += 1) % 5000}`;
    if (!bounded.has(key)) {
      if (bounded.size >= BOUNDED_MAX) bounded.delete(bounded.keys().next().value);
      bounded.set(key, 'v'.repeat(1024) + key);
    }
    ok(res);
  },
  '/filling-cache': (req, res) => {
    if (filling.size < FILLING_MAX) filling.set(filling.size, { data: 'f'.repeat(512) + filling.size });
    ok(res);
  },
  '/temp-big': (req, res) => {
    // About 100 KB of short-lived garbage per request.
    const big = new Array(13_000).fill(temp += 1);
    if (big.length !== 13_000) throw new Error('unreachable');
    ok(res);
  },
  '/sessions': (req, res) => {
    globalThis.sessions.add((sessionId += 1));
    ok(res);
  },
};

createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const handler = routes[url.pathname];
  if (handler) return handler(req, res, url);
  res.writeHead(404, { 'content-length': 0 });
  res.end();
}).listen(port, '127.0.0.1', () => console.log(`rows-server on ${port}`));
