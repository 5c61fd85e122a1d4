#!/usr/bin/env bash
# `leakcheck page` beside fuite (npm, driving the system's Chromium through
# puppeteer) on the test pages: the dialogs page that keeps closed dialogs
# and piles up window listeners, and its fixed twin. Both open and close a
# dialog per iteration (leakcheck: its defaults, --cycles auto; fuite:
# its default 7 iterations). Prints, per tool and page, the median wall
# time of RUNS runs and what the last run reported.
# usage: bench/page-vs-fuite.sh [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-5}
. "$here/common.sh"
[ -x "$here/node_modules/.bin/fuite" ] || { echo "cd bench && PUPPETEER_SKIP_DOWNLOAD=1 npm install" >&2; exit 2; }
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "apt-get install chromium" >&2; exit 2; }
bench_start
port=$(free_port)
node "$here/../tests/targets/static-server.mjs" "$port" "$here/../tests/targets/pages" & pids+=($!)
wait_port "$port"
cat >"$work/scenario.mjs" <<'JS'
export async function iteration(page) {
  await page.click('#open');
  await page.click('#close');
}
JS
sandbox=()
[ "$(id -u)" = 0 ] && sandbox=(--browser-arg=--no-sandbox)

seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'; }

for page in leaky.html fixed.html; do
  url="http://127.0.0.1:$port/$page"
  : >"$work/lc"; : >"$work/fu"
  for _ in $(seq "$runs"); do
    seconds "$leakcheck" page "$url" --action 'click #open' --action 'click #close' -q --json "$work/lc.json" >>"$work/lc"
    seconds env PUPPETEER_EXECUTABLE_PATH="$chromium" "$here/node_modules/.bin/fuite" "$url" \
      --scenario "$work/scenario.mjs" "${sandbox[@]}" -o "$work/fu.json" >>"$work/fu"
  done
  echo "== $page"
  printf 'leakcheck page: median %.2f s; ' "$(median <"$work/lc")"
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1])).routes[0];
    const v = r.verdict, d = r.diagnosis;
    const grow = v.fits.filter((f) => f.trend === "growing").map((f) => `${f.metric} ${f.slope_bytes_per_request.toFixed(2)}/iteration`);
    const detached = d ? d.classes.filter((c) => c.class.startsWith("Detached ")).map((c) => `${c.new_count} ${c.class}`) : [];
    console.log(`${v.kind}${v.leak ? " (leak)" : ""}; growing: ${grow.join(", ") || "none"}; holder: ${d && d.holders[0] ? d.holders[0].name : "-"}; ${detached.join(", ")}`);
  ' "$work/lc.json"
  printf 'fuite:          median %.2f s; ' "$(median <"$work/fu")"
  node -e '
    const l = JSON.parse(require("fs").readFileSync(process.argv[1]))[0].result.leaks;
    const listeners = l.eventListeners.map((e) => `${e.type} listener +${e.deltaPerIteration}/iteration`);
    const collections = l.collections.map((c) => `${c.type} +${c.deltaPerIteration}/iteration at ${c.stacktraces[0] ? c.stacktraces[0].pretty : "?"}`);
    const detached = l.objects.filter((o) => o.name.startsWith("Detached ")).map((o) => `${o.diff.countDelta} ${o.name}`);
    console.log(`leaks: ${[...listeners, ...collections].join("; ") || "none"}; dom nodes ${l.domNodes.deltaPerIteration}/iteration; ${detached.join(", ")}`);
  ' "$work/fu.json"
done
