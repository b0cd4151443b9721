#!/usr/bin/env bash
# Differential sweep of the fuzz corpora against the real C-Blosc2 3.3.5
# (python-blosc2's libblosc2.so) and, for Blosc1 chunks, C-Blosc 1.21
# (python-blosc): see fuzz/c-diff/ and fuzz/README.md ("Against C").
#
#   chunk   chunk_decode's corpus decoded by both (reported, not checked:
#           C-Blosc2 is lax on corrupt chunks and has tail bugs)
#   frame   cframe_read's and cframe_edit's corpora opened and read by both
#           (ours with defer_chunk_checks, lax as C is on chunks that do
#           not fit; the frames we write must open strictly)
#   nd      ndarray_read's corpus opened as NDArrays by both
#   edit    the frames of `frame`, written back by us and edited (in memory
#           then written; as a file edited in place; copied into a sparse
#           frame edited in place): C must read what we wrote as we do, and
#           we must reopen it
#   sframe  sframe_read's corpus laid out as that target does (directories)
#           and opened by both (lax, as in frame)
#   sframe-edit  those directories, copied and edited in place by us: C
#           must read them as we do, and we must reopen them
#   nd-edit the arrays of `nd`, written back by us and edited (resize,
#           append, insert, a box written): likewise, as NDArrays
#   encode  roundtrip's corpus compressed by us with its parameters: C-Blosc2
#           must decode every chunk (C-Blosc 1.21 every Blosc1 one) to what
#           we decode; and C-Blosc2 compresses the same inputs with the same
#           parameters: its Blosc2 chunks must be ours byte for byte, but for
#           C's own bugs and the differences kept on purpose (oracle.py
#           `same`); so must C-Blosc 1.21's Blosc1 ones (`same1`)
#   encode-frame  roundtrip's corpus in frames (a super-chunk's, the
#           streaming encoder's, a sparse frame) with its parameters and
#           chunk size: C-Blosc2 must read every chunk as we do; and the
#           frames in memory must be C-Blosc2's of the same data byte for
#           byte, but for C's own bugs and the differences kept on purpose
#           (oracle.py `samef`)
#   c-append  C-Blosc2 appends a chunk to copies of encode-frame's frames
#           (files, directories): it reads its chunk back, we reopen the
#           frame and read it as C does
#   encode-nd  roundtrip's corpus as NDArrays we write (a dtype of the
#           input's type size, a geometry its bytes pick): we and C-Blosc2
#           must read them as written
#   capi-encode  our C ABI compresses encode's inputs (blosc2_compress_ctx;
#           blosc_compress for the Blosc1 ones): byte for byte our Rust
#           chunks; and after encode-frame its super-chunks make frames of
#           those inputs as C-Blosc2's did: byte for byte our Rust frames
#   capi-M  our C ABI (capi/'s libblosc2.so) read through the oracle, on
#           what mode M (run before) read or wrote: where it and C-Blosc2
#           both read, the same (M: frame nd edit nd-edit sframe
#           sframe-edit encode-nd)
#
# C_DIFF_MODES picks modes (default: all); CORPUS=corpus-min uses the
# minimised corpora (default: corpus). The python packages come from the
# test suite's environments (target/pydeps, target/pydeps-c1: run
# `cargo test --test differential --test blosc1_interop` once to make
# them). Exits non-zero on a finding (see fuzz/c-diff/compare.py).
set -uo pipefail
cd "$(dirname "$0")"
root="$(cd .. && pwd)"
corpus="${CORPUS:-corpus}"
modes="${C_DIFF_MODES:-chunk frame nd edit nd-edit sframe sframe-edit encode encode-frame c-append encode-nd capi-encode capi-frame capi-nd capi-edit capi-nd-edit capi-sframe capi-sframe-edit capi-encode-nd}"
out="${C_DIFF_OUT:-$root/target/c-diff}"
py2="$root/target/pydeps"
py1="$root/target/pydeps-c1"
[ -d "$py2/blosc2" ] || { echo "c-diff: $py2 has no blosc2; run cargo test --test differential first"; exit 2; }
rm -rf "$out" && mkdir -p "$out"
echo "c-diff: building oxiblosc-c-diff"
cargo build --release --quiet --manifest-path c-diff/Cargo.toml --target-dir "$root/target/c-diff-build" || exit 2
ours="$root/target/c-diff-build/release/oxiblosc-c-diff"
oracle() { PYTHONPATH="$py2" python3 c-diff/oracle.py "$@"; }
# Our C ABI (capi/'s libblosc2.so, a debug build: overflow checks on).
capi_lib="$root/target/debug/libblosc2.so"
capi_build() {
    [ -f "$capi_lib" ] || cargo build --quiet --manifest-path "$root/Cargo.toml" -p oxiblosc-capi || exit 2
}
list() { for d in "$@"; do ls -d "$PWD/$corpus/$d"/* 2>/dev/null; done; }
# sframe_read's inputs as directories ($out/sframe/<name>), C's report.
sframe_build() {
    mkdir -p "$out/sframe"
    list sframe_read | "$ours" sframe "$out/sframe" > "$out/sframe.log"
    ls -d "$out/sframe"/* > "$out/sframe.paths"
    oracle frame < "$out/sframe.paths" > "$out/sframe.c"
}
# What `$ours MODE DIR` writes of the corpora DIRS... into $out/MODE, read
# by both sides with READER (frame or nd) and compared against ORIGINALS:
#   written MODE READER ORIGINALS DIRS...
written() {
    local mode=$1 reader=$2 originals=$3
    shift 3
    mkdir -p "$out/$mode"
    list "$@" | "$ours" "$mode" "$out/$mode" > "$out/$mode.log"
    ls -d "$out/$mode"/* > "$out/$mode.paths"
    "$ours" "$reader" < "$out/$mode.paths" > "$out/$mode.ours"
    oracle "$reader" < "$out/$mode.paths" > "$out/$mode.c"
    python3 c-diff/compare.py "$mode" "$out/$mode.ours" "$out/$mode.c" "$originals" || bad=1
}
bad=0
for mode in $modes; do
    case "$mode" in
    chunk | frame | nd)
        case "$mode" in
        chunk) list chunk_decode ;;
        frame) list cframe_read cframe_edit ;;
        nd) list ndarray_read ;;
        esac > "$out/$mode.paths"
        lax="$mode"; [ "$mode" = frame ] && lax=frame-lax
        "$ours" "$lax" < "$out/$mode.paths" > "$out/$mode.ours"
        oracle "$mode" < "$out/$mode.paths" > "$out/$mode.c"
        python3 c-diff/compare.py "$mode" "$out/$mode.ours" "$out/$mode.c" || bad=1
        ;;
    edit)
        [ -f "$out/frame.c" ] || { list cframe_read cframe_edit > "$out/frame.paths"; oracle frame < "$out/frame.paths" > "$out/frame.c"; }
        written edit frame "$out/frame.c" cframe_read cframe_edit
        ;;
    nd-edit)
        [ -f "$out/nd.c" ] || { list ndarray_read > "$out/nd.paths"; oracle nd < "$out/nd.paths" > "$out/nd.c"; }
        written nd-edit nd "$out/nd.c" ndarray_read
        ;;
    sframe)
        sframe_build
        "$ours" frame-lax < "$out/sframe.paths" > "$out/sframe.ours"
        python3 c-diff/compare.py sframe "$out/sframe.ours" "$out/sframe.c" || bad=1
        ;;
    sframe-edit)
        [ -f "$out/sframe.c" ] || sframe_build
        mkdir -p "$out/sframe-edit"
        "$ours" sframe-edit "$out/sframe-edit" < "$out/sframe.paths" > "$out/sframe-edit.log"
        ls -d "$out/sframe-edit"/* > "$out/sframe-edit.paths"
        "$ours" frame < "$out/sframe-edit.paths" > "$out/sframe-edit.ours"
        oracle frame < "$out/sframe-edit.paths" > "$out/sframe-edit.c"
        python3 c-diff/compare.py sframe-edit "$out/sframe-edit.ours" "$out/sframe-edit.c" "$out/sframe.c" || bad=1
        ;;
    encode)
        mkdir -p "$out/encode"
        list roundtrip | "$ours" encode "$out/encode" > "$out/encode.ours"
        oracle encode "$out/encode" > "$out/encode.c"
        n=$(wc -l < "$out/encode.c")
        known=$(grep -c $'\tknown: ' "$out/encode.c")
        fails=$(grep -v $'\tknown: ' "$out/encode.c" | grep -cv $'\tok$')
        echo "encode: C-Blosc2 decoded $((n - fails - known)) of our $n chunks as we do ($known in its known bugs)"
        if [ -d "$py1/blosc" ]; then
            PYTHONPATH="$py1" python3 c-diff/oracle.py encode1 "$out/encode" > "$out/encode.c1"
            n1=$(wc -l < "$out/encode.c1")
            f1=$(grep -cv $'\tok$' "$out/encode.c1")
            echo "encode: C-Blosc 1.21 decoded $((n1 - f1)) of our $n1 Blosc1 chunks as we do"
            fails=$((fails + f1))
            grep -v $'\tok$' "$out/encode.c1" | head -20 | sed 's/^/  C-Blosc 1.21 FINDING: /'
            # Byte for byte: C-Blosc 1.21 compresses the same data with the
            # same parameters, and its Blosc1 chunk must be ours (oracle.py
            # `same1` says which differences are C's bugs or other
            # libraries).
            PYTHONPATH="$py1" python3 c-diff/oracle.py same1 "$out/encode" > "$out/encode.same1"
            echo "encode: C-Blosc 1.21's Blosc1 chunks of the same inputs against ours:"
            cut -f2 "$out/encode.same1" | sort | uniq -c | sed 's/^/  /'
            d1=$(grep -c $'\tDIFF\t' "$out/encode.same1")
            grep $'\tDIFF\t' "$out/encode.same1" | head -20 | sed 's/^/  same-bytes (C-Blosc 1.21) FINDING: /'
            fails=$((fails + d1))
        else
            echo "encode: no python-blosc in $py1, Blosc1 chunks not checked in C-Blosc 1.21"
        fi
        grep -v $'\tok$' "$out/encode.c" | grep -v $'\tknown: ' | head -20 | sed 's/^/  C-Blosc2 FINDING: /'
        # Byte for byte: C-Blosc2 compresses the same data with the same
        # parameters (one thread), and its chunk must be ours where the
        # format leaves no choice (oracle.py `same` says which differences
        # are C's own bugs or kept on purpose).
        oracle same "$out/encode" > "$out/encode.same"
        echo "encode: C-Blosc2's chunks of the same inputs against ours:"
        cut -f2 "$out/encode.same" | sed 's/ ([-0-9]*)$//' | sort | uniq -c | sed 's/^/  /'
        diffs=$(grep -c $'\tDIFF\t' "$out/encode.same")
        grep $'\tDIFF\t' "$out/encode.same" | head -20 | sed 's/^/  same-bytes FINDING: /'
        [ "$fails" -eq 0 ] && [ "$diffs" -eq 0 ] || bad=1
        ;;
    encode-nd)
        written encode-nd nd "$out/encode-nd.log" roundtrip
        ;;
    encode-frame)
        mkdir -p "$out/encode-frame"
        list roundtrip | "$ours" encode-frame "$out/encode-frame" > "$out/encode-frame.ours"
        oracle encodef "$out/encode-frame" > "$out/encode-frame.c"
        n=$(wc -l < "$out/encode-frame.c")
        known=$(grep -c $'\tknown: ' "$out/encode-frame.c")
        fails=$(grep -v $'\tknown: ' "$out/encode-frame.c" | grep -cv $'\tok$')
        ourerr=$(grep -c $'\tERR\t' "$out/encode-frame.ours")
        echo "encode-frame: C-Blosc2 read $((n - fails - known)) of our $n frames as we do ($known in its known bugs, $ourerr inputs our containers failed on)"
        grep -v $'\tok$' "$out/encode-frame.c" | grep -v $'\tknown: ' | head -20 | sed 's/^/  C-Blosc2 FINDING: /'
        grep $'\tERR\t' "$out/encode-frame.ours" | head -20 | sed 's/^/  oxiblosc FINDING: /'
        # Byte for byte: C-Blosc2 makes the frames in memory of the same
        # data, parameters and chunk size, and they must be ours but for C's
        # own bugs and the differences kept on purpose (oracle.py `samef`).
        oracle samef "$out/encode-frame" > "$out/encode-frame.same"
        echo "encode-frame: C-Blosc2's frames of the same inputs against ours:"
        cut -f2 "$out/encode-frame.same" | sed 's/^chunk [0-9]*: //; s/ ([-0-9]*)$//' | sort | uniq -c | sed 's/^/  /'
        diffs=$(grep -c $'\tDIFF\t' "$out/encode-frame.same")
        grep $'\tDIFF\t' "$out/encode-frame.same" | head -10 | cut -c1-300 | sed 's/^/  same-bytes FINDING: /'
        [ "$fails" -eq 0 ] && [ "$ourerr" -eq 0 ] && [ "$diffs" -eq 0 ] || bad=1
        ;;
    c-append)
        # C-Blosc2 appends a chunk to copies of encode-frame's frames (as
        # files and directories, by path): it must read its chunk back, and
        # we must reopen the frame and read it as C does.
        [ -d "$out/encode-frame" ] || { echo "c-diff: c-append needs mode encode-frame first"; exit 2; }
        mkdir -p "$out/c-append"
        oracle append "$out/c-append" "$out/encode-frame" > "$out/c-append.log"
        ls -d "$out/c-append"/* > "$out/c-append.paths"
        "$ours" frame < "$out/c-append.paths" > "$out/c-append.ours"
        oracle frame < "$out/c-append.paths" > "$out/c-append.c"
        n=$(wc -l < "$out/c-append.log")
        fails=$(grep -c $'\t''FAIL' "$out/c-append.log")
        echo "c-append: C-Blosc2 appended to $(grep -c $'\tok$' "$out/c-append.log") of our $n frames and read its chunk back"
        grep -o $'\t''skip: .*' "$out/c-append.log" | sort | uniq -c | sed 's/^/  /'
        grep $'\t''FAIL' "$out/c-append.log" | head -20 | sed 's/^/  C-Blosc2 FINDING: /'
        [ "$fails" -eq 0 ] || bad=1
        python3 c-diff/compare.py c-append "$out/c-append.ours" "$out/c-append.c" || bad=1
        ;;
    capi-encode)
        # Our C ABI compresses encode's inputs as C-Blosc2 did in `same`
        # (blosc2_compress_ctx, three filters too) and, for the Blosc1 ones,
        # through C-Blosc 1.x's blosc_compress: every chunk must be the one
        # our Rust encoder wrote, byte for byte.
        [ -d "$out/encode" ] || { echo "c-diff: $mode needs mode encode first"; exit 2; }
        capi_build
        ORACLE_LIB="$capi_lib" oracle same "$out/encode" > "$out/capi-encode.same"
        ORACLE_LIB="$capi_lib" oracle capi1 "$out/encode" >> "$out/capi-encode.same"
        echo "capi-encode: our C ABI's chunks of encode's inputs against our Rust ones:"
        cut -f2 "$out/capi-encode.same" | sed 's/ ([-0-9]*)$//' | sort | uniq -c | sed 's/^/  /'
        other=$(cut -f2 "$out/capi-encode.same" | grep -cv '^same$\|^skip: Blosc1$')
        awk -F'\t' '$2 != "same" && $2 != "skip: Blosc1"' "$out/capi-encode.same" | head -20 | cut -c1-300 | sed 's/^/  C ABI FINDING: /'
        [ "$other" -eq 0 ] || bad=1
        # And, after encode-frame, its frames in memory made by our C ABI's
        # super-chunk as C-Blosc2's were (`samef`: blosc2_schunk_new, the
        # chunk size written into the struct, append_buffer, to_buffer):
        # our Rust frames byte for byte, but for what the Rust side writes
        # apart (BYTEDELTA's meta 0 in the header, a chunk size before any
        # chunk, the streaming encoder's whole special chunks).
        if [ -d "$out/encode-frame" ]; then
            ORACLE_LIB="$capi_lib" oracle samef "$out/encode-frame" > "$out/capi-encode.samef"
            echo "capi-encode: our C ABI's frames of encode-frame's inputs against our Rust ones:"
            cut -f2 "$out/capi-encode.samef" | sed 's/^chunk [0-9]*: //; s/ ([-0-9]*)$//' | sort | uniq -c | sed 's/^/  /'
            kept='^same$|^same but BYTEDELTA.s meta$|^known: no chunk$|^chunk [0-9]*: known: the streaming encoder writes a special chunk whole$|^skip: Blosc1$'
            otherf=$(cut -f2 "$out/capi-encode.samef" | grep -Ecv "$kept")
            awk -F'\t' '{print $1 "\t" $2}' "$out/capi-encode.samef" | cut -f2 | grep -Ev "$kept" | sort | uniq -c | head -10 | sed 's/^/  C ABI FINDING: /'
            [ "$otherf" -eq 0 ] || bad=1
        fi
        ;;
    capi-*)
        # Our C ABI (capi/, libblosc2.so) through the same oracle as
        # C-Blosc2, on what mode M read or wrote: where both read, the same.
        m=${mode#capi-}
        [ -f "$out/$m.c" ] || { echo "c-diff: $mode needs mode $m first"; exit 2; }
        capi_build
        reader=frame
        case "$m" in nd | nd-edit | encode-nd) reader=nd ;; esac
        originals=""
        case "$m" in edit) originals="$out/frame.c" ;; nd-edit) originals="$out/nd.c" ;; encode-nd) originals="$out/encode-nd.log" ;; esac
        ORACLE_LIB="$capi_lib" oracle "$reader" < "$out/$m.paths" > "$out/$mode.ours"
        python3 c-diff/compare.py "$mode" "$out/$mode.ours" "$out/$m.c" "$originals" "$out/$m.ours" || bad=1
        ;;
    *) echo "c-diff: unknown mode $mode"; exit 2 ;;
    esac
done
echo "c-diff: reports in $out"
exit $bad
