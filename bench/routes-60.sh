#!/usr/bin/env bash
# A 60-route Express app checked with no --route (route discovery, #50):
# 59 routes that keep nothing and one that keeps 1.5 KB a request, each
# checked in a fresh process with the defaults (--cycles auto). Prints the
# estimate leakcheck gave before the first route, the whole run's wall
# time, and what it found: routes checked, the leaking ones and their
# holder, and any clean route read otherwise.
# usage: bench/routes-60.sh [ROUTES]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
count=${1:-60}
. "$here/common.sh"
bench_start
routes_app "$count"
port=$(free_port)
start=$EPOCHREALTIME
"$leakcheck" run --url "http://127.0.0.1:$port" --json "$work/result.json" \
  -- node "$work/app.cjs" "$port" 2>"$work/progress.txt" >/dev/null || true
wall=$(seconds_since "$start")
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1]));
  const d = r.settings.discovery || {};
  const leaks = r.routes.filter((x) => ["retention", "off-heap-retention", "collection-growth", "counter-growth"].includes(x.verdict && x.verdict.kind));
  const named = leaks.map((x) => x.route + " held by " + ((x.diagnosis && x.diagnosis.holders[0] || {}).name || "-"));
  const others = {};
  for (const x of r.routes) if (!leaks.includes(x)) others[x.verdict.kind] = (others[x.verdict.kind] || 0) + 1;
  console.log(`declared ${d.declared}, checked ${r.routes.length}, skipped ${(d.skipped || []).length}; estimate ${Math.round(d.estimate_s)} s`);
  console.log(`leaks: ${named.join("; ") || "none"}; the rest: ${JSON.stringify(others)}`);
' "$work/result.json"
echo "wall: $wall s"
