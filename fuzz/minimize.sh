#!/usr/bin/env bash
# Minimise each target's corpus (fuzz/corpus/<target>/, what the runs found
# plus the seeds) with `cargo fuzz cmin` and keep the result in
# fuzz/corpus-min/<target>/, which is committed: seed.py copies it back, so
# the next run (another machine, CI) starts where this one stopped.
# FUZZ_TARGETS picks targets; default: every target with a corpus.
# Left out of corpus-min: the seeds (seed.py writes them anyway) and inputs
# over MAX_BYTES (default 16 KiB: larger ones are mostly the seeds with a few
# bytes changed, and most of the bytes).
set -euo pipefail
cd "$(dirname "$0")/.."
max="${MAX_BYTES:-16384}"
targets="${FUZZ_TARGETS:-$(ls fuzz/corpus 2>/dev/null)}"
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    toolchain=(+nightly); sanitizer=()
else
    toolchain=(); sanitizer=(-s none)
fi
[ -n "${TMPDIR:-}" ] || { [ -w /dev/shm ] && export TMPDIR=/dev/shm; }
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
python3 fuzz/seed.py "$seeds" >/dev/null
for t in $targets; do
    [ -d "fuzz/corpus/$t" ] || continue
    before=$(ls "fuzz/corpus/$t" | wc -l)
    cargo "${toolchain[@]}" fuzz cmin "${sanitizer[@]}" -O "$t" "fuzz/corpus/$t" \
        -- -rss_limit_mb=2048 -timeout=60 >"fuzz/target/cmin-$t.log" 2>&1 \
        || { echo "minimize: $t: cmin failed (fuzz/target/cmin-$t.log)"; exit 1; }
    rm -rf "fuzz/corpus-min/$t"
    mkdir -p "fuzz/corpus-min/$t"
    for f in "fuzz/corpus/$t"/*; do
        [ -f "$f" ] && [ ! -e "$seeds/$t/$(basename "$f")" ] \
            && [ "$(stat -c %s "$f")" -le "$max" ] && cp "$f" "fuzz/corpus-min/$t/"
    done
    echo "minimize: $t: $before -> $(ls "fuzz/corpus-min/$t" | wc -l) inputs" \
        "besides the seeds, $(cat "fuzz/corpus-min/$t"/* 2>/dev/null | wc -c) bytes"
done
