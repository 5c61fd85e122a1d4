#!/usr/bin/env bash
# The action's install step: leakcheck from npm at INPUT_VERSION, or packed
# from the action's own commit (scripts/npm-pack.sh) and installed offline.
# Puts the `leakcheck` command on the job's PATH (GITHUB_PATH).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
home="${RUNNER_TEMP:?RUNNER_TEMP is set by the Actions runner}/leakcheck-install"
mkdir -p "$home"
quiet=(--no-audit --no-fund --loglevel=error --prefix "$home")
if [ -n "${INPUT_VERSION:-}" ]; then
  npm install "${quiet[@]}" "leakcheck@${INPUT_VERSION}"
else
  if ! command -v cargo >/dev/null && [ -z "${LEAKCHECK_PACK_BINARY:-}" ]; then
    echo "::error::no 'version' input and no cargo to build leakcheck from this commit: set 'version' (e.g. latest) or install Rust" >&2
    exit 2
  fi
  # The binary for the runner's CPU (RUNNER_ARCH: X64 or ARM64), built
  # natively; npm installs the platform package whose `cpu` matches.
  case "${RUNNER_ARCH:-}" in
    ARM64) export LEAKCHECK_TARGET=aarch64-unknown-linux-gnu ;;
    X64) export LEAKCHECK_TARGET=x86_64-unknown-linux-gnu ;;
    "") ;;
    *) echo "::error::no leakcheck binary for a $RUNNER_ARCH runner: use an X64 or ARM64 Linux runner" >&2; exit 2 ;;
  esac
  bash "$here/scripts/npm-pack.sh" "$home/packs"
  npm install "${quiet[@]}" --offline "$home"/packs/*.tgz
fi
echo "$home/node_modules/.bin" >> "${GITHUB_PATH:?GITHUB_PATH is set by the Actions runner}"
"$home/node_modules/.bin/leakcheck" --version
