// Leak held by a module-scope array. node module-array.mjs OUTDIR COUNT
import { writeHeapSnapshot } from 'node:v8';
const [dir, count] = [process.argv[2], Number(process.argv[3] ?? 3000)];
const kept = [];
function handle(i) { kept.push({ id: i, label: `record-${i}` }); }
for (let i = 0; i < 10; i++) handle(i);
setTimeout(() => {
  writeHeapSnapshot(`${dir}/before.heapsnapshot`);
  for (let i = 0; i < count; i++) handle(i);
  setTimeout(() => writeHeapSnapshot(`${dir}/after.heapsnapshot`), 10);
}, 10);
