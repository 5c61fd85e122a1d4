#!/usr/bin/env bash
# Two builds of leakcheck on the same command, runs interleaved (A, B, A,
# B…) so that the machine's drift (±30 % within minutes here) falls on
# both alike; prints the median wall time, CPU time (user + system) and
# peak RSS of each, and, with LEAKCHECK_PHASES, the median of each phase.
# A 5 % change shows only this way (BENCHMARKS.md, "Heap snapshot engine").
# usage: bench/ab.sh RUNS BUILD_A BUILD_B ARGS...
#   e.g. bench/ab.sh 20 /tmp/leakcheck-before target/release/leakcheck \
#          inspect /tmp/leakcheck-snapshots/big-440.heapsnapshot
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
runs=$1 a=$2 b=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for _ in $(seq "$runs"); do
  for side in a b; do
    build=$a
    [ "$side" = b ] && build=$b
    started=$EPOCHREALTIME
    LEAKCHECK_PHASES=1 /usr/bin/time -f "%U %S %M" -o "$work/time" "$build" "$@" \
      >/dev/null 2>"$work/stderr" || true
    seconds_since "$started" >>"$work/$side.wall"
    read -r user system peak <"$work/time"
    echo "$user + $system" | bc >>"$work/$side.cpu"
    echo "$peak" >>"$work/$side.peak"
    # "  phase NAME   0.123 s  cpu ...": NAME may hold spaces and a '|'.
    sed -n 's/^ *phase \(.*[^ ]\)  *\([0-9.]*\) s  cpu.*/\1\t\2/p' "$work/stderr" >>"$work/$side.phases"
  done
done
for side in a b; do
  build=$a
  [ "$side" = b ] && build=$b
  printf '%s: wall %s s, cpu %s s, peak %s KB (medians of %s)\n' "$build" \
    "$(median <"$work/$side.wall")" "$(median <"$work/$side.cpu")" \
    "$(median <"$work/$side.peak")" "$runs"
  if [ -s "$work/$side.phases" ]; then
    cut -f1 "$work/$side.phases" | awk '!seen[$0]++' | while IFS= read -r name; do
      printf '  %-38s %s s\n' "$name" \
        "$(awk -F'\t' -v n="$name" '$1 == n {print $2}' "$work/$side.phases" | median)"
    done
  fi
done
