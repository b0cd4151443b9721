"""oxiblosc.numcodecs beyond numcodecs' own tests: pickling, JSON config,
register() into numcodecs' registry, defaults."""

import json
import pickle

import numcodecs
import numcodecs.registry
import numpy as np
import pytest

from oxiblosc import numcodecs as onc


def test_defaults_match_numcodecs():
    ours, theirs = onc.Blosc(), numcodecs.Blosc()
    assert ours.get_config() == theirs.get_config()
    assert repr(ours) == repr(theirs)
    assert onc.Blosc.codec_id == "blosc"
    for k in ("NOSHUFFLE", "SHUFFLE", "BITSHUFFLE", "AUTOSHUFFLE"):
        assert getattr(onc, k) == getattr(numcodecs.blosc, k) == getattr(onc.Blosc, k)
    assert onc.get_nthreads() == numcodecs.blosc.get_nthreads()


@pytest.mark.parametrize("shuffle", [-1, 0, 1, 2])
def test_pickle_and_json(shuffle):
    c = onc.Blosc(cname="zstd", clevel=7, shuffle=shuffle, blocksize=1 << 14)
    c2 = pickle.loads(pickle.dumps(c))
    assert c2 == c and type(c2) is onc.Blosc
    cfg = json.loads(json.dumps(c.get_config()))
    assert cfg["id"] == "blosc"
    assert numcodecs.get_codec(dict(cfg)).get_config() == cfg  # stock reads our config
    del cfg["id"]  # from_config takes the config without its id, as in numcodecs
    assert onc.Blosc.from_config(cfg) == c
    a = np.arange(10_000, dtype="u2")
    assert c2.decode(c.encode(a)) == a.tobytes()


def test_register_puts_ours_in_numcodecs_registry():
    old = numcodecs.registry.codec_registry["blosc"]
    try:
        assert onc.register()
        codec = numcodecs.get_codec({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1})
        assert type(codec) is onc.Blosc
        a = np.linspace(0, 1, 5000)
        assert numcodecs.blosc.decompress(codec.encode(a)) == a.tobytes()
    finally:
        numcodecs.registry.register_codec(old, "blosc")
    assert type(numcodecs.get_codec({"id": "blosc"})) is numcodecs.Blosc


def test_set_nthreads_round_trip():
    old = onc.set_nthreads(2)
    try:
        assert onc.get_nthreads() == 2
        onc.use_threads = True
        a = np.arange(2_000_000, dtype="i4")
        c = onc.compress(a, b"lz4", 5, onc.SHUFFLE)
        assert onc.decompress(c) == a.tobytes()
        with pytest.raises(ValueError):
            onc.set_nthreads(0)
    finally:
        onc.use_threads = None
        onc.set_nthreads(old)
