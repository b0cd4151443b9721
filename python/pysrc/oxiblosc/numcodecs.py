"""A drop-in for ``numcodecs.blosc`` backed by oxiblosc.

It writes Blosc1 chunks (16-byte header) as C-Blosc 1.21 does -- byte-identical to
numcodecs' own for blosclz, lz4 and lz4hc -- and reads every chunk numcodecs
writes.  The names are those of ``numcodecs.blosc``: the :class:`Blosc` codec
(``codec_id = "blosc"``, the same configuration keys, defaults, JSON config and
pickling), and ``compress``, ``decompress``, ``cbuffer_sizes``, ``cbuffer_complib``,
``cbuffer_metainfo``, ``list_compressors``, ``get_nthreads`` / ``set_nthreads``,
``use_threads`` and the shuffle constants.

To make ``numcodecs.get_codec({"id": "blosc", ...})`` (and so Zarr v2 and
everything on top) use it, call :func:`register` -- in every process that
decodes, which on a Dask cluster means on every worker::

    from oxiblosc.numcodecs import register
    register()                  # this process
    client.run(register)        # every current worker of a distributed.Client
    client.register_plugin(oxiblosc.numcodecs.RegisterPlugin())  # and future ones
"""

import multiprocessing
import os
import threading

from . import _oxiblosc

try:  # numcodecs is optional: without it ``Blosc`` is a plain class
    from numcodecs.abc import Codec as _CodecBase
    from numcodecs.compat import ensure_contiguous_ndarray as _ensure_contiguous_ndarray
except ImportError:  # pragma: no cover
    _CodecBase = object
    _ensure_contiguous_ndarray = None


def _as_buffer(buf, max_buffer_size):
    """numcodecs' ``ensure_contiguous_ndarray`` where numcodecs is installed;
    otherwise the object itself, with the same size limit."""
    if _ensure_contiguous_ndarray is not None:
        return _ensure_contiguous_ndarray(buf, max_buffer_size)
    n = memoryview(buf).nbytes
    if n > max_buffer_size:
        raise ValueError(f"Codec does not support buffers of > {max_buffer_size} bytes")
    return buf

__all__ = [
    "AUTOBLOCKS",
    "AUTOSHUFFLE",
    "BITSHUFFLE",
    "MAX_BUFFERSIZE",
    "MAX_OVERHEAD",
    "MAX_THREADS",
    "MAX_TYPESIZE",
    "NOSHUFFLE",
    "SHUFFLE",
    "Blosc",
    "RegisterPlugin",
    "cbuffer_complib",
    "cbuffer_metainfo",
    "cbuffer_sizes",
    "compress",
    "decompress",
    "get_nthreads",
    "list_compressors",
    "register",
    "set_nthreads",
    "use_threads",
]

MAX_OVERHEAD = 16
MAX_BUFFERSIZE = 2**31 - 1 - MAX_OVERHEAD
MAX_THREADS = 256
MAX_TYPESIZE = 255
VERSION_STRING = "1.21.6"  # the C-Blosc release whose chunks these are
__version__ = VERSION_STRING
NOSHUFFLE = 0
SHUFFLE = 1
BITSHUFFLE = 2
#: bit-shuffle for 1-byte items, byte-shuffle otherwise
AUTOSHUFFLE = -1
#: let the block-size tuner decide
AUTOBLOCKS = 0

_DOSHUFFLE = 0x1
_MEMCPYED = 0x2
_DOBITSHUFFLE = 0x4

# As in numcodecs: None = use the threads of set_nthreads() only from the main
# thread of the main process; True / False force it.
use_threads = None

_importer_pid = os.getpid()

# As numcodecs does on import: up to 8 threads inside one call when threads are
# in use (main thread of the main process, or ``use_threads = True``).
_NTHREADS = min(8, os.cpu_count() or 1)


def _init():
    """Nothing to initialise (kept for numcodecs' name)."""


def _destroy():
    """Nothing to tear down (kept for numcodecs' name)."""


def _get_use_threads():
    if os.getpid() != _importer_pid:
        # a forked child: the parent's thread pools are gone
        return False
    if use_threads in [True, False]:
        return use_threads
    if multiprocessing.current_process().name != "MainProcess":
        return False
    return threading.main_thread() == threading.current_thread()


