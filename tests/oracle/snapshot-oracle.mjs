// An independent oracle for leakcheck's snapshot engine, in JavaScript:
// whole-file JSON.parse, the class key rules of src/snapshot/classes.rs,
// and dominators by Cooper, Harvey & Kennedy's iterative algorithm ("A
// Simple, Fast Dominance Algorithm", 2001), where leakcheck uses
// Lengauer–Tarjan: two different algorithms must give the same tree. Also
// the seed's tally by type and name, for the diff's "grew by self size".
//   node snapshot-oracle.mjs FILE  → JSON on stdout
import { readFileSync } from 'node:fs';

const [file] = process.argv.slice(2);
const s = JSON.parse(readFileSync(file, 'utf8'));
const meta = s.snapshot.meta;
const NF = meta.node_fields.length;
const EF = meta.edge_fields.length;
const F = (name) => meta.node_fields.indexOf(name);
const [fType, fName, fId, fSelf, fEdges] = ['type', 'name', 'id', 'self_size', 'edge_count'].map(F);
const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((n) => meta.edge_fields.indexOf(n));
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const n = s.nodes.length / NF;
const first = new Uint32Array(n + 1);
for (let i = 0; i < n; i++) first[i + 1] = first[i] + s.nodes[i * NF + fEdges];
const type = (i) => nodeTypes[s.nodes[i * NF + fType]];
const name = (i) => s.strings[s.nodes[i * NF + fName]];
const selfSize = (i) => s.nodes[i * NF + fSelf];
const edgeType = (e) => edgeTypes[s.edges[e * EF + eType]];
const edgeTo = (e) => s.edges[e * EF + eTo] / NF;
const edgeName = (e) => {
  const t = edgeType(e);
  const raw = s.edges[e * EF + eName];
  return t === 'element' || t === 'hidden' ? `[${raw}]` : s.strings[raw];
};
const essential = (from, e) => {
  const t = edgeType(e);
  return t !== 'weak' && (t !== 'shortcut' || from === 0);
};

function classKey(i) {
  const t = type(i);
  switch (t) {
    case 'object': case 'native': {
      if (name(i) !== 'Object') return name(i);
      const props = [];
      let more = false;
      for (let e = first[i]; e < first[i + 1]; e++) {
        if (edgeType(e) !== 'property') continue;
        const p = edgeName(e);
        if (p === '__proto__') continue;
        if (props.length === 6) { more = true; break; }
        props.push(p);
      }
      return props.length ? `Object {${props.join(', ')}${more ? ', …' : ''}}` : 'Object';
    }
    case 'closure': return '(closure)';
    case 'string': return '(string)';
    case 'concatenated string': return '(concatenated string)';
    case 'sliced string': return '(sliced string)';
    case 'code': return '(compiled code)';
    case 'array': return '(array)';
    case 'hidden': return '(system)';
    case 'regexp': return 'RegExp';
    case 'number': return '(heap number)';
    case 'symbol': return '(symbol)';
    case 'bigint': return '(bigint)';
    case 'object shape': return '(object shape)';
    case 'synthetic': return name(i);
    default: return `(${name(i)})`;
  }
}

// Postorder over essential edges from the root, then unreached nodes as root children.
const post = new Int32Array(n).fill(-1);
const order = [];
const virtualChild = new Uint8Array(n);
const visited = new Uint8Array(n);
function dfs(start) {
  const stack = [[start, first[start]]];
  visited[start] = 1;
  while (stack.length) {
    const top = stack[stack.length - 1];
    const [node, next] = top;
    if (next === first[node + 1]) { post[node] = order.length; order.push(node); stack.pop(); continue; }
    top[1]++;
    if (!essential(node, next)) continue;
    const to = edgeTo(next);
    if (!visited[to]) { visited[to] = 1; stack.push([to, first[to]]); }
  }
}
dfs(0);
for (let i = 0; i < n; i++) if (!visited[i]) { virtualChild[i] = 1; dfs(i); }
// The root must come last in postorder: re-number so it does.
const rootPost = order.length;
post[0] = rootPost;
const preds = Array.from({ length: n }, () => []);
for (let i = 0; i < n; i++) for (let e = first[i]; e < first[i + 1]; e++) if (essential(i, e)) preds[edgeTo(e)].push(i);
for (let i = 0; i < n; i++) if (virtualChild[i]) preds[i].push(0);
const idom = new Int32Array(n).fill(-1);
idom[0] = 0;
const intersect = (a, b) => {
  while (a !== b) {
    while (post[a] < post[b]) a = idom[a];
    while (post[b] < post[a]) b = idom[b];
  }
  return a;
};
const reverse = order.filter((x) => x !== 0).reverse();
for (let changed = true; changed;) {
  changed = false;
  for (const b of reverse) {
    let newIdom = -1;
    for (const p of preds[b]) {
      if (idom[p] === -1) continue;
      newIdom = newIdom === -1 ? p : intersect(p, newIdom);
    }
    if (newIdom !== -1 && idom[b] !== newIdom) { idom[b] = newIdom; changed = true; }
  }
}
const retained = new Float64Array(n);
for (let i = 0; i < n; i++) retained[i] = selfSize(i);
// Children before parents: increasing postorder.
const byPost = [...order.filter((x) => x !== 0), 0];
for (const v of byPost) if (v !== 0) retained[idom[v]] += retained[v];

// Class totals; class retained = members not dominated by a member of their class.
const classes = new Map();
const keys = new Array(n);
for (let i = 0; i < n; i++) {
  const k = classKey(i);
  keys[i] = k;
  const c = classes.get(k) ?? { class: k, count: 0, self_size: 0, retained_size: 0 };
  c.count++; c.self_size += selfSize(i);
  classes.set(k, c);
}
for (let i = 0; i < n; i++) {
  let d = idom[i], dominatedBySame = false;
  if (i !== 0) while (true) { if (keys[d] === keys[i]) { dominatedBySame = true; break; } if (d === 0) break; d = idom[d]; }
  if (!dominatedBySame) classes.get(keys[i]).retained_size += retained[i];
}
const retainedById = {};
for (let i = 0; i < n; i++) retainedById[s.nodes[i * NF + fId]] = retained[i];
let totalSelf = 0;
for (let i = 0; i < n; i++) totalSelf += selfSize(i);
// The seed's snapdiff.mjs tally: `${type}:${name}` → [count, self size].
const tally = {};
for (let i = 0; i < n; i++) {
  const k = `${type(i)}:${name(i)}`;
  const t = tally[k] ?? (tally[k] = [0, 0]);
  t[0]++; t[1] += selfSize(i);
}
console.log(JSON.stringify({
  nodes: n, edges: s.edges.length / EF, self_size: totalSelf,
  classes: [...classes.values()],
  retained_by_id: retainedById,
  tally,
}));
