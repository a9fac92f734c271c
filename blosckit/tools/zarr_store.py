"""zarr v2 and v3 stores (directories) as containers of Blosc chunks.

Read from the metadata files and the chunk files themselves, without the
zarr library: every array whose codecs hold Blosc is listed, its chunk
files found by their keys (``2.0``, ``2/0``, ``c/2/0``), and for a sharded
array every inner chunk of every shard through the shard's index (its
crc32c checked).  specs/containers.md#zarr.
"""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Iterator

from ..errors import Problem
from ..formats.container import (BLOSC_CODECS, CRC32C_CODEC, SHARDING_CODEC, V2_ARRAY,
                                 V3_METADATA, ShardIndex, ZarrArrayMeta, blosc_tail,
                                 codec_problems, read_shard_index, read_zarr_metadata)
from .containers import ZARR_MARKS, ChunkItem, Container, StoredArray, StoredChunk

__all__ = ["open_zarr", "numpy_dtype"]

_ARRAY_TO_BYTES = ("bytes", SHARDING_CODEC)
_LITTLE = {"bool": "|b1", "int8": "|i1", "uint8": "|u1"}


def open_zarr(root: Path) -> Container:
    """The Blosc arrays of the zarr store at ``root``, in name order, and
    the problems of unreadable array metadata (as arrays with no chunks)."""
    arrays: list[StoredArray] = []
    for here, dirs, _ in os.walk(root):
        dirs.sort()
        d = Path(here)
        rel = d.relative_to(root).as_posix()
        name = "/" if rel == "." else "/" + rel
        meta_file = next((d / m for m in (V3_METADATA, V2_ARRAY) if (d / m).is_file()), None)
        if meta_file is None:
            continue
        meta, problems = read_zarr_metadata(meta_file.read_bytes(),
                                            meta_file.relative_to(root).as_posix())
        problems = _at(problems, name)
        if problems:
            arrays.append(StoredArray(name, (), (), None, None, "?", lambda: iter(()),
                                      problems))
        elif meta is not None:
            dirs[:] = []                # an array's subdirectories hold its chunks
            a = _array(name, d, meta)
            if a is not None:
                arrays.append(a)
    return Container("zarr", root, sorted(arrays, key=lambda a: a.name))


def _at(problems: list[Problem], location: str) -> list[Problem]:
    """``problems`` of an array's metadata or a shard's index, at ``location``."""
    return [replace(p, location=location) for p in problems]


def _split(codecs: list[dict]) -> tuple[list[str], dict | None, list[str]]:
    """A pipeline as (array-to-array names, the array-to-bytes codec,
    bytes-to-bytes names)."""
    names = [c["name"] for c in codecs]
    at = next((i for i, n in enumerate(names) if n in _ARRAY_TO_BYTES), None)
    if at is None:
        return names, None, []
    return names[:at], codecs[at], names[at + 1:]


def _blosc_at(b2b: list[str]) -> int | None:
    """Where Blosc is in the bytes-to-bytes codecs (the last one), or None."""
    found = [i for i, n in enumerate(b2b) if n in BLOSC_CODECS]
    return found[-1] if found else None


def _array(name: str, d: Path, meta: ZarrArrayMeta) -> StoredArray | None:
    """The array at ``d`` when Blosc compresses its chunks (or, sharded,
    its inner chunks)."""
    a2a, a2b, b2b = _split(meta.codecs)
    if a2b is None:
        return None
    sharded = a2b["name"] == SHARDING_CODEC and _blosc_at(b2b) is None
    chunkshape, (a2a_in, a2b_in, b2b_in) = meta.chunkshape, (a2a, a2b, b2b)
    if sharded:
        conf = a2b.get("configuration") or {}
        a2a_in, a2b_in, b2b_in = _split(conf.get("codecs") or [])
        chunkshape = tuple(conf.get("chunk_shape") or ())
        if a2b_in is None or a2b_in["name"] != "bytes" or b2b or len(chunkshape) != len(
                meta.shape) or any(c <= 0 or s % c for s, c in zip(meta.chunkshape, chunkshape)):
            return None                 # nested sharding, or nothing blosckit knows
    at = _blosc_at(b2b_in)
    if at is None:
        return None
    after = b2b_in[at + 1:]
    where = f"{V3_METADATA if meta.zarr_format == 3 else V2_ARRAY}:codecs"
    problems = _at(codec_problems(after, where), name)
    a = StoredArray(name, meta.shape, chunkshape, numpy_dtype(meta, a2b_in), meta.fill_value,
                    f"zarr v{meta.zarr_format} {b2b_in[at]}" + (" (sharded)" if sharded else ""),
                    lambda: iter(()), problems)
    why = ([f"array-to-array codecs {a2a_in + a2a}"] if a2a_in or (sharded and a2a) else []) \
        + ([f"codecs {b2b_in[:at]} before Blosc"] if b2b_in[:at] else []) \
        + (["items in F order"] if meta.order != "C" else [])
    a.decodable = "; ".join(why) + " (read the array with zarr)" if why else None
    if problems:
        a.decodable = problems[0].message
        return a
    tail = blosc_tail(after) or 0
    if sharded:
        a.chunks = lambda: _shard_chunks(a, d, meta, a2b, tail)
    else:
        a.chunks = lambda: _plain_chunks(a, d, meta, tail)
    return a


