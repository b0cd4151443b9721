#!/usr/bin/env python3
"""Write a held-out set of frames with the real C-Blosc2 (python-blosc2).

    heldout_frames.py OUTDIR SEED [COUNT]

None of these files is in ../shared/vectors: they are made fresh, from SEED,
every time the test runs (tests/frame_heldout.rs), so the reader is checked
against frames nobody looked at while writing it. Each frame gets random
parameters (codec, clevel, typesize, filters, block size, split mode, thread
count, dictionaries), random data shapes, a ragged last chunk, metalayers,
vlmetalayers, and a random sequence of changes (append, insert, update,
delete, special chunks, vlmeta updates and deletes). Storage is a contiguous
frame file, a sparse frame directory, or an in-memory cframe written out.

OUTDIR/manifest.json lists, for each frame, what C-Blosc2 itself reads back
after closing and re-opening it: per-chunk decompressed length and sha256,
the raw metalayer bytes and the raw (decompressed) vlmetalayer bytes, and the
super-chunk's nbytes, chunksize and typesize.
"""

import hashlib
import json
import os
import random
import shutil
import sys

import blosc2
import numpy as np

CODECS = [
    blosc2.Codec.BLOSCLZ,
    blosc2.Codec.LZ4,
    blosc2.Codec.LZ4HC,
    blosc2.Codec.ZLIB,
    blosc2.Codec.ZSTD,
]


def data_for(rng, nbytes, typesize):
    kind = rng.choice(["arange", "random", "sine", "zeros", "alphabet", "runs"])
    n = nbytes // typesize * typesize
    if kind == "random":
        raw = rng.randbytes(n)
    elif kind == "zeros":
        raw = bytes(n)
    elif kind == "alphabet":
        alphabet = rng.randbytes(rng.randint(1, 6))
        raw = bytes(rng.choice(alphabet) for _ in range(n))
    elif kind == "runs":
        out = bytearray()
        while len(out) < n:
            out += bytes([rng.randrange(256)]) * rng.randint(1, 300)
        raw = bytes(out[:n])
    else:
        count = n // typesize
        if typesize == 4 and kind == "sine":
            a = np.sin(np.arange(count, dtype=np.float32) / 50).astype("<f4")
            raw = a.tobytes()
        elif typesize == 8 and kind == "sine":
            a = np.sin(np.arange(count, dtype=np.float64) / 50) * 1e3
            raw = a.astype("<f8").tobytes()
        else:
            a = np.arange(count, dtype=np.uint64) * np.uint64(rng.randint(1, 9))
            b = a.astype("<u8").view(np.uint8).reshape(-1, 8)
            if typesize <= 8:
                b = b[:, :typesize]
            else:
                b = np.hstack([b, np.zeros((count, typesize - 8), dtype=np.uint8)])
            raw = np.ascontiguousarray(b).tobytes()
    tail = rng.randbytes(nbytes - n)
    return raw + tail


def random_cparams(rng):
    typesize = rng.choice([1, 2, 4, 8, 3, 16])
    filters = []
    first = rng.choice(["shuffle", "bitshuffle", "none", "delta+shuffle", "bytedelta"])
    if first == "shuffle":
        filters = [blosc2.Filter.SHUFFLE]
    elif first == "bitshuffle":
        filters = [blosc2.Filter.BITSHUFFLE]
    elif first == "delta+shuffle":
        filters = [blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE]
    elif first == "bytedelta":
        filters = [blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA]
    codec = rng.choice(CODECS)
    cp = {
        "codec": codec,
        "clevel": rng.randint(0, 9),
        "typesize": typesize,
        "filters": filters,
        "filters_meta": [typesize if f == blosc2.Filter.BYTEDELTA else 0 for f in filters],
        "nthreads": rng.choice([1, 1, 2, 3]),
        "splitmode": rng.choice(
            [blosc2.SplitMode.AUTO_SPLIT, blosc2.SplitMode.ALWAYS_SPLIT, blosc2.SplitMode.NEVER_SPLIT]
        ),
    }
    if rng.random() < 0.3:
        cp["blocksize"] = rng.choice([0, 4096, 16384, 1 << 15])
    if codec in (blosc2.Codec.ZSTD, blosc2.Codec.LZ4) and rng.random() < 0.3 and cp["clevel"] > 0:
        cp["use_dict"] = True
    return cp


def describe(sc):
    chunks = []
    for i in range(sc.nchunks):
        out = sc.decompress_chunk(i)
        chunks.append(
            {"index": i, "nbytes": len(out), "sha256": hashlib.sha256(out).hexdigest()}
        )
    metas = []
    for name in sc.meta.keys():
        raw = blosc2.blosc2_ext.meta__getitem__(sc, name)
        metas.append({"name": name, "raw_hex": bytes(raw).hex()})
    vlmetas = []
    for name in sc.vlmeta:
        raw = sc.vlmeta.get_vlmeta(name)
        vlmetas.append({"name": name, "raw_hex": bytes(raw).hex()})
    return {
        "nchunks": sc.nchunks,
        "chunksize": sc.chunksize,
        "typesize": sc.typesize,
        "nbytes": sc.nbytes,
        "chunks": chunks,
        "metalayers": metas,
        "vlmetalayers": vlmetas,
    }


