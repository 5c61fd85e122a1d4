// Leak held by a property of globalThis, in CommonJS. node global-property.cjs OUTDIR COUNT
const { writeHeapSnapshot } = require('node:v8');
const [dir, count] = [process.argv[2], Number(process.argv[3] ?? 3000)];
globalThis.sessionStore = [];
function handle(i) { globalThis.sessionStore.push({ token: `token-${i}` }); }
for (let i = 0; i < 10; i++) handle(i);
setTimeout(() => {
  writeHeapSnapshot(`${dir}/before.heapsnapshot`);
  for (let i = 0; i < count; i++) handle(i);
  setTimeout(() => writeHeapSnapshot(`${dir}/after.heapsnapshot`), 10);
}, 10);