def _nthreads():
    return _NTHREADS if _get_use_threads() else 1


def list_compressors():
    """The compressors this build supports, e.g. ``['blosclz', 'lz4', 'lz4hc', 'zlib', 'zstd']``."""
    return list(_oxiblosc.list_compressors())


def get_nthreads():
    """The number of threads used inside one call when threads are in use."""
    return _NTHREADS


def set_nthreads(nthreads):
    """Set the number of threads used inside one call; returns the previous value."""
    global _NTHREADS
    nthreads = int(nthreads)
    if not 1 <= nthreads <= MAX_THREADS:
        raise ValueError(f"nthreads must be in 1..{MAX_THREADS}, not {nthreads}")
    old, _NTHREADS = _NTHREADS, nthreads
    return old


def cbuffer_sizes(source):
    """``(nbytes, cbytes, blocksize)`` from the header of a compressed buffer."""
    return _oxiblosc.cbuffer_sizes(source)


_cbuffer_sizes = cbuffer_sizes


def cbuffer_complib(source):
    """The compression library of a compressed buffer (``'LZ4'``, ``'BloscLZ'``, ...)."""
    return _oxiblosc.cbuffer_complib(source)


def cbuffer_metainfo(source):
    """``(typesize, shuffle, memcpyed)`` of a compressed buffer; ``shuffle`` is
    ``NOSHUFFLE``, ``SHUFFLE`` or ``BITSHUFFLE``."""
    typesize, flags = _oxiblosc.cbuffer_metainfo(source)
    if flags & _DOSHUFFLE and flags & _DOBITSHUFFLE:
        shuffle = NOSHUFFLE  # a Blosc2 chunk with its filters in the extended header
    elif flags & _DOSHUFFLE:
        shuffle = SHUFFLE
    elif flags & _DOBITSHUFFLE:
        shuffle = BITSHUFFLE
    else:
        shuffle = NOSHUFFLE
    return typesize, shuffle, flags & _MEMCPYED


_cbuffer_metainfo = cbuffer_metainfo


def compress(source, cname, clevel, shuffle=SHUFFLE, blocksize=AUTOBLOCKS, typesize=None):
    """Compress ``source`` (any C-contiguous buffer) into a Blosc1 chunk.

    Parameters
    ----------
    source : bytes-like
        The data.
    cname : bytes or str
        ``b'blosclz'``, ``b'lz4'``, ``b'lz4hc'``, ``b'zlib'`` or ``b'zstd'``.
    clevel : int
        Compression level, 0-9.
    shuffle : int
        ``NOSHUFFLE`` (0), ``SHUFFLE`` (1), ``BITSHUFFLE`` (2) or ``AUTOSHUFFLE`` (-1:
        bit-shuffle for 1-byte items, byte-shuffle otherwise).
    blocksize : int
        Requested block size in bytes; 0 lets the tuner choose.
    typesize : int, optional
        Item size; by default the buffer's item size.

    Returns
    -------
    bytes
        The chunk.
    """
    if isinstance(cname, bytes):
        cname = cname.decode("ascii")
    if not isinstance(typesize, int) or isinstance(typesize, bool):
        typesize = None
    if shuffle == AUTOSHUFFLE:
        itemsize = typesize if typesize is not None else memoryview(source).itemsize
        shuffle = BITSHUFFLE if itemsize == 1 else SHUFFLE
    # the extension checks cname, typesize and shuffle with numcodecs' messages
    return _oxiblosc.blosc1_compress(
        source, cname, clevel, shuffle, blocksize, typesize, _nthreads()
    )


def decompress(source, dest=None):
    """Decompress a Blosc/Blosc2 chunk.

    Parameters
    ----------
    source : bytes-like
        The chunk, header included.
    dest : array-like, optional
        A writable buffer of at least the decompressed size to write into.

    Returns
    -------
    bytes or the ``dest`` given
    """
    if dest is None:
        return _oxiblosc.decompress2(source, nthreads=_nthreads())
    try:
        _oxiblosc.decompress2(source, dest, nthreads=_nthreads())
    except TypeError:
        if _ensure_contiguous_ndarray is None:
            raise
        # array-likes without a plain writable buffer (raises numcodecs' TypeError
        # for object arrays)
        _oxiblosc.decompress2(source, _ensure_contiguous_ndarray(dest), nthreads=_nthreads())
    return dest


