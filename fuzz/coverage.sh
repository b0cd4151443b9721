#!/usr/bin/env bash
# Source coverage of each target's corpus: which library lines the inputs
# reach (`cargo fuzz coverage`, nightly with llvm-tools). Prints, per
# target, the files of the library and the C ABI with their share of lines
# run; `SHOW=path/to/file.rs` also lists that file's lines never run.
# FUZZ_TARGETS picks targets (default: every target with a corpus); a
# corpus other than fuzz/corpus/<target> may be given as CORPUS=dir (one
# target). Session 44 found this way that no target reached the parallel
# VL-block decoder, a dictionary's training or 23 of the C ABI's
# super-chunk calls (fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
targets="${FUZZ_TARGETS:-$(ls fuzz/corpus 2>/dev/null)}"
rustup component add llvm-tools-preview --toolchain nightly >/dev/null 2>&1 || true
sysroot=$(rustc +nightly --print sysroot)
llvm_cov=$(ls "$sysroot"/lib/rustlib/*/bin/llvm-cov | head -1)
[ -x "$llvm_cov" ] || { echo "coverage: llvm-cov missing (rustup component add llvm-tools-preview)"; exit 1; }
[ -n "${TMPDIR:-}" ] || { [ -w /dev/shm ] && export TMPDIR=/dev/shm; }
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
mkdir -p fuzz/target
for t in $targets; do
    corpus="${CORPUS:-fuzz/corpus/$t}"
    [ -d "$corpus" ] || { echo "coverage: $t: no corpus at $corpus (python3 fuzz/seed.py)"; continue; }
    cargo +nightly fuzz coverage "$t" "$corpus" >"fuzz/target/coverage-$t.log" 2>&1 \
        || { echo "coverage: $t failed (fuzz/target/coverage-$t.log)"; exit 1; }
    bin="target/$triple/coverage/$triple/release/$t"
    prof="fuzz/coverage/$t/coverage.profdata"
    echo "== $t"
    "$llvm_cov" report "$bin" -instr-profile="$prof" \
        --ignore-filename-regex='(\.cargo|rustc|\.rustup|fuzz_targets)' \
        | awk '$1 ~ /^(src|capi\/src|kernels\/src)\// { printf "%-40s %6s lines, %6s run\n", $1, $8, $10 }'
    if [ -n "${SHOW:-}" ]; then
        echo "-- $SHOW: lines never run"
        "$llvm_cov" show "$bin" -instr-profile="$prof" "$PWD/$SHOW" -show-line-counts \
            | awk -F'|' '$2 ~ /^ *0$/ { print $1 "|" $3 }'
    fi
done
