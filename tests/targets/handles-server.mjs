// Handles that leak while memory per request stays small.
//   node tests/targets/handles-server.mjs PORT
//   /interval   starts an hourly interval per request and never clears it
//   /upstream   opens a socket to an upstream (a second server in this
//               process) per request and never closes it
//   /cleared    starts an interval and clears it when the response ends
import { createServer } from 'node:http';
import net from 'node:net';

const port = Number(process.argv[2]);
const HOUR = 3_600_000;

const upstream = net.createServer((socket) => socket.on('error', () => {}));
upstream.listen(0, '127.0.0.1');

const routes = {
  '/interval': () => {
    setInterval(() => {}, HOUR);
  },
  '/upstream': () => {
    const socket = net.connect(upstream.address().port, '127.0.0.1');
    socket.on('error', () => {});
  },
  '/cleared': (res) => {
    const timer = setInterval(() => {}, HOUR);
    res.on('finish', () => clearInterval(timer));
  },
};

createServer((req, res) => {
  (routes[req.url] ?? (() => {}))(res);
  res.end('ok');
}).listen(port, '127.0.0.1');
