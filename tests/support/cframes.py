#!/usr/bin/env python3
"""Frame oracle for tests/frame_interop.rs: open super-chunks with the real
C-Blosc2 (python-blosc2) and report what C sees; optionally append to them.

argv[1] is a JSON list of jobs {"path", "offset", "append": hex | null};
stdout is a JSON list of reports {"ok", "error" | "before", "after"}, each
report {"nchunks", "nbytes", "chunksize", "chunks": [sha256 of each
decompressed chunk], "meta": {name: raw hex}, "vlmeta": {name: raw hex}}.
An append job compresses the bytes with the frame's own parameters
(SChunk.append_data) and sets vlmeta["c_added"] = "from C".
"""

import hashlib
import json
import sys

import blosc2
from blosc2 import blosc2_ext


def inspect(sc):
    return {
        "nchunks": sc.nchunks,
        "nbytes": sc.nbytes,
        "chunksize": sc.chunksize,
        "chunks": [hashlib.sha256(sc.decompress_chunk(i)).hexdigest() for i in range(sc.nchunks)],
        "meta": {k: bytes(blosc2_ext.meta__getitem__(sc, k)).hex() for k in sc.meta.keys()},
        "vlmeta": {k: bytes(sc.vlmeta.get_vlmeta(k)).hex() for k in list(sc.vlmeta.keys())},
    }


def run(job):
    mode = "a" if job.get("append") else "r"
    sc = blosc2.open(job["path"], mode=mode, offset=job.get("offset", 0))
    rep = {"ok": True, "before": inspect(sc)}
    if job.get("append"):
        sc.append_data(bytes.fromhex(job["append"]))
        sc.vlmeta["c_added"] = "from C"
        rep["after"] = inspect(sc)
    return rep


def main():
    out = []
    for job in json.loads(sys.argv[1]):
        try:
            out.append(run(job))
        except Exception as e:  # report, do not stop the batch
            out.append({"ok": False, "error": f"{type(e).__name__}: {e}"})
    sys.stdout.write(json.dumps(out))


main()