def numpy_dtype(meta: ZarrArrayMeta, bytes_codec: dict | None) -> object:
    """numpy's description of the items: v2's as stored, v3's data type
    name with the ``bytes`` codec's byte order (``"<f4"``)."""
    if meta.zarr_format == 2:
        return meta.data_type
    t = meta.data_type
    if not isinstance(t, str):
        return str(t)
    endian = ((bytes_codec or {}).get("configuration") or {}).get("endian", "little")
    order = ">" if endian == "big" else "<"
    if t in _LITTLE:
        return _LITTLE[t]
    for prefix, code in (("uint", "u"), ("int", "i"), ("float", "f"), ("complex", "c")):
        if t.startswith(prefix) and t[len(prefix):].isdigit():
            return f"{order}{code}{int(t[len(prefix):]) // 8}"
    if t.startswith("r") and t[1:].isdigit():
        return f"|V{int(t[1:]) // 8}"
    return t


def _grid(meta: ZarrArrayMeta, chunkshape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(-(-s // c) for s, c in zip(meta.shape, chunkshape))


def _keys(d: Path, meta: ZarrArrayMeta, chunkshape: tuple[int, ...]
          ) -> list[tuple[tuple[int, ...], Path]]:
    """The chunk (or shard) files under ``d`` with their grid coordinates,
    in coordinate order; other files are left out."""
    grid, ndim = _grid(meta, chunkshape), len(meta.shape)
    found = []
    for here, _, files in os.walk(d):
        for f in files:
            if f in ZARR_MARKS or f == ".zattrs":
                continue
            p = Path(here) / f
            key = p.relative_to(d).as_posix()
            if meta.separator != "/" and "/" in key:
                continue
            parts = key.split(meta.separator) if key else []
            if meta.key_prefix:
                if not parts or parts[0] != meta.key_prefix:
                    continue
                parts = parts[1:]
            elif ndim == 0:
                parts = [] if parts == ["0"] else ["x"]
            if len(parts) != ndim or not all(x.isdigit() for x in parts):
                continue
            coords = tuple(map(int, parts))
            if all(c < g for c, g in zip(coords, grid)):
                found.append((coords, p))
    return sorted(found)


def _plain_chunks(a: StoredArray, d: Path, meta: ZarrArrayMeta, tail: int
                  ) -> Iterator[ChunkItem]:
    for coords, p in _keys(d, meta, a.chunkshape):
        yield StoredChunk(a.location(coords), coords, p, 0, memoryview(p.read_bytes()),
                          tail=tail)


def _shard_chunks(a: StoredArray, d: Path, meta: ZarrArrayMeta, sharding: dict, tail: int
                  ) -> Iterator[ChunkItem]:
    """Every inner chunk of every shard, located by the shard's index."""
    conf = sharding.get("configuration") or {}
    per_shard = tuple(s // c for s, c in zip(meta.chunkshape, a.chunkshape))
    checksum = any(c.get("name") == CRC32C_CODEC for c in conf.get("index_codecs") or [])
    at_end = conf.get("index_location", "end") == "end"
    n = 1
    for k in per_shard:
        n *= k
    for shard, p in _keys(d, meta, meta.chunkshape):
        data = memoryview(p.read_bytes())
        entries, problems = read_shard_index(ShardIndex(data, n, checksum, at_end))
        where = f"{a.name.rstrip('/')}/{p.relative_to(d).as_posix()}"
        yield from _at(problems, where)
        for j, e in enumerate(entries):
            if e is None:
                continue
            local = _unravel(j, per_shard)
            coords = tuple(s * k + x for s, k, x in zip(shard, per_shard, local))
            yield StoredChunk(a.location(coords), coords, p, e[0], data[e[0]:e[0] + e[1]],
                              tail=tail)


def _unravel(j: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The C-order coordinates of flat index ``j`` in ``shape``."""
    out = []
    for k in reversed(shape):
        j, r = divmod(j, k)
        out.append(r)
    return tuple(reversed(out))
