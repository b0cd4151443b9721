"""python-blosc2-style core calls: compress2 / decompress2 / getitem / SChunk,
buffer-protocol inputs, output into a caller's dst, interop with python-blosc2."""

import array

import numpy as np
import pytest

import oxiblosc


@pytest.fixture(params=["bytes", "bytearray", "memoryview", "numpy", "array"])
def src(request):
    a = np.arange(50_000, dtype="<i4")
    return a, {
        "bytes": a.tobytes(),
        "bytearray": bytearray(a.tobytes()),
        "memoryview": memoryview(a),
        "numpy": a,
        "array": array.array("i", a.tolist()),
    }[request.param]


def test_compress2_decompress2_round_trip(src):
    a, s = src
    for codec in oxiblosc.list_compressors():
        c = oxiblosc.compress2(s, codec=codec, clevel=5, typesize=4)
        assert isinstance(c, bytes) and len(c) < a.nbytes
        assert oxiblosc.decompress2(c) == a.tobytes()
        assert oxiblosc.cbuffer_sizes(c)[0] == a.nbytes


def test_typesize_defaults_to_itemsize():
    a = np.arange(1000, dtype="f8")
    assert oxiblosc.cbuffer_metainfo(oxiblosc.compress2(a))[0] == 8
    assert oxiblosc.cbuffer_metainfo(oxiblosc.compress2(a.tobytes()))[0] == 1


def test_dst_in_and_out():
    a = np.linspace(0, 1, 100_000)
    dst = bytearray(a.nbytes + oxiblosc.MAX_OVERHEAD)
    n = oxiblosc.compress2(a, dst, codec="zstd", filters=["shuffle", "bytedelta"])
    assert 0 < n < a.nbytes
    out = np.empty_like(a)
    assert oxiblosc.decompress2(memoryview(dst)[:n], out) == a.nbytes
    np.testing.assert_array_equal(out, a)


def test_getitem():
    a = np.arange(100_000, dtype="u8")
    c = oxiblosc.compress2(a, codec="lz4", blocksize=4096)
    assert np.frombuffer(oxiblosc.getitem(c, 12_345, 10), "u8").tolist() == list(
        range(12_345, 12_355)
    )


def test_python_blosc2_interop():
    blosc2 = pytest.importorskip("blosc2")
    a = np.arange(200_000, dtype="i8") % 977
    ours = oxiblosc.compress2(a, codec="zstd", clevel=5, filters=["shuffle"])
    assert blosc2.decompress2(ours) == a.tobytes()
    theirs = blosc2.compress2(a, codec=blosc2.Codec.ZSTD, clevel=5)
    assert oxiblosc.decompress2(theirs) == a.tobytes()
    # an enum from python-blosc2 is accepted as codec / filter
    c = oxiblosc.compress2(a, codec=blosc2.Codec.LZ4, filters=[blosc2.Filter.BITSHUFFLE])
    assert blosc2.decompress2(c) == a.tobytes()


@pytest.mark.parametrize("kind", ["memory", "file", "sparse"])
def test_schunk(tmp_path, kind):
    a = np.arange(300_000, dtype="<f4")
    chunk = 40_000 * 4
    urlpath = {"memory": None, "file": tmp_path / "x.b2frame", "sparse": tmp_path / "x.b2s"}[kind]
    sc = oxiblosc.SChunk(chunksize=chunk, urlpath=urlpath, contiguous=kind != "sparse",
                         meta={"dtype": b"<f4"}, codec="zstd", typesize=4)
    for i in range(0, a.nbytes, chunk):
        sc.append_data(a.view("u1")[i:i + chunk])
    sc.vlmeta["note"] = b"hello"
    assert sc.nchunks == 8 and len(sc) == 8
    assert sc.nbytes == a.nbytes and sc.cbytes < a.nbytes
    assert sc.meta["dtype"] == b"<f4" and "dtype" in sc.meta
    out = np.empty(40_000, "<f4")
    assert sc.decompress_chunk(1, out) == chunk
    np.testing.assert_array_equal(out, a[40_000:80_000])
    assert sc.decompress_chunk(7) == a[280_000:].tobytes()
    assert sc.get_slice(400, 800) == a.view("u1")[400:800].tobytes()
    frame = sc.to_cframe()
    back = oxiblosc.SChunk.from_cframe(frame)
    assert back.decompress_chunk(0) == a[:40_000].tobytes()
    assert back.vlmeta["note"] == b"hello"
    if urlpath is not None:
        del sc
        reopened = oxiblosc.SChunk.open(urlpath, mode="r")
        assert reopened.nchunks == 8 and reopened.meta["dtype"] == b"<f4"
        assert reopened.decompress_chunk(3) == a[120_000:160_000].tobytes()
        with pytest.raises(oxiblosc.BloscError, match="read-only"):
            reopened.append_data(b"x" * chunk)
    blosc2 = pytest.importorskip("blosc2")
    theirs = blosc2.schunk_from_cframe(frame)
    assert theirs.nchunks == 8
    assert theirs.decompress_chunk(2) == a[80_000:120_000].tobytes()
    # python-blosc2 msgpack-decodes (meta) values; ours are the raw stored bytes
    assert "dtype" in theirs.meta


