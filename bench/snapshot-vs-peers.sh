#!/usr/bin/env bash
# The snapshot engine against its peers, same files, same run:
#   - a seed-sized pair (about 9 and 60 MB, one process): `leakcheck diff`
#     against bench/seedlike-snapdiff.mjs (whole-file JSON.parse, tally,
#     retainer walk) and the seed's own snapdiff.mjs; medians of RUNS;
#   - a ~440 MB snapshot: `leakcheck inspect` (parse + dominators + retained
#     sizes) on every core and on one (`-j 1`, the one-thread scanner), against
#     `heap-snapshot summary` from dinfuehr/heap-snapshot (built from its
#     source with `cargo build --release`; give its binary as HEAP_SNAPSHOT,
#     skipped without), medians of RUNS; then a ~520 MB one against memlab's
#     loader (parse + dominators + retained sizes), one run;
#   - a ~1.2 GB snapshot, past Node's JSON.parse limit: `leakcheck inspect`
#     and `leakcheck diff` from the 520 MB one; the seed-like script's failure.
# Wall time in milliseconds (bash's EPOCHREALTIME around the command: a
# 0.13 s diff in /usr/bin/time's hundredths moved its ratio by 4 %), peak
# RSS from /usr/bin/time; each comparison's ratio of medians is printed
# under it. Snapshots come from bench/make-snapshot.mjs (cached in DIR).
# LEAKCHECK_BEFORE, a leakcheck binary of an earlier commit, is measured
# beside it on the ~440 MB file.
# usage: [HEAP_SNAPSHOT=path/to/heap-snapshot] [LEAKCHECK_BEFORE=path] [SKIP_HUGE=1]
#        bench/snapshot-vs-peers.sh [RUNS] [DIR]
#        (needs `npm i` in bench/ for memlab)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-3}
dir=${2:-/tmp/leakcheck-snapshots}
mkdir -p "$dir"
(cd "$here/.." && cargo build --release -q)
leakcheck="$here/../target/release/leakcheck"
"$here/seed-extract.sh" "$dir/seed" >/dev/null
if [ ! -f "$dir/pair-60.heapsnapshot" ]; then
  node --max-old-space-size=20000 "$here/make-snapshot.mjs" "$dir/pair-9.heapsnapshot" 9 "$dir/pair-60.heapsnapshot" 60
fi
if [ ! -f "$dir/big-440.heapsnapshot" ]; then
  # 442 asked, about 460 MB (439 MB binary) written: the generator's estimate is rough.
  node --max-old-space-size=20000 "$here/make-snapshot.mjs" "$dir/big-440.heapsnapshot" 442
fi
if [ -z "${SKIP_HUGE:-}" ] && [ ! -f "$dir/huge-1100.heapsnapshot" ]; then
  node --max-old-space-size=20000 "$here/make-snapshot.mjs" "$dir/big-500.heapsnapshot" 500 "$dir/huge-1100.heapsnapshot" 1100
fi
. "$here/common.sh"
# measure NAME CMD... → appends "seconds peak_mb exit" to $dir/NAME.txt
measure() {
  local name=$1; shift
  local status=0 started=$EPOCHREALTIME
  /usr/bin/time -f '%M' -o "$dir/time.txt" "$@" >/dev/null 2>"$dir/$name.err" || status=$?
  local seconds
  seconds=$(seconds_since "$started")
  echo "$seconds $(tail -1 "$dir/time.txt" | awk '{printf "%.0f", $1/1024}') $status" >>"$dir/$name.txt"
}
report() { # NAME LABEL
  local f="$dir/$1.txt"
  printf '  %-34s %7.3f s  %7s MB peak  exit %s\n' "$2" "$(cut -d' ' -f1 "$f" | median)" "$(cut -d' ' -f2 "$f" | median)" "$(cut -d' ' -f3 "$f" | sort -u | tr '\n' ' ')"
}
# The VM may page out the snapshots' cached pages between rounds (DAMON's
# pageout of idle memory, BENCHMARKS.md): each round reads its files once
# before the first tool, so that no tool, leakcheck always being first,
# pays for reading them back from disk.
warm() { cat "$@" >/dev/null; }
ratio() { # FAST SLOW LABEL: how many times faster FAST's median is
  local fast slow
  fast=$(cut -d' ' -f1 "$dir/$1.txt" | median)
  slow=$(cut -d' ' -f1 "$dir/$2.txt" | median)
  awk -v f="$fast" -v s="$slow" -v l="$3" 'BEGIN {printf "    ratio: %s %.2fx\n", l, s / f}'
}
size_mb() { awk -v b="$(stat -L -c %s "$1")" 'BEGIN {printf "%.1f", b/1e6}'; }

