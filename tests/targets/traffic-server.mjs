// Leaks that a fixed request cannot show, for the realistic-traffic tests.
//   node tests/targets/traffic-server.mjs PORT
//   /item?id=X   a cache keyed by the URL: one entry per distinct id, never evicted
//   POST /login  {"user": "..."}: a session per login in a store that never expires;
//                answers {"access":{"token": SID}} and Set-Cookie: sid=SID
//   /profile     200 with the session of the sid cookie, 401 without one
//   /listen      adds a listener to a long-lived emitter, removed on 'finish':
//                it stays when the client hangs up before the answer
//   /item-logged?id=X  /item, and the key appended to `recentKeys`, a log trimmed to
//                its last 20 000 entries: a cap the diagnosis must follow to and
//                not call a leak
//   /logged?id=X only a log, `recentVisits`, trimmed to its last 10 000: a
//                route whose one growth is a list filling to its cap, then
//                flat (bench/capped-log.sh)
//   /orders      GET answers how many orders there are (keeps nothing); POST keeps
//                every posted order in `postedOrders`: only a POST driver shows it
import { createServer } from 'node:http';
import { EventEmitter } from 'node:events';

const port = Number(process.argv[2]);

const cache = new Map();
const recentKeys = [];
const RECENT_KEYS_CAP = 20_000;
const recentVisits = [];
const RECENT_VISITS_CAP = 10_000;
const postedOrders = [];
const sessions = new Map();
let nextSession = 0;
const bus = new EventEmitter();
bus.setMaxListeners(0);

const send = (res, status, body, headers = {}) => {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
};

const cookie = (req, name) => {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, value] = part.trim().split('=');
    if (key === name) return value;
  }
  return undefined;
};

const routes = {
  '/item': (req, res, url) => {
    const key = url.search;
    if (!cache.has(key)) cache.set(key, { key, at: Date.now(), data: 'i'.repeat(1024) });
    send(res, 200, { ok: true });
  },
  '/item-logged': (req, res, url) => {
    recentKeys.push({ key: url.search, at: Date.now() });
    if (recentKeys.length > RECENT_KEYS_CAP) recentKeys.shift();
    routes['/item'](req, res, url);
  },
  '/logged': (req, res, url) => {
    recentVisits.push({ key: url.search, at: Date.now(), seen: 'k'.repeat(64) });
    if (recentVisits.length > RECENT_VISITS_CAP) recentVisits.shift();
    send(res, 200, { ok: true });
  },
  '/login': (req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const { user } = JSON.parse(raw || '{}');
      const sid = `s${(nextSession += 1)}`;
      sessions.set(sid, { user, at: Date.now(), data: 's'.repeat(1024) });
      send(res, 200, { access: { token: sid } }, { 'set-cookie': `sid=${sid}; Path=/; HttpOnly` });
    });
  },
  '/profile': (req, res) => {
    const session = sessions.get(cookie(req, 'sid'));
    if (!session) return send(res, 401, { error: 'no session' });
    send(res, 200, { user: session.user });
  },
  '/orders': (req, res) => {
    if (req.method !== 'POST') return send(res, 200, { orders: postedOrders.length });
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      postedOrders.push({ body: raw, at: Date.now(), lines: 'o'.repeat(512) });
      send(res, 201, { id: postedOrders.length });
    });
  },
  '/listen': (req, res) => {
    const onTick = () => onTick.payload.length;
    onTick.payload = 'l'.repeat(1024);
    bus.on('tick', onTick);
    res.on('finish', () => bus.off('tick', onTick));
    // A slow answer, so that a client that hangs up does so first.
    setTimeout(() => {
      if (!res.destroyed) send(res, 200, { ok: true });
    }, 5);
  },
};

createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const route = routes[url.pathname];
  if (!route) return send(res, 404, { error: 'no route' });
  route(req, res, url);
}).listen(port, '127.0.0.1');
