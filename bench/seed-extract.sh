#!/usr/bin/env bash
# Writes the seed method's own scripts (mem-server.mjs, cycles.sh,
# snapdiff.mjs) from shared/seed into DIR, so benchmarks measure leakcheck
# against exactly what the method prints, without copying them into the repo.
# usage: seed-extract.sh DIR
set -euo pipefail
dir=$1
seed="$(cd "$(dirname "$0")/../.." && pwd)/shared/seed/how-to-check-memory-growth-under-load.txt"
[ -f "$seed" ] || { echo "seed not found at $seed" >&2; exit 2; }
mkdir -p "$dir"
awk '/^\/\/ mem-server.mjs/{on=1} on{print} on&&/^}\)\.listen\(9750/{exit}' "$seed" >"$dir/mem-server.mjs"
awk '/^#!\/bin\/sh/{on=1} on{print} on&&/^done$/{exit}' "$seed" >"$dir/cycles.sh"
awk '/^\/\/ snapdiff.mjs/{on=1} on{print} on&&/^}$/&&prev~/seen.add/{exit} {prev=$0}' "$seed" >"$dir/snapdiff.mjs"
# The seed runs `npx autocannon@8`; npx may refuse to fetch here, so a shim
# runs the locally installed autocannon with the same arguments.
mkdir -p "$dir/bin"
cat >"$dir/bin/npx" <<SHIM
#!/bin/sh
shift
exec "$(cd "$(dirname "$0")" && pwd)/node_modules/.bin/autocannon" "\$@"
SHIM
chmod +x "$dir/bin/npx"
