// Leak held by a Map used as an unbounded cache. node map-cache.mjs OUTDIR COUNT
import { writeHeapSnapshot } from 'node:v8';
const [dir, count] = [process.argv[2], Number(process.argv[3] ?? 3000)];
const cache = new Map();
function handle(i) { cache.set(`user-${i}`, { profile: `profile-${i}`, at: new Date() }); }
for (let i = 0; i < 10; i++) handle(-i - 1);
setTimeout(() => {
  writeHeapSnapshot(`${dir}/before.heapsnapshot`);
  for (let i = 0; i < count; i++) handle(i);
  setTimeout(() => writeHeapSnapshot(`${dir}/after.heapsnapshot`), 10);
}, 10);