echo "machine: $(nproc) cores, node $(node --version), $(date -u +%F)"
rm -f "$dir"/*.txt
echo "pair: $(size_mb "$dir/pair-9.heapsnapshot") MB + $(size_mb "$dir/pair-60.heapsnapshot") MB, median of $runs"
for _ in $(seq "$runs"); do
  warm "$dir/pair-9.heapsnapshot" "$dir/pair-60.heapsnapshot"
  measure lc_pair "$leakcheck" diff "$dir/pair-9.heapsnapshot" "$dir/pair-60.heapsnapshot"
  measure seedlike_pair node --max-old-space-size=20000 "$here/seedlike-snapdiff.mjs" "$dir/pair-9.heapsnapshot" "$dir/pair-60.heapsnapshot"
  measure seed_pair node --max-old-space-size=20000 "$dir/seed/snapdiff.mjs" "$dir/pair-9.heapsnapshot" "$dir/pair-60.heapsnapshot"
done
report lc_pair "leakcheck diff"
report seedlike_pair "seed-like script (JSON.parse)"
report seed_pair "the seed's snapdiff.mjs"
ratio lc_pair seed_pair "leakcheck diff vs the seed's snapdiff.mjs"

echo "big: $(size_mb "$dir/big-440.heapsnapshot") MB, median of $runs"
for _ in $(seq "$runs"); do
  warm "$dir/big-440.heapsnapshot"
  measure lc_440 "$leakcheck" inspect "$dir/big-440.heapsnapshot"
  measure lc_440_one "$leakcheck" inspect -j 1 "$dir/big-440.heapsnapshot"
  if [ -n "${HEAP_SNAPSHOT:-}" ]; then
    measure hs_440 "$HEAP_SNAPSHOT" summary "$dir/big-440.heapsnapshot"
  fi
  if [ -n "${LEAKCHECK_BEFORE:-}" ]; then
    measure before_440 "$LEAKCHECK_BEFORE" inspect "$dir/big-440.heapsnapshot"
  fi
done
grep -h "parsed in" "$dir/lc_440.err" | sed 's/^/    /'
report lc_440 "leakcheck inspect ($(nproc) threads)"
report lc_440_one "leakcheck inspect -j 1"
if [ -n "${HEAP_SNAPSHOT:-}" ]; then
  report hs_440 "heap-snapshot summary"
  ratio lc_440 hs_440 "inspect vs heap-snapshot summary"
fi
if [ -n "${LEAKCHECK_BEFORE:-}" ]; then
  report before_440 "LEAKCHECK_BEFORE inspect"
  ratio lc_440 before_440 "inspect vs LEAKCHECK_BEFORE"
fi
if [ -n "${SKIP_HUGE:-}" ]; then exit 0; fi

echo "big: $(size_mb "$dir/big-500.heapsnapshot") MB, one run each"
warm "$dir/big-500.heapsnapshot"
measure lc_big "$leakcheck" inspect "$dir/big-500.heapsnapshot"
grep -h "parsed in" "$dir/lc_big.err" | sed 's/^/    /'
report lc_big "leakcheck inspect"
measure memlab_big node --max-old-space-size=20000 "$here/memlab-parse.cjs" "$dir/big-500.heapsnapshot"
report memlab_big "memlab (load + dominators)"

echo "huge: $(size_mb "$dir/huge-1100.heapsnapshot") MB, one run each"
warm "$dir/huge-1100.heapsnapshot"
measure lc_huge "$leakcheck" inspect "$dir/huge-1100.heapsnapshot"
grep -h "parsed in" "$dir/lc_huge.err" | sed 's/^/    /'
report lc_huge "leakcheck inspect"
measure lc_huge_diff "$leakcheck" diff "$dir/big-500.heapsnapshot" "$dir/huge-1100.heapsnapshot"
report lc_huge_diff "leakcheck diff 520 MB -> 1.2 GB"
measure seedlike_huge node --max-old-space-size=20000 "$here/seedlike-snapdiff.mjs" "$dir/big-500.heapsnapshot" "$dir/huge-1100.heapsnapshot"
report seedlike_huge "seed-like script"
grep -ho "ERR_STRING_TOO_LONG\|Cannot create a string longer[^']*" "$dir/seedlike_huge.err" | head -1 | sed 's/^/    seed-like script failed: /'
