#!/usr/bin/env bash
# Renders the HTML report of a real run on the demo server and takes a
# screenshot of it in headless Chromium (Debian's `chromium` package), so a
# person can look at what a reader sees first.
# usage: scripts/screenshot-report.sh [OUT_DIR]   (writes report.html and report.png)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/target/report-screenshot}
mkdir -p "$out"
command -v chromium >/dev/null || { echo "apt-get install chromium" >&2; exit 2; }
(cd "$here" && cargo build --release -q)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$here/target/release/leakcheck" run -q --url "http://127.0.0.1:$port" --route /churn --route /leak --route /buffers \
  -a 5000 --html "$out/report.html" --markdown "$out/report.md" --json "$out/report.json" \
  -- node "$here/examples/demo-server.mjs" "$port" >/dev/null || true
profile=$(mktemp -d)
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --window-size=1100,1400 --hide-scrollbars \
  --screenshot="$out/report.png" "file://$out/report.html" 2>/dev/null
rm -rf "$profile"
echo "$out/report.png"
