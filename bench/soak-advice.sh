#!/usr/bin/env bash
# Does following the soak's own advice decide? (#49 item 7)
# The time-fed target: tests/targets/sampler-server.mjs leak PER_TICK
# (1: ~170 B every 20 ms, about 30 MB an hour). RUNS times: a short soak
# (-d SHORT --every 5s -R 500); when it answers inconclusive with
# "Soak about … (-d Ns)", a fresh target soaked for that -d. One line per
# run: the short soak's verdict and its heapUsed fit, the advised -d, the
# follow-up's verdict and fit. Decided means retention with a projection.
# usage: bench/soak-advice.sh [RUNS] [SHORT] [PER_TICK]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-10}
short=${2:-60s}
per_tick=${3:-1}
. "$here/common.sh"
bench_start
target="$here/../tests/targets/sampler-server.mjs"

# soak DURATION OUT: one soak of a fresh sampler, the JSON at OUT.
soak() {
  local port
  port=$(free_port)
  "$leakcheck" soak -q --url "http://127.0.0.1:$port" --route /work -d "$1" --every 5s \
    -R 500 --no-diagnose --json "$2" -- node "$target" "$port" leak "$per_tick" \
    >/dev/null 2>&1 || true
}

# summary FILE: "verdict fit-per-hour[lower,upper]/floor advised-d projection?"
summary() {
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1])).routes[0];
    const v = r.verdict;
    const f = (r.soak.time_fits || []).find((x) => x.series === "heapUsed") || {};
    const mb = (x) => (x / 1048576).toFixed(1);
    const d = (v.action.match(/-d (\d+)s/) || [])[1] || "-";
    const projected = r.soak.hours_to_limit != null ? "projected" : "-";
    console.log(`${v.kind} ${mb(f.per_hour)}[${mb(f.lower_per_hour)},${mb(f.upper_per_hour)}]/${mb(f.floor_per_hour)} ${d} ${projected}`);
  ' "$1"
}

decided=0; advised=0
for i in $(seq "$runs"); do
  soak "$short" "$work/short.json"
  first=$(summary "$work/short.json")
  length=$(echo "$first" | cut -d' ' -f3)
  if [ "$length" = "-" ]; then
    echo "run $i: $first"
    continue
  fi
  advised=$((advised + 1))
  soak "${length}s" "$work/long.json"
  second=$(summary "$work/long.json")
  echo "run $i: $first  ->  -d ${length}s: $second"
  case "$second" in retention*projected) decided=$((decided + 1)) ;; esac
done
echo "advice followed $advised times, decided (retention, projected) $decided times"
