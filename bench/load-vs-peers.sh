#!/usr/bin/env bash
# leakcheck load against wrk (apt) and autocannon (npm, `npm i` in bench/),
# same connections, same targets, one script so the ratios are fair:
#   - nginx with one worker serving a small static file (the generator is the limit)
#   - the demo server's /churn on Node (the server is the limit)
# Per tool: requests/s, and the generator's own CPU seconds (user + sys) per
# 10,000 requests and peak RSS, from /usr/bin/time. Medians of RUNS runs.
# Then leakcheck's peak RSS for 20,000 and 2,000,000 requests.
# usage: bench/load-vs-peers.sh [RUNS] [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-5}
secs=${2:-5}
conns=10
autocannon="$here/node_modules/.bin/autocannon"
[ -x "$autocannon" ] || { echo "run 'npm i' in bench/ first" >&2; exit 2; }
command -v wrk >/dev/null || { echo "apt-get install wrk" >&2; exit 2; }
command -v nginx >/dev/null || { echo "apt-get install nginx-light" >&2; exit 2; }

. "$here/common.sh"
bench_start

# nginx, one worker, in its own prefix.
nginx_port=$(free_port)
start_nginx "$nginx_port" "root $work/nginx/html;"
echo '{"ok":true,"rows":500}' >"$work/nginx/html/index.json"
node_port=$(free_port)
node "$here/../examples/demo-server.mjs" "$node_port" >/dev/null & pids+=($!)
wait_port "$nginx_port"; wait_port "$node_port"

# One measured run: prints "requests_per_s cpu_s_per_10k peak_rss_mb".
measure() { # tool url
  local tool=$1 url=$2 out=$work/out.txt tm=$work/time.txt reqs rps
  case $tool in
    leakcheck) /usr/bin/time -f '%U %S %M' -o "$tm" "$leakcheck" load "$url" -c $conns -d ${secs}s --json - -q >"$out" 2>/dev/null
      reqs=$(node -e 'const j=JSON.parse(require("fs").readFileSync(0));console.log(j.requests.total, j.requests.average)' <"$out") ;;
    wrk) /usr/bin/time -f '%U %S %M' -o "$tm" wrk -t1 -c$conns -d${secs}s "$url" >"$out"
      reqs="$(awk '/requests in/{print $1}' "$out") $(awk '/Requests\/sec/{print $2}' "$out")" ;;
    autocannon) /usr/bin/time -f '%U %S %M' -o "$tm" "$autocannon" -c $conns -d $secs -j "$url" >"$out" 2>/dev/null
      reqs=$(node -e 'const j=JSON.parse(require("fs").readFileSync(0));console.log(j.requests.total, j.requests.average)' <"$out") ;;
  esac
  read -r total rps <<<"$reqs"
  read -r user sys rss <<<"$(tail -1 "$tm")"
  awk -v t="$total" -v r="$rps" -v u="$user" -v s="$sys" -v m="$rss" \
    'BEGIN {printf "%.0f %.4f %.1f\n", r, (u+s)/t*10000, m/1024}'
}

echo "machine: $(nproc) cores, $(uname -r), node $(node --version), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), autocannon $("$autocannon" --version 2>/dev/null | head -1)"
echo "each run: $conns connections, ${secs}s; medians of $runs runs"
for target in nginx node; do
  if [ $target = nginx ]; then url="http://127.0.0.1:$nginx_port/index.json"; else url="http://127.0.0.1:$node_port/churn"; fi
  echo "target $target ($url)"
  for tool in leakcheck wrk autocannon; do : >"$work/$tool.txt"; done
  for _ in $(seq "$runs"); do
    for tool in leakcheck wrk autocannon; do measure $tool "$url" >>"$work/$tool.txt"; done
  done
  for tool in leakcheck wrk autocannon; do
    printf '  %-10s  %8s req/s  %7s CPU s/10k req  %6s MB peak RSS\n' "$tool" \
      "$(cut -d' ' -f1 "$work/$tool.txt" | median)" "$(cut -d' ' -f2 "$work/$tool.txt" | median)" \
      "$(cut -d' ' -f3 "$work/$tool.txt" | median)"
  done
  lc_rps=$(cut -d' ' -f1 "$work/leakcheck.txt" | median); wrk_rps=$(cut -d' ' -f1 "$work/wrk.txt" | median)
  lc_cpu=$(cut -d' ' -f2 "$work/leakcheck.txt" | median); wrk_cpu=$(cut -d' ' -f2 "$work/wrk.txt" | median)
  ac_cpu=$(cut -d' ' -f2 "$work/autocannon.txt" | median)
  awk -v a="$lc_rps" -v b="$wrk_rps" -v c="$lc_cpu" -v d="$wrk_cpu" -v e="$ac_cpu" \
    'BEGIN {printf "  ratios: leakcheck/wrk throughput %.2f, CPU per request leakcheck/wrk %.2f, leakcheck/autocannon %.2f\n", a/b, c/d, c/e}'
done

echo "leakcheck peak RSS by request count (nginx target)"
for n in 20000 2000000; do
  /usr/bin/time -f '%M' -o "$work/time.txt" "$leakcheck" load "http://127.0.0.1:$nginx_port/index.json" -c $conns -a $n -q >/dev/null
  echo "  -a $n: $(awk '{printf "%.1f", $1/1024}' "$work/time.txt") MB"
done
