#!/usr/bin/env python3
"""C-Blosc 1.x oracle for oxiblosc's Blosc1 tests (tests/blosc1_interop.rs).

python-blosc 1.11.4 bundles C-Blosc 1.21.7. One batch per run: the request on
stdin and the answer on stdout are framed the same way:

    u32 LE  length of a UTF-8 JSON document
    JSON    {"ops": [op, ...]}            (answer: {"results": [result, ...]})
    bytes   the blobs the ops refer to, concatenated (each op names its blob
            lengths in "blobs"; so does each result)

Ops:
    {"op": "hello"} -> {"blosc", "c_blosc", "libs"}
    {"op": "compress", "typesize", "clevel", "shuffle": 0|1|2, "cname",
     "blocksize", "splitmode": null|"ALWAYS"|"NEVER"|"AUTO"|"FORWARD_COMPAT",
     "nthreads", "blobs": [n]}
        -> {"ok": true, "blobs": [chunk_len]} | {"ok": false, "error"}
    {"op": "decompress", "blobs": [n]} -> {"ok": true, "blobs": [len]} | {"ok": false, "error"}

Type sizes above 255 go through C-Blosc's own BLOSC_TYPESIZE environment
override (python-blosc refuses them); the split mode through BLOSC_SPLITMODE.
Both are read by blosc_compress on every call (the split mode then stays in
a global, so every request sets one).
"""

import json
import os
import struct
import sys

import blosc


def main():
    data = sys.stdin.buffer.read()
    (n,) = struct.unpack_from("<I", data, 0)
    doc = json.loads(data[4 : 4 + n])
    pos = 4 + n
    results, out_blobs = [], []
    for op in doc["ops"]:
        blobs = []
        for ln in op.get("blobs", []):
            blobs.append(data[pos : pos + ln])
            pos += ln
        kind = op["op"]
        if kind == "hello":
            results.append(
                {
                    "ok": True,
                    "blobs": [],
                    "blosc": blosc.__version__,
                    "c_blosc": blosc.blosclib_version,
                    "libs": {c: list(blosc.clib_info(c)) for c in blosc.compressor_list()},
                }
            )
            continue
        try:
            if kind == "compress":
                ts = op["typesize"]
                for var in ("BLOSC_TYPESIZE", "BLOSC_SPLITMODE"):
                    os.environ.pop(var, None)
                if ts > blosc.MAX_TYPESIZE:
                    os.environ["BLOSC_TYPESIZE"] = str(ts)
                    ts = 1
                # blosc_compress keeps the last split mode it was given in a
                # global: always name one (FORWARD_COMPAT is C's default).
                os.environ["BLOSC_SPLITMODE"] = op.get("splitmode") or "FORWARD_COMPAT"
                blosc.set_blocksize(op.get("blocksize", 0))
                blosc.set_nthreads(op.get("nthreads", 1))
                out = blosc.compress(
                    blobs[0], typesize=ts, clevel=op["clevel"], shuffle=op["shuffle"], cname=op["cname"]
                )
            elif kind == "decompress":
                blosc.set_nthreads(op.get("nthreads", 1))
                out = blosc.decompress(blobs[0])
            else:
                raise ValueError("unknown op " + kind)
            results.append({"ok": True, "blobs": [len(out)]})
            out_blobs.append(out)
        except Exception as e:  # noqa: BLE001 - every failure goes back as text
            results.append({"ok": False, "error": f"{type(e).__name__}: {e}", "blobs": []})
        finally:
            for var in ("BLOSC_TYPESIZE", "BLOSC_SPLITMODE"):
                os.environ.pop(var, None)
            blosc.set_blocksize(0)
    answer = json.dumps({"results": results}).encode()
    w = sys.stdout.buffer
    w.write(struct.pack("<I", len(answer)))
    w.write(answer)
    for b in out_blobs:
        w.write(b)
    w.flush()


if __name__ == "__main__":
    main()
