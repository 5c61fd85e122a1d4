#!/usr/bin/env bash
# Redaction speed (#52): `leakcheck redact` on the ~440 MB snapshot of
# bench/snapshot-vs-peers.sh, against the obvious Node script
# (bench/redact-naive.mjs: JSON.parse, map the strings, JSON.stringify),
# medians of RUNS, MB of input per second and peak RSS. Then a check that
# the redacted file reads the same: `leakcheck inspect` on both, compared
# without the file's size.
# usage: bench/redact.sh [RUNS] [DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-3}
dir=${2:-/tmp/leakcheck-snapshots}
mkdir -p "$dir"
. "$here/common.sh"
bench_start
out=$work
big="$dir/big-440.heapsnapshot"
if [ ! -f "$big" ]; then
  node --max-old-space-size=20000 "$here/make-snapshot.mjs" "$big" 442
fi
mb=$(awk -v b="$(stat -L -c %s "$big")" 'BEGIN {printf "%.1f", b/1e6}')
echo "machine: $(nproc) cores, node $(node --version), $(date -u +%F); input $mb MB, median of $runs"
: >"$out/lc.txt"; : >"$out/naive.txt"
for _ in $(seq "$runs"); do
  cat "$big" >/dev/null
  started=$EPOCHREALTIME
  /usr/bin/time -f '%M' -o "$out/time.txt" "$leakcheck" redact "$big" --out "$out/lc" 2>/dev/null
  echo "$(seconds_since "$started") $(awk '{printf "%.0f", $1/1024}' "$out/time.txt")" >>"$out/lc.txt"
  started=$EPOCHREALTIME
  /usr/bin/time -f '%M' -o "$out/time.txt" node --max-old-space-size=20000 "$here/redact-naive.mjs" "$big" "$out/naive.heapsnapshot" 2>/dev/null || true
  echo "$(seconds_since "$started") $(awk '{printf "%.0f", $1/1024}' "$out/time.txt")" >>"$out/naive.txt"
done
show() { # FILE LABEL
  local s peak
  s=$(cut -d' ' -f1 "$1" | median); peak=$(cut -d' ' -f2 "$1" | median)
  awk -v s="$s" -v p="$peak" -v mb="$mb" -v l="$2" 'BEGIN {printf "  %-34s %7.3f s  %6.0f MB/s  %6s MB peak\n", l, s, mb / s, p}'
}
show "$out/lc.txt" "leakcheck redact"
show "$out/naive.txt" "Node JSON.parse/stringify script"
awk -v a="$(cut -d' ' -f1 "$out/lc.txt" | median)" -v b="$(cut -d' ' -f1 "$out/naive.txt" | median)" \
  'BEGIN {printf "    ratio: leakcheck redact %.2fx faster\n", b / a}'
strip() { "$leakcheck" inspect --json - "$1" 2>/dev/null | python3 -c 'import json,sys; r=json.load(sys.stdin); r["totals"].pop("file_bytes",None); print(json.dumps(r,sort_keys=True))'; }
if [ "$(strip "$big")" = "$(strip "$out/lc/big-440.heapsnapshot")" ]; then
  echo "  inspect reads the same on the redacted file"
else
  echo "  inspect DIFFERS on the redacted file"
fi
