#!/usr/bin/env bash
# What the native diagnosis costs beside a normal (heap snapshot) one, on
# the FFI target (tests/targets/native/ffi-leak.mjs, koffi installed in a
# scratch folder): `run --route /work` with --no-diagnose, and with the
# diagnosis, which there takes the snapshots and then records a fresh
# process under heaptrack. Per run: the wall time of each, the native
# diagnosis' own seconds (`routes[0].native.seconds`) and the snapshot
# diagnosis' share (the wall difference minus the native seconds); the
# medians of RUNS runs and their ratio.
# usage: bench/native-diagnosis.sh [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-5}
. "$here/common.sh"
command -v heaptrack >/dev/null || { echo "apt-get install heaptrack" >&2; exit 2; }
bench_start
npm install --silent --no-audit --no-fund --prefix "$work" koffi@3 >/dev/null
cp "$here/../tests/targets/native/ffi-leak.mjs" "$work/"
: >"$work/rows"
for i in $(seq "$runs"); do
  port=$(free_port)
  t0=$EPOCHREALTIME
  "$leakcheck" run -q --url "http://127.0.0.1:$port" --route /work --no-diagnose \
    -- node "$work/ffi-leak.mjs" "$port" >/dev/null || true
  bare=$(seconds_since "$t0")
  port=$(free_port)
  t0=$EPOCHREALTIME
  "$leakcheck" run -q --url "http://127.0.0.1:$port" --route /work --json "$work/r.json" \
    -- node "$work/ffi-leak.mjs" "$port" >/dev/null || true
  full=$(seconds_since "$t0")
  native=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['routes'][0]['native']['seconds'])" "$work/r.json")
  echo "$bare $full $native" | awk '{printf "%s %s %.3f %.3f\n", $1, $2, $3, $2 - $1 - $3}' >>"$work/rows"
  echo "run $i: no diagnosis ${bare}s, with ${full}s, native $(cut -d' ' -f3 <(tail -1 "$work/rows"))s, snapshots $(cut -d' ' -f4 <(tail -1 "$work/rows"))s"
done
col() { cut -d' ' -f"$1" "$work/rows" | median; }
native=$(col 3); snap=$(col 4)
echo "medians of $runs: run without diagnosis $(col 1) s, with $(col 2) s; snapshot diagnosis $snap s, native diagnosis $native s"
awk -v n="$native" -v s="$snap" 'BEGIN {printf "native / snapshot diagnosis: %.2fx\n", n / s}'
python3 -c "
import json,sys; r=json.load(open(sys.argv[1]))['routes'][0]
print('last run:', r['verdict']['kind'], '|', r['verdict']['action'][:160])" "$work/r.json"
