// The emitter leak of emitter.mjs, with the second snapshot written while
// native code holds the listener list in a handle scope: inside
// JSON.stringify's replacer, the stringifier keeps handles to the objects
// it is walking (bus._events and its listener array), so the snapshot's
// (GC roots) → (Handle scope) reaches them in two steps.
// node emitter-handle-scope.mjs OUTDIR COUNT
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
  setTimeout(() => {
    let written = false;
    JSON.stringify({ events: bus._events }, (key, value) => {
      if (!written && Array.isArray(value)) {
        written = true;
        writeHeapSnapshot(`${dir}/after.heapsnapshot`);
      }
      return typeof value === 'function' ? 'fn' : value;
    });
  }, 10);
}, 10);
