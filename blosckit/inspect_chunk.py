"""The inspector: every field of a chunk as a node with its offset.

Nodes are ``(path, offset, size, value, doc)``; the CLI renders them as text
or JSON.  Field names and docs come from the declarations in
:mod:`blosckit.formats.chunk`, so the tree names fields as the spec does.
"""
from __future__ import annotations

import struct
from typing import Any, Iterator, NamedTuple

import construct as cs

from .chunk import _read_info, _view, parse_chunk
from .formats import chunk as fc


class Node(NamedTuple):
    path: str
    offset: int
    size: int        # bytes; 0 for a bit field inside a byte
    value: object
    doc: str


def _walk(con: cs.Struct, obj, path: str, offset: int) -> Iterator[Node]:
    pos = offset
    for sub in con.subcons:
        name = sub.name
        doc = getattr(sub, "docs", "") or ""
        inner = sub.subcon if isinstance(sub, cs.Renamed) else sub
        while isinstance(inner, cs.Renamed):
            inner = inner.subcon
        value: Any = obj.get(name) if obj is not None else None
        if isinstance(inner, cs.IfThenElse):
            if value is None:
                continue
            inner = inner.thensubcon
        if isinstance(inner, cs.Switch):
            inner = inner.cases.get(obj.version, inner.default)
        p = f"{path}.{name}"
        if isinstance(inner, cs.Struct):
            yield Node(p, pos, inner.sizeof(), None, doc)
            yield from _walk(inner, value, p, pos)
            pos += inner.sizeof()
        elif isinstance(inner, cs.Transformed):          # a one-byte BitStruct
            yield Node(p, pos, 1, None, doc)
            bits = inner.subcon
            for bsub in bits.subcons:
                bdoc = getattr(bsub, "docs", "") or ""
                v = value[bsub.name]
                yield Node(f"{p}.{bsub.name}", pos, 0, int(v), bdoc)
            pos += 1
        elif isinstance(inner, cs.Array):
            size = inner.subcon.sizeof()
            for k, v in enumerate(value):
                yield Node(f"{p}[{k}]", pos + k * size, size, v, doc)
            pos += size * len(value)
        else:
            size = inner.sizeof()
            yield Node(p, pos, size, value, doc)
            pos += size


def chunk_nodes(src) -> Iterator[Node]:
    """Nodes for a chunk: header fields, bstarts, dictionary and streams."""
    mv = _view(src)
    c = parse_chunk(mv)
    i = _read_info(mv)
    yield Node("chunk", 0, c.cbytes, None, f"Blosc chunk, format version {c.version}")
    yield from _walk(fc.Header, c.header, "chunk.header", 0)
    for j, b in enumerate(c.bstarts):
        yield Node(f"chunk.bstarts[{j}]", i.overhead + 4 * j, 4, b, "start of block")
    if c.dict is not None:
        ofs = i.overhead + 4 * len(c.bstarts)
        yield Node("chunk.dict.dsize", ofs, 4, len(c.dict), "dictionary size")
        yield Node("chunk.dict.dict", ofs + 4, len(c.dict), f"<{len(c.dict)} bytes>",
                   "dictionary bytes")
    if c.special == "value" and c.value is not None:
        yield Node("chunk.value", fc.LEN_EXTENDED, len(c.value), c.value.hex(),
                   "the repeated value")
    if c.lazy or c.special or c.memcpyed or c.nbytes == 0:
        if c.memcpyed and c.nbytes:
            yield Node("chunk.data", i.overhead, c.nbytes, f"<{c.nbytes} bytes>",
                       "uncompressed data")
        return
    for j, b in enumerate(c.bstarts):
        if c.vlblocks:
            nxt = c.bstarts[j + 1] if j + 1 < len(c.bstarts) else c.cbytes
            size = struct.unpack_from("<i", mv, b)[0]
            yield Node(f"chunk.blocks[{j}].size", b, 4, size, "uncompressed size of the block")
            yield Node(f"chunk.blocks[{j}].payload", b + 4, nxt - b - 4,
                       f"<{nxt - b - 4} bytes>", "codec stream")
            continue
        bsize = c.blocksize if (j < c.nblocks - 1 or c.nbytes % c.blocksize == 0) \
            else c.nbytes % c.blocksize
        nstreams = c.typesize if (c.split and bsize == c.blocksize) else 1
        yield Node(f"chunk.blocks[{j}]", b, 0, None,
                   f"block of {bsize} bytes in {nstreams} stream(s)")
        pos = b
        for k in range(nstreams):
            p = f"chunk.blocks[{j}].streams[{k}]"
            if pos + 4 > c.cbytes:
                return
            csize = struct.unpack_from("<i", mv, pos)[0]
            kind = "raw bytes" if csize == bsize // nstreams else "codec stream"
            if csize <= 0:
                kind = "no payload"
            yield Node(p, pos, 0, None, f"stream {k}: {kind}")
            yield Node(p + ".csize", pos, 4, csize, "payload size")
            pos += 4
            if csize < 0 and c.version >= 4:
                yield Node(p + ".token", pos, 1, mv[pos] if pos < c.cbytes else None,
                           "stream token")
                pos += 1
            elif csize > 0:
                yield Node(p + ".cdata", pos, csize, f"<{csize} bytes>", "stream payload")
                pos += csize
