#!/usr/bin/env bash
# Builds the platform binary that runs on any x86_64 Linux (glibc of any
# age, Alpine's musl, a distroless or empty image): glibc linked in
# statically (`-C target-feature=+crt-static`, a static-pie). leakcheck
# needs nothing at run time that a static glibc loads dynamically: loopback
# names are resolved without NSS (src/net/resolve.rs), and it uses no
# iconv or locale data. The explicit --target keeps build scripts and
# proc-macros dynamic (they run on the build machine) and the artifacts in
# their own folder. Link-time optimisation over one codegen unit pays for
# the glibc linked in: without it the stripped binary was 16.5 % larger
# than the dynamic one (7.37 against 6.33 MB), with it 2 % smaller, at the
# same speed (BENCHMARKS.md, "The static binary"). Prints the binary's path.
# LEAKCHECK_STATIC_LTO=off builds it without (CI, whose test checks what the
# static link gives, not the size: 147 s from scratch against 215 s).
# The same binary for arm64 Linux (Graviton, arm64 CI runners, Docker on
# Apple Silicon): LEAKCHECK_TARGET=aarch64-unknown-linux-gnu, cross-linked
# by Debian's gcc-aarch64-linux-gnu against its static arm64 glibc
# (`rustup target add aarch64-unknown-linux-gnu` first).
# usage: scripts/build-static.sh   (for this machine's CPU; LEAKCHECK_TARGET=… for another)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${LEAKCHECK_TARGET:-$(uname -m)-unknown-linux-gnu}
case "$target" in
  x86_64-unknown-linux-gnu) ;;
  aarch64-unknown-linux-gnu)
    linker=aarch64-linux-gnu-gcc
    # On an arm64 machine the native gcc links it; elsewhere the cross one.
    [ "$(uname -m)" = aarch64 ] && linker=gcc
    if ! command -v "$linker" >/dev/null 2>&1; then
      echo "build-static.sh: $linker is missing: install Debian's gcc-aarch64-linux-gnu" >&2
      exit 2
    fi
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=$linker
    # Crates that build C (ring-free here, but zstd-like -sys crates would)
    # compile with the cross compiler too.
    export CC_aarch64_unknown_linux_gnu=$linker AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
    ;;
  *)
    echo "build-static.sh: no static build for $target (x86_64-unknown-linux-gnu, aarch64-unknown-linux-gnu)" >&2
    exit 2 ;;
esac
lto=fat units=1
if [ "${LEAKCHECK_STATIC_LTO:-fat}" = off ]; then lto=off units=16; fi
CARGO_PROFILE_RELEASE_LTO=$lto CARGO_PROFILE_RELEASE_CODEGEN_UNITS=$units \
  RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
  cargo build --release --locked -q --target "$target" --manifest-path "$root/Cargo.toml" >&2
echo "$root/target/$target/release/leakcheck"
