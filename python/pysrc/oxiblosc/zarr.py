"""A Zarr v3 ``blosc`` codec backed by oxiblosc.

:class:`BloscCodec` is zarr's own ``zarr.codecs.BloscCodec`` (same ``"blosc"``
name, JSON configuration, defaults and tuning from the array's data type) with
the compression done by :class:`oxiblosc.numcodecs.Blosc`: the chunks are the
Blosc1 chunks stock zarr writes and reads.  The package registers it through
the ``zarr.codecs`` entry point, so one line selects it::

    import zarr
    zarr.config.set({"codecs.blosc": "oxiblosc.zarr.BloscCodec"})

or, for one array, pass ``compressors=oxiblosc.zarr.BloscCodec(...)``.
"""

from functools import cached_property

from zarr.codecs.blosc import BloscCodec as _ZarrBloscCodec
from zarr.codecs.blosc import BloscShuffle

from .numcodecs import Blosc

__all__ = ["BloscCodec"]

_SHUFFLE_TO_INT = {
    BloscShuffle.noshuffle: 0,
    BloscShuffle.shuffle: 1,
    BloscShuffle.bitshuffle: 2,
}


class BloscCodec(_ZarrBloscCodec):
    """Zarr v3 ``blosc`` codec compressing with oxiblosc.

    Parameters are zarr's: ``typesize``, ``cname`` (default ``'zstd'``), ``clevel``
    (default 5), ``shuffle`` (``'noshuffle'``, ``'shuffle'``, ``'bitshuffle'``; by
    default chosen from the data type) and ``blocksize`` (0 = automatic).
    """

    @cached_property
    def _blosc_codec(self) -> Blosc:
        return Blosc(
            cname=self.cname.value,
            clevel=self.clevel,
            shuffle=_SHUFFLE_TO_INT[self.shuffle],
            blocksize=self.blocksize,
            typesize=self.typesize,
        )
