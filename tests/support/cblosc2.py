#!/usr/bin/env python3
"""C-Blosc2 oracle for oxiblosc's differential tests (tests/differential.rs).

A long-running server around python-blosc2 (which bundles the real C-Blosc2).
It reads requests on stdin and answers on stdout, both framed the same way:

    u32 LE  length of a UTF-8 JSON document
    JSON    {"ops": [op, ...]}            (answer: {"results": [result, ...]})
    bytes   the blobs the ops refer to, concatenated

Each op / result names its blobs by length, in order: an op takes the next
`len(op["blobs"])` blobs of the request; a result's blobs follow in the
answer in the same way. Ops:

    {"op": "hello"}                       -> {"python_blosc2", "c_blosc2"}
    {"op": "compress", "params": P, "blobs": [n], "roundtrip": bool}
        -> {"ok": true, "blobs": [chunk_len] (+ [decoded_len] if roundtrip),
            "rt_error": str|null}  or  {"ok": false, "error": str}
    {"op": "decompress", "blobs": [n]}    -> {"ok": true, "blobs": [len]} | {"ok": false, "error"}
    {"op": "getitem", "start": i, "nitems": n, "blobs": [n]}
                                          -> {"ok": true, "blobs": [len]} | {"ok": false, "error"}

P = {"codec": id, "clevel", "typesize", "filters": [ids], "filters_meta": [bytes],
     "blocksize", "splitmode": id, "use_dict": bool}; nthreads is always 1 (C writes
blocks in completion order with more threads).

Compression goes through blosc2.compress2 (destination nbytes + 32), except
for one python-blosc2 quirk: it silently drops BYTEDELTA when typesize == 1.
Those requests go straight to blosc2_compress_ctx through ctypes with the same
parameters (python-blosc2 would have passed), so C gets what was asked.
Decompression uses blosc2.decompress2 with an explicit nthreads=1 (never the
module-level blosc2.decompress, whose shared global context keeps use_dict
after a dictionary chunk). getitem calls blosc2_getitem, which builds a fresh
context per call.
"""

import ctypes
import glob
import json
import os
import struct
import sys

import blosc2

BYTEDELTA = 35
MAX_FILTERS = 6


class CParams(ctypes.Structure):
    """blosc2_cparams of C-Blosc2 3.3 (include/blosc2.h)."""

    _fields_ = [
        ("compcode", ctypes.c_uint8),
        ("compcode_meta", ctypes.c_uint8),
        ("clevel", ctypes.c_uint8),
        ("use_dict", ctypes.c_int),
        ("typesize", ctypes.c_int32),
        ("nthreads", ctypes.c_int16),
        ("blocksize", ctypes.c_int32),
        ("splitmode", ctypes.c_int32),
        ("schunk", ctypes.c_void_p),
        ("filters", ctypes.c_uint8 * MAX_FILTERS),
        ("filters_meta", ctypes.c_uint8 * MAX_FILTERS),
        ("prefilter", ctypes.c_void_p),
        ("preparams", ctypes.c_void_p),
        ("tuner_params", ctypes.c_void_p),
        ("tuner_id", ctypes.c_int),
        ("instr_codec", ctypes.c_bool),
        ("codec_params", ctypes.c_void_p),
        ("filter_params", ctypes.c_void_p * MAX_FILTERS),
    ]


def load_lib():
    """The libblosc2.so shipped in python-blosc2's wheel (the same C-Blosc2
    release its extension links statically, but a separate copy: it needs its
    own blosc2_init, which registers the plugin filters such as BYTEDELTA)."""
    here = os.path.dirname(blosc2.__file__)
    for pattern in ("lib/libblosc2.so*", "lib/libblosc2*.dylib", "lib*/blosc2*.dll"):
        for path in sorted(glob.glob(os.path.join(here, pattern))):
            lib = ctypes.CDLL(path)
            lib.blosc2_create_cctx.restype = ctypes.c_void_p
            lib.blosc2_create_cctx.argtypes = [CParams]
            lib.blosc2_free_ctx.argtypes = [ctypes.c_void_p]
            lib.blosc2_compress_ctx.argtypes = [
                ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32]
            lib.blosc2_getitem.argtypes = [
                ctypes.c_char_p, ctypes.c_int32, ctypes.c_int, ctypes.c_int,
                ctypes.c_void_p, ctypes.c_int32]
            lib.blosc2_get_version_string.restype = ctypes.c_char_p
            lib.blosc2_init()
            return lib
    raise RuntimeError(f"libblosc2 not found next to {blosc2.__file__}")


LIB = load_lib()


