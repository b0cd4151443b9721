#!/usr/bin/env bash
# Prerequisites of oxiblosc-capi's tests, installed when missing, then the tests:
#   libblosc-dev       blosc.h (and the real libblosc.so.1 to compare with)
#   python3-numcodecs  Debian's numcodecs, whose test_blosc.py runs on our libblosc.so.1
#   python3-pytest     to run it
#   gcc                compiles C-Blosc's and C-Blosc2's own test programs
# Usage: capi/ci.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
[ -e /usr/include/blosc.h ] || missing+=(libblosc-dev)
/usr/bin/python3 -c 'import numcodecs.blosc' 2>/dev/null || missing+=(python3-numcodecs)
/usr/bin/python3 -c 'import pytest' 2>/dev/null || missing+=(python3-pytest)
command -v gcc >/dev/null || missing+=(gcc)
if [ ${#missing[@]} -gt 0 ]; then
    echo "capi/ci.sh: installing ${missing[*]}"
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
cargo build --release -p oxiblosc-capi
cargo test --release -p oxiblosc-capi "$@" -- --nocapture
