// A server that fails on purpose, for the fault tests.
//   node tests/targets/fault-server.mjs PORT
//   /ok                 answers 200
//   /exit-after?n=N     answers, and exits with code 7 on the Nth request
//   /drop-inspector?n=N closes the inspector (and its sessions) on the Nth request
//   /stall              never answers
//   /block-after?n=N    answers, and blocks its event loop for good on the Nth request
// With IGNORE_SIGTERM=1 it ignores SIGTERM, so only SIGKILL stops it.
import { createServer } from 'node:http';
import inspector from 'node:inspector';

const port = Number(process.argv[2]);
let hits = 0;

if (process.env.IGNORE_SIGTERM === '1') {
  process.on('SIGTERM', () => console.error('fault-server: ignoring SIGTERM'));
}

createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const n = Number(url.searchParams.get('n') ?? 0);
  if (url.pathname === '/stall') return;
  hits += 1;
  res.writeHead(200, { 'content-length': 2 });
  res.end('ok');
  if (url.pathname === '/block-after' && hits === n) {
    console.error(`fault-server: blocking the event loop on request ${hits} as asked`);
    setImmediate(() => { for (;;); });
  }
  if (url.pathname === '/exit-after' && hits === n) {
    console.error(`fault-server: exiting on request ${hits} as asked`);
    process.exit(7);
  }
  if (url.pathname === '/drop-inspector' && hits === n) {
    console.error('fault-server: closing the inspector');
    setImmediate(() => inspector.close());
  }
}).listen(port, '127.0.0.1', () => console.log(`fault-server on ${port}`));
