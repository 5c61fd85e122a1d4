// A leak driven by a clock, not by requests: a metrics sampler whose
// setInterval appends a small sample every 20 ms and never trims (about
// 8 KB a second of heap). Requests keep nothing.
//
//   node sampler-server.mjs PORT [bounded]
//
// With `bounded`, the sampler keeps the last 500 samples only (a ring that
// fills in 10 s and then holds): the clean twin.
import http from 'node:http';

const bounded = process.argv[3] === 'bounded';
const samples = [];

setInterval(() => {
  samples.push({ at: Date.now(), load: process.cpuUsage(), label: `sample-${samples.length}` });
  if (bounded && samples.length > 500) samples.shift();
}, 20);

const server = http.createServer((req, res) => {
  let sum = 0;
  for (let i = 0; i < 200; i++) sum += i;
  res.end(String(sum));
});
server.listen(Number(process.argv[2] || 9762), '127.0.0.1');
