"""numcodecs codecs (zarr v2) that read and write through blosckit.

``Blosc`` has numcodecs' ``Blosc`` configuration and writes the same bytes
(C-Blosc 1.x chunks, 16-byte header); ``Blosc2`` writes Blosc2 chunks with
python-blosc2's parameters.  Both read every Blosc1 and Blosc2 chunk with
blosckit's reader.  ``numcodecs.register_codec(Blosc, "blosc")`` makes zarr
read arrays written with numcodecs' Blosc through blosckit.
specs/ecosystem.md gives the mapping of each configuration to the chunk.
"""
from __future__ import annotations

from typing import Any

try:
    from numcodecs.abc import Codec
    from numcodecs.compat import ensure_contiguous_ndarray
except ImportError as e:            # pragma: no cover - depends on the install
    raise ImportError("blosckit.numcodecs needs numcodecs: pip install 'blosckit[numcodecs]'"
                      ) from e

from .chunk.conventions import (AUTOSHUFFLE, blosc1_args, codec_name, filters_named,
                                splitmode_name)
from .chunk.encode import compress
from .chunk.read import MAX_NBYTES, decompress, decompress_into

__all__ = ["Blosc", "Blosc2"]

_SHUFFLE_NAMES = {-1: "AUTOSHUFFLE", 0: "NOSHUFFLE", 1: "SHUFFLE", 2: "BITSHUFFLE"}


def _decode(buf, out=None):
    """numcodecs' decode contract: a new bytes object, or the chunk written
    into ``out`` (returned)."""
    src = ensure_contiguous_ndarray(buf, MAX_NBYTES)
    if out is None:
        return decompress(src)
    decompress_into(src, ensure_contiguous_ndarray(out))
    return out


class Blosc(Codec):
    """numcodecs' ``Blosc`` through blosckit.

    ``cname`` (blosclz, lz4, lz4hc, zlib, zstd, snappy), ``clevel`` 0..9,
    ``shuffle`` NOSHUFFLE (0), SHUFFLE (1), BITSHUFFLE (2) or AUTOSHUFFLE
    (-1: bitshuffle for 1-byte items, shuffle otherwise), ``blocksize``
    (bytes, 0 = automatic) and ``typesize`` (bytes; None = the item size of
    the buffer) as numcodecs takes them.  ``encode`` writes what numcodecs'
    Blosc writes single-threaded (``numcodecs.blosc.use_threads = False``, as
    zarr sets it; with threads C-Blosc 1.x stores blocks in the order they
    finish).
    """

    codec_id = "blosckit.blosc"
    NOSHUFFLE = 0
    SHUFFLE = 1
    BITSHUFFLE = 2
    AUTOSHUFFLE = AUTOSHUFFLE
    max_buffer_size = 2**31 - 1

    def __init__(self, cname: str = "lz4", clevel: int = 5, shuffle: int = SHUFFLE,
                 blocksize: int = 0, typesize: int | None = None) -> None:
        self.cname = cname
        self.clevel = clevel
        self.shuffle = shuffle
        self.blocksize = blocksize
        self.typesize = typesize
        # the parameters checked now, not at the first chunk
        compress(b"", **blosc1_args(cname, clevel, shuffle, blocksize, typesize, 1))

    def get_config(self) -> dict[str, Any]:
        """numcodecs' Blosc configuration; ``typesize`` only when set (as
        numcodecs leaves it out)."""
        config = dict(id=self.codec_id, cname=self.cname, clevel=self.clevel,
                      shuffle=self.shuffle, blocksize=self.blocksize)
        if self.typesize is not None:
            config["typesize"] = self.typesize
        return config

    def encode(self, buf) -> bytes:
        """One C-Blosc 1.x chunk of ``buf``."""
        arr = ensure_contiguous_ndarray(buf, self.max_buffer_size)
        args = blosc1_args(self.cname, self.clevel, self.shuffle, self.blocksize,
                           self.typesize, arr.itemsize)
        return compress(arr, **args)

    def decode(self, buf, out=None):
        """Decode any Blosc1 or Blosc2 chunk (into ``out`` when given)."""
        return _decode(buf, out)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(cname={self.cname!r}, clevel={self.clevel}, "
                f"shuffle={_SHUFFLE_NAMES.get(self.shuffle, self.shuffle)}, "
                f"blocksize={self.blocksize}, typesize={self.typesize})")


class Blosc2(Codec):
    """Blosc2 chunks (32-byte header) with python-blosc2's parameters.

    ``codec`` (blosclz, lz4, lz4hc, zlib, zstd; or a ``blosc2.Codec``),
    ``clevel`` 0..9, ``filters`` (names or ``blosc2.Filter`` members, entry
    i in header slot i) with ``filters_meta`` (one int per filter),
    ``typesize`` (bytes; None = the item size of the buffer), ``blocksize``
    (bytes, 0 = automatic) and ``splitmode`` ("always", "never", "auto",
    "forward_compat" or a ``blosc2.SplitMode``).  The defaults are
    python-blosc2's ``CParams``; ``typesize``, ``blocksize`` and
    ``splitmode`` are also imagecodecs' names.  ``encode`` writes what
    ``blosc2.compress2`` writes for the same parameters.
    """

    codec_id = "blosckit.blosc2"
    max_buffer_size = 2**31 - 1 - 32

    def __init__(self, codec: Any = "zstd", clevel: int = 5,
                 filters: Any = (None, None, None, None, None, "shuffle"),
                 filters_meta: Any = None, typesize: int | None = None,
                 blocksize: int = 0, splitmode: Any = "auto") -> None:
        self.codec = codec_name(codec)
        self.clevel = clevel
        names = filters_named(list(filters))
        self.filters = [None if f == "nofilter" else f for f in names]
        self.filters_meta = [0] * len(self.filters) if filters_meta is None else list(filters_meta)
        if len(self.filters_meta) != len(self.filters):
            raise ValueError("filters and filters_meta must have the same length")
        self.typesize = typesize
        self.blocksize = blocksize
        self.splitmode = splitmode_name(splitmode)
        compress(b"", **self._args(8))      # the parameters checked now

    def _args(self, itemsize: int) -> dict[str, Any]:
        """compress's arguments for a buffer of ``itemsize``-byte items."""
        entries = [None if f is None else f if (f == "bytedelta" and m == 0) else (f, m)
                   for f, m in zip(self.filters, self.filters_meta)]
        return dict(codec=self.codec, clevel=self.clevel, filters=tuple(entries),
                    typesize=itemsize if self.typesize is None else self.typesize,
                    blocksize=self.blocksize, splitmode=self.splitmode)

    def get_config(self) -> dict[str, Any]:
        """The parameters as JSON-ready values (names, not enum members)."""
        return dict(id=self.codec_id, codec=self.codec, clevel=self.clevel,
                    filters=list(self.filters), filters_meta=list(self.filters_meta),
                    typesize=self.typesize, blocksize=self.blocksize, splitmode=self.splitmode)

    def encode(self, buf) -> bytes:
        """One Blosc2 chunk of ``buf``."""
        arr = ensure_contiguous_ndarray(buf, self.max_buffer_size)
        return compress(arr, **self._args(arr.itemsize))

    def decode(self, buf, out=None):
        """Decode any Blosc1 or Blosc2 chunk (into ``out`` when given)."""
        return _decode(buf, out)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items() if k != "id")
        return f"{type(self).__name__}({params})"
