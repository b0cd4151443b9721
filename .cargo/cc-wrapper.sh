#!/bin/sh
# The C compiler the `cc` crate runs for this repository's builds on
# x86_64 Linux (.cargo/config.toml). It runs the compiler `cc` would run
# ($CC, else cc) for everything but two cases, which go to clang 19 or newer
# when one is installed and compiles them; with no clang, or if clang
# refuses the flags (a sanitizer build), the usual compiler compiles them as
# before. The bytes they write are the same either way.
#
# - libzstd's compressor (zstd-sys' zstd/lib/compress/*.c). gcc 12's build
#   of zstd 1.5.7's compressor takes 431-584 us for one level-9
#   ZSTD_compressCCtx on a shuffled 128 KiB ramp depending only on where
#   the linker puts its code, so our ZSTD compress rows against C-Blosc2
#   moved 0.84-1.05 with unrelated edits; clang 19's build of the same
#   source takes 426-454 us wherever it lands. Its decoder stays with gcc,
#   whose build decodes a little faster here.
# - liblz4's lz4.c (lzzzz's vendor/liblz4; LZ4 compression and decoding,
#   not LZ4HC): clang 19's decoder is faster (C ABI grid, LZ4 decompress
#   geomean 1.60 -> 1.69 of C-Blosc2's, getitem 2.27 -> 2.46; compress
#   1.30 -> 1.29).
#
# perf/README.md, "libzstd's compressor and liblz4 built by clang 19".
# Builds that ran before a change here keep their objects: `cargo clean -p
# zstd-sys -p lzzzz` rebuilds them.

# Compile with the first clang found; exit with its success, or return
# (to the usual compiler) when it fails.
clang_first() {
    for clang in clang-21 clang-20 clang-19; do
        if command -v "$clang" >/dev/null 2>&1; then
            "$clang" "$@" 2>/dev/null && exit 0
            return
        fi
    done
}
for arg in "$@"; do
    case "$PWD|$arg" in
    *zstd-sys*"|"zstd/lib/compress/*.c | *zstd-sys*"|"*/zstd/lib/compress/*.c | \
        *lzzzz*"|"*/liblz4/lz4.c)
        clang_first "$@"
        break
        ;;
    esac
done
exec ${CC:-cc} "$@"
