#!/usr/bin/env bash
# Builds the npm packages into OUT (default target/npm), publishing nothing:
# the main package `leakcheck` (launcher, JS API, types) and the platform
# package `@leakcheck/linux-x64` (the stripped release binary). Versions of
# both come from Cargo.toml. Prints the newest glibc symbol version the
# binary needs and each tarball's size.
# usage: scripts/npm-pack.sh [OUT]   (LEAKCHECK_PACK_BINARY=path skips the build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/target/npm}
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
binary=${LEAKCHECK_PACK_BINARY:-}
if [ -z "$binary" ]; then
  (cd "$root" && cargo build --release --locked -q)
  binary=$root/target/release/leakcheck
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
(cd "$stage/linux-x64" && npm pack --silent --pack-destination "$out" >/dev/null)
(cd "$stage/leakcheck" && npm pack --silent --pack-destination "$out" >/dev/null)
glibc=$( (objdump -T "$stage/linux-x64/bin/leakcheck" 2>/dev/null || true) | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1 || true)
echo "version $version; the binary needs $glibc at most (objdump -T)"
for tarball in "$out/leakcheck-$version.tgz" "$out/leakcheck-linux-x64-$version.tgz"; do
  echo "$(basename "$tarball"): $(stat -c %s "$tarball") bytes"
done
