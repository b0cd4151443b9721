"""Stock numcodecs decodes what oxiblosc.numcodecs writes and the reverse, for
every cname x shuffle x dtype, over odd lengths; blosclz, lz4 and lz4hc chunks
are byte-identical to numcodecs' own (zstd differs where the bundled libzstd
versions do; zlib unless the core crate is built with `zlib-classic`)."""

import numpy as np
import pytest
from numcodecs import blosc as stock

from oxiblosc import numcodecs as ours

CNAMES = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]
SHUFFLES = [ours.NOSHUFFLE, ours.SHUFFLE, ours.BITSHUFFLE, ours.AUTOSHUFFLE]
DTYPES = ["u1", "i2", "<f4", ">i4", "f8", "c16", "S7"]
LENGTHS = [1, 7, 1001, 40_013]  # (numcodecs cannot decode an empty chunk at all)
# numcodecs' C-Blosc 1.21 and oxiblosc write the same bytes for these
IDENTICAL = {"blosclz", "lz4", "lz4hc"}


def make(dtype, n, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "S":
        words = np.array([b"alpha", b"beta", b"gamma", b"", b"delta77"], dtype=dt)
        return words[rng.integers(0, len(words), n)]
    if dt.kind == "c":
        return (np.cumsum(rng.normal(size=n)) + 1j * rng.normal(size=n)).astype(dt)
    if dt.kind == "f":
        return np.cumsum(rng.normal(size=n)).astype(dt)
    info = np.iinfo(dt)
    walk = np.cumsum(rng.integers(-3, 4, n)) % (int(info.max) // 2 + 1)
    return walk.astype(dt)


@pytest.mark.parametrize("cname", CNAMES)
@pytest.mark.parametrize("shuffle", SHUFFLES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_decode(cname, shuffle, dtype):
    for i, n in enumerate(LENGTHS):
        arr = make(dtype, n, i)
        for clevel in (1, 5, 9):
            mine = ours.compress(arr, cname.encode(), clevel, shuffle)
            theirs = stock.compress(arr, cname.encode(), clevel, shuffle)
            # stock decodes ours, we decode stock's
            assert stock.decompress(mine) == arr.tobytes(), (cname, shuffle, dtype, n, clevel)
            assert ours.decompress(theirs) == arr.tobytes(), (cname, shuffle, dtype, n, clevel)
            assert ours.cbuffer_sizes(mine)[0] == stock._cbuffer_sizes(theirs)[0] == arr.nbytes
            assert ours.cbuffer_metainfo(theirs) == stock._cbuffer_metainfo(theirs)
            assert stock._cbuffer_metainfo(mine) == ours.cbuffer_metainfo(mine)
            assert ours.cbuffer_complib(theirs) == stock.cbuffer_complib(theirs)
            if cname in IDENTICAL:
                assert mine == theirs, (cname, shuffle, dtype, n, clevel)
            # decoding into a caller's buffer, both ways
            out = np.empty_like(arr)
            stock.decompress(mine, out)
            assert out.tobytes() == arr.tobytes()
            out2 = np.empty_like(arr)
            ours.decompress(theirs, out2)
            assert out2.tobytes() == arr.tobytes()


@pytest.mark.parametrize("blocksize", [0, 256, 4096, 1 << 16])
@pytest.mark.parametrize("cname", CNAMES)
def test_codec_objects_both_ways(cname, blocksize):
    import numcodecs

    arr = np.linspace(0, 1000, 123_457, dtype="f8")
    mine = ours.Blosc(cname=cname, clevel=5, shuffle=ours.SHUFFLE, blocksize=blocksize)
    theirs = numcodecs.Blosc(cname=cname, clevel=5, shuffle=numcodecs.Blosc.SHUFFLE,
                             blocksize=blocksize)
    assert mine.get_config() == theirs.get_config()
    a, b = mine.encode(arr), theirs.encode(arr)
    assert np.array_equal(np.frombuffer(theirs.decode(a), "f8"), arr)
    assert np.array_equal(np.frombuffer(mine.decode(b), "f8"), arr)
    if cname in IDENTICAL:
        assert a == b
