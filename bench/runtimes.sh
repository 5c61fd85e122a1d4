#!/usr/bin/env bash
# Node, Deno and Bun: time to a verdict on the same leak (bench/runtimes/
# leak.mjs, 1 KB kept per request, each runtime on its own server API;
# `run --route '/remember?id={n}'`, sequential cycles, diagnosis included),
# and the load generator's throughput against Deno.serve and Bun.serve
# (/health) beside wrk's, 10 connections, 5 s. Medians of RUNS runs.
# Needs: wrk, and deno and bun on the PATH (npm i deno bun).
# usage: bench/runtimes.sh [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
runs=${1:-5}
command -v deno >/dev/null && command -v bun >/dev/null || { echo "put deno and bun on the PATH (npm i deno bun)" >&2; exit 2; }
bench_start
leak="$here/runtimes/leak.mjs"
echo "machine: $(nproc) cores, $(uname -r); node $(node --version), deno $(deno --version | head -1 | cut -d' ' -f2), bun $(bun --version), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"

# exec: the pid the caller records is the server's own, stopped at exit.
start() { # runtime port
  case $1 in
    node) exec node "$leak" "$2" ;;
    deno) exec deno run -A "$leak" "$2" ;;
    bun) exec bun "$leak" "$2" ;;
  esac
}

echo "== time to verdict (s), run --route '/remember?id={n}', diagnosis included"
for runtime in node deno bun; do
  times=()
  for _ in $(seq "$runs"); do
    port=$(free_port)
    command=(node "$leak" "$port")
    [ "$runtime" = deno ] && command=(deno run -A "$leak" "$port")
    [ "$runtime" = bun ] && command=(bun "$leak" "$port")
    t0=$EPOCHREALTIME
    code=0
    "$leakcheck" run --url "http://127.0.0.1:$port" --route '/remember?id={n}' --json "$work/$runtime.json" -q -- "${command[@]}" >/dev/null 2>&1 || code=$?
    took=$(seconds_since "$t0"); times+=("$took")
    verdict=$(node -e 'const j=require(process.argv[1]);const r=j.routes[0];console.log(r.verdict.kind, (r.retained_bytes_per_request?.heap_used ?? "?"), r.diagnosis?.holders?.[0]?.name ?? "-")' "$work/$runtime.json")
    echo "  $runtime: $took s, exit $code, $verdict"
  done
  echo "$runtime median: $(printf '%s\n' "${times[@]}" | median) s"
done

echo "== throughput (requests/s) against each runtime's server, /health, 10 connections, 5 s"
for runtime in deno bun; do
  port=$(free_port)
  (start "$runtime" "$port" >/dev/null 2>&1) & pids+=($!)
  wait_port "$port"
  ours=(); theirs=()
  for _ in $(seq "$runs"); do
    ours+=("$("$leakcheck" load "http://127.0.0.1:$port/health" -c 10 -d 5s --json - -q 2>/dev/null | node -e 'const j=JSON.parse(require("fs").readFileSync(0));console.log(Math.round(j.requests.average))')")
    theirs+=("$(wrk -t1 -c10 -d5s "http://127.0.0.1:$port/health" | awk '/Requests\/sec/{printf "%.0f\n", $2}')")
  done
  o=$(printf '%s\n' "${ours[@]}" | median); w=$(printf '%s\n' "${theirs[@]}" | median)
  echo "$runtime: leakcheck load $o/s (runs: ${ours[*]}), wrk $w/s (runs: ${theirs[*]}), ratio $(awk -v a="$o" -v b="$w" 'BEGIN {printf "%.2f", a/b}')"
done
