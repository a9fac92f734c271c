"""A Blosc2 frame shown to zarr as a zarr v3 array (specs/frame.md#zarr-array).

:class:`FrameStore` is a read-only zarr v3 store over one frame: its
``zarr.json`` is made from the frame header and the ``b2nd`` metalayer, and
each chunk key is answered with that chunk's bytes as the frame stores them
(a special entry as the equivalent special chunk).  The array's one
array-to-bytes codec, :class:`B2ndCodec` (``"blosckit.b2nd"``), decodes such a
chunk with blosckit and puts its blocks back in their places.  zarr and NumPy
are needed here only: ``import blosckit`` imports neither.
"""
from __future__ import annotations

import json
import math
import os
import sys
import warnings
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

try:
    import numpy as np
    from zarr.abc.codec import ArrayBytesCodec
    from zarr.abc.store import (ByteRequest, OffsetByteRequest, RangeByteRequest, Store,
                                SuffixByteRequest)
    from zarr.core.buffer import Buffer, BufferPrototype, NDBuffer, default_buffer_prototype
    from zarr.dtype import parse_dtype
    from zarr.registry import register_codec
except ImportError as e:             # the optional extra, named in the message
    raise ImportError(f"blosckit.zarr needs zarr 3 and NumPy: pip install 'blosckit[zarr]' "
                      f"({e})") from None

from ..chunk.read import chunk_sizes, decompress_into
from ..errors import FormatError, Problem
from ..formats import b2nd as fb
from ..formats import chunk as fc
from ..frame.b2nd import chunk_items
from ..frame.edit import open_frame
from ..frame.read import Frame

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec

__all__ = ["FrameStore", "B2ndCodec", "frame_metadata"]

CODEC_NAME = "blosckit.b2nd"
METADATA_KEY = "zarr.json"
# zarr's default chunk key encoding ("c/1/2", "c" for a 0-d array)
CHUNK_PREFIX = "c"

# the dtype a plain frame's items are shown as, by typesize (bytes); any
# other typesize is shown as raw bytes ("|V<typesize>", zarr's raw_bytes)
PLAIN_DTYPES = {1: "|u1", 2: "<u2", 4: "<u4", 8: "<u8"}


def _byte_order(dtype) -> str | None:
    """The byte order of ``dtype``'s multi-byte numbers ("little", "big"),
    None when it has none (bytes, single-byte items); ValueError when the
    fields of a record type mix the two (zarr keeps one per array)."""
    orders = set()

    def walk(dt) -> None:
        if dt.fields is not None:
            for sub, *_ in dt.fields.values():
                walk(sub)
        elif dt.subdtype is not None:
            walk(dt.subdtype[0])
        elif dt.byteorder in "<>=" and dt.itemsize > 1 and dt.kind not in "SUV":
            bo = dt.byteorder if dt.byteorder != "=" else ("<" if sys.byteorder == "little"
                                                             else ">")
            orders.add("little" if bo == "<" else "big")
        elif dt.kind == "U":
            orders.add("little" if dt.byteorder in "<=" and sys.byteorder == "little"
                       or dt.byteorder == "<" else "big")

    walk(dtype)
    if len(orders) > 1:
        raise ValueError(f"the fields of {dtype} mix byte orders: a zarr array has one")
    return orders.pop() if orders else None


def _raise_first_error(problems: Iterable[Problem]) -> None:
    """The first error among the validator's ``problems``, raised as the
    reader raises it (warnings do not stop a read)."""
    for p in problems:
        if p.severity == "error":
            raise FormatError(p.message, p.offset, p.path, rule=p.rule)


@dataclass(frozen=True)
class _Plan:
    """How a frame is shown to zarr: the array's ``shape`` and ``chunk_shape``
    (items), its NumPy ``dtype``, the stored ``block_shape`` (None for a
    plain frame, whose chunks are items in order) and the chunk grid."""
    shape: tuple[int, ...]
    chunk_shape: tuple[int, ...]
    block_shape: tuple[int, ...] | None
    dtype: Any
    grid: tuple[int, ...]


