#!/usr/bin/env bash
# Builds the npm packages into OUT (default target/npm), publishing nothing:
# the main package `leakcheck` (launcher, JS API, types) and the platform
# package `@leakcheck/linux-x64` (the stripped release binary, linked
# statically by scripts/build-static.sh so that it runs on any x86_64 Linux,
# Alpine's musl included). Versions of both come from Cargo.toml. The main
# package also carries the man pages and completion scripts. Prints the
# shared libraries the binary needs (none, when static) and each tarball's
# size.
# usage: scripts/npm-pack.sh [OUT]   (LEAKCHECK_PACK_BINARY=path skips the build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/target/npm}
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
binary=${LEAKCHECK_PACK_BINARY:-}
if [ -z "$binary" ]; then
  binary=$(bash "$root/scripts/build-static.sh")
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -R "$root/npm/leakcheck" "$stage/leakcheck"
cp -R "$root/npm/platforms/linux-x64" "$stage/linux-x64"
mkdir -p "$stage/linux-x64/bin"
cp "$binary" "$stage/linux-x64/bin/leakcheck"
strip "$stage/linux-x64/bin/leakcheck" 2>/dev/null || true
chmod 755 "$stage/linux-x64/bin/leakcheck" "$stage/leakcheck/bin/leakcheck"
for manifest in "$stage/leakcheck/package.json" "$stage/linux-x64/package.json"; do
  sed -i "s/0\.0\.0-set-by-npm-pack/$version/g" "$manifest"
done
cp "$root/README.md" "$stage/leakcheck/README.md"
# Man pages (npm links them for a global install: `man leakcheck-run`) and
# completion scripts, written by the binary from its own flags.
"$binary" man --dir "$stage/leakcheck/man" >/dev/null
mkdir -p "$stage/leakcheck/completions"
for shell in bash zsh fish; do
  "$binary" completions "$shell" >"$stage/leakcheck/completions/leakcheck.$shell"
done
(cd "$stage/linux-x64" && npm pack --silent --pack-destination "$out" >/dev/null)
(cd "$stage/leakcheck" && npm pack --silent --pack-destination "$out" >/dev/null)
needed=$( (readelf -d "$stage/linux-x64/bin/leakcheck" 2>/dev/null || true) | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "version $version; shared libraries the binary needs: ${needed:-none (static)}"
for tarball in "$out/leakcheck-$version.tgz" "$out/leakcheck-linux-x64-$version.tgz"; do
  echo "$(basename "$tarball"): $(stat -c %s "$tarball") bytes"
done
