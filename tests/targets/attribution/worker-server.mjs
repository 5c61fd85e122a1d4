// A leak inside a worker thread: the main thread hands each request to a
// worker, which keeps it. The main heap stays flat.
//   node tests/targets/attribution/worker-server.mjs PORT
//   /work    posts the request to the worker, which keeps it forever
//   /echo    posts to the worker, which answers and keeps nothing
import { createServer } from 'node:http';
import { Worker } from 'node:worker_threads';

const port = Number(process.argv[2]);
const worker = new Worker(new URL('./worker-keeper.mjs', import.meta.url));
let next = 0;
const waiting = new Map();
worker.on('message', ({ id }) => {
  const res = waiting.get(id);
  waiting.delete(id);
  res?.end('ok');
});

createServer((req, res) => {
  const id = next++;
  waiting.set(id, res);
  worker.postMessage({ id, keep: req.url === '/work', url: req.url, at: Date.now() });
}).listen(port, '127.0.0.1');
