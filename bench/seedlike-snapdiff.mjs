// What the seed's snapdiff.mjs does, written for the benchmark: parse both
// files whole with JSON.parse, tally nodes by type and name, print the
// classes that grew most by self size, and walk the retainers of the
// largest array in the second snapshot.
//   node --max-old-space-size=20000 bench/seedlike-snapdiff.mjs BEFORE AFTER
import { readFileSync } from 'node:fs';

function load(file) {
  const s = JSON.parse(readFileSync(file, 'utf8'));
  const meta = s.snapshot.meta;
  const width = meta.node_fields.length;
  return { s, width, count: s.nodes.length / width, types: meta.node_types[0], edgeTypes: meta.edge_types[0] };
}

function tally(h) {
  const totals = new Map();
  for (let i = 0; i < h.count; i++) {
    const key = `${h.types[h.s.nodes[i * h.width]]}:${h.s.strings[h.s.nodes[i * h.width + 1]]}`;
    const t = totals.get(key) ?? [0, 0];
    t[0] += 1;
    t[1] += h.s.nodes[i * h.width + 3];
    totals.set(key, t);
  }
  return totals;
}

const [a, b] = [load(process.argv[2]), load(process.argv[3])];
const [ta, tb] = [tally(a), tally(b)];
const rows = [...tb].map(([k, [c, s]]) => [k, c - (ta.get(k)?.[0] ?? 0), s - (ta.get(k)?.[1] ?? 0)]);
rows.sort((x, y) => y[2] - x[2]);
console.log(`nodes ${a.count} -> ${b.count}`);
for (const [k, c, s] of rows.slice(0, 6)) console.log(`  ${k.slice(0, 40).padEnd(40)} ${c} objects ${(s / 1048576).toFixed(2)} MB`);

const w = b.width;
let big = 0;
for (let i = 1; i < b.count; i++) {
  if (b.types[b.s.nodes[i * w]] === 'array' && b.s.nodes[i * w + 3] > b.s.nodes[big * w + 3]) big = i;
}
const first = new Uint32Array(b.count + 1);
for (let i = 0; i < b.count; i++) first[i + 1] = first[i] + b.s.nodes[i * w + 4];
const back = new Map();
for (let i = 0; i < b.count; i++) {
  for (let e = first[i]; e < first[i + 1]; e++) {
    const to = b.s.edges[e * 3 + 2] / w;
    if (!back.has(to)) back.set(to, []);
    back.get(to).push([i, e]);
  }
}
let at = big;
const seen = new Set([big]);
for (let hop = 0; hop < 8; hop++) {
  const r = (back.get(at) ?? []).find(([from]) => !seen.has(from));
  if (!r) break;
  const [from, e] = r;
  console.log(`  <- ${b.edgeTypes[b.s.edges[e * 3]]} of ${b.types[b.s.nodes[from * w]]} "${b.s.strings[b.s.nodes[from * w + 1]]}"`);
  seen.add(from);
  at = from;
}
