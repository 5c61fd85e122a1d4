#!/usr/bin/env bash
# Time to a verdict on the three kinds of work issue 60 named, this build
# against another (BEFORE, a leakcheck binary built from an earlier
# commit), run by run interleaved so both see the same machine:
#   heavy  a clean route doing ~15 ms of rendering a request
#          (tests/targets/memory-server.mjs /slow), `run` with its defaults
#          and --no-diagnose;
#   fn     a function that registers a plugin on every call and runs them
#          all (bench/slowing-plugins.mjs#register, each hook a thousand
#          steps): it keeps memory and slows as it goes; `fn` with its
#          defaults (diagnosis included: the holder is part of the answer);
#   dom    a clean route rendering a server-side DOM with jsdom and
#          closing it (bench/dom-closed.cjs; jsdom from the known-leak
#          tests' install, target/tmp/known: skipped without it), `run`
#          with its defaults and --no-diagnose;
#   watch  a live server keeping ~6 KB a request at 1 500 requests/s
#          (about 30 GB/h) against its default heap limit (~4 GB here):
#          watch-server.mjs at scale 40, driven by `leakcheck load`, a
#          separate process; `watch --pid -d 180s --until-decided`. Its own
#          major collections come further apart as the heap grows.
# Each line: case, build, wall seconds, verdict, and for `watch` the
# seconds the watch itself took and its readings. A run is cut at LIMIT
# seconds (the verdict then reads `cut`).
# CASES="heavy dom fn watch" (the default) chooses which run.
# usage: bench/time-to-verdict.sh BEFORE [RUNS] [LIMIT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
before=${1:?usage: bench/time-to-verdict.sh BEFORE_BINARY [RUNS] [LIMIT]}
runs=${2:-3}
limit=${3:-600}
. "$here/common.sh"
bench_start
repo="$here/.."
echo "node $(node --version), $(nproc) cores; after: $("$leakcheck" --version); before: $("$before" --version)"

verdict_of() { # JSON -> kind
  node -e 'try { const r = require(process.argv[1]).routes[0]; console.log(r.verdict ? r.verdict.kind : "none") } catch { console.log("cut") }' "$1"
}

heavy() { # BINARY LABEL
  local port start
  port=$(free_port)
  start=$EPOCHREALTIME
  timeout "$limit" "$1" run -q --no-diagnose --url "http://127.0.0.1:$port/slow" --json "$work/heavy.json" \
    -- node "$repo/tests/targets/memory-server.mjs" "$port" >/dev/null 2>&1 || true
  echo "heavy $2 $(seconds_since "$start") $(verdict_of "$work/heavy.json")"
  rm -f "$work/heavy.json"
}

dom() { # BINARY LABEL
  local port start modules="$repo/target/tmp/known/node_modules"
  [ -d "$modules/jsdom" ] || { echo "dom $2 - skipped (run the known:: tests once for jsdom)"; return; }
  port=$(free_port)
  start=$EPOCHREALTIME
  NODE_PATH="$modules" timeout "$limit" "$1" run -q --no-diagnose --url "http://127.0.0.1:$port/" \
    --json "$work/dom.json" -- node "$here/dom-closed.cjs" "$port" >/dev/null 2>&1 || true
  echo "dom $2 $(seconds_since "$start") $(verdict_of "$work/dom.json")"
  rm -f "$work/dom.json"
}

fn() { # BINARY LABEL
  local start
  start=$EPOCHREALTIME
  timeout "$limit" "$1" fn -q "$here/slowing-plugins.mjs#register" --json "$work/fn.json" \
    >/dev/null 2>&1 || true
  echo "fn $2 $(seconds_since "$start") $(verdict_of "$work/fn.json")"
  rm -f "$work/fn.json"
}

watch() { # BINARY LABEL
  local port server load start
  port=$(free_port)
  node --inspect-port=0 "$repo/tests/targets/watch-server.mjs" "$port" leak 40 \
    >/dev/null 2>&1 & server=$!
  wait_port "$port"
  "$leakcheck" load "http://127.0.0.1:$port/" -q -c 10 -R 1500 -d 200s >/dev/null 2>&1 & load=$!
  start=$EPOCHREALTIME
  timeout "$limit" "$1" watch --pid "$server" -d 180s --until-decided --json "$work/watch.json" \
    --checkpoint "$work/watch.ndjson" >/dev/null 2>&1 || true
  local wall
  wall=$(seconds_since "$start")
  kill "$load" "$server" 2>/dev/null || true
  wait "$load" "$server" 2>/dev/null || true
  local detail
  detail=$(node -e 'try { const r = require(process.argv[1]).routes[0]; console.log(`${r.watch.elapsed_s.toFixed(1)} s watched, ${r.cycles.length} readings; ${r.watch.projection}`) } catch { console.log("-") }' "$work/watch.json")
  echo "watch $2 $wall $(verdict_of "$work/watch.json") ($detail)"
  rm -f "$work/watch.json" "$work/watch.ndjson"
}

for i in $(seq "$runs"); do
  echo "run $i/$runs" >&2
  for case in ${CASES:-heavy dom fn watch}; do
    "$case" "$before" before
    "$case" "$leakcheck" after
  done
done
