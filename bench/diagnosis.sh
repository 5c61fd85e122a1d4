#!/usr/bin/env bash
# Cost of the diagnosis on a heap of about 60 MB of snapshot: the demo's
# /leak after 3 cycles of REQUESTS, then the diagnosis' two snapshots around
# one more cycle. Prints the snapshot sizes, the time the snapshots took
# (V8 writing and the transfer, with the parse overlapped), the analysis
# time, the parse time of the same files alone, and the target's rss
# before and after the snapshots.
# usage: bench/diagnosis.sh [REQUESTS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
requests=${1:-40000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$here/.." && cargo build --release -q)
leakcheck="$here/../target/release/leakcheck"
"$leakcheck" run -q --url http://127.0.0.1:9790 --route /leak -a "$requests" --snapshots "$work" --json "$work/run.json" \
  -- node "$here/../examples/demo-server.mjs" 9790 >/dev/null || true
node -e '
  const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).routes[0].diagnosis;
  const mb = (b) => (b / 1e6).toFixed(1);
  console.log(`snapshots ${mb(d.snapshot_bytes[0])} + ${mb(d.snapshot_bytes[1])} MB`);
  console.log(`snapshots taken, streamed and parsed (overlapped): ${d.snapshot_seconds.toFixed(2)} s`);
  console.log(`diff and holders: ${d.analysis_seconds.toFixed(2)} s`);
  console.log(`target rss ${mb(d.target_rss_before)} MB before, ${mb(d.target_rss_after)} MB after the snapshots`);
  console.log(`holder: ${d.holders[0].name} (${d.holders[0].kind})`);
' "$work/run.json"
for f in "$work"/*.heapsnapshot; do
  "$leakcheck" inspect "$f" --top 1 2>&1 >/dev/null | sed 's/^/parse alone: /'
done
