#!/usr/bin/env bash
# `leakcheck fn` (#51), RUNS times each, medians:
#   - the harness's pace: an empty function, 3 cycles of 200 000 calls; the
#     calls per second of its cycles, beside a bare `for` loop awaiting the
#     same function in plain Node (the floor any harness pays);
#   - time to a verdict (the whole command) for a function keeping about
#     200 B a call, and for a clean parser, with the defaults (--cycles auto).
# usage: bench/function.sh [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-3}
. "$here/common.sh"
bench_start
cat >"$work/fns.mjs" <<'JS'
const kept = [];
export function empty() {}
// About 200 B a call: an object and a 150-character string.
export function keeps() { kept.push({ n: kept.length, text: 'x'.repeat(150) }); }
export function parse() { return JSON.parse('{"a":[1,2,3],"b":"' + 'y'.repeat(100) + '"}').a.length; }
JS
cat >"$work/floor.mjs" <<'JS'
import { empty } from './fns.mjs';
const n = 600000;
const start = performance.now();
for (let i = 0; i < n; i++) await Promise.resolve().then(() => empty());
console.log(Math.round(n / ((performance.now() - start) / 1000)));
JS
pace=(); floor=(); leak=(); clean=()
for _ in $(seq "$runs"); do
  "$leakcheck" fn "$work/fns.mjs#empty" -q --cycles 3 -n 200000 --json "$work/pace.json" >/dev/null 2>&1 || true
  pace+=("$(node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1]));const c=r.routes[0].cycles;console.log(Math.round(c.reduce((s,x)=>s+x.requests,0)/c.reduce((s,x)=>s+x.load.duration_s,0)))' "$work/pace.json")")
  floor+=("$(node "$work/floor.mjs")")
  start=$EPOCHREALTIME
  "$leakcheck" fn "$work/fns.mjs#keeps" -q --json "$work/leak.json" >/dev/null 2>&1 || true
  leak+=("$(seconds_since "$start") $(node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1]));const v=r.routes[0].verdict;console.log(v.kind+"/"+Math.round(v.figure.bytes_per_request)+"B/"+((r.routes[0].diagnosis||{}).holders||[{}])[0].name)' "$work/leak.json")")
  start=$EPOCHREALTIME
  "$leakcheck" fn "$work/fns.mjs#parse" -q --json "$work/clean.json" >/dev/null 2>&1 || true
  clean+=("$(seconds_since "$start") $(node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1]));console.log(r.routes[0].verdict.kind)' "$work/clean.json")")
done
echo "harness calls/s (empty function): ${pace[*]} -> median $(printf '%s\n' "${pace[@]}" | median)"
echo "bare node loop calls/s: ${floor[*]} -> median $(printf '%s\n' "${floor[@]}" | median)"
echo "200 B/call leak, s to verdict: ${leak[*]} -> median $(printf '%s\n' "${leak[@]}" | cut -d' ' -f1 | median)"
echo "clean parser, s to verdict: ${clean[*]} -> median $(printf '%s\n' "${clean[@]}" | cut -d' ' -f1 | median)"
