"""oxiblosc: Blosc/Blosc2 compression in Rust, for Python.

Core calls, named as python-blosc2 names them:

* :func:`compress2` / :func:`decompress2` -- Blosc2 chunks (any object with the
  buffer protocol in; ``bytes`` out, or written into a caller's ``dst``);
* :func:`getitem` -- decode only the items ``[start, start + nitems)``;
* :class:`SChunk` -- super-chunks in memory, in frame files (``.b2frame``) or in
  sparse frames (directories): ``append_data``, ``decompress_chunk``, ``meta``,
  ``vlmeta``, ``to_cframe`` / ``SChunk.from_cframe``, ``SChunk.open``.

The GIL is released while data is (de)compressed, so Python threads compress in
parallel.  Codecs for pipelines:

* :mod:`oxiblosc.numcodecs` -- a drop-in for ``numcodecs.blosc`` (``Blosc`` codec,
  Blosc1 chunks byte-identical to numcodecs' for blosclz/lz4/lz4hc);
* :mod:`oxiblosc.zarr` -- ``BloscCodec`` for Zarr v3, selected with
  ``zarr.config.set({"codecs.blosc": "oxiblosc.zarr.BloscCodec"})``.

Errors: bad parameters and too-small destinations raise ``ValueError``, objects
without the buffer protocol ``TypeError``, corrupt or truncated data
:class:`BloscError` (a ``RuntimeError``), file problems ``OSError``.
"""

from ._oxiblosc import (
    MAX_BLOCKSIZE,
    MAX_BUFFERSIZE,
    MAX_OVERHEAD,
    MAX_TYPESIZE,
    BloscError,
    SChunk,
    cbuffer_complib,
    cbuffer_metainfo,
    cbuffer_sizes,
    compress2,
    decompress2,
    get_nthreads,
    getitem,
    list_compressors,
    set_nthreads,
)

__version__ = "0.1.0"

__all__ = [
    "MAX_BLOCKSIZE",
    "MAX_BUFFERSIZE",
    "MAX_OVERHEAD",
    "MAX_TYPESIZE",
    "BloscError",
    "SChunk",
    "cbuffer_complib",
    "cbuffer_metainfo",
    "cbuffer_sizes",
    "compress2",
    "decompress2",
    "get_nthreads",
    "getitem",
    "list_compressors",
    "set_nthreads",
]
