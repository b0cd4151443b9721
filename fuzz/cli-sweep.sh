#!/usr/bin/env bash
# The command-line tool's readers on every input of the reader targets'
# corpora (fuzz/corpus-min; CORPUS=dir for another root): `info`,
# `info --json`, `info --format packed`, `verify`, `verify --format packed`,
# `decompress -f` and `decompress -f --format packed` of each file. The
# fuzz targets drive the library; this drives the tool's own code around
# it (format recognition, the info tables, the output files). Each run is
# limited to 6 GB of address space and 20 s. Prints, and exits 1 for, every
# run that panicked, died of a signal, timed out or exited with anything
# but 0, 1 or 2 (README: 1 on errors, 2 on bad arguments). Takes about 6
# minutes on 2 cores for the ~9,800 files (fuzz/README.md, session 45).
set -uo pipefail
cd "$(dirname "$0")/.."
root="${CORPUS:-fuzz/corpus-min}"
targets="${SWEEP_TARGETS:-cframe_read blp_read packed_read chunk_decode ndarray_read capi_frame cframe_edit}"
cargo build -q --release --bin oxiblosc || exit 1
bin="$PWD/target/release/oxiblosc"
work=$(mktemp -d "${TMPDIR:-/tmp}/oxiblosc-cli-sweep.XXXXXX")
trap 'rm -rf "$work"' EXIT
bad=0
files=0
for t in $targets; do
    for f in "$root/$t"/*; do
        [ -f "$f" ] || continue
        files=$((files + 1))
        for cmd in "info" "info --json" "info --format packed" "verify" "verify --format packed" \
            "decompress -f" "decompress -f --format packed"; do
            case "$cmd" in
                decompress*) out=("$work/out") ;;
                *) out=() ;;
            esac
            # shellcheck disable=SC2086 # cmd is split into its words on purpose
            (ulimit -v 6000000; timeout 20 "$bin" -q $cmd "$f" "${out[@]}" >/dev/null 2>"$work/err")
            rc=$?
            if { [ "$rc" -gt 2 ] || grep -q panicked "$work/err"; }; then
                echo "cli-sweep: exit $rc: oxiblosc $cmd $f: $(head -c 300 "$work/err" | tr '\n' ' ')"
                bad=$((bad + 1))
            fi
        done
    done
done
echo "cli-sweep: $files files, 7 runs each, $bad bad"
[ "$bad" -eq 0 ]
