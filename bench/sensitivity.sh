#!/usr/bin/env bash
# Sensitivity and false alarms of the verdict: RUNS runs of CYCLES cycles x
# REQUESTS requests on routes that keep 48, 24, 12 and 6 bytes per request,
# and on routes that keep nothing (churn, a bounded cache, 100 KB of garbage
# per request). Prints, per route, how often each verdict came out.
# usage: bench/sensitivity.sh [RUNS] [REQUESTS] [CYCLES]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-10}
requests=${2:-20000}
cycles=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$here/.." && cargo build --release -q)
leakcheck="$here/../target/release/leakcheck"
routes=(/small '/small?every=2' '/small?every=4' '/small?every=8' /churn /bounded-cache /temp-big)
args=()
for r in "${routes[@]}"; do args+=(--route "$r"); done
echo "machine: $(nproc) cores, node $(node --version); $runs runs of $cycles x $requests requests per route"
for i in $(seq "$runs"); do
  echo "run $i/$runs" >&2
  "$leakcheck" run -q --url http://127.0.0.1:9761 -a "$requests" --cycles "$cycles" --no-diagnose \
    "${args[@]}" --json "$work/run$i.json" \
    -- node "$here/../tests/targets/rows-server.mjs" 9761 >/dev/null || true
done
node - "$work" "$runs" <<'JS'
const fs = require('fs');
const [dir, runs] = process.argv.slice(2);
const byRoute = new Map();
for (let i = 1; i <= Number(runs); i++) {
  const result = JSON.parse(fs.readFileSync(`${dir}/run${i}.json`, 'utf8'));
  for (const r of result.routes) {
    const entry = byRoute.get(r.route) ?? { kinds: {}, slopes: [] };
    const kind = r.verdict ? r.verdict.kind : 'none';
    entry.kinds[kind] = (entry.kinds[kind] ?? 0) + 1;
    entry.slopes.push(r.retained_bytes_per_request ? r.retained_bytes_per_request.heap_used : NaN);
    byRoute.set(r.route, entry);
  }
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
for (const [route, e] of byRoute) {
  const kinds = Object.entries(e.kinds).map(([k, n]) => `${k} ${n}`).join(', ');
  console.log(`${route.padEnd(16)} ${kinds.padEnd(40)} median heapUsed slope ${median(e.slopes).toFixed(1)} B/request`);
}
JS