_shuffle_repr = ["AUTOSHUFFLE", "NOSHUFFLE", "SHUFFLE", "BITSHUFFLE"]


class Blosc(_CodecBase):
    """Codec providing compression using the Blosc meta-compressor (oxiblosc's engine).

    Parameters
    ----------
    cname : string, optional
        ``'zstd'``, ``'blosclz'``, ``'lz4'`` (default), ``'lz4hc'`` or ``'zlib'``.
    clevel : integer, optional
        Compression level, 0 to 9 (default 5).
    shuffle : integer, optional
        ``NOSHUFFLE`` (0), ``SHUFFLE`` (1, default), ``BITSHUFFLE`` (2) or
        ``AUTOSHUFFLE`` (-1: bit-shuffle for 1-byte items, byte-shuffle otherwise).
    blocksize : int
        Requested block size in bytes; 0 (default) lets the tuner choose.
    typesize : int, optional
        Item size of the data (not part of the config, as in numcodecs).
    """

    codec_id = "blosc"
    NOSHUFFLE = NOSHUFFLE
    SHUFFLE = SHUFFLE
    BITSHUFFLE = BITSHUFFLE
    AUTOSHUFFLE = AUTOSHUFFLE
    max_buffer_size = 2**31 - 1

    def __init__(self, cname="lz4", clevel=5, shuffle=SHUFFLE, blocksize=AUTOBLOCKS, typesize=None):
        if isinstance(typesize, int) and typesize < 1:
            raise ValueError(f"Cannot use typesize {typesize} less than 1.")
        self.cname = cname
        if isinstance(cname, str):
            self._cname_bytes = cname.encode("ascii")
        else:
            self._cname_bytes = cname
        self.clevel = clevel
        self.shuffle = shuffle
        self.blocksize = blocksize
        self._typesize = typesize

    def encode(self, buf):
        """Compress ``buf`` into a Blosc1 chunk (``bytes``)."""
        buf = _as_buffer(buf, self.max_buffer_size)
        return compress(
            buf, self._cname_bytes, self.clevel, self.shuffle, self.blocksize, self._typesize
        )

    def decode(self, buf, out=None):
        """Decompress a chunk, into ``out`` when given."""
        buf = _as_buffer(buf, self.max_buffer_size)
        return decompress(buf, out)

    def get_config(self):
        """The JSON-serialisable configuration (``typesize`` is not part of it)."""
        return {
            "id": self.codec_id,
            "cname": self.cname,
            "clevel": self.clevel,
            "shuffle": self.shuffle,
            "blocksize": self.blocksize,
        }

    @classmethod
    def from_config(cls, config):
        """A codec from :meth:`get_config`'s dict."""
        config = dict(config)
        config.pop("id", None)
        return cls(**config)

    def __eq__(self, other):
        try:
            return self.get_config() == other.get_config()
        except AttributeError:
            return False

    def __hash__(self):
        return hash(tuple(sorted(self.get_config().items())))

    def __repr__(self):
        return (
            f"{type(self).__name__}(cname={self.cname!r}, clevel={self.clevel!r}, "
            f"shuffle={_shuffle_repr[self.shuffle + 1]}, blocksize={self.blocksize})"
        )


def register():
    """Put :class:`Blosc` in numcodecs' registry under ``"blosc"`` (this process).

    Afterwards ``numcodecs.get_codec({"id": "blosc", ...})`` -- and so Zarr v2
    arrays, xarray and Dask reading through numcodecs -- use oxiblosc.  On a Dask
    cluster run it on every worker: ``client.run(register)``, or for workers that
    join later ``client.register_plugin(RegisterPlugin())``.
    """
    import numcodecs.registry

    numcodecs.registry.register_codec(Blosc, "blosc")
    return True


try:
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover
    _WorkerPlugin = object


class RegisterPlugin(_WorkerPlugin):
    """A ``distributed`` worker plugin that calls :func:`register` on every worker,
    including ones that join later: ``client.register_plugin(RegisterPlugin())``."""

    name = "oxiblosc-numcodecs-register"

    def setup(self, worker=None):
        """Called by each worker on start."""
        register()