def _plan(frame: Frame) -> _Plan:
    """The array a frame shows: the b2nd metalayer's, or for a plain frame
    a 1-D array of its items.  FormatError when the b2nd metalayer is at
    fault (F-b2nd, F-b2nd-dtype, V21); ValueError for a frame no regular
    zarr chunk grid can show (chunks of varying size)."""
    b = frame.b2nd
    if b is not None:
        _raise_first_error([*b.grid_problems(), *b.dtype_problems()])
        dtype = b.numpy_dtype()
        return _Plan(b.shape, b.chunkshape, b.blockshape, dtype,
                     tuple(fb.chunk_grid(b.shape, b.chunkshape)))
    if frame.variable_size:
        raise ValueError("the frame's chunks vary in size (chunksize 0): no regular zarr "
                         "chunk grid shows them")
    ts = frame.typesize
    # items that do not divide the data or a chunk: shown as bytes
    if frame.nbytes % ts or frame.chunksize % ts:
        ts = 1
    dtype = np.dtype(PLAIN_DTYPES.get(ts, f"|V{ts}"))
    per_chunk = frame.chunksize // ts if frame.chunksize > 0 else 1
    return _Plan((frame.nbytes // ts,), (per_chunk,), None, dtype, (frame.nchunks,))


def frame_metadata(frame: Frame) -> dict[str, Any]:
    """The ``zarr.json`` (a dict) of the array ``frame`` shows: shape, chunk
    shape and dtype from the ``b2nd`` metalayer (for a plain frame: its
    items, see specs/frame.md#zarr-array), the item of zero bytes as fill value, zarr's
    default chunk keys and the one codec :class:`B2ndCodec`."""
    return _metadata(_plan(frame))


def _metadata(plan: _Plan) -> dict[str, Any]:
    with warnings.catch_warnings():
        # zarr's warning that |S, <U and record types have no v3 spec yet:
        # zarr gives it again when it reads this metadata
        warnings.simplefilter("ignore")
        zdtype = parse_dtype(plan.dtype, zarr_format=3)
    config: dict[str, Any] = {"chunk_shape": list(plan.chunk_shape)}
    if plan.block_shape is not None:
        config["block_shape"] = list(plan.block_shape)
    endian = _byte_order(plan.dtype)
    if endian is not None:
        config["endian"] = endian
    return {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(plan.shape),
        "data_type": zdtype.to_json(zarr_format=3),
        "chunk_grid": {"name": "regular",
                       "configuration": {"chunk_shape": list(plan.chunk_shape)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        # the item of zero bytes: what python-blosc2 pads with and a zeros
        # special chunk holds (zarr's own default fails for some record types)
        "fill_value": zdtype.to_json_scalar(np.zeros((), plan.dtype)[()], zarr_format=3),
        "codecs": [{"name": CODEC_NAME, "configuration": config}],
        "attributes": {},
        "storage_transformers": [],
    }


class FrameStore(Store):
    """A read-only zarr v3 store showing the frame at ``path`` (a contiguous
    frame file, a sparse frame directory, or the frame's bytes) as one zarr
    array at the store's root::

        zarr.open_array(FrameStore("x.b2nd"))[...]

    Keys: ``zarr.json`` and one per chunk (``c/i/j/...``, the chunk's grid
    coordinates); a chunk key is answered with the chunk as the frame stores
    it.  Only the header, the metalayers and the offsets index are read when
    the store is made; a chunk when zarr asks for it.  Every write raises
    ``PermissionError``.  Picklable (for dask's processes): a store of a
    path is reopened from it, one of bytes carries a copy of them."""

    supports_writes = False
    supports_deletes = False
    supports_listing = True

    def __init__(self, path, *, read_only: bool = True) -> None:
        if not read_only:
            raise PermissionError("FrameStore is read-only: zarr reads a frame through it, "
                                  "never writes one")
        super().__init__(read_only=True)
        self.path = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
        self._load(path)

    def _load(self, src) -> None:
        self.frame = open_frame(src)
        # the offsets index read now, once: zarr asks for chunks from threads
        self.frame.entries
        self.plan = _plan(self.frame)
        self._strides = [math.prod(self.plan.grid[d + 1:]) for d in range(len(self.plan.grid))]
        self._metadata = json.dumps(_metadata(self.plan)).encode()

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "source": None if self.path else bytes(self.frame.buffer)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        Store.__init__(self, read_only=True)
        self.path = state["path"]
        self._load(self.path if self.path is not None else state["source"])

    def __eq__(self, other: object) -> bool:
        # stores of the same file are equal; one made from bytes, only to itself
        return other is self or isinstance(other, FrameStore) and self.path is not None \
            and other.path == self.path

    def __hash__(self) -> int:
        return hash((FrameStore, self.path if self.path is not None else id(self)))

    def __repr__(self) -> str:
        return f"FrameStore({self.path!r})" if self.path else "FrameStore(<bytes>)"

    def with_read_only(self, read_only: bool = False) -> FrameStore:
        if not read_only:
            raise PermissionError("FrameStore is read-only: it cannot be made writable")
        return self

    def close(self) -> None:
        super().close()
        self.frame.close()

    # -- keys
    def chunk_index(self, key: str) -> int | None:
        """The frame chunk key ``key`` names (C order over the chunk grid),
        None when it names none."""
        parts = key.split("/")
        if parts[0] != CHUNK_PREFIX or len(parts) != len(self.plan.grid) + 1:
            return None
        try:
            coords = [int(p) for p in parts[1:]]
        except ValueError:
            return None
        if any(not 0 <= c < n or str(c) != p
               for c, n, p in zip(coords, self.plan.grid, parts[1:])):
            return None
        return sum(c * s for c, s in zip(coords, self._strides))

    def chunk_bytes(self, ci: int) -> bytes:
        """Chunk ``ci`` as the frame stores it (a special entry as the
        equivalent special chunk), checked first by its header to hold the
        frame's chunk size (F-chunk) and, in an array frame, blocks of the
        array's block size (F-b2nd): FormatError at its place in the frame."""
        e, view = self.frame.locate(ci)
        if view is None:
            return self.frame.chunk(ci)
        try:
            nbytes, _, _ = chunk_sizes(view)
        except FormatError as err:
            raise err.relocated(e.start, e.chunk_path) from None
        self.frame.check_nbytes(e, nbytes)
        b = self.frame.b2nd
        if b is not None:
            _raise_first_error(b.chunk_problems(ci, nbytes))
        return bytes(view)

    def _keys(self) -> Iterator[str]:
        yield METADATA_KEY
        for coords in np.ndindex(*self.plan.grid):
            yield "/".join([CHUNK_PREFIX, *map(str, coords)])

    # -- reading
    async def get(self, key: str, prototype: BufferPrototype | None = None,
                  byte_range: ByteRequest | None = None) -> Buffer | None:
        """The value of ``key`` (None when the store has no such key), the
        bytes ``byte_range`` asks for only when given."""
        if key == METADATA_KEY:
            value: bytes = self._metadata
        else:
            ci = self.chunk_index(key)
            if ci is None:
                return None
            value = self.chunk_bytes(ci)
        prototype = prototype or default_buffer_prototype()
        return prototype.buffer.from_bytes(_cut(value, byte_range))

    async def get_partial_values(self, prototype: BufferPrototype,
                                 key_ranges: Iterable[tuple[str, ByteRequest | None]]
                                 ) -> list[Buffer | None]:
        return [await self.get(k, prototype, r) for k, r in key_ranges]

    async def exists(self, key: str) -> bool:
        return key == METADATA_KEY or self.chunk_index(key) is not None

    async def list(self) -> AsyncIterator[str]:
        for key in self._keys():
            yield key

    async def list_prefix(self, prefix: str) -> AsyncIterator[str]:
        for key in self._keys():
            if key.startswith(prefix):
                yield key

    async def list_dir(self, prefix: str) -> AsyncIterator[str]:
        prefix = prefix.rstrip("/")
        prefix = prefix + "/" if prefix else ""
        seen = set()
        for key in self._keys():
            if key.startswith(prefix):
                child = key[len(prefix):].split("/", 1)[0]
                if child not in seen:
                    seen.add(child)
                    yield child

    async def getsize(self, key: str) -> int:
        if key == METADATA_KEY:
            return len(self._metadata)
        ci = self.chunk_index(key)
        if ci is None:
            raise FileNotFoundError(key)
        return len(self.frame.chunk(ci))

    # -- writing: refused
    def _refuse(self, what: str) -> NoReturn:
        raise PermissionError(f"FrameStore is read-only: cannot {what} {self!r} "
                              "(the frame is changed with blosckit's frame editor)")

    async def set(self, key: str, value: Buffer) -> None:
        self._refuse(f"set {key!r} in")

    async def set_if_not_exists(self, key: str, value: Buffer) -> None:
        self._refuse(f"set {key!r} in")

    async def delete(self, key: str) -> None:
        self._refuse(f"delete {key!r} from")

    async def delete_dir(self, prefix: str) -> None:
        self._refuse(f"delete {prefix!r} from")

    async def clear(self) -> None:
        self._refuse("clear")


def _cut(value: bytes, byte_range: ByteRequest | None) -> bytes:
    """The part of ``value`` a zarr byte request asks for."""
    if byte_range is None:
        return value
    if isinstance(byte_range, RangeByteRequest):
        return value[byte_range.start:byte_range.end]
    if isinstance(byte_range, OffsetByteRequest):
        return value[byte_range.offset:]
    if isinstance(byte_range, SuffixByteRequest):
        return value[max(0, len(value) - byte_range.suffix):]
    raise TypeError(f"unknown byte request {byte_range!r}")


@dataclass(frozen=True)
class B2ndCodec(ArrayBytesCodec):
    """zarr's array-to-bytes codec ``"blosckit.b2nd"`` for a frame's chunks:
    a Blosc chunk (any version blosckit reads) holding ``chunk_shape`` items
    (per dimension) padded up to whole blocks of ``block_shape`` items, stored
    one block after another in C order (specs/frame.md#the-b2nd-metalayer);
    without ``block_shape`` (a plain frame), the items in order, the last
    chunk of a frame possibly short.  ``endian``: the byte order of the
    stored numbers (``"little"``/``"big"``; None for items of single bytes).
    Decoding only: a frame is written with blosckit or python-blosc2."""

    is_fixed_size = False

    chunk_shape: tuple[int, ...]
    block_shape: tuple[int, ...] | None = None
    endian: str | None = None

    def __init__(self, *, chunk_shape: Iterable[int], block_shape: Iterable[int] | None = None,
                 endian: str | None = None) -> None:
        if endian not in (None, "little", "big"):
            raise ValueError(f"endian must be 'little' or 'big', not {endian!r}")
        object.__setattr__(self, "chunk_shape", tuple(int(x) for x in chunk_shape))
        object.__setattr__(self, "block_shape",
                           None if block_shape is None else tuple(int(x) for x in block_shape))
        object.__setattr__(self, "endian", endian)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        if data.get("name") != CODEC_NAME:
            raise ValueError(f"not a {CODEC_NAME} codec: {data!r}")
        return cls(**data.get("configuration", {}))

    def to_dict(self) -> dict[str, Any]:
        config: dict[str, Any] = {"chunk_shape": list(self.chunk_shape)}
        if self.block_shape is not None:
            config["block_shape"] = list(self.block_shape)
        if self.endian is not None:
            config["endian"] = self.endian
        return {"name": CODEC_NAME, "configuration": config}

    def validate(self, *, shape, dtype, chunk_grid) -> None:
        chunks = tuple(getattr(chunk_grid, "chunk_shape", ()))
        if chunks != self.chunk_shape:
            raise ValueError(f"{CODEC_NAME}: the chunk grid's chunks {chunks} are not the "
                             f"codec's {self.chunk_shape}")

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        raise NotImplementedError(f"{CODEC_NAME} chunks are compressed: their size varies")

    def _stored_dtype(self, chunk_spec: ArraySpec):
        dtype = chunk_spec.dtype.to_native_dtype()
        if self.endian is not None:
            dtype = dtype.newbyteorder("<" if self.endian == "little" else ">")
        return dtype

    def decode_chunk(self, chunk: bytes | memoryview, shape: tuple[int, ...], dtype):
        """The items of ``chunk`` (a stored chunk) as a NumPy array of
        ``shape`` and the stored ``dtype``: decoded, its blocks put back
        (:func:`blosckit.frame.b2nd.chunk_items`), the padding cut off.
        FormatError (F-b2nd) when the chunk holds another number of bytes
        than its items need."""
        nbytes, _, _ = chunk_sizes(chunk)
        items = math.prod(self.chunk_shape)
        if self.block_shape is not None:
            want = fb.padded_items(self.chunk_shape, self.block_shape) * dtype.itemsize
            fits, rule = nbytes == want, "F-b2nd"
        else:
            # a plain frame's last chunk may hold fewer items
            want = items * dtype.itemsize
            fits, rule = 0 < nbytes <= want and nbytes % dtype.itemsize == 0, "F-chunk"
        if not fits:
            raise FormatError(f"the chunk decodes to {nbytes} bytes, a chunk of "
                              f"{self.chunk_shape} items of {dtype.itemsize} bytes "
                              f"{'padded to whole blocks ' if self.block_shape else ''}"
                              f"takes {want}", fc.HEADER.offset("nbytes"),
                              "chunk.header.nbytes", rule=rule)
        out = np.zeros(want, np.uint8)
        if nbytes:
            decompress_into(chunk, out)
        if self.block_shape is None:
            # a plain frame's short last chunk: zeros after its items
            return out.view(dtype)[:items].reshape(shape)
        padded = chunk_items(out, self.chunk_shape, self.block_shape, dtype)
        return padded[tuple(slice(0, n) for n in self.chunk_shape)].reshape(shape)

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        arr = self.decode_chunk(chunk_bytes.as_numpy_array(), tuple(chunk_spec.shape),
                                self._stored_dtype(chunk_spec))
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(arr)

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        raise PermissionError(f"{CODEC_NAME} is read-only: it decodes a frame's chunks, "
                              "frames are written with blosckit.compress_b2nd or python-blosc2")


register_codec(CODEC_NAME, B2ndCodec)
