"""The inspector: every field of a chunk as a node with its offset.

Nodes are ``(path, offset, size, value, doc, bit)``; the CLI renders them as
text or JSON.  Every structure is read through its declaration in
:mod:`blosckit.formats.chunk` (``formats.parse`` and ``formats.walk``), and
the chunk's layout comes from the public :func:`blosckit.parse_chunk`, so
the tree names fields as the spec does and agrees with the reader.
"""
from __future__ import annotations

from typing import Iterator, NamedTuple

from .chunk import Chunk, parse_chunk
from .errors import FormatError
from .formats import chunk as fc
from .formats import parse, walk


class Node(NamedTuple):
    path: str
    offset: int
    size: int        # bytes; 0 for a bit field inside a byte
    value: object
    doc: str
    bit: tuple[int, int] | None = None    # (first bit, width) of a bit field


def _nodes(con, obj, path: str, offset: int) -> Iterator[Node]:
    for p, ofs, size, value, doc, bit in walk(con, obj, path, offset, fc.switch_case):
        if isinstance(value, (bytes, bytearray)):
            value = f"<{len(value)} bytes>"
        yield Node(p, ofs, size, value, doc, bit)


def chunk_nodes(src) -> Iterator[Node]:
    """Nodes for a chunk: header fields, bstarts, dictionary and streams.
    Raises FormatError where the chunk stops making sense (after yielding
    everything before that point)."""
    mv = memoryview(src).cast("B") if not isinstance(src, bytes) else memoryview(src)
    c = parse_chunk(mv)
    overhead = fc.LEN_EXTENDED if c.extended else fc.LEN_HEADER
    yield Node("chunk", 0, c.cbytes, None, f"Blosc chunk, format version {c.version}")
    yield Node("chunk.header", 0, overhead, None, "header")
    yield from _nodes(fc.Header, c.header, "chunk.header", 0)
    if c.bstarts:
        bst = parse(fc.Bstarts, mv, overhead, "chunk.bstarts", rule="D6",
                    num_blocks=len(c.bstarts))
        for j, b in enumerate(bst):
            yield Node(f"chunk.bstarts[{j}]", overhead + fc.LEN_BSTART * j, fc.LEN_BSTART, b,
                       "start of block")
    ofs = overhead + fc.LEN_BSTART * len(c.bstarts)
    if c.dict is not None:
        d = parse(fc.DictSection, mv, ofs, "chunk.dict", rule="D9")
        yield Node("chunk.dict", ofs, c.ofs_streams - ofs, None, "dictionary section")
        yield from _nodes(fc.DictSection, d, "chunk.dict", ofs)
    if c.special == "value" and c.value is not None:
        yield Node("chunk.value", fc.LEN_EXTENDED, len(c.value), c.value.hex(),
                   "the repeated value")
    if c.lazy:
        t = parse(fc.LazyTrailer, mv, ofs, "chunk.lazy_trailer", rule="T-lazy",
                  num_blocks=len(c.bstarts))
        yield Node("chunk.lazy_trailer", ofs, fc.LazyTrailer.sizeof(num_blocks=len(c.bstarts)),
                   None, "trailer of an in-memory lazy chunk")
        yield from _nodes(fc.LazyTrailer, t, "chunk.lazy_trailer", ofs)
        return
    if c.special or c.memcpyed or c.nbytes == 0:
        if c.memcpyed and c.nbytes:
            yield Node("chunk.data", overhead, c.nbytes, f"<{c.nbytes} bytes>",
                       "uncompressed data")
        return
    for j, b in enumerate(c.bstarts):
        if c.vlblocks:
            yield from _vl_block(mv, c, j, b)
        else:
            yield from _block(mv, c, j, b)


def _block_shape(c: Chunk, j: int) -> tuple[int, int]:
    """``(block size, number of streams)`` of block ``j``, as a decoder sees it."""
    bs = min(c.blocksize, c.nbytes)
    rest = c.nbytes % bs
    size = rest if (j == c.nblocks - 1 and rest) else bs
    return size, (c.typesize if (c.split and size == bs) else 1)


def _block(mv: memoryview, c: Chunk, j: int, b: int) -> Iterator[Node]:
    bsize, nstreams = _block_shape(c, j)
    path = f"chunk.blocks[{j}]"
    yield Node(path, b, 0, None, f"block of {bsize} bytes in {nstreams} stream(s)")
    pos = b
    for k in range(nstreams):
        p = f"{path}.streams[{k}]"
        s = parse(fc.Stream, mv[:c.cbytes], pos, p, rule="B4", version=c.version)
        size = fc.LEN_CSIZE + (fc.LEN_TOKEN if s.token is not None else 0) + max(s.csize, 0)
        kind = ("all zeros" if s.csize == 0 else "byte run" if s.csize < 0 else
                "raw bytes" if s.csize == bsize // nstreams else "codec stream")
        yield Node(p, pos, size, None, f"stream {k}: {kind}")
        yield from _nodes(fc.Stream, s, p, pos)
        pos += size


def _vl_block(mv: memoryview, c: Chunk, j: int, b: int) -> Iterator[Node]:
    nxt = c.bstarts[j + 1] if j + 1 < len(c.bstarts) else c.cbytes
    path = f"chunk.blocks[{j}]"
    plen = nxt - b - fc.FAST_VLSIZE.size
    if plen < 0:
        raise FormatError("VL block runs past the next block", b, path, rule="VL3")
    blk = parse(fc.VLBlock, mv[:c.cbytes], b, path, rule="VL3", len_payload=plen)
    yield Node(path, b, nxt - b, None, f"VL block of {blk.size} bytes")
    yield from _nodes(fc.VLBlock, blk, path, b)
