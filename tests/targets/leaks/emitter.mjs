// Leak held by listeners added to a long-lived EventEmitter per request.
// node emitter.mjs OUTDIR COUNT
import { EventEmitter } from 'node:events';
import { writeHeapSnapshot } from 'node:v8';
const [dir, count] = [process.argv[2], Number(process.argv[3] ?? 3000)];
const bus = new EventEmitter();
bus.setMaxListeners(0);
function handle(i) {
  const payload = { request: `request-${i}` };
  bus.on('config-changed', () => payload.request.length);
}
for (let i = 0; i < 10; i++) handle(i);
setTimeout(() => {
  writeHeapSnapshot(`${dir}/before.heapsnapshot`);
  for (let i = 0; i < count; i++) handle(i);
  setTimeout(() => writeHeapSnapshot(`${dir}/after.heapsnapshot`), 10);
}, 10);
