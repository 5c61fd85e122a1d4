// A leak driven by a clock, not by requests: a metrics sampler whose
// setInterval appends a small sample every 20 ms and never trims (about
// 8 KB a second of heap). Requests keep nothing.
//
//   node sampler-server.mjs PORT [leak|bounded] [SAMPLES_PER_TICK]
//
// With `bounded`, the sampler keeps the last second of samples only (a
// ring that fills in 1 s and then holds): the clean twin. SAMPLES_PER_TICK (1 by
// default) scales the rate: 12 keeps about 100 KB a second.
import http from 'node:http';

const bounded = process.argv[3] === 'bounded';
const perTick = Number(process.argv[4] || 1);
const samples = [];

setInterval(() => {
  for (let i = 0; i < perTick; i++) {
    samples.push({ at: Date.now(), load: process.cpuUsage(), label: `sample-${samples.length}` });
  }
  while (bounded && samples.length > 50 * perTick) samples.shift();
}, 20);

const server = http.createServer((req, res) => {
  let sum = 0;
  for (let i = 0; i < 200; i++) sum += i;
  res.end(String(sum));
});
server.listen(Number(process.argv[2] || 9762), '127.0.0.1');
