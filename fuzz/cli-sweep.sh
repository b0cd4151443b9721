#!/usr/bin/env bash
# The command-line tool's readers on every input of the reader targets'
# corpora (fuzz/corpus-min; CORPUS=dir for another root): `info`,
# `info --json`, `info --format packed`, `verify`, `verify --format packed`,
# `decompress -f`, `decompress -f --format packed` and `decompress -f` to
# a `.npy` of each file. The fuzz targets drive the library; this drives
# the tool's own code around it (format recognition, the info tables, the
# output files). Each run is limited to 6 GB of address space, 64 MB of
# output and 20 s. Prints, and exits 1 for, every run that panicked, died
# of a signal, timed out or exited with anything but 0, 1 or 2 (README: 1
# on errors, 2 on bad arguments), and, when Python has numpy (or
# target/pydeps, which the tests install, holds it), every `.npy` written
# that `numpy.load(allow_pickle=False)` cannot read. The ~10,000 files of
# fuzz/corpus-min took 29 minutes beside a CI run (fuzz/README.md,
# session 45).
set -uo pipefail
cd "$(dirname "$0")/.."
root="${CORPUS:-fuzz/corpus-min}"
targets="${SWEEP_TARGETS:-cframe_read blp_read packed_read chunk_decode ndarray_read capi_frame cframe_edit}"
cargo build -q --release --bin oxiblosc || exit 1
bin="$PWD/target/release/oxiblosc"
work=$(mktemp -d "${TMPDIR:-/tmp}/oxiblosc-cli-sweep.XXXXXX")
trap 'rm -rf "$work"' EXIT
numpy=()
if python3 -c 'import numpy' 2>/dev/null; then
    numpy=(python3)
elif [ -d target/pydeps ] && PYTHONPATH=target/pydeps python3 -c 'import numpy' 2>/dev/null; then
    numpy=(env PYTHONPATH="$PWD/target/pydeps" python3)
else
    echo "cli-sweep: no numpy: the .npy files written are not loaded"
fi
bad=0
files=0
npys=0
for t in $targets; do
    for f in "$root/$t"/*; do
        [ -f "$f" ] || continue
        files=$((files + 1))
        rm -f "$work/out"
        for cmd in "info" "info --json" "info --format packed" "verify" "verify --format packed" \
            "decompress -f" "npy" "decompress -f --format packed"; do
            case "$cmd" in
                npy)
                    cmd="decompress -f"
                    out=("$work/out.npy")
                    ;;
                decompress*) out=("$work/out") ;;
                *) out=() ;;
            esac
            rm -f "$work/out.npy"
            # shellcheck disable=SC2086 # cmd is split into its words on purpose
            (ulimit -v 6000000 -f 65536; timeout 20 "$bin" -q $cmd "$f" "${out[@]}" >/dev/null 2>"$work/err")
            rc=$?
            if { [ "$rc" -gt 2 ] || grep -q panicked "$work/err"; }; then
                echo "cli-sweep: exit $rc: oxiblosc $cmd $f: $(head -c 300 "$work/err" | tr '\n' ' ')"
                bad=$((bad + 1))
            fi
            # An NDArray's .npy (other inputs give their raw bytes, as the
            # plain decompress just before: those may be a .npy of anything).
            if [ "$rc" -eq 0 ] && [ ${#numpy[@]} -gt 0 ] && [ -f "$work/out.npy" ] \
                && ! cmp -s "$work/out" "$work/out.npy" \
                && [ "$(head -c 6 "$work/out.npy" | od -An -tx1 | tr -d ' ')" = 934e554d5059 ]; then
                npys=$((npys + 1))
                if ! "${numpy[@]}" -c 'import numpy, sys; numpy.load(sys.argv[1], allow_pickle=False)' \
                    "$work/out.npy" 2>"$work/err"; then
                    echo "cli-sweep: numpy cannot load the .npy of $f: $(tail -c 300 "$work/err" | tr '\n' ' ')"
                    bad=$((bad + 1))
                fi
            fi
        done
    done
done
echo "cli-sweep: $files files, 8 runs each, $npys .npy files loaded by numpy, $bad bad"
[ "$bad" -eq 0 ]
