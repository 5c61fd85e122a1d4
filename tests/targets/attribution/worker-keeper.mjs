// The worker of worker-server.mjs: `jobs` keeps every job it was told to keep.
import { parentPort } from 'node:worker_threads';

const jobs = [];
parentPort.on('message', (job) => {
  if (job.keep) jobs.push({ ...job, payload: 'x'.repeat(64) + job.id });
  parentPort.postMessage({ id: job.id });
});
