// The obvious way to redact a snapshot in Node, for the benchmark: parse the
// whole file with JSON.parse, replace the value of every string node (and
// every string no other node or named edge uses) with its length and a
// hash, and write it back with JSON.stringify.
//   node --max-old-space-size=20000 bench/redact-naive.mjs IN OUT
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

const s = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const meta = s.snapshot.meta;
const width = meta.node_fields.length;
const edgeWidth = meta.edge_fields.length;
const types = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const kept = new Uint8Array(s.strings.length);
const values = new Set(['string', 'concatenated string', 'sliced string']);
for (let i = 0; i < s.nodes.length; i += width) {
  if (!values.has(types[s.nodes[i]])) kept[s.nodes[i + 1]] = 1;
}
for (let i = 0; i < s.edges.length; i += edgeWidth) {
  const type = edgeTypes[s.edges[i]];
  if (type !== 'element' && type !== 'hidden') kept[s.edges[i + 1]] = 1;
}
s.strings = s.strings.map((text, i) =>
  kept[i] ? text : `<redacted ${text.length} chars #${createHash('sha256').update(text).digest('hex').slice(0, 16)}>`,
);
writeFileSync(process.argv[3], JSON.stringify(s));
