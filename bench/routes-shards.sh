#!/usr/bin/env bash
# A ROUTES-route Express app (bench/routes-60.sh's: every route clean but
# /leaky/:id, 1.5 KB a request) checked with no --route: the whole run on
# one runner, then each of SHARDS shards (`--shard I/N`) one after another
# as N CI runners would run them side by side, then `report --merge` of
# the shards. Per run: wall time, routes checked, the estimate leakcheck
# printed for its routes (the shards' from their routes' paces), and
# whether the merged verdicts equal the whole run's.
# usage: bench/routes-shards.sh [ROUTES] [SHARDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
count=${1:-30}
shards=${2:-4}
. "$here/common.sh"
bench_start
(cd "$work" && npm init -y >/dev/null && npm i -q --no-audit --no-fund express@4 >/dev/null 2>&1)
cat >"$work/app.cjs" <<JS
const express = require('express');
const app = express();
const kept = new Map();
for (let i = 0; i < $count - 1; i++) {
  app.get('/r' + i + '/:id', (req, res) => res.json({ route: i, id: req.params.id, at: Date.now() }));
}
app.get('/leaky/:id', (req, res) => { kept.set(req.params.id, 'x'.repeat(1500)); res.json({ n: kept.size }); });
app.listen(Number(process.argv[2]), '127.0.0.1');
JS
one_run() { # JSON [ARGS…]: one run of the app; prints its wall time
  local json=$1
  shift
  local port start
  port=$(free_port)
  start=$EPOCHREALTIME
  "$leakcheck" run -q --url "http://127.0.0.1:$port" --json "$json" "$@" \
    -- node "$work/app.cjs" "$port" >/dev/null 2>&1 || true
  seconds_since "$start"
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
    console.log([label, `${wall} s`, `${r.routes.length} routes`, `estimate ${Math.round(estimate)} s`,
      `leaks: ${leaks.join(" ") || "none"}`].join("\t"));
  ' "$1" "$2" "$3"
}
wall=$(one_run "$work/whole.json")
summary "$work/whole.json" "$wall" "one runner"
mkdir "$work/shards"
longest=0
for i in $(seq "$shards"); do
  wall=$(one_run "$work/shards/shard-$i.json" --shard "$i/$shards")
  summary "$work/shards/shard-$i.json" "$wall" "shard $i/$shards"
  longest=$(awk -v a="$longest" -v b="$wall" 'BEGIN {print (b > a) ? b : a}')
done
echo "longest shard: $longest s"
"$leakcheck" report --merge "$work/shards" --json "$work/merged.json" >/dev/null 2>&1 || true
node -e '
  const fs = require("fs");
  const v = (f) => JSON.parse(fs.readFileSync(f)).routes.map((r) => r.route + "=" + r.verdict.kind).sort().join(",");
  console.log(v(process.argv[1]) === v(process.argv[2]) ? "merged verdicts equal the whole run`s" : "merged verdicts DIFFER from the whole run`s");
' "$work/whole.json" "$work/merged.json"
