#!/usr/bin/env bash
# Builds the npm packages into OUT (default target/npm), publishing nothing:
# the main package `leakcheck` (launcher, JS API, types, man pages and
# completion scripts) and a platform package per binary given:
# `@leakcheck/linux-x64` and `@leakcheck/linux-arm64`, each the stripped
# static build of scripts/build-static.sh, which runs on any Linux of its
# CPU, Alpine's musl included. npm installs the one whose `cpu` matches.
# Versions come from Cargo.toml. Prints the shared libraries each binary
# needs (none, when static) and each tarball's size.
#
# The binaries: LEAKCHECK_PACK_BINARY (of either CPU, told by its ELF
# header) and LEAKCHECK_PACK_BINARY_ARM64 (a second one); with neither, the
# static build for LEAKCHECK_TARGET (default: this machine's CPU).
# usage: scripts/npm-pack.sh [OUT]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/target/npm}
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
binaries=()
[ -n "${LEAKCHECK_PACK_BINARY:-}" ] && binaries+=("$LEAKCHECK_PACK_BINARY")
[ -n "${LEAKCHECK_PACK_BINARY_ARM64:-}" ] && binaries+=("$LEAKCHECK_PACK_BINARY_ARM64")
if [ ${#binaries[@]} -eq 0 ]; then
  binaries+=("$(bash "$root/scripts/build-static.sh")")
fi

# platform_of BINARY: the npm platform of an ELF binary, from e_machine
# (bytes 18-19, little-endian): 0x3e x86-64, 0xb7 AArch64.
platform_of() {
  case "$(od -An -tx1 -j18 -N2 "$1" | tr -d ' \n')" in
    3e00) echo linux-x64 ;;
    b700) echo linux-arm64 ;;
    *) echo "npm-pack.sh: $1 is not an x86-64 or arm64 ELF binary" >&2; exit 2 ;;
  esac
}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -R "$root/npm/leakcheck" "$stage/leakcheck"
chmod 755 "$stage/leakcheck/bin/leakcheck"
sed -i "s/0\.0\.0-set-by-npm-pack/$version/g" "$stage/leakcheck/package.json"
cp "$root/README.md" "$stage/leakcheck/README.md"
case "$(uname -m)" in aarch64) here_platform=linux-arm64 ;; *) here_platform=linux-x64 ;; esac
platforms=()
native=${binaries[0]}
for binary in "${binaries[@]}"; do
  platform=$(platform_of "$binary")
  [ "$platform" = "$here_platform" ] && native=$binary
  cp -R "$root/npm/platforms/$platform" "$stage/$platform"
  mkdir -p "$stage/$platform/bin"
  cp "$binary" "$stage/$platform/bin/leakcheck"
  strip_tool=strip
  [ "$platform" = linux-arm64 ] && strip_tool=aarch64-linux-gnu-strip
  "$strip_tool" "$stage/$platform/bin/leakcheck" 2>/dev/null || true
  chmod 755 "$stage/$platform/bin/leakcheck"
  sed -i "s/0\.0\.0-set-by-npm-pack/$version/g" "$stage/$platform/package.json"
  platforms+=("$platform")
done
# Man pages (npm links them for a global install: `man leakcheck-run`) and
# completion scripts, written from the flags by the binary of this
# machine's CPU when one was given (another one runs only under emulation).
"$native" man --dir "$stage/leakcheck/man" >/dev/null
mkdir -p "$stage/leakcheck/completions"
for shell in bash zsh fish; do
  "$native" completions "$shell" >"$stage/leakcheck/completions/leakcheck.$shell"
done

for platform in "${platforms[@]}"; do
  (cd "$stage/$platform" && npm pack --silent --pack-destination "$out" >/dev/null)
  needed=$( (readelf -d "$stage/$platform/bin/leakcheck" 2>/dev/null || true) | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "version $version; $platform: shared libraries the binary needs: ${needed:-none (static)}"
done
(cd "$stage/leakcheck" && npm pack --silent --pack-destination "$out" >/dev/null)
for name in leakcheck "${platforms[@]/#/leakcheck-}"; do
  tarball="$out/$name-$version.tgz"
  echo "$(basename "$tarball"): $(stat -c %s "$tarball") bytes"
done
