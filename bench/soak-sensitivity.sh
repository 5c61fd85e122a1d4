#!/usr/bin/env bash
# The soak twin of sensitivity.sh: 60 s soaks (`-d 60s --every 5s -R 500`)
# judged on their trend with time. False alarms: RUNS soaks of each clean
# target (the bounded sampler twin, the demo's /churn) that end in a leak
# verdict. Detection: RUNS soaks of the interval-fed sampler at 1 and 2
# samples a tick (about 35 and 70 MB of heap an hour) that end in
# retention. PARALLEL soaks run at once (more noise: a conservative count).
# usage: bench/soak-sensitivity.sh [RUNS] [PARALLEL]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-15}
parallel=${2:-5}
. "$here/common.sh"
bench_start
sampler="$here/../tests/targets/sampler-server.mjs"
demo="$here/../examples/demo-server.mjs"
one() { # NAME ROUTE COMMAND...: one soak (PORT in COMMAND is its port), its verdict and trend
  local name=$1 route=$2; shift 2
  local port; port=$(free_port)
  local command=("${@//PORT/$port}")
  "$leakcheck" soak -q --url "http://127.0.0.1:$port" --route "$route" -d 60s --every 5s -R 500 \
    --no-diagnose --json "$work/$name.json" -- "${command[@]}" >/dev/null 2>&1 || true
  python3 - "$work/$name.json" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))['routes'][0]
fit = next((f for f in r.get('soak', {}).get('time_fits', []) if f['series'] == 'heapUsed'), None)
trend = '-' if fit is None else f"{fit['per_hour']/1048576:.1f} MB/h [{fit['lower_per_hour']/1048576:.1f}, {fit['upper_per_hour']/1048576:.1f}] floor {fit['floor_per_hour']/1048576:.1f}"
print(sys.argv[2].rsplit('-', 1)[0], r['verdict']['kind'], trend)
PY
}
batch() { # NAME ROUTE ARGS...: RUNS soaks, PARALLEL at a time
  local name=$1; shift
  for i in $(seq "$runs"); do
    one "$name-$i" "$@" &
    if (( i % parallel == 0 )); then wait; fi
  done
  wait
}
{
  batch twin /work node "$sampler" PORT bounded 2
  batch churn /churn node "$demo" PORT
  batch leak35 /work node "$sampler" PORT leak 1
  batch leak70 /work node "$sampler" PORT leak 2
} | tee "$work/rows"
echo
for name in twin churn leak35 leak70; do
  awk -v n="$name" '$1 == n { total++; kinds[$2]++ } END {
    printf "%s: %d soaks:", n, total; for (k in kinds) printf " %s %d", k, kinds[k]; print "" }' "$work/rows"
done