def test_schunk_opens_python_blosc2_files(tmp_path):
    blosc2 = pytest.importorskip("blosc2")
    a = np.arange(100_000, dtype="i4")
    for contiguous in (True, False):
        p = str(tmp_path / f"c{contiguous}.b2")
        s = blosc2.SChunk(chunksize=a.nbytes // 4, data=a, urlpath=p, contiguous=contiguous,
                          mode="w", meta={"m": b"1234"})
        assert s.nchunks == 4
        ours = oxiblosc.SChunk.open(p)
        # python-blosc2 stores msgpack-packed values; we give the raw stored bytes
        assert ours.nchunks == 4 and ours.meta["m"] == b"\xc4\x041234"
        assert b"".join(ours.decompress_chunk(i) for i in range(4)) == a.tobytes()


@pytest.mark.parametrize("call", ["compress2", "decompress2", "numcodecs"])
def test_gil_released_during_the_call(call):
    """Another Python thread runs while a (de)compression call is under way
    (zstd level 15 on 32 MB: one call lasts long enough on a fast, idle machine)."""
    import threading

    from oxiblosc import numcodecs as onc

    a = np.cumsum(np.random.default_rng(1).normal(size=4_000_000))  # 32 MB
    chunk = oxiblosc.compress2(a, codec="zstd", clevel=1)
    fn = {
        "compress2": lambda: oxiblosc.compress2(a, codec="zstd", clevel=8, nthreads=1),
        "decompress2": lambda: [oxiblosc.decompress2(chunk, nthreads=1) for _ in range(40)],
        "numcodecs": lambda: onc.compress(a, b"zstd", 8, 1),
    }[call]
    import time

    # this loop's speed alone: with the GIL held by the worker, the main thread
    # gets a few ms (a switch interval) before the call starts, then nothing
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 0.05:
        n += 1
    per_second = n / (time.perf_counter() - t0)
    started = threading.Event()

    def work():
        started.set()  # from here on the worker holds the GIL unless the call drops it
        fn()

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    count, t0 = 0, time.perf_counter()
    while t.is_alive():
        count += 1
    t.join()
    took = time.perf_counter() - t0
    assert took > 0.1, f"the call took only {took:.3f} s: too short to tell"
    assert count > per_second * 0.01, (
        f"the main thread ran only {count} loop turns in {took:.3f} s "
        f"({per_second:.0f}/s alone): the call held the GIL"
    )


def test_threads_give_identical_chunks():
    from concurrent.futures import ThreadPoolExecutor

    a = np.random.default_rng(1).integers(0, 100, 2_000_000).astype("i8")
    with ThreadPoolExecutor(2) as ex:
        outs = list(ex.map(lambda _: oxiblosc.compress2(a, codec="lz4", nthreads=1), range(4)))
    assert len(set(outs)) == 1
    assert oxiblosc.decompress2(outs[0]) == a.tobytes()


@pytest.mark.parametrize("mib", [5, 24])
def test_large_results_round_trip(mib):
    # Results from 4 MiB on are advised onto huge pages and, above the kept
    # per-thread scratch size (16 MiB), compressed into a fresh buffer: both
    # paths must give the bytes back, through new objects and through `dst`.
    from oxiblosc import numcodecs as ob

    n = (mib << 20) // 8 + 3
    a = (np.arange(n, dtype="f8") * 0.25).reshape(-1)
    a[::7] = np.sin(a[::7])
    for c in (oxiblosc.compress2(a, codec="lz4", nthreads=1),
              oxiblosc.compress2(a, codec="zstd", clevel=1, nthreads=2)):
        assert oxiblosc.decompress2(c) == a.tobytes()
        out = np.empty_like(a)
        assert oxiblosc.decompress2(c, out) == a.nbytes
        assert np.array_equal(out, a)
    c1 = ob.compress(a, b"blosclz", 5, ob.SHUFFLE)
    assert ob.decompress(c1) == a.tobytes()
