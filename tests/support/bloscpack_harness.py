"""Drive the real bloscpack 0.16.0 (python-blosc 1.11.4) for tests/bloscpack.rs.

Usage: bloscpack_harness.py JOBS.json  -> prints {"results": [...]} as JSON.
Each job is one of
  {"op": "hello"}
  {"op": "unpack", "in": BLP, "out": RAW}              -> {"metadata": ...}
  {"op": "pack", "in": RAW, "out": BLP, "chunk_size": N,
   "blosc": {typesize, clevel, shuffle, cname}, "bloscpack": {offsets,
   checksum, max_app_chunks}, "metadata": ..., "metadata_args": {...}}
  {"op": "append", "file": BLP, "in": RAW}
A job that raises gives {"error": "..."}.
"""
import collections
import collections.abc
import json
import sys
import traceback

# bloscpack 0.16.0 uses collections.MutableMapping, gone since Python 3.10.
collections.MutableMapping = collections.abc.MutableMapping

import blosc  # noqa: E402
import bloscpack  # noqa: E402
from bloscpack import append as bp_append  # noqa: E402


def run(job):
    op = job["op"]
    if op == "hello":
        return {"bloscpack": bloscpack.__version__, "blosc": blosc.__version__}
    if op == "unpack":
        data, meta = bloscpack.unpack_bytes_from_file(job["in"])
        with open(job["out"], "wb") as f:
            f.write(data)
        return {"metadata": meta}
    if op == "pack":
        with open(job["in"], "rb") as f:
            data = f.read()
        kw = {}
        if "blosc" in job:
            kw["blosc_args"] = bloscpack.BloscArgs(**job["blosc"])
        if "bloscpack" in job:
            kw["bloscpack_args"] = bloscpack.BloscpackArgs(**job["bloscpack"])
        if "metadata_args" in job:
            kw["metadata_args"] = bloscpack.MetadataArgs(**job["metadata_args"])
        bloscpack.pack_bytes_to_file(data, job["out"], chunk_size=job["chunk_size"],
                                     metadata=job.get("metadata"), **kw)
        return {}
    if op == "append":
        bp_append.append(job["file"], job["in"])
        return {}
    raise ValueError("unknown op %r" % op)


def main():
    with open(sys.argv[1]) as f:
        jobs = json.load(f)
    results = []
    for job in jobs:
        try:
            results.append(run(job))
        except Exception as e:  # report, keep going
            results.append({"error": "%s: %s" % (type(e).__name__, e),
                            "trace": traceback.format_exc()})
    json.dump({"results": results}, sys.stdout)


if __name__ == "__main__":
    main()
