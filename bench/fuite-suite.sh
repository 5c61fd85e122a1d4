#!/usr/bin/env bash
# fuite's own test suite (its test/www pages) run through `leakcheck page`,
# case by case, beside what fuite's specs (test/spec/*.test.js) expect and
# what fuite itself reports on the same pages here.
#
# fuite's pages are fetched at run time into a scratch folder, never kept
# in this repository: FUITE_SRC is a git URL (default GitHub) or a local
# clone or bare repository; they need navigo@8 from npm.
#
# A case is one link of one page, clicked and gone back from (fuite's
# default scenario; leakcheck's --links), or the login page with its
# setup (fuite's custom-scenario spec; leakcheck's --setup), or the page
# whose spec waits for its own marker (leakcheck's actions). leakcheck runs
# with its defaults (--cycles auto, the collection check, the diagnosis).
# Prints one row per case: page, link, what fuite's spec expects, what
# leakcheck said and named, and its wall time for the whole page (every
# link); then fuite's verdicts and wall time per page (its default 7 iterations, Debian's Chromium).
# usage: bench/fuite-suite.sh [PAGE…]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "apt-get install chromium" >&2; exit 2; }
bench_start
src=${FUITE_SRC:-https://github.com/nolanlawson/fuite}
if [ -d "$src" ]; then
  git -C "$src" archive HEAD test/www | tar -x -C "$work"
else
  git clone -q --depth 1 "$src" "$work/fuite-clone"
  cp -r "$work/fuite-clone/test" "$work/"
fi
(cd "$work" && npm init -y >/dev/null && npm i -q navigo@8 >/dev/null 2>&1)
port=$(free_port)
node "$here/../tests/targets/static-server.mjs" "$port" "$work" & pids+=($!)
wait_port "$port"
base="http://127.0.0.1:$port/test/www"

# page link expected-leak, from fuite's specs (test/spec/*.test.js).
cases='basic about yes
basic info no
basic contact no
invisibleLinks about no
invisibleLinks info no
invisibleLinks contact no
collections about yes
collectionsWithSourceMaps about yes
collectionsWithBrokenSourceMaps about yes
collectionsThatCannotBeTracked about yes
lotsOfLeakingCollections about yes
collectionsWithLotsOfLeaks about yes
customIdleLogic info yes
domNodes about yes
recyclesDomNodes about no
recyclesDomNodesNewIds about no
recyclesDomNodesNewIdsAndActualLeak about yes
domNodesLeakWithNewNames about yes
eventListeners about yes
eventListenersNewNodes about yes
recyclesEventListeners about no
recyclesEventListenersNewNodeIds about no
listenersLeakWithNewNames about yes
invalidCollection info no
shadowDom info yes
multiPage/a ./b no
minimal info yes
minimal+teardown info yes
login info yes'
[ $# -gt 0 ] && cases=$(printf '%s\n' "$cases" | grep -E "^($(IFS='|'; echo "$*")) ")

sandbox=()
[ "$(id -u)" = 0 ] && sandbox=(--browser-arg=--no-sandbox)
agree=0; total=0
printf '%-36s %-8s %-6s %-20s %7s  %s\n' page link fuite leakcheck "page s" "named as"
for page in $(printf '%s\n' "$cases" | awk '{ print $1 }' | uniq); do
  setup=()
  url="$base/$page/"
  [ "$page" = multiPage/a ] && url="$base/multiPage/a"
  # fuite's custom-scenario spec with a teardown: the same page, torn down.
  [ "$page" = minimal+teardown ] && { url="$base/minimal/"; setup=(--teardown 'eval window.tornDown = true'); }
  scenario=(--links)
  # fuite's spec gives this page its own idle wait (the #done marker a
  # 200 ms timer puts back): the same iteration as actions.
  if [ "$page" = customIdleLogic ]; then
    scenario=(--action 'click a[href="info"]' --action 'wait-for #done' --action back
              --action 'wait-for #done')
  fi
  if [ "$page" = login ]; then
    setup=(--setup 'type #username myusername' --setup "type #password p-$RANDOM-$RANDOM"
           --setup 'click #submit' --setup 'wait-for a[href="info"]')
  fi
  json="$work/lc-${page//\//_}.json"
  t0=$EPOCHREALTIME
  "$leakcheck" page "$url" "${scenario[@]}" "${setup[@]}" -q --json "$json" >/dev/null 2>&1 || true
  took=$(seconds_since "$t0")
  while read -r _ link expected; do
    total=$((total + 1))
    row=$(node -e '
      const [file, link] = process.argv.slice(1);
      let result;
      try { result = JSON.parse(require("fs").readFileSync(file)); } catch { console.log("no-result\tn/a\t-"); process.exit(); }
      const r = result.routes.find((r) => r.route.endsWith(` → ${link}`))
        || (result.routes.length === 1 && !result.routes[0].route.includes(" → ") ? result.routes[0] : undefined);
      if (!r || !r.verdict) { console.log(`missing\tn/a\t${result.outcome.error || "-"}`); process.exit(); }
      const v = r.verdict, d = r.diagnosis || {};
      const named = [];
      for (const c of [...(r.collections || []), ...(d.collections || [])].slice(0, 2))
        named.push(`${c.name}: ${c.kind} +${c.per_unit.toFixed(2)}`);
      for (const l of (r.listeners || []).slice(0, 2))
        named.push(`${l.event} on ${l.target} +${l.per_unit.toFixed(2)}`);
      for (const f of v.fits.filter((f) => f.trend === "growing").slice(0, 2))
        named.push(`${typeof f.metric === "string" ? f.metric : JSON.stringify(f.metric)} ${Math.round(f.slope_bytes_per_request)}/it`);
      if (d.holders && d.holders[0]) named.push(`held by ${d.holders[0].name}`);
      console.log(`${v.kind}\t${v.leak ? "yes" : "no"}\t${named.join("; ") || "-"}`);
    ' "$json" "$link")
    kind=$(cut -f1 <<<"$row"); leak=$(cut -f2 <<<"$row"); named=$(cut -f3 <<<"$row")
    mark=" "
    if [ "$leak" = "$expected" ]; then agree=$((agree + 1)); else mark="✗"; fi
    printf '%-36s %-8s %-6s %-20s %7.1f %s %s\n' "$page" "$link" "$expected" "$kind" "$took" "$mark" "$named"
  done < <(printf '%s\n' "$cases" | awk -v p="$page" '$1 == p')
done
echo "leakcheck agrees with fuite's specs on $agree of $total cases"

# fuite itself, on FUITE_PAGES (its default scenario, 7 iterations; each
# step waits for 500 ms of network quiet, so a page takes minutes here):
# `none` skips it; FUITE_TIMEOUT bounds each page (900 s).
fuite_pages=${FUITE_PAGES:-basic collections domNodes eventListeners}
if [ -x "$here/node_modules/.bin/fuite" ] && [ "$fuite_pages" != none ]; then
  echo
  echo "fuite $(node -p 'require(process.argv[1]).version' "$here/node_modules/fuite/package.json") on the same pages (default scenario, 7 iterations):"
  for page in $fuite_pages; do
    url="$base/$page/"
    [ "$page" = multiPage/a ] && url="$base/multiPage/a"
    t0=$EPOCHREALTIME
    rm -f "$work/fu.json"
    PUPPETEER_EXECUTABLE_PATH="$chromium" timeout "${FUITE_TIMEOUT:-900}" "$here/node_modules/.bin/fuite" "$url" "${sandbox[@]}" \
      -o "$work/fu.json" >/dev/null 2>&1 || true
    took=$(seconds_since "$t0")
    verdicts=$(node -e '
      try {
        const all = JSON.parse(require("fs").readFileSync(process.argv[1]));
        console.log(all.map((t) => `${t.test.data.href}: ${t.result.leaks.detected ? "leak" : "clean"}`).join(", "));
      } catch { console.log("(no result)"); }
    ' "$work/fu.json")
    printf '%-36s %7.1f s  %s\n' "$page" "$took" "$verdicts"
  done
fi
