"""VL-block chunks: version-6 chunks of variable-length blocks, one stream
each, as C-Blosc2's ``blosc2_vlcompress_ctx`` writes them
(specs/encoder.md#vl-blocks)."""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from .encode import byte_view, filtered
from .header import header
from .plan import LEN_BLOSC2, Plan, filter_entries, get_plan
from ..formats import chunk as fc

__all__ = ["compress_vlblocks"]

_VLSIZE = fc.FAST_VLSIZE
_LEN_VLSIZE = _VLSIZE.size


def compress_vlblocks(blocks: Iterable, *, typesize: int | None = None,
                      codec: str = "blosclz", clevel: int = 5, filters=("shuffle",)) -> bytes:
    """A version-6 chunk with one variable-length block per entry of
    ``blocks`` (each at least one byte), as C-Blosc2's
    ``blosc2_vlcompress_ctx`` writes it.  ``typesize`` (bytes per item) None
    takes the item size the blocks' buffers share (1 when they differ: the
    bytes of each); an explicit value wins."""
    views, typesize = _block_views(blocks, typesize)
    _refuse_delta(filters)
    plan = _vl_plan(views, typesize, codec, clevel, filters)
    pos = plan.overhead + fc.LEN_BSTART * plan.nblocks
    starts, pieces = [], []
    for v in views:
        piece = _vl_block(plan, v, pos)
        starts.append(pos)
        pieces.append(piece)
        pos += len(piece)
    return b"".join([header(plan, pos, memcpyed=False), fc.fast_bstarts(len(starts)).pack(*starts),
                     *pieces])


def _block_views(blocks: Iterable, typesize: int | None) -> tuple[list[memoryview], int]:
    """The blocks as byte views, and the typesize (given, or their buffers'
    shared item size; 1, API.md's default, when their item sizes differ)."""
    pairs = [byte_view(b) for b in blocks]
    views = [v for v, _ in pairs]
    if not views:
        raise ValueError("at least one block is needed")
    if typesize is None:
        sizes = {size for _, size in pairs}
        typesize = sizes.pop() if len(sizes) == 1 else 1
    if any(len(v) == 0 for v in views):
        raise ValueError("every VL block needs at least one byte")
    return views, typesize


def _refuse_delta(filters) -> None:
    names = [e if isinstance(e, str) else (e[0] if isinstance(e, (tuple, list)) and e else None)
             for e in filter_entries(filters)]
    if "delta" in names:
        raise ValueError("delta in a VL-block chunk: C-Blosc2 cannot read it back "
                         "(see specs/encoder.md#vl-blocks)")


def _vl_plan(views: list[memoryview], typesize: int, codec: str, clevel: int, filters) -> Plan:
    """The plan of a regular chunk of the same input, turned into one block
    per view, never split nor stored raw as a whole."""
    total = sum(len(v) for v in views)
    n = len(views)
    plan = get_plan(total, typesize, codec, clevel, filters, 0, "never", False, "blosc2", 1)
    return replace(plan, memcpyed=False, split=False, nblocks=n, header_blocksize=n,
                   destsize=total + LEN_BLOSC2 * (n + 1) + 64, vl_blocks=True)


def _vl_block(plan: Plan, v: memoryview, pos: int) -> bytes | memoryview:
    """Block ``v`` stored at ``pos``: its size, then its coded stream, or its
    filtered bytes raw when the codec does not shrink them (or clevel 0, as
    for regular chunks)."""
    data = filtered(plan, v, 0, v)
    n = len(v)
    maxout = min(n, plan.destsize - pos - _LEN_VLSIZE)
    buf = bytearray(_LEN_VLSIZE + max(maxout, 0))
    _VLSIZE.pack_into(buf, 0, n)
    cbytes = plan.codec.compress_into(data, memoryview(buf)[_LEN_VLSIZE:], plan.clevel) \
        if maxout > 0 and plan.clevel > 0 else 0
    if cbytes == 0 or cbytes == n:
        return _VLSIZE.pack(n) + data.tobytes()
    return memoryview(buf)[:_LEN_VLSIZE + cbytes]
