#!/usr/bin/env bash
# A ROUTES-route Express app (bench/routes-60.sh's: every route clean but
# /leaky/:id, 1.5 KB a request) checked with no --route: the whole run on
# one runner with -j 1, then with -j 2 (routes side by side), then each of
# SHARDS shards (`--shard I/N`) one after another as N CI runners would run
# them at once, then `report --merge` of the shards. Per run: wall time,
# the CPU seconds of leakcheck and its targets (what a route costs the
# machine, for what -j would gain on more cores), routes checked, the
# estimate leakcheck printed for its routes, and whether the verdicts of
# -j 2 and of the merge equal -j 1's.
# usage: bench/routes-shards.sh [ROUTES] [SHARDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
count=${1:-30}
shards=${2:-4}
. "$here/common.sh"
bench_start
routes_app "$count"
one_run() { # JSON [ARGS…]: one run of the app; prints its wall time
  local json=$1
  shift
  local port start
  port=$(free_port)
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$leakcheck" run -q \
    --url "http://127.0.0.1:$port" --json "$json" "$@" \
    -- node "$work/app.cjs" "$port" >/dev/null 2>&1 || true
  # The last line: a failing run's exit status comes first.
  tail -1 "$work/time" | awk '{printf "%.1f s, CPU %.1f s", $1, $2 + $3}'
}
summary() { # JSON WALL LABEL
  node -e '
    const [file, wall, label] = process.argv.slice(1);
    const r = JSON.parse(require("fs").readFileSync(file));
    const d = r.settings.discovery || { checked: [] };
    // The estimate is per route (requests at its pace, plus a fixed
    // overhead): a shard`s is its routes` share of the whole.
    const perRoute = d.estimate_s / Math.max(d.checked.length, 1);
    const estimate = r.settings.shard ? perRoute * r.routes.length : d.estimate_s;
    const leaks = r.routes.filter((x) => x.verdict && x.verdict.leak).map((x) => x.route);
    console.log([label, wall, `${r.routes.length} routes`, `estimate ${Math.round(estimate)} s`,
      `leaks: ${leaks.join(" ") || "none"}`].join("\t"));
  ' "$1" "$2" "$3"
}
wall=$(one_run "$work/whole.json" -j 1)
summary "$work/whole.json" "$wall" "one runner, -j 1"
wall=$(one_run "$work/j2.json" -j 2)
summary "$work/j2.json" "$wall" "one runner, -j 2"
mkdir "$work/shards"
longest=0
for i in $(seq "$shards"); do
  wall=$(one_run "$work/shards/shard-$i.json" --shard "$i/$shards" -j 1)
  summary "$work/shards/shard-$i.json" "$wall" "shard $i/$shards"
  longest=$(awk -v a="$longest" -v b="${wall%% s*}" 'BEGIN {print (b > a) ? b : a}')
done
echo "longest shard: $longest s"
"$leakcheck" report --merge "$work/shards" --json "$work/merged.json" >/dev/null 2>&1 || true
node -e '
  const fs = require("fs");
  const v = (f) => JSON.parse(fs.readFileSync(f)).routes.map((r) => r.route + "=" + r.verdict.kind).sort().join(",");
  for (const [label, file] of [["-j 2", process.argv[2]], ["the merge", process.argv[3]]])
    console.log(label + ": verdicts " + (v(process.argv[1]) === v(file) ? "equal" : "DIFFER from") + " those of -j 1");
' "$work/whole.json" "$work/j2.json" "$work/merged.json"
