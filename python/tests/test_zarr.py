"""Zarr 3.1: arrays written through oxiblosc.zarr.BloscCodec are read by stock
zarr and the reverse; the entry point makes the one-line config switch work."""

import numpy as np
import pytest
import zarr
import zarr.codecs
from zarr.registry import get_codec_class

from oxiblosc.zarr import BloscCodec

OURS = "oxiblosc.zarr.BloscCodec"
STOCK = "zarr.codecs.blosc.BloscCodec"


def data():
    rng = np.random.default_rng(3)
    return np.cumsum(rng.normal(size=(257, 131)), axis=0).astype("f4")


def test_config_switch_selects_ours():
    with zarr.config.set({"codecs.blosc": OURS}):
        assert get_codec_class("blosc") is BloscCodec
    with zarr.config.set({"codecs.blosc": STOCK}):
        assert get_codec_class("blosc") is zarr.codecs.BloscCodec


def test_json_config_is_zarrs():
    ours = BloscCodec(cname="lz4", clevel=3, shuffle="bitshuffle", typesize=4, blocksize=0)
    stock = zarr.codecs.BloscCodec(cname="lz4", clevel=3, shuffle="bitshuffle", typesize=4,
                                   blocksize=0)
    assert ours.to_dict() == stock.to_dict()
    assert BloscCodec.from_dict(stock.to_dict()).to_dict() == stock.to_dict()


@pytest.mark.parametrize("cname", ["blosclz", "lz4", "lz4hc", "zlib", "zstd"])
@pytest.mark.parametrize("shuffle", ["noshuffle", "shuffle", "bitshuffle", None])
def test_ours_writes_stock_reads(tmp_path, cname, shuffle):
    a = data()
    z = zarr.create_array(tmp_path / "a.zarr", shape=a.shape, chunks=(64, 50), dtype=a.dtype,
                          compressors=BloscCodec(cname=cname, shuffle=shuffle))
    z[:] = a
    with zarr.config.set({"codecs.blosc": STOCK}):
        back = zarr.open_array(tmp_path / "a.zarr", mode="r")
        assert type(back.compressors[0]) is zarr.codecs.BloscCodec
        np.testing.assert_array_equal(back[:], a)


@pytest.mark.parametrize("cname", ["blosclz", "lz4", "zstd"])
def test_stock_writes_ours_reads(tmp_path, cname):
    a = data()
    with zarr.config.set({"codecs.blosc": STOCK}):
        z = zarr.create_array(tmp_path / "a.zarr", shape=a.shape, chunks=(64, 50),
                              dtype=a.dtype,
                              compressors=zarr.codecs.BloscCodec(cname=cname, shuffle="shuffle"))
        z[:] = a
    with zarr.config.set({"codecs.blosc": OURS}):
        back = zarr.open_array(tmp_path / "a.zarr", mode="r")
        assert type(back.compressors[0]) is BloscCodec
        np.testing.assert_array_equal(back[:], a)
        np.testing.assert_array_equal(back[10:20, 5:60], a[10:20, 5:60])


def test_same_chunk_bytes_as_stock(tmp_path):
    """With lz4, the stored chunks are byte for byte stock zarr's."""
    a = data()
    paths = {}
    for name, cls in (("ours", BloscCodec), ("stock", zarr.codecs.BloscCodec)):
        p = tmp_path / f"{name}.zarr"
        z = zarr.create_array(p, shape=a.shape, chunks=(64, 50), dtype=a.dtype,
                              compressors=cls(cname="lz4", clevel=5))
        z[:] = a
        paths[name] = p
    ours = sorted((p.relative_to(paths["ours"]), p.read_bytes())
                  for p in paths["ours"].rglob("c/**/*") if p.is_file())
    stock = sorted((p.relative_to(paths["stock"]), p.read_bytes())
                   for p in paths["stock"].rglob("c/**/*") if p.is_file())
    assert len(ours) == len(stock) > 4
    assert ours == stock


def test_config_switch_round_trip(tmp_path):
    """With the switch on, a plain zarr.create_array(compressors=...) with zarr's own
    BloscCodec JSON is written by ours and read back by stock."""
    a = data()
    with zarr.config.set({"codecs.blosc": OURS}):
        z = zarr.create_array(tmp_path / "s.zarr", shape=a.shape, chunks=(100, 100),
                              dtype=a.dtype,
                              compressors={"name": "blosc",
                                           "configuration": {"cname": "zstd", "clevel": 3,
                                                             "shuffle": "shuffle",
                                                             "typesize": 4, "blocksize": 0}})
        assert type(z.compressors[0]) is BloscCodec
        z[:] = a
    with zarr.config.set({"codecs.blosc": STOCK}):
        np.testing.assert_array_equal(zarr.open_array(tmp_path / "s.zarr", mode="r")[:], a)


def test_zarr_format_2_through_numcodecs(tmp_path):
    """Zarr v2 arrays use numcodecs' registry: after oxiblosc.numcodecs.register()
    they are read and written by ours, and stock numcodecs reads them back."""
    import numcodecs
    import numcodecs.registry

    from oxiblosc import numcodecs as onc

    a = data()
    stock_path, ours_path = tmp_path / "stock.zarr", tmp_path / "ours.zarr"
    z = zarr.create_array(stock_path, shape=a.shape, chunks=(64, 50), dtype=a.dtype,
                          zarr_format=2, compressors=numcodecs.Blosc(cname="zstd"))
    z[:] = a
    old = numcodecs.registry.codec_registry["blosc"]
    try:
        onc.register()
        back = zarr.open_array(stock_path, mode="r")
        assert type(back.compressors[0]) is onc.Blosc
        np.testing.assert_array_equal(back[:], a)
        z = zarr.create_array(ours_path, shape=a.shape, chunks=(64, 50), dtype=a.dtype,
                              zarr_format=2, compressors=onc.Blosc(cname="lz4", clevel=5))
        z[:] = a
    finally:
        numcodecs.registry.register_codec(old, "blosc")
    back = zarr.open_array(ours_path, mode="r")
    assert type(back.compressors[0]) is numcodecs.Blosc
    np.testing.assert_array_equal(back[:], a)