def make_one(rng, outdir, idx):
    cp = random_cparams(rng)
    ts = cp["typesize"]
    chunksize = rng.choice([ts * 1000, 4096, 65536, 200 * ts, 1 << 18])
    storage = rng.choice(["frame", "sframe", "memory"])
    name = f"h{idx:02d}_{storage}"
    meta = {}
    for k in range(rng.randint(0, 4)):
        meta[f"m{k}"] = rng.choice([k, f"value {k}", [1, 2, k], {"k": k}, b"\x00\x01" * k])
    kwargs = {"chunksize": chunksize, "cparams": cp, "meta": meta}
    if storage == "frame":
        path = name + ".b2frame"
        kwargs.update(urlpath=os.path.join(outdir, path), contiguous=True, mode="w")
    elif storage == "sframe":
        path = name + ".b2frame.d"
        kwargs.update(urlpath=os.path.join(outdir, path), contiguous=False, mode="w")
    else:
        path = name + ".b2frame"
        kwargs.update(contiguous=True)
    nbytes = rng.randint(0, 6) * chunksize + rng.randint(1, chunksize)
    # Whole elements everywhere, as python-blosc2 arrays make them: C-Blosc2
    # 3.3.5 writes chunks it cannot read back itself when a chunk ends in a
    # partial element (e.g. with BYTEDELTA), and fails in other ways.
    chunksize -= chunksize % ts
    kwargs["chunksize"] = chunksize
    nbytes = max(nbytes - nbytes % ts, ts)
    data = data_for(rng, nbytes, ts)
    sc = blosc2.SChunk(data=data, **kwargs)
    ops = []
    for _ in range(rng.randint(0, 6)):
        op = rng.choice(["append", "insert", "update", "delete", "vlmeta", "vldel", "zeros"])
        n = sc.nchunks
        full = data_for(rng, chunksize, ts)
        if op == "append":
            sc.append_data(full)
        elif op == "insert":
            sc.insert_data(rng.randint(0, n), full, copy=True)
        elif op == "update" and n > 0:
            sc.update_data(rng.randrange(n), full, copy=True)
        elif op == "delete" and n > 1:
            sc.delete_chunk(rng.randrange(n))
        elif op == "vlmeta":
            sc.vlmeta[f"v{rng.randrange(4)}"] = rng.choice(
                ["text", 12345, [1.5, 2.5], {"a": [1, None]}, b"\xde" * rng.randint(0, 300)]
            )
        elif op == "vldel" and len(sc.vlmeta) > 0:
            del sc.vlmeta[list(sc.vlmeta)[0]]
        elif op == "zeros" and sc.nbytes % chunksize == 0:
            # Only while every chunk is full: C-Blosc2 3.3.5 cannot read back
            # a special chunk in a variable-chunksize frame (CONTAINER-NOTES
            # 2.3, C-Blosc2 issue #799).
            zero = blosc2.compress2(bytes(chunksize), typesize=ts)
            sc.append_chunk(zero)
        else:
            continue
        ops.append(op)
    if storage == "memory":
        with open(os.path.join(outdir, path), "wb") as f:
            f.write(sc.to_cframe())
        reopened = blosc2.schunk_from_cframe(open(os.path.join(outdir, path), "rb").read(), copy=True)
    else:
        del sc
        reopened = blosc2.open(os.path.join(outdir, path), mode="r")
    entry = {
        "name": name,
        "kind": "sframe" if storage == "sframe" else "frame",
        "path": path,
        "ops": ops,
        "cparams": {
            "codec": int(cp["codec"].value),
            "clevel": cp["clevel"],
            "typesize": ts,
            "filters": [int(f.value) for f in cp["filters"]],
            "nthreads": cp["nthreads"],
            "use_dict": cp.get("use_dict", False),
        },
        "frame": describe(reopened),
    }
    return entry


def isolated(seed, outdir, idx):
    """make_one in a forked child: a C-Blosc2 crash (it has some, e.g. in
    schunk_from_cframe) costs that frame only. Returns (entry, failure)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        rng = random.Random(f"{seed}-{idx}")
        try:
            out = {"entry": make_one(rng, outdir, idx)}
        except Exception as e:  # noqa: BLE001 - any C failure disqualifies
            out = {"error": f"{type(e).__name__}: {e}"}
        with os.fdopen(w, "w") as f:
            json.dump(out, f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return None, f"crashed with signal {os.WTERMSIG(status)}"
    out = json.loads(text)
    return out.get("entry"), out.get("error")


def main():
    outdir, seed = sys.argv[1], int(sys.argv[2])
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 24
    os.makedirs(outdir, exist_ok=True)
    vectors, failures, idx = [], [], 0
    # A frame C-Blosc2 cannot build or read back itself is no oracle: it is
    # listed under "c_failures" with its parameters (C-Blosc2 3.3.5 has bugs
    # around special and variable-size chunks, see CONTAINER-NOTES) and
    # another one is made.
    while len(vectors) < count and idx < 4 * count:
        entry, error = isolated(seed, outdir, idx)
        if entry is not None:
            vectors.append(entry)
        else:
            cp = random_cparams(random.Random(f"{seed}-{idx}"))
            failures.append(
                {
                    "index": idx,
                    "error": error,
                    "codec": int(cp["codec"].value),
                    "typesize": cp["typesize"],
                    "filters": [int(f.value) for f in cp["filters"]],
                    "nthreads": cp["nthreads"],
                    "use_dict": cp.get("use_dict", False),
                }
            )
            for leftover in os.listdir(outdir):
                if leftover.startswith(f"h{idx:02d}_"):
                    full = os.path.join(outdir, leftover)
                    if os.path.isdir(full):
                        shutil.rmtree(full)
                    else:
                        os.remove(full)
        idx += 1
    manifest = {
        "seed": seed,
        "python_blosc2": blosc2.__version__,
        "c_blosc2": blosc2.blosclib_version,
        "vectors": vectors,
        "c_failures": failures,
    }
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
