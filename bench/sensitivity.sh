#!/usr/bin/env bash
# Sensitivity, false alarms and cost of the verdict, fixed cycles against
# `--cycles auto`, run by run interleaved so both see the same machine:
#   - the demo's /leak (about 0.4 KB a request);
#   - rows-server routes that keep 48, 24 and 12 bytes per request
#     (/small, ?every=2, ?every=4);
#   - routes that keep nothing: /churn, a bounded cache, 100 KB of garbage
#     per request (/temp-big).
# Per case: how often each verdict came out in each mode; how often two
# runs agree (fixed with fixed, auto with fixed: pairs of different runs);
# false alarms on the routes that keep nothing; the median requests to a
# verdict; the median wall time of a whole run of each target.
# usage: bench/sensitivity.sh [RUNS] [FIXED_REQUESTS] [FIXED_CYCLES]
# SENSITIVITY_KEEP=DIR copies every run's JSON and wall times there (the
# table only gives medians; the per-run counts are read from those files).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-10}
requests=${2:-20000}
cycles=${3:-3}
work=$(mktemp -d)
keep=${SENSITIVITY_KEEP:-}
trap 'if [ -n "$keep" ]; then mkdir -p "$keep" && cp -r "$work"/. "$keep"/; fi; rm -rf "$work"' EXIT
(cd "$here/.." && cargo build --release -q)
leakcheck="$here/../target/release/leakcheck"
rows=(/small '/small?every=2' '/small?every=4' /churn /bounded-cache /temp-big)
row_args=()
for r in "${rows[@]}"; do row_args+=(--route "$r"); done
declare -A flags=([fixed]="--cycles $cycles -a $requests" [auto]="--cycles auto")

# check MODE TARGET RUN ARGS... -> $work/MODE-TARGET-RUN.json and its wall time
check() {
  local mode=$1 target=$2 i=$3; shift 3
  local start end
  start=$(date +%s.%N)
  # shellcheck disable=SC2086 # the mode's flags are words
  "$leakcheck" run -q --no-diagnose ${flags[$mode]} --json "$work/$mode-$target-$i.json" "$@" >/dev/null || true
  end=$(date +%s.%N)
  echo "$mode $target $(echo "$end - $start" | bc)" >>"$work/times.txt"
}

echo "machine: $(nproc) cores, node $(node --version), $(date -u +%F); $runs runs per mode;" \
  "fixed: $cycles x $requests requests; auto: --cycles auto with its defaults"
for i in $(seq "$runs"); do
  echo "run $i/$runs" >&2
  for mode in fixed auto; do
    check "$mode" rows "$i" --url http://127.0.0.1:9761 "${row_args[@]}" \
      -- node "$here/../tests/targets/rows-server.mjs" 9761
    check "$mode" demo "$i" --url http://127.0.0.1:9762 --route /leak \
      -- node "$here/../examples/demo-server.mjs" 9762
  done
done
node - "$work" "$runs" <<'JS'
const fs = require('fs');
const [dir, runs] = process.argv.slice(2);
const cases = new Map(); // route -> { fixed: [{kind, leak, requests}], auto: [...] }
for (const mode of ['fixed', 'auto']) {
  for (let i = 1; i <= Number(runs); i++) {
    for (const target of ['demo', 'rows']) {
      const file = `${dir}/${mode}-${target}-${i}.json`;
      if (!fs.existsSync(file)) continue;
      for (const r of JSON.parse(fs.readFileSync(file, 'utf8')).routes) {
        const name = target === 'demo' ? `demo ${r.route}` : r.route;
        const entry = cases.get(name) ?? { fixed: [], auto: [] };
        const units = r.cycles.reduce((sum, c) => sum + (c.units ?? c.responses), 0);
        entry[mode].push({
          kind: r.verdict ? r.verdict.kind : 'none',
          leak: Boolean(r.verdict && ['retention', 'off-heap-retention', 'counter-growth'].includes(r.verdict.kind)),
          requests: r.sequential ? r.sequential.decided_after_requests : units,
          stopped: r.sequential ? r.sequential.stopped : 'fixed',
        });
        cases.set(name, entry);
      }
    }
  }
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN; };
const counts = (runs) => Object.entries(runs.reduce((m, r) => ({ ...m, [r.kind]: (m[r.kind] ?? 0) + 1 }), {}))
  .map(([k, n]) => `${k} ${n}`).join(', ');
// Pairs of different runs that reached the same verdict.
const agreement = (a, b, same) => {
  let agree = 0, pairs = 0;
  a.forEach((x, i) => b.forEach((y, j) => { if (same && i === j) return; pairs += 1; agree += x.kind === y.kind; }));
  return pairs ? agree / pairs : NaN;
};
const keepsNothing = new Set(['/churn', '/bounded-cache', '/temp-big']);
let alarms = 0, clean = 0;
console.log('| case | fixed verdicts | auto verdicts | fixed~fixed | auto~fixed | median requests fixed / auto | auto stops |');
console.log('|---|---|---|---|---|---|---|');
for (const [name, e] of cases) {
  if (keepsNothing.has(name)) { clean += e.auto.length; alarms += e.auto.filter((r) => r.leak).length; }
  const stops = counts(e.auto.map((r) => ({ kind: r.stopped })));
  console.log(`| ${name} | ${counts(e.fixed)} | ${counts(e.auto)} | ${agreement(e.fixed, e.fixed, true).toFixed(2)} | ${agreement(e.auto, e.fixed, false).toFixed(2)} | ${median(e.fixed.map((r) => r.requests))} / ${median(e.auto.map((r) => r.requests))} | ${stops} |`);
}
console.log(`false alarms of --cycles auto on routes that keep nothing: ${alarms} of ${clean} runs`);
const times = fs.readFileSync(`${dir}/times.txt`, 'utf8').trim().split('\n').map((l) => l.split(' '));
for (const target of ['demo', 'rows']) {
  const of = (mode) => median(times.filter((t) => t[0] === mode && t[1] === target).map((t) => Number(t[2])));
  console.log(`median wall time of a ${target} run: fixed ${of('fixed').toFixed(1)} s, auto ${of('auto').toFixed(1)} s (${(of('fixed') / of('auto')).toFixed(2)}x)`);
}
JS
