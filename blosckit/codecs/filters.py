"""Filters of the Blosc pipeline, keyed by filter id (ids in formats.enums).

Each filter decodes a whole block from ``src`` into ``dst`` (same length).
The chunk reader runs them from the last slot to the first.  Encoders live
beside the decoders so the builder uses the same table.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .. import native
from ..formats import enums


@dataclass(frozen=True)
class BlockContext:
    """What a filter may need besides the block: chunk version and typesize,
    the block index, and the decoded block 0 (the delta filter's reference)."""
    version: int
    typesize: int
    index: int
    block0: memoryview | None = None


def _group(meta: int, ctx: BlockContext) -> int:
    return meta or ctx.typesize


def _unshuffle(src, dst, meta, ctx):
    native.unshuffle_into(src, dst, _group(meta, ctx))


def _bitunshuffle(src, dst, meta, ctx):
    # Version-2 chunks were written by C-Blosc 1.x, whose bitshuffle treats
    # blocks that are not a whole number of 8-element groups differently.
    native.bitunshuffle_into(src, dst, ctx.typesize, legacy=ctx.version <= 2)


def _undelta(src, dst, meta, ctx):
    if src is not dst:
        dst[:] = src
    if ctx.index == 0:
        native.delta_decode_into(dst, dst, ctx.typesize, True)
    else:
        native.delta_decode_into(ctx.block0, dst, ctx.typesize, False)


def _unbytedelta(src, dst, meta, ctx):
    native.bytedelta_decode_into(src, dst, _group(meta, ctx), buggy=False)


def _unbytedelta_buggy(src, dst, meta, ctx):
    native.bytedelta_decode_into(src, dst, _group(meta, ctx), buggy=True)


def _shuffle(src, dst, meta, ctx):
    native.shuffle_into(src, dst, _group(meta, ctx))


def _bitshuffle(src, dst, meta, ctx):
    native.bitshuffle_into(src, dst, ctx.typesize, legacy=ctx.version <= 2)


def _delta(src, dst, meta, ctx):
    ref = src if ctx.index == 0 else ctx.block0
    native.delta_encode_into(ref, src, dst, ctx.typesize)


def _bytedelta(src, dst, meta, ctx):
    native.bytedelta_encode_into(src, dst, _group(meta, ctx))


def _trunc_prec(src, dst, meta, ctx):
    bits = meta - 256 if meta > 127 else meta    # the meta byte is an int8
    native.trunc_prec_into(src, dst, ctx.typesize, bits)


Filter = Callable[[memoryview, memoryview, int, BlockContext], None]

# id -> decoder.  None: the filter leaves nothing to undo (no filter, and
# trunc_prec, which is lossy and encode-only).
DECODERS: dict[int, Filter | None] = {
    enums.lookup(enums.FILTERS, "nofilter"): None,
    enums.lookup(enums.FILTERS, "shuffle"): _unshuffle,
    enums.lookup(enums.FILTERS, "bitshuffle"): _bitunshuffle,
    enums.lookup(enums.FILTERS, "delta"): _undelta,
    enums.lookup(enums.FILTERS, "trunc_prec"): None,
    enums.lookup(enums.FILTERS, "bytedelta_buggy"): _unbytedelta_buggy,
    enums.lookup(enums.FILTERS, "bytedelta"): _unbytedelta,
}

ENCODERS: dict[int, Filter | None] = {
    enums.lookup(enums.FILTERS, "nofilter"): None,
    enums.lookup(enums.FILTERS, "shuffle"): _shuffle,
    enums.lookup(enums.FILTERS, "bitshuffle"): _bitshuffle,
    enums.lookup(enums.FILTERS, "delta"): _delta,
    enums.lookup(enums.FILTERS, "trunc_prec"): _trunc_prec,
    enums.lookup(enums.FILTERS, "bytedelta"): _bytedelta,
}

DELTA = enums.lookup(enums.FILTERS, "delta")
SHUFFLE = enums.lookup(enums.FILTERS, "shuffle")
