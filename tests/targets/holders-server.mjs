// Routes that leak through different holders, for the diagnosis tests.
//   node tests/targets/holders-server.mjs PORT
import { createServer } from 'node:http';
import { EventEmitter } from 'node:events';

const port = Number(process.argv[2]);
const responseCache = new Map();
const configBus = new EventEmitter();
configBus.setMaxListeners(0);
const DAY = 24 * 3600 * 1000;
let n = 0;

const routes = {
  // An unbounded cache keyed by something unique per request.
  '/map-cache': () => responseCache.set(`page-${(n += 1)}`, { html: `<p>page ${n}</p>`.padEnd(200, ' ') }),
  // A listener added per request to a long-lived emitter.
  '/listeners': () => {
    const session = { user: `user-${(n += 1)}` };
    configBus.on('reload', () => session.user.length);
  },
  // A closure kept by a long timer per request.
  '/timers': () => {
    const pending = { job: `job-${(n += 1)}` };
    setTimeout(() => pending.job.length, DAY).unref();
  },
};

createServer((req, res) => {
  const route = routes[req.url];
  if (route) route();
  res.writeHead(route ? 200 : 404, { 'content-length': 2 });
  res.end('ok');
}).listen(port, '127.0.0.1', () => console.log(`holders-server on ${port}`));
