#!/usr/bin/env bash
# Run every cargo-fuzz target of fuzz/ for a bounded time (FUZZ_SECONDS,
# default 60 s each; FUZZ_TARGETS to pick some; FUZZ_JOBS at a time;
# FUZZ_TIMEOUT seconds an input may take, default 60: raise it when the runs
# may be paused with SIGSTOP, whose pause libFuzzer counts as the input's
# time). Installs cargo-fuzz when it
# is missing; skips, with a message, when it cannot be had. Uses nightly
# (ASan) when installed, else stable without sanitizer (-s none).
# Exits non-zero when a target finds a crash (the input is left in
# fuzz/artifacts/<target>/). Prints the executions of each target and the
# CPU time its run took (user + system seconds of the fuzzer and cargo, as
# bash's `time` counts them), the measure issue #15's goal is set in.
# One allocation over FUZZ_MALLOC_MB (default 96) is a finding
# ("out-of-memory (malloc(N))"): the targets cap what they read at 64 MiB,
# so a larger single allocation was sized by something else (issue #15:
# memory bounded by the input). libFuzzer enforces it under ASan only.
set -uo pipefail
cd "$(dirname "$0")/.."

secs="${FUZZ_SECONDS:-60}"
input_timeout="${FUZZ_TIMEOUT:-60}"
malloc_mb="${FUZZ_MALLOC_MB:-96}"
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

# Build every target once (one cargo call builds them side by side), then run
# them FUZZ_JOBS at a time (default: the number of cores), each
# for its own FUZZ_SECONDS: on 2 cores the 14 minutes of one-at-a-time runs
# take 7, every target still gets its minute on a core of its own.
jobs="${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}"
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
mkdir -p fuzz/target
echo "fuzz: building the targets (${toolchain[*]:-stable} ${sanitizer[*]:-ASan}, -O)"
if ! cargo "${toolchain[@]}" fuzz build "${sanitizer[@]}" -O >fuzz/target/fuzz-build.log 2>&1; then
    echo "fuzz: the build FAILED; the end of fuzz/target/fuzz-build.log:"
    tail -40 fuzz/target/fuzz-build.log
    exit 1
fi

run_one() {
    local t=$1 log="fuzz/target/fuzz-$1.log" rc
    local TIMEFORMAT='%U %S'
    {
        time cargo "${toolchain[@]}" fuzz run "${sanitizer[@]}" -O "$t" -- \
            -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb="$malloc_mb" \
            -timeout="$input_timeout" >"$log" 2>&1
        rc=$?
    } 2>"fuzz/target/fuzz-$t.cpu"
    echo $rc >"fuzz/target/fuzz-$t.rc"
}

report() {
    local t=$1 log="fuzz/target/fuzz-$1.log" rc runs cpu
    rc=$(cat "fuzz/target/fuzz-$t.rc" 2>/dev/null || echo "?")
    runs=$(grep -Eo 'Done [0-9]+ runs' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
    # user + system seconds, rounded: "12.34 0.56" -> 13
    cpu=$(awk 'NF == 2 { printf "%.0f", $1 + $2 }' "fuzz/target/fuzz-$t.cpu" 2>/dev/null)
    if [ "$rc" != 0 ]; then
        echo "fuzz: $t FAILED (exit $rc); the end of $log:"
        tail -40 "$log"
        status=1
    else
        echo "fuzz: $t ok, ${runs:-?} executions in ${secs}s, ${cpu:-?} CPU-s"
    fi
}

status=0
running=()
for t in $targets; do
    rm -f "fuzz/target/fuzz-$t.rc" "fuzz/target/fuzz-$t.cpu"
    # A free slot: wait for the oldest running target, report it.
    if [ ${#running[@]} -ge "$jobs" ]; then
        wait "${running[0]%%:*}" || true
        report "${running[0]#*:}"
        running=("${running[@]:1}")
    fi
    echo "fuzz: $t for ${secs}s"
    run_one "$t" &
    running+=("$!:$t")
done
for r in "${running[@]}"; do
    wait "${r%%:*}" || true
    report "${r#*:}"
done
exit $status