def compress_ctypes(data, p):
    cp = CParams()
    cp.compcode = p["codec"]
    cp.clevel = p["clevel"]
    cp.use_dict = 1 if p["use_dict"] else 0
    cp.typesize = p["typesize"]
    cp.nthreads = 1
    cp.blocksize = p["blocksize"]
    cp.splitmode = p["splitmode"]
    for i, (f, m) in enumerate(zip(p["filters"], p["filters_meta"])):
        cp.filters[i] = f
        # python-blosc2's rule: BYTEDELTA with meta 0 gets meta = typesize.
        cp.filters_meta[i] = p["typesize"] if (f == BYTEDELTA and m == 0) else m
    ctx = LIB.blosc2_create_cctx(cp)
    if not ctx:
        raise RuntimeError("Could not create the compression context")
    dest = ctypes.create_string_buffer(len(data) + 32)
    try:
        size = LIB.blosc2_compress_ctx(ctx, data, len(data), dest, len(data) + 32)
    finally:
        LIB.blosc2_free_ctx(ctx)
    if size < 0:
        raise RuntimeError(f"Could not compress the data ({size})")
    if size == 0:
        raise RuntimeError("The result could not fit")
    return dest.raw[:size]


def compress(data, p):
    if p["typesize"] == 1 and BYTEDELTA in p["filters"]:
        return compress_ctypes(data, p)
    # A copy: with >= 3 filters C writes into the caller's input (CHUNK-NOTES §14).
    return blosc2.compress2(
        bytearray(data),
        codec=blosc2.Codec(p["codec"]),
        clevel=p["clevel"],
        typesize=p["typesize"],
        nthreads=1,
        blocksize=p["blocksize"],
        splitmode=blosc2.SplitMode(p["splitmode"]),
        filters=list(p["filters"]),
        # python-blosc2 wants negative metas (TRUNC_PREC) as negative ints.
        filters_meta=[m - 256 if m > 127 else m for m in p["filters_meta"]],
        use_dict=bool(p["use_dict"]),
    )


def decompress(chunk):
    return bytes(blosc2.decompress2(chunk, nthreads=1))


def getitem(chunk, start, nitems):
    if len(chunk) < 16:
        raise RuntimeError("chunk shorter than a header")
    typesize = chunk[3]
    cap = max(nitems, 0) * typesize
    dest = ctypes.create_string_buffer(cap + 1)
    n = LIB.blosc2_getitem(chunk, len(chunk), start, nitems, dest, cap + 1)
    if n < 0:
        raise RuntimeError(f"blosc2_getitem failed ({n})")
    return dest.raw[:n]


def run(op, blobs):
    """One op; returns (result dict, list of output blobs)."""
    kind = op["op"]
    if kind == "hello":
        return {"ok": True, "python_blosc2": blosc2.__version__,
                "c_blosc2": blosc2.blosclib_version.split()[0],
                "c_blosc2_so": LIB.blosc2_get_version_string().decode()}, []
    try:
        if kind == "compress":
            chunk = compress(blobs[0], op["params"])
            out = [chunk]
            res = {"ok": True, "rt_error": None}
            if op.get("roundtrip"):
                try:
                    out.append(decompress(chunk))
                except Exception as e:  # C failing on its own chunk is data for the test
                    res["rt_error"] = f"{type(e).__name__}: {e}"
            return res, out
        if kind == "decompress":
            return {"ok": True}, [decompress(blobs[0])]
        if kind == "getitem":
            return {"ok": True}, [getitem(blobs[0], op["start"], op["nitems"])]
        return {"ok": False, "error": f"unknown op {kind!r}"}, []
    except Exception as e:
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}, []


def read_exact(f, n):
    buf = bytearray()
    while len(buf) < n:
        part = f.read(n - len(buf))
        if not part:
            return None
        buf += part
    return bytes(buf)


def main():
    inp = sys.stdin.buffer
    out = sys.stdout.buffer
    while True:
        head = read_exact(inp, 4)
        if head is None:
            return
        (jlen,) = struct.unpack("<I", head)
        req = json.loads(read_exact(inp, jlen))
        results, out_blobs = [], []
        for op in req["ops"]:
            n = len(op.get("blobs", []))
            blobs = [read_exact(inp, size) for size in op.get("blobs", [])]
            assert len(blobs) == n
            res, produced = run(op, blobs)
            res["blobs"] = [len(b) for b in produced]
            results.append(res)
            out_blobs.extend(produced)
        doc = json.dumps({"results": results}).encode()
        out.write(struct.pack("<I", len(doc)))
        out.write(doc)
        for b in out_blobs:
            out.write(b)
        out.flush()


if __name__ == "__main__":
    main()
