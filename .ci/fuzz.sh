#!/usr/bin/env bash
# Run every cargo-fuzz target of fuzz/ for a bounded time (FUZZ_SECONDS,
# default 60 s each; FUZZ_TARGETS to pick some). Installs cargo-fuzz when it
# is missing; skips, with a message, when it cannot be had. Uses nightly
# (ASan) when installed, else stable without sanitizer (-s none).
# Exits non-zero when a target finds a crash (the input is left in
# fuzz/artifacts/<target>/). Prints the executions of each target.
set -uo pipefail
cd "$(dirname "$0")/.."

secs="${FUZZ_SECONDS:-60}"
targets="${FUZZ_TARGETS:-chunk_decode cframe_read cframe_edit sframe_read roundtrip blp_read packed_read ndarray_read ndarray_edit ndarray_args capi_chunk capi_frame capi_roundtrip capi_b2nd}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: cargo-fuzz missing, installing it"
    if ! cargo install cargo-fuzz --locked; then
        echo "fuzz: SKIPPED: cargo-fuzz could not be installed"
        exit 0
    fi
fi
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    toolchain=(+nightly)
    sanitizer=()
else
    echo "fuzz: no nightly toolchain, running on stable without sanitizer"
    toolchain=()
    sanitizer=(-s none)
fi

python3 fuzz/seed.py >/dev/null || { echo "fuzz: cannot seed the corpora"; exit 1; }

# The targets that write frames and arrays to files (std::env::temp_dir)
# write them to memory when they can: their crash-safe writes sync every
# file, and on a disk those syncs waited behind other writes (builds), up
# to tens of seconds an input. ndarray_edit replayed its corpus 2.5x as
# fast from /dev/shm (fuzz/README.md, session 23). TMPDIR set by the
# caller wins.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
    export TMPDIR=/dev/shm
fi

status=0
for t in $targets; do
    log="fuzz/target/fuzz-$t.log"
    mkdir -p fuzz/target
    echo "fuzz: $t for ${secs}s"
    cargo "${toolchain[@]}" fuzz run "${sanitizer[@]}" -O "$t" -- \
        -max_total_time="$secs" -rss_limit_mb=2048 -timeout=60 >"$log" 2>&1
    rc=$?
    runs=$(grep -Eo 'Done [0-9]+ runs' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
    if [ $rc -ne 0 ]; then
        echo "fuzz: $t FAILED (exit $rc); the end of $log:"
        tail -40 "$log"
        status=1
    else
        echo "fuzz: $t ok, ${runs:-?} executions in ${secs}s"
    fi
done
exit $status
