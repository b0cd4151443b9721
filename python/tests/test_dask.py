"""Dask: a distributed.LocalCluster with two worker processes writes and reads a
Zarr array through oxiblosc's codecs (selected on every worker)."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
zarr = pytest.importorskip("zarr")

OURS = "oxiblosc.zarr.BloscCodec"


def use_oxiblosc_on_worker():
    """Run on each worker: select oxiblosc for zarr's and numcodecs' "blosc"."""
    import zarr

    from oxiblosc.numcodecs import register

    zarr.config.set({"codecs.blosc": OURS})
    register()
    return True


def which_codecs():
    """Which classes this process resolves "blosc" to (zarr v3, numcodecs)."""
    import numcodecs
    from zarr.registry import get_codec_class

    z = get_codec_class("blosc")
    n = type(numcodecs.get_codec({"id": "blosc"}))
    return f"{z.__module__}.{z.__qualname__}", f"{n.__module__}.{n.__qualname__}"


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40) as cluster:
        with Client(cluster, timeout="60s") as c:
            c.wait_for_workers(2, timeout=60)
            yield c


def test_workers_use_oxiblosc(client):
    from oxiblosc.numcodecs import RegisterPlugin

    client.register_plugin(RegisterPlugin())
    assert all(client.run(use_oxiblosc_on_worker).values())
    res = client.run(which_codecs)
    assert len(res) == 2
    for zcls, ncls in res.values():
        assert zcls == OURS
        assert ncls == "oxiblosc.numcodecs.Blosc"


def test_write_and_read_zarr_on_cluster(client, tmp_path):
    from oxiblosc.zarr import BloscCodec

    client.run(use_oxiblosc_on_worker)
    rng = np.random.default_rng(5)
    a = np.cumsum(rng.normal(size=(600, 400)), axis=1).astype("f8")
    x = da.from_array(a, chunks=(150, 100))  # 16 chunks over the two workers
    path = str(tmp_path / "cluster.zarr")
    z = zarr.create_array(path, shape=a.shape, chunks=(150, 100), dtype=a.dtype,
                          compressors=BloscCodec(cname="zstd", clevel=5, shuffle="shuffle"))
    da.store(x, z, lock=False, compute=True)
    # read on the cluster through our codec
    back = da.from_zarr(path)
    np.testing.assert_array_equal(back.compute(), a)
    assert float(back.sum().compute()) == pytest.approx(float(a.sum()))
    # and stock zarr, in this process, reads what the workers wrote
    with zarr.config.set({"codecs.blosc": "zarr.codecs.blosc.BloscCodec"}):
        np.testing.assert_array_equal(zarr.open_array(path, mode="r")[:], a)
