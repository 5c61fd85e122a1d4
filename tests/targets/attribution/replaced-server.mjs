// Leaks through variables whose value is replaced on every request: the
// variable keeps a new object each time, and the old one is inside it.
//   node tests/targets/attribution/replaced-server.mjs PORT
//   /log       auditLog += a line: an ever-growing string
//   /history   history = { prev: history, ... }: an immutable linked list
//   /state     appState = { ...appState, [key]: value }: a rebuilt object
//   /ok        builds the same things and drops them
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
let auditLog = '';
let history = null;
let appState = {};
let served = 0;

const routes = {
  '/log': (req) => {
    auditLog += `${Date.now()} ${req.method} ${req.url} ${served}\n`;
  },
  '/history': (req) => {
    history = { prev: history, url: req.url, at: Date.now(), n: served };
  },
  '/state': () => {
    appState = { ...appState, [`k${served}`]: { n: served } };
  },
  '/ok': (req) => {
    let local = '';
    local += `${Date.now()} ${req.url}`;
    return local.length;
  },
};

createServer((req, res) => {
  served += 1;
  (routes[req.url] ?? (() => {}))(req);
  res.end('ok');
}).listen(port, '127.0.0.1');
