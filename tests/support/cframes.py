#!/usr/bin/env python3
"""Frame oracle for tests/frame_interop.rs: open super-chunks with the real
C-Blosc2 (python-blosc2) and report what C sees; optionally append to them.

argv[1] is a JSON list of jobs {"path", "offset", "append": hex | null,
"append_file": a file of the bytes to append (in place of "append"),
"copy": true to read the frame file from memory with a copy};
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
    if job.get("append_file"):
        # Bytes too many for an argument: from a file.
        with open(job["append_file"], "rb") as f:
            job["append"] = f.read().hex()
    mode = "a" if job.get("append") else "r"
    if job.get("copy"):
        # From memory, copying the frame (blosc2_schunk_from_buffer(..,
        # copy=true)): C makes every chunk at once.
        with open(job["path"], "rb") as f:
            sc = blosc2.schunk_from_cframe(f.read(), copy=True)
    else:
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
