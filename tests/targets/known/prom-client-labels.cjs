// prom-client labels with unbounded values: a counter labelled with the raw
// URL keeps one series per distinct URL in its `hashMap`. Label with the
// route pattern, never a value taken from the request.
const http = require('node:http');
const client = require('prom-client');

const requests = new client.Counter({
  name: 'http_requests_total',
  help: 'requests served',
  labelNames: ['path'],
});
let n = 0;

http
  .createServer((req, res) => {
    n += 1;
    requests.inc({ path: `${req.url}?n=${n}` });
    res.end('ok\n');
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
