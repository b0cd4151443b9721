#!/usr/bin/env bash
# Miri over the kernels and the C ABI's re-entrant handle table. Kernels: x86 with AVX2 forced on (Miri reports no AVX2
# otherwise; the tests run every available implementation, so this one leg
# covers generic, SSE2 and AVX2) and NEON (cross-interpreted, no qemu needed).
# Skipped with a message when no nightly toolchain or Miri can be had.
set -uo pipefail
cd "$(dirname "$0")/.."

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "Miri leg skipped: no nightly toolchain on this machine."
    exit 0
fi
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    if ! rustup component add miri rust-src --toolchain nightly >/dev/null 2>&1; then
        echo "Miri leg skipped: the miri component could not be installed for nightly."
        exit 0
    fi
fi
export MIRIFLAGS="${MIRIFLAGS:-}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/miri"
start=$SECONDS
set -e
# Miri runs one thread: the NEON run and then the C ABI's run go beside the
# x86 one, on the other core, each in a target directory of its own (on
# session 28's machine the three took 520, 430 and 250 s one after the
# other; the x86 run is the longest, the other two together about as long).
side_pid=""
side_log=$(mktemp)
# On an early exit the side run's whole process tree goes too (cargo, Miri).
kill_tree() {
    local c
    for c in $(pgrep -P "$1"); do kill_tree "$c"; done
    kill "$1" 2>/dev/null || true
}
trap '[ -n "$side_pid" ] && kill_tree "$side_pid"; rm -f "$side_log"' EXIT
side() {
    if rustup target list --toolchain nightly --installed 2>/dev/null | grep -q aarch64-unknown-linux-gnu \
        || rustup target add aarch64-unknown-linux-gnu --toolchain nightly >/dev/null 2>&1; then
        echo "-- miri: kernels, aarch64 NEON"
        CARGO_TARGET_DIR="$CARGO_TARGET_DIR-neon" \
            cargo +nightly miri test -p oxiblosc-kernels --tests --target aarch64-unknown-linux-gnu \
            || { echo "Miri NEON run failed"; return 1; }
    else
        echo "Miri NEON run skipped: the aarch64 standard library could not be installed for nightly."
    fi
    echo "-- miri: the C ABI's super-chunk handles and contexts re-entered from callbacks"
    echo "   (capi/src/schunk, capi/src/v2/reentry_tests.rs), C's data array of chunk pointers"
    echo "   (capi/src/schunk/data_tests.rs, and an NDArray's: capi/src/b2nd/data_tests.rs),"
    echo "   the C-visible context head and its shared pools, the open-race hook (capi/src/internal/ctx),"
    echo "   the handles' claim states across threads (capi/src/schunk/claim.rs), the buffer"
    echo "   blosc2_schunk_to_buffer fills (capi/src/common.rs) and the frame it lends, written"
    echo "   to by C (capi/src/schunk/to_buffer_tests.rs)"
    CARGO_TARGET_DIR="$CARGO_TARGET_DIR-capi" MIRIFLAGS="$MIRIFLAGS -Zmiri-disable-isolation" \
        cargo +nightly miri test -p oxiblosc-capi --lib -- \
        reentry data_tests internal::ctx::pool internal::ctx::open_race a_super_chunks_contexts \
        schunk::claim calloc_filled to_buffer_tests::a_frame_in_memory \
        || { echo "Miri C ABI run failed"; return 1; }
}
side >"$side_log" 2>&1 &
side_pid=$!
echo "-- miri: kernels, x86 (generic, SSE2, AVX2)"
RUSTFLAGS="-Ctarget-feature=+avx2" cargo +nightly miri test -p oxiblosc-kernels --tests
echo "-- miri: the NEON and C ABI runs (beside the x86 one; their output)"
side_rc=0
wait "$side_pid" || side_rc=$?
side_pid=""
cat "$side_log"
[ "$side_rc" -eq 0 ] || exit "$side_rc"
echo "Miri leg took $((SECONDS - start)) s"
