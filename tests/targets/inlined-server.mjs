// A route handler that TurboFan has inlined into its dispatcher before any
// load arrives (natives syntax forces it), so the diagnosis must undo the
// inlining to charge what survives to the handler, not to the dispatcher.
//   node --allow-natives-syntax tests/targets/inlined-server.mjs PORT
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const kept = [];
const scratch = [];

function keepRecord(into, i) {
  // About 0.4 KB a request: well above the verdict's noise at 4000 a cycle.
  into.push({ i, label: `record-${i}`, values: Array.from({ length: 40 }, (_, k) => k + i) });
}

function dispatch(into, i) {
  keepRecord(into, i);
  return into.length;
}

%PrepareFunctionForOptimization(dispatch);
for (let i = 0; i < 100; i++) dispatch(scratch, i);
%OptimizeFunctionOnNextCall(dispatch);
dispatch(scratch, 0);
scratch.length = 0;

let served = 0;
createServer((req, res) => {
  const count = dispatch(kept, (served += 1));
  const body = JSON.stringify({ kept: count });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}).listen(port, '127.0.0.1');

process.on('SIGTERM', () => process.exit(0));
