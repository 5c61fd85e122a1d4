// A cluster primary with two forked workers; each worker keeps every
// request to /leak. The primary serves nothing itself and stays flat.
//   node tests/targets/attribution/cluster-server.cjs PORT
const cluster = require('node:cluster');
const http = require('node:http');

const port = Number(process.argv[2]);
const WORKERS = 2;

if (cluster.isPrimary) {
  for (let i = 0; i < WORKERS; i++) cluster.fork();
  cluster.on('exit', (worker, code) => console.error(`worker ${worker.process.pid} exited ${code}`));
} else {
  const seen = [];
  http
    .createServer((req, res) => {
      if (req.url === '/leak') seen.push({ url: req.url, at: Date.now(), note: 'kept by the worker '.repeat(12) + seen.length });
      res.end('ok');
    })
    .listen(port, '127.0.0.1');
}
