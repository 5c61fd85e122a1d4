#!/usr/bin/env bash
# Lets this x86-64 Linux run arm64 programs as if they were its own: the
# kernel's binfmt_misc hands every arm64 ELF to Debian's qemu-aarch64-static
# (package qemu-user-static), so that an arm64 leakcheck can start an arm64
# `node` by name, as on arm64 hardware. Registered with the flag F (the
# emulator opened now), so that it also runs in an empty root (chroot).
# Needs root. Idempotent. tests/it/arm64.rs is what uses it.
# usage: scripts/arm64-binfmt.sh
set -euo pipefail
misc=/proc/sys/fs/binfmt_misc
rule=/usr/lib/binfmt.d/qemu-aarch64.conf
if [ ! -e "$misc/register" ]; then
  mount -t binfmt_misc binfmt_misc "$misc"
fi
if [ -e "$misc/qemu-aarch64" ]; then
  exit 0
fi
if [ ! -e "$rule" ]; then
  echo "arm64-binfmt.sh: $rule is missing: install Debian's qemu-user-static" >&2
  exit 2
fi
cat "$rule" >"$misc/register"
grep -q enabled "$misc/qemu-aarch64"
