#!/usr/bin/env bash
# What the README's test command (`cargo test`) needs beyond Rust, gcc and
# Python with pip, installed when missing (Debian packages; root or sudo):
#   libblosc-dev       blosc.h and the real libblosc.so.1 (C-Blosc 1.x's test programs)
#   python3-numcodecs  Debian's numcodecs, whose test_blosc.py runs on our libblosc.so.1
#   python3-pytest     to run it
#   python3-venv       the Python package's tests build it in a virtualenv
#   cmake              builds zlib-ng (libz-ng-sys, the `zlib` feature) and, for perf/, C-Blosc2
#   zlib1g-dev         the system zlib perf/'s static C-Blosc2 links (its bundled zlib-ng
#                      would clash with ours)
#   clang-19           compiles zlib-ng (.cargo/zlib-ng-clang.cmake): gcc 12's build
#                      compresses at half C-Blosc2's speed; without clang the ZLIB
#                      clevels 1-5 fall back to zlib-rs (zng's test checks which)
#                      and libzstd's compressor and liblz4's lz4.c (.cargo/cc-wrapper.sh):
#                      gcc 12's compressor moves 1.0-1.4x with code placement, its LZ4
#                      decoder is 6% slower (tests/cc_wrapper.rs checks which built zstd)
# The tests install their own pip packages (python-blosc2, python-blosc,
# bloscpack, numcodecs, zarr, dask) under target/.
set -euo pipefail
missing=()
[ -e /usr/include/blosc.h ] || missing+=(libblosc-dev)
/usr/bin/python3 -c 'import numcodecs.blosc' 2>/dev/null || missing+=(python3-numcodecs)
/usr/bin/python3 -c 'import pytest' 2>/dev/null || missing+=(python3-pytest)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
command -v gcc >/dev/null || missing+=(gcc)
command -v cmake >/dev/null || missing+=(cmake)
[ -e /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v clang-19 >/dev/null || command -v clang-20 >/dev/null || command -v clang-21 >/dev/null \
    || missing+=(clang-19)
if [ ${#missing[@]} -gt 0 ]; then
    echo "prereqs: installing ${missing[*]}"
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "prereqs: ok"
