#!/usr/bin/env bash
# What observing the event loop and the collector costs the target: the
# demo's /churn (a route that allocates and drops per request, so its
# collections are frequent) checked with the loop and GC statistics on and
# with --no-loop-stats, alternating, RUNS times each. Prints the median
# requests per second of the measured cycles (all cycles of all runs) for
# each, and the ratio. The handle and listener counts are read only at the
# settled readings, outside the load, so they do not enter this figure.
# usage: bench/loop-overhead.sh [RUNS] [REQUESTS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-5}
requests=${2:-20000}
. "$here/common.sh"
bench_start

rates() {  # the cycles' requests per second of one check, one per line
  local port
  port=$(free_port)
  "$leakcheck" run -q --url "http://127.0.0.1:$port" --route /churn -a "$requests" \
    --no-diagnose "$@" --json "$work/run.json" -- node "$here/../examples/demo-server.mjs" "$port" \
    >/dev/null || true
  node -e 'for (const c of JSON.parse(require("fs").readFileSync(process.argv[1])).routes[0].cycles) console.log(c.load.requests_per_second)' \
    "$work/run.json"
}

: >"$work/on"; : >"$work/off"
for _ in $(seq "$runs"); do
  rates >>"$work/on"
  rates --no-loop-stats >>"$work/off"
done
echo "on:  $(sort -n "$work/on" | tr "\n" " ")"; echo "off: $(sort -n "$work/off" | tr "\n" " ")"
on=$(median <"$work/on")
off=$(median <"$work/off")
echo "/churn, $runs checks × 3 cycles × $requests requests each way"
echo "with loop and GC statistics: median $on req/s"
echo "with --no-loop-stats:        median $off req/s"
awk -v on="$on" -v off="$off" 'BEGIN { printf "cost: %.1f %% of throughput (on/off = %.3f)\n", 100 * (1 - on / off), on / off }'
