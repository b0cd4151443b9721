"""The minimised fuzz corpora (``fuzz/corpus-min``) through the Python face.

The fuzz targets drive the Rust library; this drives the extension's own code
around it (buffers, the ``bytes`` sized by a header, the mappings of ``meta`` and
``vlmeta``, the error mapping) with the same hostile inputs: every chunk of
``chunk_decode`` and ``capi_chunk`` and every frame of ``cframe_read`` and
``cframe_edit`` (whose first 4 bytes are edit codes). Each call either works,
and then agrees with the other ways of reading the same bytes, or raises one of
the documented exceptions (``ValueError``, ``TypeError``, ``BloscError``,
``OSError``, ``KeyError``, ``IndexError``, ``OverflowError``): never a
``PanicException``, never another type. A chunk that claims more than
``CAP`` bytes and is refused is refused before a buffer of its size is made
(session 50: ``decompress2`` made a ``bytes`` of the header's size, then
decoded; a 64-byte chunk claiming 2 GiB took 2 GiB).
"""

import os
import pathlib
import tempfile
import tracemalloc

import pytest

import oxiblosc
from oxiblosc import numcodecs as onc

CORPUS = pathlib.Path(__file__).resolve().parents[2] / "fuzz" / "corpus-min"
#: The exceptions the package documents for bad input.
DOCUMENTED = (ValueError, TypeError, RuntimeError, OSError, KeyError, IndexError, OverflowError)
#: Outputs up to this size are made; larger special chunks (zeros, NaNs, a
#: repeated value: 32 bytes that stand for any size) are not decoded whole.
CAP = 16 << 20


@pytest.fixture
def scratch(tmp_path):
    """A directory for the file frames: in memory (/dev/shm) when there is one,
    as .ci/fuzz.sh does: every append syncs the file, and on a disk the syncs
    took most of this test's time (35 of 39 s)."""
    shm = pathlib.Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        with tempfile.TemporaryDirectory(dir=shm) as d:
            yield pathlib.Path(d)
    else:
        yield tmp_path


def inputs(target, skip=0):
    d = CORPUS / target
    files = sorted(p for p in d.iterdir() if p.is_file())
    assert len(files) > 100, f"{d}: the corpus is missing"
    return [(p.name, p.read_bytes()[skip:]) for p in files]


class Run:
    """Calls that may only raise the documented exceptions."""

    def __init__(self, name):
        self.name = name

    def __call__(self, what, f, *a, **k):
        try:
            return True, f(*a, **k)
        except DOCUMENTED as e:
            return False, e
        except BaseException as e:  # noqa: BLE001 (PanicException is one)
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            pytest.fail(f"{self.name}: {what} raised {type(e).__name__}: {e}")


def special(chunk):
    """A Blosc2 special chunk (its 32 bytes stand for any size)."""
    return len(chunk) >= 32 and chunk[0] >= 3 and (chunk[31] >> 4) & 7 != 0


def check_chunk(name, data):
    run = Run(name)
    ok, sizes = run("cbuffer_sizes", oxiblosc.cbuffer_sizes, data)
    run("cbuffer_metainfo", oxiblosc.cbuffer_metainfo, data)
    run("cbuffer_complib", oxiblosc.cbuffer_complib, data)
    run("numcodecs cbuffer_sizes", onc.cbuffer_sizes, data)
    run("numcodecs cbuffer_metainfo", onc.cbuffer_metainfo, data)
    run("numcodecs cbuffer_complib", onc.cbuffer_complib, data)
    for start, n in ((0, 1), (3, 1 << 12), (1 << 40, 1), (0, 1 << 62)):
        run("getitem", oxiblosc.getitem, data, start, n)
    run("decompress2 into 4 KiB", oxiblosc.decompress2, data, bytearray(4096))
    run("numcodecs decompress into 4 KiB", onc.decompress, data, bytearray(4096))
    nbytes = sizes[0] if ok else None
    if nbytes is not None and nbytes > CAP:
        if special(data):
            return
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        ok, _ = run("decompress2", oxiblosc.decompress2, data)
        peak = tracemalloc.get_traced_memory()[1] - base
        if not ok:
            assert peak < CAP, f"{name}: refused after allocating {peak} bytes"
        return
    ok, out = run("decompress2", oxiblosc.decompress2, data)
    others = [
        ("numcodecs decompress", run("numcodecs decompress", onc.decompress, data)),
        ("Blosc.decode", run("Blosc.decode", onc.Blosc().decode, data)),
    ]
    if not ok:
        return
    assert len(out) == nbytes, f"{name}: decompress2 gave {len(out)} bytes of {nbytes}"
    for what, (ok2, got) in others:
        if ok2:
            assert bytes(got) == out, f"{name}: {what} reads other bytes than decompress2"
    # Into a buffer with room to spare: the same bytes, nothing past them.
    dst = bytearray(b"\xa5" * (nbytes + 64))
    ok, n = run("decompress2 into a buffer", oxiblosc.decompress2, data, dst)
    assert ok, f"{name}: decodes to a new bytes, not into a buffer: {n}"
    assert n == nbytes and bytes(dst[:n]) == out, name
    assert dst[n:] == b"\xa5" * 64, f"{name}: written past the chunk's bytes"
    typesize, _ = oxiblosc.cbuffer_metainfo(data)
    items = nbytes // max(typesize, 1)
    if items:
        ok, got = run("getitem whole", oxiblosc.getitem, data, 0, items)
        if ok:
            assert got == out[: items * typesize], f"{name}: getitem differs"


