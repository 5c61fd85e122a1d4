// Leaks that chain: each request replaces a variable with a new value that
// keeps the old one (`list = { prev: list }`, and a closure over the last
// handler), so every new link dominates the older ones.
// node chains.mjs OUTDIR COUNT
import { writeHeapSnapshot } from 'node:v8';
const [dir, count] = [process.argv[2], Number(process.argv[3] ?? 3000)];
let list = null;
let handler = () => 0;
function handle(i) {
  list = { prev: list, seq: i };
  const previous = handler;
  handler = () => previous() + i;
}
for (let i = 0; i < 10; i++) handle(i);
setTimeout(() => {
  writeHeapSnapshot(`${dir}/before.heapsnapshot`);
  for (let i = 0; i < count; i++) handle(i);
  setTimeout(() => writeHeapSnapshot(`${dir}/after.heapsnapshot`), 10);
}, 10);
