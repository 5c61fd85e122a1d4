#!/usr/bin/env bash
# The diagnosis of a Next.js 15 production server (tests/targets/nextjs,
# next/react installed from npm and built in a scratch folder): RUNS runs
# of `run --route '/?id={n}'`; per run the whole run's wall time and the
# diagnosis' parts from the JSON (snapshot transfer and parse, sampling
# profile, analysis), and the holder it named. Medians at the end.
# usage: bench/nextjs-diagnosis.sh [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-3}
. "$here/common.sh"
bench_start
cp -r "$here/../tests/targets/nextjs/." "$work/app"
npm install --silent --no-audit --no-fund --no-save --prefix "$work/app" next@15 react@19 react-dom@19 >/dev/null
(cd "$work/app" && NEXT_TELEMETRY_DISABLED=1 node node_modules/next/dist/bin/next build >/dev/null)
: >"$work/rows"
for i in $(seq "$runs"); do
  port=$(free_port)
  t0=$EPOCHREALTIME
  NEXT_TELEMETRY_DISABLED=1 "$leakcheck" run -q --url "http://127.0.0.1:$port" --route '/?id={n}' \
    --json "$work/r.json" -- node "$work/app/node_modules/next/dist/bin/next" start "$work/app" \
    -p "$port" -H 127.0.0.1 >/dev/null || true
  wall=$(seconds_since "$t0")
  python3 - "$work/r.json" "$wall" <<'PY' | tee -a "$work/rows"
import json, sys
d = json.load(open(sys.argv[1]))['routes'][0]['diagnosis']
holder = d['holders'][0]['name'] if d['holders'] else '-'
print(f"{sys.argv[2]} {d['snapshot_seconds']:.2f} {d['profile_seconds']:.2f} {d['analysis_seconds']:.2f} "
      f"{d['snapshot_bytes'][0]/1048576:.1f} {d['snapshot_bytes'][1]/1048576:.1f} {holder}")
PY
done
col() { cut -d' ' -f"$1" "$work/rows" | median; }
echo "medians of $runs (wall, snapshots, profile, analysis in s; snapshot sizes in MiB):" \
  "$(col 1) $(col 2) $(col 3) $(col 4) $(col 5) $(col 6)"
