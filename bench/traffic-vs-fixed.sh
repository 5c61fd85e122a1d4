#!/usr/bin/env bash
# Realistic traffic costs: `leakcheck load` with a templated route
# (`/item?id={n}`, rendered per request) against the same fixed route, and
# wrk on the fixed route as the peer, all against nginx with one worker (so
# the generator is the limit); then a two-step scenario (a login that sets
# a cookie and returns a token, captured, then five requests) in
# iterations and requests per second. Medians of RUNS runs, tools
# interleaved in each run.
# usage: bench/traffic-vs-fixed.sh [RUNS] [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-5}
secs=${2:-5}
conns=10
command -v wrk >/dev/null || { echo "apt-get install wrk" >&2; exit 2; }
command -v nginx >/dev/null || { echo "apt-get install nginx-light" >&2; exit 2; }
. "$here/common.sh"
bench_start

port=$(free_port)
start_nginx "$port" "location /login { add_header Set-Cookie \"sid=s1; Path=/\"; return 200 '{\"access\":{\"token\":\"t1\"}}'; }
    location / { return 200 '{\"ok\":true}'; }"
cat >"$work/login.json" <<'JSON'
{ "steps": [
  { "method": "POST", "path": "/login", "body": { "user": "u{n}" }, "capture": { "token": "json:access.token" } },
  { "path": "/profile?u={n}", "repeat": 5, "headers": { "authorization": "Bearer {token}" } }
] }
JSON
base="http://127.0.0.1:$port"
lc() { "$leakcheck" load "$@" -c $conns -d ${secs}s --json - -q 2>/dev/null; }
rate() { node -e 'const j=JSON.parse(require("fs").readFileSync(0));console.log(j.requests.average, j.iterations_per_second ?? 0)'; }
for name in fixed templated wrk scenario; do : >"$work/$name.txt"; done
echo "machine: $(nproc) cores, $(uname -r), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), nginx 1 worker"
echo "each run: $conns connections, ${secs}s; medians of $runs runs"
for _ in $(seq "$runs"); do
  lc "$base/item?id=1" | rate >>"$work/fixed.txt"
  lc "$base/item?id={n}" | rate >>"$work/templated.txt"
  wrk -t1 -c$conns -d${secs}s "$base/item?id=1" | awk '/Requests\/sec/{print $2, 0}' >>"$work/wrk.txt"
  lc "$base/" --scenario "$work/login.json" | rate >>"$work/scenario.txt"
done
f=$(cut -d' ' -f1 "$work/fixed.txt" | median)
t=$(cut -d' ' -f1 "$work/templated.txt" | median)
w=$(cut -d' ' -f1 "$work/wrk.txt" | median)
s=$(cut -d' ' -f1 "$work/scenario.txt" | median)
i=$(cut -d' ' -f2 "$work/scenario.txt" | median)
printf '  leakcheck fixed /item?id=1      %8.0f req/s\n' "$f"
printf '  leakcheck templated /item?id={n} %7.0f req/s\n' "$t"
printf '  wrk -t1 fixed /item?id=1        %8.0f req/s\n' "$w"
printf '  leakcheck scenario (login + 5)  %8.0f req/s, %.0f iterations/s\n' "$s" "$i"
awk -v f="$f" -v t="$t" -v w="$w" 'BEGIN {printf "ratios: templated/fixed %.3f, templated/wrk %.3f, fixed/wrk %.3f\n", t/f, t/w, f/w}'
