"""Bad input from Python raises a clear exception, never a crash."""

import struct
import tracemalloc

import numpy as np
import pytest

import oxiblosc
from oxiblosc import numcodecs as onc

GOOD = oxiblosc.compress2(np.arange(10_000, dtype="i4"), codec="lz4")
GOOD1 = onc.compress(np.arange(10_000, dtype="i4"), b"lz4", 5, 1)


@pytest.mark.parametrize("obj", [None, 42, 3.5, "text", [1, 2, 3], object()])
def test_wrong_types(obj):
    with pytest.raises(TypeError, match="buffer protocol"):
        oxiblosc.compress2(obj)
    with pytest.raises(TypeError, match="buffer protocol"):
        oxiblosc.decompress2(obj)
    with pytest.raises(TypeError):
        oxiblosc.getitem(obj, 0, 1)
    with pytest.raises(TypeError):
        onc.decompress(obj)


def test_bad_parameters():
    with pytest.raises(ValueError, match="clevel"):
        oxiblosc.compress2(b"abc", clevel=10)
    with pytest.raises(ValueError, match="codec"):
        oxiblosc.compress2(b"abc", codec="snappy")
    with pytest.raises(ValueError, match="filter"):
        oxiblosc.compress2(b"abc", filters=["nope"])
    with pytest.raises(ValueError, match="typesize"):
        oxiblosc.compress2(b"abc", typesize=0)
    with pytest.raises(ValueError, match="compressor"):
        onc.compress(b"abc", b"snappy", 5)
    with pytest.raises(ValueError, match="shuffle"):
        onc.compress(b"abc", b"lz4", 5, 7)


def test_dst_too_small_or_read_only():
    with pytest.raises(ValueError, match="too small"):
        oxiblosc.decompress2(GOOD, bytearray(100))
    with pytest.raises(ValueError, match="too small"):
        onc.decompress(GOOD1, bytearray(100))
    with pytest.raises(ValueError, match="too small"):
        oxiblosc.compress2(np.random.default_rng(0).bytes(10_000), bytearray(100))
    with pytest.raises(TypeError, match="writable"):
        oxiblosc.decompress2(GOOD, bytes(40_000))
    with pytest.raises(TypeError):
        oxiblosc.decompress2(GOOD, np.empty(10_000, dtype=object))


def test_non_contiguous():
    a = np.arange(1000, dtype="i4")[::2]
    with pytest.raises((ValueError, TypeError)):
        oxiblosc.compress2(a)


@pytest.mark.parametrize("chunk", [GOOD, GOOD1])
def test_corrupt_bytes_never_crash(chunk):
    rng = np.random.default_rng(7)
    errors = 0
    for i in range(600):
        b = bytearray(chunk)
        if i % 3 == 0:
            b = b[: rng.integers(0, len(b))]
        for _ in range(int(rng.integers(1, 8))):
            if b:
                b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
        for call in (oxiblosc.decompress2, onc.decompress, lambda x: oxiblosc.getitem(x, 5, 50)):
            try:
                call(bytes(b))
            except (oxiblosc.BloscError, ValueError) as e:
                assert str(e)
                errors += 1
    assert errors > 0


def test_errors_are_clear():
    with pytest.raises(oxiblosc.BloscError, match="truncated|header|corrupt"):
        oxiblosc.decompress2(b"\x02\x01")
    with pytest.raises(RuntimeError):  # numcodecs raises RuntimeError here
        onc.decompress(bytearray())
    with pytest.raises(ValueError, match="range|outside|items"):
        oxiblosc.getitem(GOOD, 9_999, 5)
    with pytest.raises(OSError):
        oxiblosc.SChunk.open("/nonexistent/path/x.b2frame")
    with pytest.raises(oxiblosc.BloscError):
        oxiblosc.SChunk.from_cframe(b"not a frame at all" * 10)
    sc = oxiblosc.SChunk(chunksize=16)
    with pytest.raises(ValueError):
        sc.decompress_chunk(3)
    with pytest.raises(KeyError):
        sc.meta["missing"]
    with pytest.raises(oxiblosc.BloscError, match="header"):
        sc.append_chunk(b"\x00" * 40)


def test_src_and_dst_that_overlap_are_refused():
    """One buffer as both input and output (an object passed twice, or two
    views of it that share bytes) is refused: the engine may not read and
    write the same bytes at once (it did, with undefined results). Views of
    one buffer that do not share bytes work."""
    raw = np.arange(10_000, dtype="i4").tobytes()
    data = bytearray(raw)
    with pytest.raises(ValueError, match="overlap"):
        oxiblosc.compress2(data, data)
    assert data == raw
    room = bytearray(raw) + bytearray(64)
    with pytest.raises(ValueError, match="overlap"):
        oxiblosc.compress2(memoryview(room)[: len(raw)], room)
    assert room[: len(raw)] == raw
    n = len(GOOD)
    buf = bytearray(n + len(raw))
    buf[:n] = GOOD
    mv = memoryview(buf)
    with pytest.raises(ValueError, match="overlap"):
        oxiblosc.decompress2(mv[:n], mv[n - 1 :])
    with pytest.raises(ValueError, match="overlap"):
        onc.decompress(mv[:n], mv)
    assert oxiblosc.decompress2(mv[:n], mv[n:]) == len(raw)
    assert bytes(mv[n:]) == raw
    assert onc.decompress(mv[:n], bytearray(len(raw))) == raw


def _claiming_2gib(chunk):
    """The first 64 bytes of `chunk`, its header claiming about 2 GiB of data
    (a whole number of its 4-byte items) in a chunk of those 64 bytes."""
    b = bytearray(chunk[:64])
    struct.pack_into("<i", b, 4, 2**31 - 1024)  # nbytes
    struct.pack_into("<i", b, 12, 64)  # cbytes
    return bytes(b)


@pytest.mark.parametrize("chunk", [GOOD, GOOD1])
def test_a_small_chunk_claiming_gigabytes_fails_before_allocating_them(chunk):
    """Issue #15: a 64-byte chunk claiming 2 GiB fails fast with a few KB.
    The Rust decoder checks that a chunk's streams can back its size before
    sizing its output; the Python calls sized a new `bytes` by the header
    first (2 GiB allocated and zeroed, about 6 s, then the error)."""
    bad = _claiming_2gib(chunk)
    sc = oxiblosc.SChunk(chunksize=2**31 - 1024)
    sc.append_chunk(bad)  # as C-Blosc2, the header is all an append checks
    calls = {
        "decompress2": oxiblosc.decompress2,
        "numcodecs.decompress": onc.decompress,
        "SChunk.decompress_chunk": lambda _: sc.decompress_chunk(0),
    }
    for name, call in calls.items():
        tracemalloc.start()
        try:
            with pytest.raises(oxiblosc.BloscError, match="truncated"):
                call(bad)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 1 << 20, f"{name}: {peak} bytes at the peak"
