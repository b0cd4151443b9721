#!/usr/bin/env bash
# NEON leg: cross-build oxiblosc-kernels for aarch64-unknown-linux-gnu and run
# its tests under qemu-user (NEON is baseline on AArch64, so every test that
# compares the available kernel tables includes the NEON one).
#
# Needs qemu-aarch64, the aarch64 cross gcc (as linker) with the arm64 libc,
# and the Rust target; missing pieces are installed (apt-get, rustup). When
# that is impossible the leg prints "NEON leg skipped: <why>" and exits 0.
# Test failures make it exit non-zero.
#
# Linker and runner are passed as environment variables, not in
# .cargo/config.toml: a runner there would also apply to `cargo miri`.
set -uo pipefail
cd "$(dirname "$0")/.."

TARGET=aarch64-unknown-linux-gnu
SYSROOT=/usr/aarch64-linux-gnu
PACKAGES=(qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross)

skip() {
    echo "NEON leg skipped: $*"
    exit 0
}

start=$SECONDS

# 1. qemu-user and the cross toolchain.
if ! command -v qemu-aarch64 >/dev/null 2>&1 \
    || ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 \
    || [ ! -e "$SYSROOT/lib/libc.so" ]; then
    command -v apt-get >/dev/null 2>&1 \
        || skip "qemu-aarch64 or the aarch64 cross gcc/libc is missing and there is no apt-get to install ${PACKAGES[*]}"
    echo "-- installing ${PACKAGES[*]} (apt-get)"
    log=$(mktemp)
    if ! { apt-get update \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${PACKAGES[@]}"; } \
        >"$log" 2>&1; then
        tail -n 5 "$log" >&2
        rm -f "$log"
        skip "apt-get could not install ${PACKAGES[*]} (see the lines above)"
    fi
    rm -f "$log"
    command -v qemu-aarch64 >/dev/null 2>&1 || skip "qemu-aarch64 still missing after installing qemu-user"
    command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || skip "aarch64-linux-gnu-gcc still missing after installing gcc-aarch64-linux-gnu"
fi

# 2. The Rust standard library for the target.
command -v rustup >/dev/null 2>&1 || skip "no rustup to install the $TARGET target"
if ! rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
    echo "-- rustup target add $TARGET"
    rustup target add "$TARGET" || skip "rustup target add $TARGET failed"
fi

# 3. Build and test under qemu.
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L $SYSROOT"
# For aarch64 programs the tests start themselves (through binfmt_misc).
export QEMU_LD_PREFIX=$SYSROOT

# Tests that re-execute their own binary go through the runner variable
# (see kernels/tests/errors.rs), so no binfmt_misc is needed.
test_args=()

echo "-- cargo test -p oxiblosc-kernels --target $TARGET (runner: $CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER)"
cargo test -p oxiblosc-kernels --target "$TARGET" "${test_args[@]}"
status=$?
if [ "$status" -eq 0 ]; then
    echo "NEON leg passed in $((SECONDS - start)) s"
else
    echo "NEON leg FAILED (cargo test exit status $status) after $((SECONDS - start)) s"
fi
exit "$status"
