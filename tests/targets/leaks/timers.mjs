// Leak held by closures in long timers. node timers.mjs OUTDIR COUNT
import { writeHeapSnapshot } from 'node:v8';
const [dir, count] = [process.argv[2], Number(process.argv[3] ?? 3000)];
const DAY = 24 * 3600 * 1000;
function handle(i) {
  const payload = { retry: `retry-${i}` };
  setTimeout(() => payload.retry.length, DAY);
}
for (let i = 0; i < 10; i++) handle(i);
setTimeout(() => {
  writeHeapSnapshot(`${dir}/before.heapsnapshot`);
  for (let i = 0; i < count; i++) handle(i);
  setTimeout(() => { writeHeapSnapshot(`${dir}/after.heapsnapshot`); process.exit(0); }, 10);
}, 10);
