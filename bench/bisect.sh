#!/usr/bin/env bash
# leakcheck bisect against the same steps run as full default checks: a
# repository of 16 commits (the 10th keeps a 0.3 KB record per request,
# as in tests/it/bisect.rs), bisected with an empty cache; then every
# candidate the bisect checked is checked again with the default `run`
# (diagnosis included, no budget), one after the other, and timed: what
# the same bisect by hand with the default check costs. Then the same
# bisect again, with its cache. Medians of RUNS runs.
# usage: bench/bisect.sh [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
runs=${1:-3}
bench_start
repo="$work/repo"; mkdir -p "$repo"; cd "$repo"
git init -q -b main; git config user.email b@b; git config user.name B
cat > server.mjs <<'JS'
import { createServer } from 'node:http';
const port = Number(process.argv[2]);
const seen = [];
createServer((req, res) => {
  const id = new URL(req.url, 'http://x').searchParams.get('id');
  res.end('ok ' + id + '\n');
}).listen(port, '127.0.0.1');
JS
git add -A; git commit -qm "a server"
for i in $(seq 1 15); do
  echo "note $i" >> NOTES.md
  [ "$i" = 9 ] && sed -i "s|  res.end(|  seen.push({ id, at: Date.now(), body: 'x'.repeat(300) });\n  res.end(|" server.mjs
  git add -A; git commit -qm "change $i"
done
good=$(git rev-list --max-parents=0 HEAD)
echo "machine: $(nproc) cores, $(uname -r), node $(node --version), git $(git --version | cut -d' ' -f3)"
bisects=(); fulls=(); cached=(); checks=()
for run in $(seq "$runs"); do
  export LEAKCHECK_CACHE_DIR="$work/cache-$run"
  port=$(free_port); bisect_port=$port
  t0=$EPOCHREALTIME
  "$leakcheck" bisect --good "$good" --bad main --json "$work/bisect.json" -q -- \
    run --url "http://127.0.0.1:$port" --route '/item?id={n}' -- node server.mjs "$port" >/dev/null
  bisects+=("$(seconds_since "$t0")")
  first=$(node -e 'console.log(require(process.argv[1]).first.slice(0,10))' "$work/bisect.json")
  mapfile -t ids < <(node -e 'for (const s of require(process.argv[1]).steps) console.log(s.candidate)' "$work/bisect.json")
  checks+=("${#ids[@]}")
  t0=$EPOCHREALTIME
  for id in "${ids[@]}"; do
    git worktree add -q --detach "$work/wt" "$id"
    port=$(free_port)
    (cd "$work/wt" && "$leakcheck" run --url "http://127.0.0.1:$port" --route '/item?id={n}' -q -- node server.mjs "$port" >/dev/null || true)
    git worktree remove --force "$work/wt"
  done
  fulls+=("$(seconds_since "$t0")")
  # The same check (its port included): the ends and steps come from the cache.
  port=$bisect_port
  t0=$EPOCHREALTIME
  "$leakcheck" bisect --good "$good" --bad main -q -- \
    run --url "http://127.0.0.1:$port" --route '/item?id={n}' -- node server.mjs "$port" >/dev/null
  cached+=("$(seconds_since "$t0")")
  echo "run $run: bisect ${bisects[-1]} s (${#ids[@]} checks, first bad $first), the same checks in full ${fulls[-1]} s, bisect again with its cache ${cached[-1]} s"
done
b=$(printf '%s\n' "${bisects[@]}" | median); f=$(printf '%s\n' "${fulls[@]}" | median); c=$(printf '%s\n' "${cached[@]}" | median)
echo "median: bisect $b s, full default checks of the same steps $f s (ratio $(awk -v a="$b" -v b="$f" 'BEGIN {printf "%.2f", a/b}')), cached rerun $c s"
