#!/usr/bin/env bash
# Big leaks, dying targets and the peak sampler's cost
# (tests/targets/memory-server.mjs), RUNS times each, medians:
#   - /document (a ~600 KB document and a page timer kept per request)
#     with the defaults, and under --heap-limit 512MB;
#   - /big (2 MB per request) under --heap-limit 192MB in fixed cycles of
#     20, which the target does not survive (memory-exhausted);
# each: the verdict, the seconds to the verdict (the last cycle's reading,
# from the baseline), the whole run (verdict, diagnosis, stop), the two
# snapshots' sizes, and whether the holder or list named is `documents`.
# Then the sampler's cost: the demo's /churn, 3 × REQUESTS, with and
# without --no-peak, alternating; the median requests per second of all
# measured cycles and the ratio.
# With SLOW=1 also the heavy clean route /slow (~15 ms of work a request,
# --cycles auto), once: its time to a verdict.
# usage: bench/memory-exhaustion.sh [RUNS] [REQUESTS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-3}
requests=${2:-20000}
. "$here/common.sh"
bench_start
target="$here/../tests/targets/memory-server.mjs"

# check NAME ARGS...: one run, a line "NAME verdict seconds_to_verdict wall snapshots_mb holder"
check() {
  local name=$1; shift
  local port start wall
  port=$(free_port)
  start=$EPOCHREALTIME
  "$leakcheck" run -q --url "http://127.0.0.1:$port" "$@" --json "$work/$name.json" \
    -- node "$target" "$port" >/dev/null 2>&1 || true
  wall=$(seconds_since "$start")
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1])).routes[0];
    const last = r.cycles[r.cycles.length - 1] || {};
    const d = r.diagnosis || {};
    const mb = (d.snapshot_bytes || []).map((b) => (b / 1048576).toFixed(1)).join("+") || "-";
    const named = /`documents/.test(r.verdict.action) ? "documents" : "-";
    console.log([process.argv[2], r.verdict.kind, (last.read_at_s || 0).toFixed(2), process.argv[3], mb, named].join(" "));
  ' "$work/$name.json" "$name" "$wall" >>"$work/checks.txt"
}

for _ in $(seq "$runs"); do
  check document-default --route /document
  check document-512mb --route /document --heap-limit 512MB
  check big-192mb --route /big --heap-limit 192MB -a 20 --cycles 10
done
echo "machine: $(nproc) cores, node $(node --version), $(date +%F); $runs runs each"
echo "| case | verdicts | median s to verdict | median s whole run | snapshots MB (each run) | named |"
echo "|---|---|---|---|---|---|"
for name in document-default document-512mb big-192mb; do
  grep "^$name " "$work/checks.txt" >"$work/one.txt"
  verdicts=$(awk '{print $2}' "$work/one.txt" | sort | uniq -c | awk '{printf "%s%s %s", sep, $2, $1; sep=", "}')
  to_verdict=$(awk '{print $3}' "$work/one.txt" | median)
  whole=$(awk '{print $4}' "$work/one.txt" | median)
  snaps=$(awk '{print $5}' "$work/one.txt" | paste -sd' ')
  named=$(awk '{print $6}' "$work/one.txt" | sort | uniq -c | awk '{printf "%s%s %s", sep, $2, $1; sep=", "}')
  echo "| $name | $verdicts | $to_verdict | $whole | $snaps | $named |"
done

rates() {  # the cycles' requests per second of one check of /churn
  local port
  port=$(free_port)
  "$leakcheck" run -q --url "http://127.0.0.1:$port" --route /churn -a "$requests" --cycles 3 \
    --no-diagnose "$@" --json "$work/rates.json" -- node "$here/../examples/demo-server.mjs" "$port" \
    >/dev/null || true
  node -e 'for (const c of JSON.parse(require("fs").readFileSync(process.argv[1])).routes[0].cycles) console.log(c.load.requests_per_second)' \
    "$work/rates.json"
}
: >"$work/on"; : >"$work/off"
for _ in $(seq "$runs"); do
  rates >>"$work/on"
  rates --no-peak >>"$work/off"
done
on=$(median <"$work/on"); off=$(median <"$work/off")
echo "peak sampler, /churn, $runs checks × 3 cycles × $requests requests each way:"
echo "  sampling: median $on req/s; --no-peak: median $off req/s"
awk -v on="$on" -v off="$off" 'BEGIN { printf "  cost: %.1f %% of throughput (on/off = %.3f)\n", 100 * (1 - on / off), on / off }'

if [ "${SLOW:-0}" = 1 ]; then
  check slow --route /slow
  echo "heavy clean route /slow (--cycles auto): $(grep '^slow ' "$work/checks.txt" | awk '{print $2 ", verdict after " $3 " s, whole run " $4 " s"}')"
fi