def payload(sc):
    """64 items of the frame's type size (a fuzzed frame may claim any)."""
    ts = sc.typesize
    return bytes(range(64)) * (ts if 0 < ts <= 255 else 1)


def check_frame(name, data, tmp_path):
    run = Run(name)
    ok, sc = run("SChunk.from_cframe", oxiblosc.SChunk.from_cframe, data)
    if not ok:
        return
    for attr in ("nchunks", "nbytes", "cbytes", "cratio", "chunksize", "typesize",
                 "blocksize", "urlpath", "contiguous", "cparams"):
        run(attr, getattr, sc, attr)
    run("repr", repr, sc)
    for mapping in ("meta", "vlmeta"):
        ok, m = run(mapping, getattr, sc, mapping)
        if ok:
            _, keys = run(f"{mapping}.keys", m.keys)
            run(f"len({mapping})", len, m)
            for k in keys or []:
                assert k in m, f"{name}: {mapping} lists {k!r} but has no such key"
                run(f"{mapping}[{k!r}]", m.__getitem__, k)
            ok, _ = run(f"{mapping}['no such']", m.__getitem__, "no such \u00e9")
            assert not ok, name
    n, nbytes = sc.nchunks, sc.nbytes
    for i in range(min(n, 8)):
        run(f"decompress_chunk({i}) into 1 KiB", sc.decompress_chunk, i, bytearray(1024))
    ok, _ = run("decompress_chunk past the end", sc.decompress_chunk, n)
    assert not ok, f"{name}: chunk {n} of {n} decoded"
    # Whole, when the frame holds at most CAP bytes (special chunks of GBs
    # are valid) in at most 10,000 chunks.
    chunks = None
    if nbytes <= CAP and n <= 10_000:
        chunks = []
        for i in range(n):
            ok, b = run(f"decompress_chunk({i})", sc.decompress_chunk, i)
            if not ok:
                chunks = None
                break
            chunks.append(b)
    if chunks is not None:
        whole = b"".join(chunks)
        assert len(whole) == nbytes, f"{name}: the chunks hold {len(whole)} of {nbytes} bytes"
        ok, got = run("get_slice", sc.get_slice, 0, nbytes)
        assert ok and got == whole, f"{name}: get_slice differs from the chunks"
    ok, cf = run("to_cframe", sc.to_cframe)
    if ok:
        ok, again = run("from_cframe of to_cframe", oxiblosc.SChunk.from_cframe, cf)
        assert ok, f"{name}: the frame written does not reopen: {again}"
        assert (again.nchunks, again.nbytes) == (n, nbytes), name
    if data[-1] % 8 == 0:
        check_file(name, data, n, tmp_path)
    # Edits, after which the frame written must reopen.
    run("append_data", sc.append_data, payload(sc))
    run("delete_chunk(0)", sc.delete_chunk, 0)
    run("vlmeta set", sc.vlmeta.__setitem__, "fz", b"x")
    ok, cf = run("to_cframe after edits", sc.to_cframe)
    if ok:
        ok, again = run("from_cframe after edits", oxiblosc.SChunk.from_cframe, cf)
        assert ok, f"{name}: the edited frame does not reopen: {again}"
        assert again.nchunks == sc.nchunks, name


def check_file(name, data, nchunks, tmp_path):
    """The frame as a file (one input in eight): it opens read-only with the
    chunks it has in memory; opened for appending, an append that works leaves
    a file that reopens with one chunk more."""
    run = Run(name)
    path = tmp_path / "frame.b2frame"
    path.write_bytes(data)
    ok, sc = run("SChunk.open 'r'", oxiblosc.SChunk.open, path, "r")
    if ok:
        assert sc.nchunks == nchunks, (
            f"{name}: {sc.nchunks} chunks in the file, {nchunks} in memory"
        )
        ok, _ = run("append_data to a read-only file", sc.append_data, bytes(64))
        assert not ok, f"{name}: appended to a frame opened read-only"
        del sc
    ok, sc = run("SChunk.open 'a'", oxiblosc.SChunk.open, path, "a")
    if not ok:
        return
    ok, _ = run("append_data to the file", sc.append_data, payload(sc))
    del sc
    ok2, again = run("SChunk.open after the append", oxiblosc.SChunk.open, path, "r")
    assert ok2, f"{name}: the file does not reopen after an append: {again}"
    if ok:
        assert again.nchunks == nchunks + 1, name


def test_chunk_corpora_through_the_python_face():
    tracemalloc.start()
    try:
        for target in ("chunk_decode", "capi_chunk"):
            for name, data in inputs(target):
                check_chunk(f"{target}/{name}", data)
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("target", "skip"), [("cframe_read", 0), ("cframe_edit", 4)])
def test_frame_corpora_through_the_python_face(target, skip, scratch):
    for name, data in inputs(target, skip):
        check_frame(f"{target}/{name}", data, scratch)
