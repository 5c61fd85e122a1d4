// A server with a slow leak for `leakcheck watch`: each request records an
// audit entry (~300 B) in a module-level Map that is never trimmed, and
// caches its response for 2 s (medium-lived objects that die in the old
// generation, as sessions, sockets and caches with a TTL do in real
// servers: what makes V8 run its major collections on its own). With
// `clean`, the audit keeps the last 500 entries (the twin).
//
//   node watch-server.mjs PORT [leak|clean] [SCALE]
//
// SCALE (1 by default) multiplies the audit entry's note. At 1 the note is
// `repeat`'s, a rope of shared pieces (~0.3 KB a request with its entry,
// what BENCHMARKS.md measured); a rope's size barely follows its count (×6
// still kept 0.32 KB), so above 1 the note is flat text of SCALE times the
// length: 6 keeps about 1.1 KB a request.
//
// GET /state answers what a watch must leave as it found it: whether the
// watch's global or a request subscriber is installed, whether the
// inspector is open, the handles, and (under --expose-gc) the settled heap.
import http from 'node:http';
import dc from 'node:diagnostics_channel';
import inspector from 'node:inspector';

const clean = process.argv[3] === 'clean';
const scale = Number(process.argv[4] ?? 1);
const audit = new Map();
const recent = new Map();
let served = 0;

function recordAudit(req) {
  const piece = `request ${served} `;
  const note = scale > 1 ? Array(10 * scale).fill(piece).join('') : piece.repeat(10);
  audit.set(served, { at: Date.now(), url: req.url, note });
  if (clean && audit.size > 500) audit.delete(audit.keys().next().value);
}

setInterval(() => {
  const old = Date.now() - 2000;
  for (const [key, entry] of recent) {
    if (entry.at > old) break;
    recent.delete(key);
  }
}, 250).unref();

function state() {
  const handles = {};
  for (const name of process.getActiveResourcesInfo()) handles[name] = (handles[name] ?? 0) + 1;
  globalThis.gc?.();
  globalThis.gc?.();
  return {
    watchInstalled: Symbol.for('leakcheck.watch') in globalThis,
    requestSubscribers: dc.hasSubscribers('http.server.request.start'),
    inspectorOpen: inspector.url() !== undefined,
    handles,
    heapUsed: process.memoryUsage().heapUsed,
  };
}

const server = http.createServer((req, res) => {
  if (req.url === '/state') {
    res.setHeader('content-type', 'application/json');
    res.setHeader('connection', 'close');
    res.end(JSON.stringify(state()));
    return;
  }
  served += 1;
  recordAudit(req);
  const rows = [];
  for (let i = 0; i < 100; i++) rows.push({ id: i, label: `row ${i} of ${served}` });
  const body = JSON.stringify({ served, rows });
  recent.set(served, { at: Date.now(), rows, body });
  res.setHeader('content-type', 'application/json');
  res.end(body);
});
server.listen(Number(process.argv[2] ?? 9770), '127.0.0.1');
