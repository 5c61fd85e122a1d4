#!/usr/bin/env bash
# Whole-check time and retained figure: the seed's `sh cycles.sh ROUTE 3 20000`
# against `leakcheck run` of the same route, same machine, same session.
# usage: bench/run-vs-seed.sh [RUNS]   (needs `npm i` in bench/ for autocannon)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-5}
work=$(mktemp -d)
trap 'kill $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
"$here/seed-extract.sh" "$work"
leakcheck="$here/../target/release/leakcheck"
(cd "$here/.." && cargo build --release -q)
port_free() { ! (exec 3<>/dev/tcp/127.0.0.1/9750) 2>/dev/null; }
. "$here/common.sh"
after_gc_mb() { grep 'after gc' | sed 's/.*"heapUsed":\([0-9.]*\).*/\1/'; }

seed_round() { # route -> prints "seconds after-gc-series"
  (cd "$work" && exec node --expose-gc mem-server.mjs >/dev/null) &
  echo $! >"$work/seed.pid"
  until ! port_free; do sleep 0.05; done
  local t0 t1 out
  t0=$(date +%s.%N)
  out=$(cd "$work" && PATH="$work/bin:$PATH" sh cycles.sh "$1" 3 20000)
  t1=$(date +%s.%N)
  kill "$(cat "$work/seed.pid")"; rm -f "$work/seed.pid"
  while ! port_free; do sleep 0.05; done
  echo "$(echo "$t1 - $t0" | bc) $(echo "$out" | after_gc_mb | tr '\n' ' ')"
}

leakcheck_round() { # route -> prints "seconds load-seconds per-request-bytes"
  local t0 t1
  t0=$(date +%s.%N)
  # --no-diagnose: the seed's method has no diagnosis step; bench/diagnosis.sh measures it.
  "$leakcheck" run -q --no-diagnose --url http://127.0.0.1:9750 --route "$1" --json "$work/lc.json" \
    -- node "$here/../examples/demo-server.mjs" 9750 >/dev/null || true
  t1=$(date +%s.%N)
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).routes[0];
    const load = r.cycles.reduce((s, c) => s + c.duration_s, 0);
    console.log(process.argv[2], load.toFixed(3), r.retained_bytes_per_request.heap_used.toFixed(0));
  ' "$work/lc.json" "$(echo "$t1 - $t0" | bc)"
}

echo "machine: $(nproc) cores, $(node --version), $(date -u +%F)"
for route in /churn /leak; do
  : >"$work/seed.txt"; : >"$work/lc.txt"
  for _ in $(seq "$runs"); do
    seed_round "$route" >>"$work/seed.txt"
    leakcheck_round "$route" >>"$work/lc.txt"
  done
  seed_s=$(cut -d' ' -f1 "$work/seed.txt" | median)
  lc_s=$(cut -d' ' -f1 "$work/lc.txt" | median)
  lc_load=$(cut -d' ' -f2 "$work/lc.txt" | median)
  lc_per=$(cut -d' ' -f3 "$work/lc.txt" | median)
  # The seed's figure: (last after-GC - first after-GC) / 60000 requests, in bytes.
  seed_per=$(awk '{print ($5 - $2) * 1048576 / 60000}' "$work/seed.txt" | median)
  echo "route $route, 3 x 20000 requests, median of $runs"
  echo "  seed cycles.sh  total ${seed_s}s  retained/request ${seed_per} B   series: $(head -1 "$work/seed.txt" | cut -d' ' -f2-)"
  echo "  leakcheck run   total ${lc_s}s  load ${lc_load}s  overhead $(echo "$lc_s - $lc_load" | bc)s  retained/request ${lc_per} B"
  echo "  ratio seed/leakcheck total: $(echo "scale=2; $seed_s / $lc_s" | bc)"
done
