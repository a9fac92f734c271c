"""A container's dataset or array decoded by blosckit into a NumPy array.

Each stored chunk is decoded by blosckit (a Blosc chunk, a plain frame, or
a b2nd frame whose shape is the chunk's, as the HDF5 Blosc2 filter writes
it), laid out in the chunk's shape and copied into the array, edge chunks
cut to the array's extent; chunks never written are the fill value.  Needs
numpy (the ``hdf5`` extra brings it).
"""
from __future__ import annotations

import math

from ..chunk.read import decompress
from ..errors import FormatError
from ..frame.read import open_frame
from ..formats.frame import looks_like_frame
from .containers import StoredArray, StoredChunk, optional

__all__ = ["read_array", "chunk_items"]


def chunk_items(chunk: StoredChunk) -> bytes:
    """The items of ``chunk`` in C order of its chunk shape, as bytes:
    decoded by blosckit, or as stored for a chunk kept without Blosc."""
    if not chunk.blosc:
        return bytes(chunk.blosc_data)
    data = chunk.blosc_data
    if not looks_like_frame(data):
        return decompress(data)
    with open_frame(bytes(data)) as f:
        return f.b2nd.read() if f.b2nd is not None else f.decompress()


def read_array(a: StoredArray):
    """The dataset or array ``a`` as a NumPy array of its dtype; ValueError
    when it stores its items through something blosckit does not undo."""
    np = optional("numpy", "decoding a dataset or array", "pip install numpy")
    if a.decodable is not None:
        raise ValueError(f"{a.name}: blosckit cannot decode its items: {a.decodable}")
    dtype = np.dtype(a.dtype if not isinstance(a.dtype, list) else [tuple(f) for f in a.dtype])
    out = np.full(a.shape, _fill(np, a.fill, dtype), dtype=dtype)
    want = math.prod(a.chunkshape) * dtype.itemsize
    for chunk in a.chunks():
        if not isinstance(chunk, StoredChunk):
            raise ValueError(f"{chunk.location}: {chunk.message}")
        try:
            raw = chunk_items(chunk)
        except FormatError as e:          # in the container's terms: the file's offsets
            raise type(e)(f"{e.message} (chunk {chunk.location})", e.offset + chunk.offset,
                          e.path, rule=e.rule) from None
        if len(raw) != want:
            raise ValueError(f"{chunk.location}: decodes to {len(raw)} bytes, "
                             f"not the {want} of a chunk of {list(a.chunkshape)}")
        block = np.frombuffer(raw, dtype=dtype).reshape(a.chunkshape)
        where = tuple(slice(c * n, min((c + 1) * n, s))
                      for c, n, s in zip(chunk.coords, a.chunkshape, a.shape))
        out[where] = block[tuple(slice(0, w.stop - w.start) for w in where)]
    return out


def _fill(np, fill, dtype):
    """The fill value in ``dtype`` (zarr writes NaN and infinities as
    strings, a missing fill value as null: zeros)."""
    if fill is None:
        return np.zeros((), dtype=dtype)
    if isinstance(fill, str) and fill in ("NaN", "Infinity", "-Infinity"):
        return float(fill.replace("Infinity", "inf"))
    try:
        return np.asarray(fill).astype(dtype)
    except (TypeError, ValueError):
        return np.zeros((), dtype=dtype)
