"""What blosckit needs to know of the containers that hold Blosc chunks:
the HDF5 filter ids, zarr's codec names, the zarr v3 shard index and its
CRC-32C, and the two rules about them.

specs/containers.md.  The containers' own structures (HDF5's B-trees, zarr's
JSON metadata) are read by h5py and ``json``; only the shard index is a
binary structure of its own, declared here.
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Sequence

import construct as cs

from .rules import Collect, fail, rule
from .signatures import HDF5_MAGIC, hdf5_at

__all__ = ["BLOSC_FILTERS", "FLETCHER32", "BLOSC_CODECS", "CRC32C_CODEC", "SHARDING_CODEC",
           "SHARD_ENTRY", "EMPTY", "crc32c", "blosc_tail", "ShardIndex", "read_shard_index",
           "codec_problems"]

# specs/containers.md#hdf5 -- HDF5 filter ids (the registered ones)
BLOSC_FILTERS = {32001: "Blosc filter (32001)", 32026: "Blosc2 filter (32026)"}
FLETCHER32 = 3                    # appends a 4-byte checksum to the chunk it is given
CHECKSUM_BYTES = 4                # Fletcher32's and crc32c's checksums

# specs/containers.md#zarr -- codec names: zarr v2's compressor ids and zarr
# v3's codec names (numcodecs' own, and blosckit's registered id)
BLOSC_CODECS = frozenset({"blosc", "numcodecs.blosc", "blosckit.blosc"})
CRC32C_CODEC = "crc32c"
SHARDING_CODEC = "sharding_indexed"

# specs/containers.md#hdf5 -- the start of an HDF5 superblock (after the
# signature): its version, then fields up to the sizes of file offsets; the
# end-of-file address (how long the file is, counted from the base address)
# lies after them at a place that depends on the version
HDF5_SUPERBLOCK = cs.Struct(
    "version" / cs.Int8ul * "superblock version 0..3",
    "v01" / cs.If(cs.this.version < 2, cs.Struct(
        "free_space_version" / cs.Int8ul, "root_group_version" / cs.Int8ul,
        "reserved0" / cs.Int8ul, "shared_header_version" / cs.Int8ul,
        "size_of_offsets" / cs.Int8ul, "size_of_lengths" / cs.Int8ul,
        "reserved1" / cs.Int8ul, "leaf_k" / cs.Int16ul, "internal_k" / cs.Int16ul,
        "consistency_flags" / cs.Int32ul,
        "indexed_k" / cs.If(cs.this._.version == 1, cs.Struct(
            "k" / cs.Int16ul, "reserved" / cs.Int16ul)),
        "base_address" / cs.BytesInteger(cs.this.size_of_offsets, swapped=True),
        "free_space_address" / cs.BytesInteger(cs.this.size_of_offsets, swapped=True),
        "eof_address" / cs.BytesInteger(cs.this.size_of_offsets, swapped=True))),
    "v23" / cs.If(cs.this.version >= 2, cs.Struct(
        "size_of_offsets" / cs.Int8ul, "size_of_lengths" / cs.Int8ul,
        "consistency_flags" / cs.Int8ul,
        "base_address" / cs.BytesInteger(cs.this.size_of_offsets, swapped=True),
        "extension_address" / cs.BytesInteger(cs.this.size_of_offsets, swapped=True),
        "eof_address" / cs.BytesInteger(cs.this.size_of_offsets, swapped=True))),
)


# bytes that hold the signature at its last user-block place and the superblock
HDF5_HEAD = (64 << 10) + len(HDF5_MAGIC) + 64


def hdf5_length_holds(head, size: int) -> None:
    """FormatError (T-truncated, at the file's end) when the HDF5 file of
    ``size`` bytes whose first :data:`HDF5_HEAD` bytes are ``head`` is
    shorter than its superblock says."""
    at = hdf5_at(head)
    end = None if at is None else hdf5_declared_end(head, at)
    if end is not None and at + end > size:
        fail("T-truncated", size, "hdf5", f"the input ends at byte {size}, inside the HDF5 "
             f"file (its superblock says it is {at + end} bytes)")


def hdf5_declared_end(src, at: int) -> int | None:
    """Where the HDF5 file whose signature starts at byte ``at`` of ``src``
    ends, as its superblock says (the base address plus the end-of-file
    address; bytes); None when the superblock cannot be read that far."""
    try:
        start = at + len(HDF5_MAGIC)
        sb = HDF5_SUPERBLOCK.parse(bytes(memoryview(src)[start:start + 64]))
    except (cs.ConstructError, ValueError):
        return None
    part = sb.v01 if sb.v01 is not None else sb.v23
    if part is None:
        return None
    return part.base_address + part.eof_address


# specs/containers.md#shard-index -- one entry per inner chunk, C order;
# both fields all ones: the inner chunk is empty (its fill value)
SHARD_ENTRY = cs.Struct(
    "offset" / cs.Int64ul * "where the inner chunk starts in the shard file (bytes)",
    "nbytes" / cs.Int64ul * "the inner chunk's stored length (bytes)",
)
ENTRY_SIZE = SHARD_ENTRY.sizeof()
_ENTRY = struct.Struct("<QQ")
EMPTY = 2 ** 64 - 1


def _crc32c_table() -> tuple[int, ...]:
    """The byte table of CRC-32C (Castagnoli, reflected polynomial 0x82F63B78)."""
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


_CRC32C = _crc32c_table()


def crc32c(data) -> int:
    """CRC-32C of ``data`` (bytes-like), as zarr's ``crc32c`` codec computes
    it.  Table-driven Python: for shard indexes (16 bytes an inner chunk)."""
    c = 0xFFFFFFFF
    for b in bytes(data):
        c = _CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def blosc_tail(after: Sequence[object]) -> int | None:
    """Bytes stored after a chunk's Blosc data, given the filters or codecs
    applied after Blosc (in order): 0 with none, 4 with only a checksum
    (HDF5's Fletcher32, zarr's crc32c), None when another one changes the
    bytes Blosc wrote (the Blosc data cannot be found without undoing it)."""
    if not after:
        return 0
    if len(after) == 1 and after[0] in (FLETCHER32, CRC32C_CODEC):
        return CHECKSUM_BYTES
    return None


@dataclass
class CodecView:
    """The pipeline of one dataset or array as read from its metadata:
    ``after`` the filters or codecs applied after Blosc, ``where`` the path
    of the pipeline (``"hdf5.filters"``, ``"zarr.codecs"``)."""
    after: Sequence[object]
    where: str


@rule("T-container-codec", "warning", "container.codecs[]", "containers.md#rules",
      "a Blosc dataset or array stores its chunks as Blosc wrote them (or with a checksum "
      "after them)")
def blosc_data_reachable(v: CodecView, src, sink) -> None:
    if blosc_tail(v.after) is None:
        names = ", ".join(map(str, v.after))
        sink(f"chunks pass through {names} after Blosc: blosckit does not undo that, so "
             "their Blosc data are not checked", 0, v.where)


def codec_problems(after: Sequence[object], where: str) -> list:
    """The Problems (warnings) of a pipeline whose Blosc data are out of
    reach; ``[]`` when they can be checked."""
    sink = Collect()
    sink.run((blosc_data_reachable,), CodecView(after, where), None)
    return sink.problems


@dataclass
class ShardIndex:
    """A shard file's index as read: ``data`` the shard file, ``nchunks``
    the inner chunks it indexes, ``checksum`` whether a crc32c follows the
    entries, ``at_end`` where the index sits (zarr's ``index_location``)."""
    data: memoryview
    nchunks: int
    checksum: bool
    at_end: bool

    @property
    def size(self) -> int:
        """The index's length in bytes, checksum included."""
        return self.nchunks * ENTRY_SIZE + (CHECKSUM_BYTES if self.checksum else 0)

    @property
    def start(self) -> int:
        """Where the index starts in the shard file."""
        return len(self.data) - self.size if self.at_end else 0

    @property
    def chunks_span(self) -> tuple[int, int]:
        """Where inner chunks may lie: the shard file less its index."""
        return (0, len(self.data) - self.size) if self.at_end else (self.size, len(self.data))


@rule("T-shard-index", "error", "shard.index[]", "containers.md#rules",
      "a shard's index fits the shard file, its crc32c matches, and each entry is empty or "
      "lies in the shard's chunk bytes")
def shard_index_sound(v: ShardIndex, src, sink) -> None:
    if len(v.data) < v.size:
        sink(f"the shard file has {len(v.data)} bytes, less than its index of "
             f"{v.nchunks} entries ({v.size} bytes)", len(v.data), "shard.index")
        return
    start, entries = v.start, v.nchunks * ENTRY_SIZE
    if v.checksum:
        stored = struct.unpack_from("<I", v.data, start + entries)[0]
        actual = crc32c(v.data[start:start + entries])
        if stored != actual:
            sink(f"the index's crc32c is {stored:#010x}, its entries give {actual:#010x}",
                 start + entries, "shard.index.crc32c")
    low, high = v.chunks_span
    for i in range(v.nchunks):
        at = start + i * ENTRY_SIZE
        offset, nbytes = _ENTRY.unpack_from(v.data, at)
        if offset == nbytes == EMPTY:
            continue
        if EMPTY in (offset, nbytes):
            sink(f"entry ({offset}, {nbytes}) is half empty", at, f"shard.index[{i}]")
        elif offset < low or offset + nbytes > high:
            sink(f"inner chunk at {offset}, {nbytes} bytes, lies outside the shard's chunk "
                 f"bytes [{low}, {high})", at, f"shard.index[{i}]")


def read_shard_index(index: ShardIndex) -> tuple[list[tuple[int, int] | None], list]:
    """The entries of a shard index (``(offset, nbytes)``, None for an empty
    inner chunk) and the problems of the index; no entries when it has
    errors."""
    sink = Collect()
    sink.run((shard_index_sound,), index, None)
    if sink.errors:
        return [], sink.problems
    start = index.start
    entries: list[tuple[int, int] | None] = []
    for i in range(index.nchunks):
        offset, nbytes = _ENTRY.unpack_from(index.data, start + i * ENTRY_SIZE)
        entries.append(None if offset == EMPTY else (offset, nbytes))
    return entries, sink.problems


# ---------------------------------------------------------------------------
# zarr metadata (specs/containers.md#zarr)
# ---------------------------------------------------------------------------

V2_ARRAY, V3_METADATA = ".zarray", "zarr.json"


@dataclass
class ZarrArrayMeta:
    """What blosckit reads of a zarr array's metadata.  ``codecs`` is zarr
    v3's list (dicts with ``name`` and ``configuration``); a v2 array is
    given as the same: its ``filters`` and compressor (dicts with ``id``)
    become codecs after a ``bytes`` step, so that one reading serves both.
    ``key_prefix`` and ``separator`` spell chunk keys (``c/2/0``, ``2.0``)."""
    zarr_format: int
    shape: tuple[int, ...]
    chunkshape: tuple[int, ...]
    data_type: object             # v2: numpy's dtype description; v3: the type's name
    fill_value: object
    codecs: list[dict]
    key_prefix: str
    separator: str
    order: str = "C"


@dataclass
class ZarrMetaView:
    """A metadata file being read: ``raw`` its bytes, ``where`` its path in
    the store; ``meta`` the array's metadata once read (None: not an array,
    or unreadable)."""
    raw: bytes
    where: str
    meta: ZarrArrayMeta | None = None


def _ints(v: object, what: str) -> tuple[int, ...]:
    if not isinstance(v, list) or not all(isinstance(x, int) and x >= 0 for x in v):
        raise ValueError(f"{what} is {v!r}, not a list of counts")
    return tuple(v)


def _codec(d: object) -> dict:
    """A v2 filter or compressor (``{"id": ..., ...}``) as a v3 codec."""
    if not isinstance(d, dict) or not isinstance(d.get("id"), str):
        raise ValueError(f"codec {d!r} has no id")
    return {"name": d["id"], "configuration": {k: v for k, v in d.items() if k != "id"}}


def _v2_array(m: dict) -> ZarrArrayMeta:
    filters = m.get("filters") or []
    if not isinstance(filters, list):
        raise ValueError(f"filters is {filters!r}, not a list")
    codecs = [{"name": "bytes"}] + [_codec(f) for f in filters]
    if m.get("compressor") is not None:
        codecs.append(_codec(m["compressor"]))
    return ZarrArrayMeta(2, _ints(m["shape"], "shape"), _ints(m["chunks"], "chunks"),
                         m["dtype"], m.get("fill_value"), codecs, "",
                         m.get("dimension_separator") or ".", m.get("order", "C"))


def _v3_array(m: dict) -> ZarrArrayMeta:
    grid = m["chunk_grid"]
    if grid.get("name") != "regular":
        raise ValueError(f"chunk grid {grid.get('name')!r}: only the regular grid is known")
    enc = m.get("chunk_key_encoding") or {"name": "default"}
    sep = (enc.get("configuration") or {}).get("separator")
    prefix, sep = ("c", sep or "/") if enc.get("name") == "default" else ("", sep or ".")
    codecs = m["codecs"]
    if not isinstance(codecs, list) or not all(isinstance(c, dict) and "name" in c
                                               for c in codecs):
        raise ValueError(f"codecs is {codecs!r}, not a list of codecs")
    return ZarrArrayMeta(3, _ints(m["shape"], "shape"),
                         _ints(grid["configuration"]["chunk_shape"], "chunk_shape"),
                         m["data_type"], m.get("fill_value"), codecs, prefix, sep)


@rule("T-zarr-metadata", "error", "zarr.metadata[]", "containers.md#rules",
      "a zarr array's metadata is JSON with its shape, chunk shape, data type and codecs")
def zarr_metadata_readable(v: ZarrMetaView, src, sink) -> None:
    try:
        m = json.loads(v.raw)
        if not isinstance(m, dict):
            raise ValueError("not a JSON object")
        if v.where.endswith(V3_METADATA):
            if m.get("node_type") != "array":
                return                          # a group
            v.meta = _v3_array(m)
        else:
            v.meta = _v2_array(m)
        if len(v.meta.chunkshape) != len(v.meta.shape) or 0 in v.meta.chunkshape:
            raise ValueError(f"chunk shape {list(v.meta.chunkshape)} does not fit shape "
                             f"{list(v.meta.shape)}")
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        v.meta = None
        what = f"no {e}" if isinstance(e, KeyError) else str(e)
        sink(f"unreadable array metadata: {what}", 0, v.where)


def read_zarr_metadata(raw: bytes, where: str) -> tuple[ZarrArrayMeta | None, list]:
    """The array metadata in ``raw`` (the file ``where``: ``.zarray`` or
    ``zarr.json``), None for a group or unreadable metadata, and its
    problems."""
    v = ZarrMetaView(raw, where)
    sink = Collect()
    sink.run((zarr_metadata_readable,), v, None)
    return v.meta, sink.problems
