// memlab as the peer: load a snapshot with its own parser, which also
// computes dominators and retained sizes, and print the root's retained size.
//   node --max-old-space-size=20000 bench/memlab-parse.cjs FILE
const { getFullHeapFromFile } = require('@memlab/heap-analysis');

(async () => {
  const started = process.hrtime.bigint();
  const heap = await getFullHeapFromFile(process.argv[2]);
  let largest = 0;
  heap.nodes.forEach((node) => {
    if (node.id !== 0 && node.retainedSize > largest) largest = node.retainedSize;
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(`memlab: ${heap.nodes.length} nodes, largest retained ${largest}, ${seconds.toFixed(2)} s`);
})();
