#!/bin/sh
# The C compiler the `cc` crate runs for this repository's builds on
# x86_64 Linux (.cargo/config.toml). It runs the compiler `cc` would run
# ($CC, else cc) for everything but one case: libzstd's compressor
# (zstd-sys' zstd/lib/compress/*.c) goes to clang 19 or newer when one is
# installed and compiles it; with no clang, or if clang refuses the flags
# (a sanitizer build), the usual compiler compiles it as before.
#
# Why: gcc 12's build of zstd 1.5.7's compressor takes 430 to 610 us for
# one level-9 ZSTD_compressCCtx on a shuffled 128 KiB ramp depending only
# on where the linker puts its code (64 builds, 0-4,032 bytes of padding),
# so our ZSTD compress rows against C-Blosc2 moved from 0.84 to 1.05 with
# unrelated edits. clang 19's build of the same source: 426-454 us at every
# padding tried. The decompressor stays with gcc, whose build decodes a
# little faster here. The bytes are the same. perf/README.md, "libzstd's
# compressor built by clang 19".
case "$PWD" in
*zstd-sys*)
    for arg in "$@"; do
        case "$arg" in
        zstd/lib/compress/*.c | */zstd/lib/compress/*.c)
            for clang in clang-21 clang-20 clang-19; do
                if command -v "$clang" >/dev/null 2>&1; then
                    "$clang" "$@" 2>/dev/null && exit 0
                    break
                fi
            done
            break
            ;;
        esac
    done
    ;;
esac
exec ${CC:-cc} "$@"
