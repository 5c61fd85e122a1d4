// A Node cluster: the primary forks WORKERS workers (2 by default) that
// share one server port, as `node:cluster` and PM2's cluster mode run an
// app. For `leakcheck watch --pid PRIMARY`, which finds the workers
// through their primary (tests/it/watch_fleet.rs).
//
// By default node:cluster gives each worker the primary's debug port plus
// its id (9230, 9231…): distinct, so SIGUSR1 opens each one's inspector.
// Here `inspectPort: 0` makes them ephemeral instead, so that clusters of
// parallel tests never meet on a port.
//
//   node --inspect-port=0 cluster-server.mjs PORT [WORKERS]
import cluster from 'node:cluster';
import http from 'node:http';

const port = Number(process.argv[2]);
const workers = Number(process.argv[3] ?? 2);

if (cluster.isPrimary) {
  cluster.setupPrimary({ inspectPort: 0 });
  for (let i = 0; i < workers; i += 1) cluster.fork();
} else {
  const seen = [];
  http
    .createServer((req, res) => {
      seen.push(req.url);
      if (seen.length > 1000) seen.shift();
      res.end(`worker ${process.pid}`);
    })
    .listen(port, '127.0.0.1');
}
