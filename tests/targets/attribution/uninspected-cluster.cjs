// A cluster primary whose workers run without an inspector (the target
// clears their execArgv): leakcheck cannot read the processes that serve.
//   node tests/targets/attribution/uninspected-cluster.cjs PORT
const cluster = require('node:cluster');
const http = require('node:http');

const port = Number(process.argv[2]);

if (cluster.isPrimary) {
  cluster.setupPrimary({ execArgv: [] });
  for (let i = 0; i < 2; i++) cluster.fork();
} else {
  http.createServer((req, res) => res.end('ok')).listen(port, '127.0.0.1');
}
