// A server with one route per behaviour the load generator must handle.
// It counts the requests it sees, so tests can compare with what the
// generator claims to have sent.
//   node tests/targets/load-server.mjs PORT
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
let seen = 0;
let closeCounter = 0;
let flakyCounter = 0;

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const path = url.pathname;
  if (path === '/count') {
    const body = JSON.stringify({ seen });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    return res.end(body);
  }
  seen += 1;
  if (path === '/hit') {
    res.writeHead(200, { 'content-length': 5 });
    return res.end('hello');
  }
  if (path === '/chunked') {
    // No content-length: Node sends Transfer-Encoding: chunked.
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('a'.repeat(1000));
    res.write('b'.repeat(3000));
    return res.end('tail');
  }
  if (path === '/big') {
    const body = 'x'.repeat(200_000);
    res.writeHead(200, { 'content-length': body.length });
    return res.end(body);
  }
  if (path === '/close-every') {
    const every = Number(url.searchParams.get('n') ?? 5);
    closeCounter += 1;
    if (closeCounter % every === 0) res.setHeader('connection', 'close');
    res.writeHead(200, { 'content-length': 2 });
    return res.end('ok');
  }
  if (path === '/flaky') {
    flakyCounter += 1;
    const status = flakyCounter % 4 === 0 ? 500 : 200;
    res.writeHead(status, { 'content-length': 2 });
    return res.end('ok');
  }
  if (path === '/stall') {
    return; // never answers
  }
  if (path === '/slow') {
    setTimeout(() => { res.writeHead(200, { 'content-length': 0 }); res.end(); }, 20);
    return;
  }
  res.writeHead(404, { 'content-length': 0 });
  res.end();
});
server.keepAliveTimeout = 30_000;
server.listen(port, '127.0.0.1', () => console.log(`load-server on ${port}`));
