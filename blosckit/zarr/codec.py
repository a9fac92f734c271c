"""zarr v3's ``blosc`` codec through blosckit.

The class keeps zarr's own ``BloscCodec`` metadata (the same JSON, the same
parsing and defaults, the same typesize/shuffle tuning from the array's
dtype) and replaces its data path: chunks are decoded by blosckit's reader
and encoded by blosckit into the bytes numcodecs' Blosc writes.  It is
registered under zarr's ``zarr.codecs`` entry-point group as "blosc" and
chosen with ``zarr.config.set({"codecs.blosc": "blosckit.zarr.BloscCodec"})``.
specs/ecosystem.md gives the mapping of the configuration to the chunk.
"""
from __future__ import annotations

try:
    import numpy as np
    from zarr.codecs import BloscCodec as _ZarrBloscCodec
except ImportError as e:            # pragma: no cover - depends on the install
    raise ImportError("blosckit.zarr needs zarr >= 3: pip install 'blosckit[zarr]'") from e

from ..chunk.conventions import blosc1_args
from ..chunk.encode import compress
from ..chunk.read import chunk_sizes, decompress_into

__all__ = ["BloscCodec"]

# zarr v3 names numcodecs' shuffle constants
_SHUFFLES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}


class BloscCodec(_ZarrBloscCodec):
    """zarr's ``BloscCodec`` (configuration ``typesize``, ``cname``,
    ``clevel``, ``shuffle``, ``blocksize``) reading and writing through
    blosckit."""

    def _decode_sync(self, chunk_bytes, chunk_spec):
        src = chunk_bytes.as_numpy_array()
        out = np.empty(chunk_sizes(src)[0], dtype=np.uint8)
        decompress_into(src, out)
        return chunk_spec.prototype.buffer.from_array_like(out)

    def _encode_sync(self, chunk_bytes, chunk_spec):
        args = blosc1_args(self.cname.value, self.clevel, _SHUFFLES[self.shuffle.value],
                           self.blocksize, self.typesize, 1)
        return chunk_spec.prototype.buffer.from_bytes(
            compress(chunk_bytes.as_numpy_array(), **args))


# zarr's registry keys an implementation by its module and name: the public
# path is the one users put in zarr.config
BloscCodec.__module__ = __name__.rpartition(".")[0]
