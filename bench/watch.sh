#!/usr/bin/env bash
# `leakcheck watch` against a live server under autocannon's load, with no
# load or forced collection of its own.
#
# Part 1, the verdicts: RUNS watches (`-d 90s`) of tests/targets/
# watch-server.mjs with its slow leak (~0.3 KB per request) and of its clean
# twin, each under autocannon at 200 requests/s; a leak and a twin run at
# once. Each line: verdict, heapUsed trend, projection, first site named.
#
# Part 2, the cost to the target: the clean twin's throughput (autocannon
# -c 10, as fast as it goes), and at a fixed 1000 requests/s its p99
# latency and its CPU time per 1000 requests (from /proc/PID/stat: on two
# shared cores the least noisy of the three), ROUNDS rounds of: no watch,
# `watch` with its defaults, `watch --force-gc-every 10s`, in turn (the
# same load, a fresh server each).
# usage: bench/watch.sh [RUNS] [ROUNDS] [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-10}
rounds=${2:-5}
seconds=${3:-20}
. "$here/common.sh"
bench_start
server="$here/../tests/targets/watch-server.mjs"
autocannon="$here/node_modules/.bin/autocannon"
[ -x "$autocannon" ] || (cd "$here" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --silent --no-audit --no-fund)
echo "node $(node --version), $(nproc) cores; leakcheck $("$leakcheck" --version)"

start_server() { # MODE: a server on a free port; sets $port and $server_pid
  port=$(free_port)
  node --inspect-port=0 "$server" "$port" "$1" & server_pid=$!
  pids+=("$server_pid")
  wait_port "$port"
}

one_watch() { # NAME MODE: one watch of 90 s under 200 requests/s
  local name=$1 mode=$2 port server_pid
  start_server "$mode"
  "$autocannon" -R 200 -c 10 -d 100 "http://127.0.0.1:$port/" >/dev/null 2>&1 &
  local load=$!
  sleep 1
  "$leakcheck" watch --pid "$server_pid" -d 90s -q --checkpoint "$work/$name.ndjson" \
    --json "$work/$name.json" >/dev/null 2>&1 || true
  kill "$load" "$server_pid" 2>/dev/null || true
  python3 - "$work/$name.json" "$mode" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))['routes'][0]
w = r.get('watch', {})
fit = next((f for f in w.get('time_fits', []) if f['series'] == 'heapUsed'), None)
trend = '-' if fit is None else f"{fit['per_hour']/1048576:.0f} MB/h [{fit['lower_per_hour']/1048576:.0f}, {fit['upper_per_hour']/1048576:.0f}] floor {fit['floor_per_hour']/1048576:.0f}"
sites = (r.get('diagnosis') or {}).get('allocation_sites', [])
site = f"{sites[0]['function']}@{sites[0]['url'].rsplit('/', 1)[-1]}:{sites[0]['line']}" if sites else '-'
reach = w.get('reaches')
hours = f"{reach['hours']:.0f} h" if reach else '-'
print(sys.argv[2], r['verdict']['kind'], len(r['cycles']), trend, hours, site, sep='\t')
PY
}

echo "## verdicts: $runs watches of each, 90 s under 200 requests/s"
for i in $(seq "$runs"); do
  one_watch "leak-$i" leak > "$work/row-leak-$i" &
  one_watch "clean-$i" clean > "$work/row-clean-$i" &
  wait
  cat "$work/row-leak-$i" "$work/row-clean-$i"
done | tee "$work/rows"
for mode in leak clean; do
  awk -v m="$mode" '$1 == m { total++; kinds[$2]++ } END {
    printf "%s: %d watches:", m, total; for (k in kinds) printf " %s %d", k, kinds[k]; print "" }' "$work/rows"
done

measure() { # CONFIG: one round's throughput and p99 for CONFIG (none|default|forced)
  local config=$1 port server_pid watcher=""
  start_server clean
  "$autocannon" -c 10 -d 5 "http://127.0.0.1:$port/" >/dev/null 2>&1 # warm-up
  case $config in
    default) "$leakcheck" watch --pid "$server_pid" -d $((2 * seconds + 10))s -q \
               --checkpoint "$work/cost.ndjson" >/dev/null 2>&1 & watcher=$! ;;
    forced) "$leakcheck" watch --pid "$server_pid" -d $((2 * seconds + 10))s -q \
               --force-gc-every 10s --checkpoint "$work/cost.ndjson" >/dev/null 2>&1 & watcher=$! ;;
  esac
  sleep 2
  local rps p99 before after
  rps=$("$autocannon" -c 10 -d "$seconds" --json "http://127.0.0.1:$port/" 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"]["average"])')
  before=$(cpu_ticks "$server_pid")
  p99=$("$autocannon" -c 10 -R 1000 -d "$seconds" --json "http://127.0.0.1:$port/" 2>/dev/null \
    | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["latency"]["p99"], r["requests"]["total"])')
  after=$(cpu_ticks "$server_pid")
  [ -n "$watcher" ] && { kill -INT "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null || true; }
  kill "$server_pid" 2>/dev/null || true
  set -- $p99
  # CPU ms per 1000 requests at the fixed rate (ticks are 10 ms).
  echo "$config $rps $1 $(awk -v t=$((after - before)) -v n="$2" 'BEGIN { printf "%.1f", t * 10 * 1000 / n }')"
}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

echo
echo "## cost: $rounds rounds of ${seconds} s at full speed and ${seconds} s at 1000 requests/s"
for round in $(seq "$rounds"); do
  for config in none default forced; do measure "$config"; done
done | tee "$work/cost"
for config in none default forced; do
  rps=$(awk -v c="$config" '$1 == c { print $2 }' "$work/cost" | median)
  p99=$(awk -v c="$config" '$1 == c { print $3 }' "$work/cost" | median)
  cpu=$(awk -v c="$config" '$1 == c { print $4 }' "$work/cost" | median)
  echo "$config: median $rps requests/s, p99 $p99 ms and $cpu CPU ms per 1000 requests at 1000 requests/s"
done | tee "$work/medians"
awk 'NR == 1 { r = $3; p = $6; c = $9 } NR > 1 { printf "%s against no watch: throughput %.3f, p99 %.3f, CPU per request %.3f\n", $1, $3 / r, $6 / p, $9 / c }' "$work/medians"
