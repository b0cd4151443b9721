#!/usr/bin/env python3
"""Seed corpora for the fuzz targets from tests/data (the interop vectors
and the findings), plus the minimised corpora of earlier runs
(fuzz/corpus-min/). Writes fuzz/corpus/<target>/ (not committed; libFuzzer
adds what it finds there). Usage: python3 fuzz/seed.py [DIR]: with DIR, the
seeds alone into DIR/<target>/ (fuzz/minimize.sh leaves those out of
corpus-min)."""
import hashlib, json, os, pathlib, struct, sys

root = pathlib.Path(__file__).resolve().parent.parent
data = root / "tests" / "data"
seeds_only = len(sys.argv) > 1
out = pathlib.Path(sys.argv[1]) if seeds_only else root / "fuzz" / "corpus"

def put(target, blob):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(blob).hexdigest()).write_bytes(blob)

def put_chunk(blob):
    """A chunk for chunk_decode, and for capi_chunk with three call
    headers (start, nitems, destsize selector, flags)."""
    put("chunk_decode", blob)
    for head in (struct.pack("<HHBB", 0, 4, 0, 0), struct.pack("<HHBB", 1, 100, 1, 1),
                 struct.pack("<HHBB", 7, 3, 3, 2)):
        put("capi_chunk", head + blob)

manifest = json.loads((data / "manifest.json").read_text())
for v in manifest["vectors"]:
    p = data / v["path"]
    kind = v["kind"]
    if p.is_file() and p.stat().st_size <= 64 * 1024:
        b = p.read_bytes()
        if kind in ("chunk", "blosc1"):
            put_chunk(b)
        elif kind in ("frame", "compat") and b[2:10] == b"b2frame\0":
            put("cframe_read", b)
            put("capi_frame", b)
            if b"b2nd" in b or b"caterva" in b:
                put("ndarray_read", b)
            put("cframe_edit", bytes([0, 9, 17, 3]) + b)
            put("cframe_edit", bytes([1, 2, 4, 5]) + b)
        elif kind == "compat":
            put_chunk(b)
        elif kind == "bloscpack":
            put("blp_read", b)
    if p.is_file() and kind == "bloscpack" and p.stat().st_size > 64 * 1024:
        # the big ones cut to their header, metadata and first chunk
        put("blp_read", p.read_bytes()[: 64 * 1024])
    if p.is_dir():
        put_sframe = True
        files = sorted(f for f in p.iterdir() if f.name.endswith(".chunk"))[:3]
        head, body = b"", b""
        for f in files:
            fb = f.read_bytes()
            head += struct.pack("<BH", int(f.stem, 16) & 0xFF, len(fb))
            body += fb
        head += b"\0\0\0" * (3 - len(files))
        put("sframe_read", head + body + (p / "chunks.b2frame").read_bytes())

f = data / "findings"
for name in ["cframe-1.bin", "cframe-1b-dup-offsets.b2frame",
             "oom-probes/frame-huge-nchunks.b2frame", "oom-probes/frame-tdecomp.b2frame"]:
    put("cframe_read", (f / name).read_bytes())
for name in ["cframe_mut-1.bin", "cframe_mut-2-oom.bin"]:
    put("cframe_edit", (f / name).read_bytes())
for name in ["chunk-filter-fail.b2", "chunk-hdr-only.b2", "chunk-zero-runs.b2"]:
    put_chunk((f / "oom-probes" / name).read_bytes())
sd = f / "sframe-1.dir"
files = sorted(x for x in sd.iterdir() if x.name.endswith(".chunk"))[:3]
head = b"".join(struct.pack("<BH", int(x.stem, 16), x.stat().st_size) for x in files)
put("sframe_read", head + b"".join(x.read_bytes() for x in files) + (sd / "chunks.b2frame").read_bytes())
put("roundtrip", (f / "roundtrip-1.bin").read_bytes())
for p in sorted(data.glob("caterva_*.b2nd")):
    put("ndarray_read", p.read_bytes())
# packed: raw mode (0) gets nothing useful without a writer here; the
# valid-then-edited mode (odd first byte) gets payloads and a few edits.
for mode in (1, 3, 5, 9, 0x13):
    payload = bytes(range(256)) * 3 + bytes(200)
    put("packed_read", bytes([mode]) + payload + bytes([40, 0, 1, 90, 0, 0x80]))

# capi_roundtrip: 28 parameter bytes (compcode, compcode_meta, clevel,
# use_dict, typesize i32, nthreads, blocksize i32, splitmode, filters[6],
# filters_meta[6], destsize selector, flags), then the data.
ramp = b"".join(struct.pack("<I", i // 3) for i in range(1024))
for codec in range(6):
    for filt, ts in ((1, 4), (2, 8), (3, 4), (4, 4)):
        head = struct.pack("<BBBBiBiB", codec, 0, 5, codec == 5, ts, 1, 0, 4)
        head += bytes([0, 0, 0, 0, 0, filt]) + bytes([0, 0, 0, 0, 0, 20 if filt == 4 else 0])
        head += bytes([0, 0])
        assert len(head) == 28
        put("capi_roundtrip", head + ramp)

# ndarray_edit: 20 bytes of geometry and parameters (arbitrary's layout of
# `Input`), then calls; random bytes of a few hundred bytes give arrays and
# a dozen calls each (libFuzzer alone starts from short inputs, which hold
# no call).
import random
rng = random.Random(19)
for k in range(64):
    blob = bytes(rng.randrange(256) for _ in range(rng.randrange(60, 400)))
    put("ndarray_edit", blob)
    put("capi_b2nd", blob)  # the same input layout (ndmodel.rs)
# ndarray_args: any bytes give an array and calls (all of `Input` is
# arbitrary's); random ones of a few hundred bytes hold several calls.
for k in range(32):
    put("ndarray_args", bytes(rng.randrange(256) for _ in range(rng.randrange(40, 300))))

# The corpora of earlier runs, minimised (fuzz/corpus-min/<target>/,
# committed; fuzz/minimize.sh writes them): a run on a new machine, and
# every CI run, starts from the coverage those runs reached, not from the
# seeds above alone.
saved = root / "fuzz" / "corpus-min"
if saved.is_dir() and not seeds_only:
    for d in sorted(saved.iterdir()):
        if d.is_dir():
            for f in sorted(d.iterdir()):
                put(d.name, f.read_bytes())

for t in sorted(os.listdir(out)):
    print(t, len(os.listdir(out / t)))
