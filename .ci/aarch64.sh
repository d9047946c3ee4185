#!/usr/bin/env bash
# Build the aarch64 (Jetson) gpukb binary with a glibc 2.27 floor, check the
# floor with objdump, and run `gpukb fingerprint --root` on every Jetson
# fixture under qemu-aarch64.
#
# Why: one binary must run on JetPack 4 (Ubuntu 18.04, glibc 2.27) through
# JetPack 7 (Ubuntu 24.04). It must be glibc-linked, not static musl, because
# it dlopens libcuda / libnvidia-ml. cargo-zigbuild pins the glibc symbol
# versions with the `.2.27` target suffix (shared/research/crates.md §5).
#
# Usage: bash .ci/aarch64.sh            (from anywhere in the repo)
# Env:   GPUKB_PKG      package to build            (default gpukb)
#        GPUKB_BIN      binary name                 (default gpukb)
#        GLIBC_FLOOR    highest allowed GLIBC_x.y   (default 2.27)
#        GPUKB_REQUIRE_FINGERPRINT=1  fail (instead of skipping) when the binary
#                       has no `fingerprint --root` yet
#        GPUKB_SKIP_INSTALL=1  do not install tools (they must be on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=aarch64-unknown-linux-gnu
GLIBC_FLOOR=${GLIBC_FLOOR:-2.27}
PKG=${GPUKB_PKG:-gpukb}
BIN=${GPUKB_BIN:-gpukb}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}

say() { printf '== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else "$@"; fi; }

# ---------------------------------------------------------------- tools ----
if [ "${GPUKB_SKIP_INSTALL:-0}" != 1 ]; then
  if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$TARGET"; then
    say "rustup target add $TARGET"
    rustup target add "$TARGET"
  fi
  if ! python3 -m ziglang version >/dev/null 2>&1 && ! command -v zig >/dev/null; then
    say "pip install ziglang"
    python3 -m pip install --quiet ziglang
  fi
  if ! command -v cargo-zigbuild >/dev/null; then
    say "cargo install cargo-zigbuild --locked"
    cargo install cargo-zigbuild --locked
  fi
  need_apt=()
  command -v qemu-aarch64 >/dev/null || need_apt+=(qemu-user)
  [ -e "$QEMU_LD_PREFIX/lib/ld-linux-aarch64.so.1" ] || need_apt+=(libc6-arm64-cross)
  command -v aarch64-linux-gnu-objdump >/dev/null || need_apt+=(binutils-aarch64-linux-gnu)
  if [ ${#need_apt[@]} -gt 0 ]; then
    say "apt-get install ${need_apt[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${need_apt[@]}" >/dev/null
  fi
fi
OBJDUMP=aarch64-linux-gnu-objdump
command -v "$OBJDUMP" >/dev/null || OBJDUMP=objdump

# ---------------------------------------------------------------- build ----
say "cargo zigbuild --release -p $PKG --target $TARGET.$GLIBC_FLOOR"
start=$(date +%s)
cargo zigbuild --release -p "$PKG" --target "$TARGET.$GLIBC_FLOOR"
say "build took $(( $(date +%s) - start )) s"
BINPATH="$TARGET_DIR/$TARGET/release/$BIN"
[ -x "$BINPATH" ] || fail "no binary at $BINPATH"

# ------------------------------------------------------- what was built ----
header=$("$OBJDUMP" -f "$BINPATH")
echo "$header" | grep -q 'elf64-littleaarch64' || fail "$BINPATH is not an aarch64 ELF: $header"
"$OBJDUMP" -p "$BINPATH" | grep -q 'NEEDED *libc\.so\.6' \
  || fail "$BINPATH does not link glibc dynamically (a static musl binary cannot dlopen libcuda)"

# --------------------------------------------------------- glibc floor ----
max=$("$OBJDUMP" -T "$BINPATH" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -uV | tail -n 1)
[ -n "$max" ] || fail "no GLIBC symbol versions found in $BINPATH"
highest=$(printf '%s\n%s\n' "$max" "$GLIBC_FLOOR" | sort -V | tail -n 1)
if [ "$highest" != "$GLIBC_FLOOR" ]; then
  "$OBJDUMP" -T "$BINPATH" | grep "GLIBC_$max" >&2 || true
  fail "highest GLIBC symbol version is $max, above the $GLIBC_FLOOR floor (JetPack 4 / Ubuntu 18.04)"
fi
say "highest GLIBC symbol version: $max (floor $GLIBC_FLOOR) OK; size $(stat -c %s "$BINPATH") bytes"

# ------------------------------------------------- fixtures under qemu ----
run() { qemu-aarch64 -L "$QEMU_LD_PREFIX" "$BINPATH" "$@"; }
run --version >/dev/null 2>&1 || run --help >/dev/null 2>&1 || fail "the aarch64 binary does not start under qemu-aarch64"
say "runs under qemu-aarch64: $(run --version 2>/dev/null || echo '(no --version)')"

if ! run fingerprint --help 2>/dev/null | grep -q -- '--root'; then
  if [ "${GPUKB_REQUIRE_FINGERPRINT:-0}" = 1 ]; then
    fail "$BIN has no 'fingerprint --root' subcommand"
  fi
  say "SKIP fixture runs: $BIN has no 'fingerprint --root' yet"
  echo "aarch64: 1 passed, 0 failed"
  exit 0
fi

passed=0
failed=0
errfile=$(mktemp)
trap 'rm -f "$errfile"' EXIT
for dir in tests/fixtures/jetson-*/; do
  dir=${dir%/}
  name=$(basename "$dir")
  expect="$dir/EXPECT"
  if [ ! -f "$expect" ]; then
    say "$name: no EXPECT file, skipped"
    continue
  fi
  rc=0
  out=$(run fingerprint --root "$dir" --json 2>"$errfile") || rc=$?
  if [ "$rc" != 0 ]; then
    echo "FAIL $name: exit status $rc; stderr:"; cat "$errfile"
    failed=$((failed + 1)); continue
  fi
  ok=1
  # EXPECT lines are `key=value`; every value must appear as a JSON string.
  while IFS='=' read -r key value; do
    case "$key" in ''|'#'*) continue ;; esac
    if ! grep -qF "\"$value\"" <<<"$out"; then
      echo "FAIL $name: $key \"$value\" not in the JSON output"
      ok=0
    fi
  done < "$expect"
  if [ $ok = 1 ]; then
    echo "ok   $name"; passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "aarch64 fixtures: $passed passed, $failed failed"
[ "$failed" = 0 ]

# -------------------------------------------------------- arm64 package ----
# The .deb for arm64 from the binary built above: dpkg-deb --info/--contents, the
# Depends line and glibc floor, then its unpacked binary run under qemu-aarch64
# (installs cargo-deb when missing).
say "arm64 .deb from this binary (cli/packaging/build-debs.sh)"
GPUKB_SKIP_BUILD=1 QEMU_LD_PREFIX="$QEMU_LD_PREFIX" bash cli/packaging/build-debs.sh arm64
