#!/usr/bin/env bash
# What an indefinite `leakcheck watch --all --metrics` of three processes
# costs, leakcheck itself and the targets: three clean watch servers
# (tests/targets/watch-server.mjs, started with --inspect-port=0 as the
# README's recipe says), each under autocannon at a fixed RATE requests/s
# in windows of WINDOW seconds. First BEFORE windows with no watch, then a
# watch with no -d (so the rolling window's judgement, the checkpoints and
# the profiles are those of a production watch) for WATCH seconds, its
# /metrics scraped every 15 s, with the same windows under it; then Ctrl-C.
#
# Per window and server: throughput and p99 latency (autocannon) and the
# server's CPU per 1000 requests (/proc/PID/stat). For leakcheck: its CPU
# seconds over the watch (utime + stime), its peak RSS (VmHWM), and the
# checkpoints' bytes.
# usage: bench/watch-fleet.sh [WATCH_SECONDS] [RATE] [WINDOW] [BEFORE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
watch_s=${1:-600}
rate=${2:-300}
window=${3:-60}
before=${4:-2}
. "$here/common.sh"
bench_start
server="$here/../tests/targets/watch-server.mjs"
autocannon="$here/node_modules/.bin/autocannon"
[ -x "$autocannon" ] || (cd "$here" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --silent --no-audit --no-fund)
echo "node $(node --version), $(nproc) cores; leakcheck $("$leakcheck" --version)"
mkdir -p "$work/fleet" "$work/checkpoints"
cp "$server" "$work/fleet/fleet-server.mjs"
ports=()
servers=()
for _ in 1 2 3; do
  port=$(free_port)
  node --inspect-port=0 "$work/fleet/fleet-server.mjs" "$port" clean >/dev/null 2>&1 &
  pids+=($!)
  servers+=($!)
  ports+=("$port")
  wait_port "$port"
done
ticks=$(getconf CLK_TCK)
cpu_of() { awk -v t="$ticks" '{print ($14 + $15) / t}' "/proc/$1/stat"; }

one_window() { # LABEL: RATE req/s on each server for WINDOW s; a line per server
  local label=$1 i after
  local -a before_cpu=() loads=()
  for i in 0 1 2; do before_cpu[i]=$(cpu_of "${servers[i]}"); done
  for i in 0 1 2; do
    "$autocannon" -j -R "$rate" -c 5 -d "$window" "http://127.0.0.1:${ports[i]}/" \
      >"$work/ac$i.json" 2>/dev/null &
    loads+=($!)
  done
  wait "${loads[@]}" || true
  for i in 0 1 2; do
    after=$(cpu_of "${servers[i]}")
    python3 - "$work/ac$i.json" "$label" "$i" "${before_cpu[i]}" "$after" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
requests = d['requests']['total']
cpu_ms = (float(sys.argv[5]) - float(sys.argv[4])) * 1000
print(sys.argv[2], f"server{sys.argv[3]}", f"{d['requests']['average']:.0f} req/s",
      f"p99 {d['latency']['p99']} ms", f"{cpu_ms / requests * 1000:.1f} CPU ms/1000", sep='\t')
PY
  done
}

echo "## no watch: $before windows of $window s at $rate req/s on each of 3 servers"
for _ in $(seq "$before"); do one_window none | tee -a "$work/rows"; done

metrics_port=$(free_port)
"$leakcheck" watch --all --match "$work/fleet" -q --metrics "127.0.0.1:$metrics_port" \
  --checkpoint "$work/checkpoints" --json "$work/fleet.json" >/dev/null 2>"$work/watch.err" &
watch_pid=$!
pids+=("$watch_pid")
sleep 5
(
  while kill -0 "$watch_pid" 2>/dev/null; do
    curl -s "http://127.0.0.1:$metrics_port/metrics" >"$work/last-metrics.txt" || true
    sleep 15
  done
) &
pids+=($!)
watch_cpu_0=$(cpu_of "$watch_pid")
started=$EPOCHREALTIME
elapsed() { awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN {printf "%d\n", b - a}'; }
echo "## under the watch: windows for $watch_s s"
while [ $(($(elapsed) + window)) -le "$watch_s" ]; do
  one_window watch | tee -a "$work/rows"
done
left=$((watch_s - $(elapsed)))
[ "$left" -gt 0 ] && sleep "$left"
watch_cpu=$(awk -v a="$watch_cpu_0" -v b="$(cpu_of "$watch_pid")" 'BEGIN {printf "%.2f", b - a}')
hwm=$(awk '/VmHWM/ {printf "%.1f MB", $2 / 1024}' "/proc/$watch_pid/status")
kill -INT "$watch_pid"
wait "$watch_pid" 2>/dev/null || true
disk=$(du -cb "$work"/checkpoints/*.ndjson* | tail -1 | cut -f1)
share=$(awk -v c="$watch_cpu" -v s="$watch_s" 'BEGIN {printf "%.2f", c / s * 100}')
echo "## leakcheck over $watch_s s: CPU $watch_cpu s ($share % of one core), peak RSS $hwm, checkpoints $disk bytes"
echo "processes with a verdict on the last scrape: $(grep -c '^leakcheck_watch_verdict.* 1$' "$work/last-metrics.txt" || true)"
python3 - "$work/fleet.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))['routes']:
    print(r['route'], r['verdict']['kind'], len(r['cycles']), 'readings in the window', sep='\t')
PY
echo "## medians"
for label in none watch; do
  tput=$(awk -F'\t' -v l="$label" '$1 == l {sub(/ req.*/, "", $3); print $3}' "$work/rows" | median)
  p99=$(awk -F'\t' -v l="$label" '$1 == l {sub(/p99 /, "", $4); sub(/ ms/, "", $4); print $4}' "$work/rows" | median)
  cpu=$(awk -F'\t' -v l="$label" '$1 == l {sub(/ CPU.*/, "", $5); print $5}' "$work/rows" | median)
  echo "$label: throughput $tput req/s, p99 $p99 ms, server CPU $cpu ms per 1000 requests"
done
