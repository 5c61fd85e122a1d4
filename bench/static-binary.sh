#!/usr/bin/env bash
# The static platform binary (scripts/build-static.sh: glibc linked in,
# crt-static) against the dynamic release build, same files, same run:
# stripped size, and `leakcheck inspect` of a ~440 MB snapshot (parse,
# dominators, retained sizes on every core): wall time and peak RSS,
# medians of RUNS, alternating the two builds. Both use glibc's malloc (a
# static glibc links the same ptmalloc); the allocator is what could make
# the static build slower or larger, so it is what this measures.
# usage: bench/static-binary.sh [RUNS] [DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-5}
dir=${2:-/tmp/leakcheck-snapshots}
mkdir -p "$dir"
. "$here/common.sh"
bench_start
static=$(bash "$here/../scripts/build-static.sh")
snapshot="$dir/big-440.heapsnapshot"
if [ ! -f "$snapshot" ]; then
  node --max-old-space-size=20000 "$here/make-snapshot.mjs" "$snapshot" 442
fi
strip -o "$work/dynamic" "$leakcheck"
strip -o "$work/static" "$static"
echo "snapshot: $(stat -c %s "$snapshot") bytes; $(nproc) cores"
for build in dynamic static; do
  needed=$(readelf -d "$work/$build" | grep -c NEEDED || true)
  echo "$build: $(stat -c %s "$work/$build") bytes stripped, $needed shared libraries needed"
done
"$work/dynamic" inspect "$snapshot" >/dev/null 2>&1 # the file in the page cache
for i in $(seq "$runs"); do
  for build in dynamic static; do
    start=$EPOCHREALTIME
    /usr/bin/time -f %M -o "$work/rss" "$work/$build" inspect "$snapshot" >/dev/null 2>&1
    echo "$(seconds_since "$start") $(cat "$work/rss")" >>"$work/$build.txt"
  done
done
for build in dynamic static; do
  wall=$(cut -d' ' -f1 "$work/$build.txt" | median)
  rss=$(cut -d' ' -f2 "$work/$build.txt" | median)
  echo "$build inspect: median $wall s, peak RSS median $rss KB (runs: $(cut -d' ' -f1 "$work/$build.txt" | tr '\n' ' '))"
  eval "${build}_wall=$wall ${build}_rss=$rss"
done
awk -v sw="$static_wall" -v dw="$dynamic_wall" -v sr="$static_rss" -v dr="$dynamic_rss" \
  'BEGIN {printf "static / dynamic: wall %.3f, peak RSS %.3f\n", sw / dw, sr / dr}'
