// Leak held by listeners added to a long-lived EventEmitter per request.
// node emitter.mjs OUTDIR COUNT [held]
// With `held`, the second snapshot is written while native code holds the
// listener list in a handle scope: inside JSON.stringify's replacer, the
// stringifier keeps handles to the objects it walks (bus._events and its
// listener array), so (GC roots) → (Handle scope) (Node 26; Node 20's
// (Stack roots)) reaches them in two steps.
import { EventEmitter } from 'node:events';
import { writeHeapSnapshot } from 'node:v8';
const [dir, count, held] = [process.argv[2], Number(process.argv[3] ?? 3000), process.argv[4] === 'held'];
const bus = new EventEmitter();
bus.setMaxListeners(0);
function handle(i) {
  const payload = { request: `request-${i}` };
  bus.on('config-changed', () => payload.request.length);
}
function writeWhileHeld(path) {
  let written = false;
  JSON.stringify({ events: bus._events }, (key, value) => {
    if (!written && Array.isArray(value)) {
      written = true;
      writeHeapSnapshot(path);
    }
    return typeof value === 'function' ? 'fn' : value;
  });
}
for (let i = 0; i < 10; i++) handle(i);
setTimeout(() => {
  writeHeapSnapshot(`${dir}/before.heapsnapshot`);
  for (let i = 0; i < count; i++) handle(i);
  const after = `${dir}/after.heapsnapshot`;
  setTimeout(() => (held ? writeWhileHeld(after) : writeHeapSnapshot(after)), 10);
}, 10);
