#!/usr/bin/env bash
# A route whose one growth is a log filling to its cap (traffic-server's
# /logged, `recentVisits` trimmed to its last 10 000): RUNS checks of 3 ×
# 2 000 requests. For each, the verdict, the whole run's wall time, the
# collection's state and the readings after the cap (their span in
# requests, slope and bound); then how many read no-retention and the
# median wall time.
# usage: bench/capped-log.sh [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-3}
source "$here/common.sh"
bench_start
times=()
clean=0
for i in $(seq "$runs"); do
  port=$(free_port)
  start=$EPOCHREALTIME
  "$leakcheck" run -q --url "http://127.0.0.1:$port" --route '/logged?id={n}' --cycles 3 \
    --requests 2000 --json "$work/run$i.json" \
    -- node "$here/../tests/targets/traffic-server.mjs" "$port" >/dev/null 2>&1 || true
  took=$(seconds_since "$start")
  times+=("$took")
  kind=$(node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).routes[0];
    const c = (r.diagnosis?.collections ?? []).map((c) => `${c.name} ${c.state} at ${c.entries_after}`);
    console.log(`${r.verdict.kind}\t${c.join(", ")}\t${r.verdict.summary.slice(0, 160)}`);
  ' "$work/run$i.json")
  echo "run $i: ${took} s: $kind"
  [[ $kind == no-retention* ]] && clean=$((clean + 1))
done
echo "no-retention in $clean of $runs; median wall $(printf '%s\n' "${times[@]}" | median) s"
