// A large live heap and garbage per request: collections of the old
// generation have a lot to mark, and the loop waits behind them. Nothing
// is kept per request.
//   node tests/targets/gc-server.mjs PORT [LIVE_OBJECTS]
//   /garbage   builds about 100 KB of objects that live for the next 300
//              requests (long enough to reach the old generation), then
//              are dropped: a bounded ring, not a leak
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const liveObjects = Number(process.argv[3] ?? 2_000_000);

// Long-lived: many small objects that every full collection must mark.
const live = [];
for (let i = 0; i < liveObjects; i++) live.push({ i, tag: `entry ${i}` });

const RING = 300;
const ring = new Array(RING);
let served = 0;

createServer((req, res) => {
  const garbage = [];
  for (let i = 0; i < 1000; i++) garbage.push({ i, text: `${'x'.repeat(64)}${served}` });
  ring[served++ % RING] = garbage;
  res.end(`ok ${garbage.length} ${live.length}`);
}).listen(port, '127.0.0.1');
