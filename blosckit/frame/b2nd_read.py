"""Reading b2nd arrays block by block: plans for the native kernel
(``native.b2nd_read``), which decodes each block a read needs straight into
its place in the output (a region's: only the blocks holding its items).

A plan is, per block of a chunk, the byte runs of that block that land in
the output (the whole array, or the box around a region): six int64 per
run as :func:`native.copy_runs` takes them, chunk offsets counted from the
chunk's start, output offsets from the chunk's base.  In a whole read,
chunks whose part of the output has the same extents share one plan (the
inner chunks of an array, each edge).  Whatever the kernel does not take (special entries,
chunks it declines or rejects) the caller reads with the Python reader.
"""
from __future__ import annotations

import math
from array import array as array_
from itertools import accumulate, product
from typing import Iterator, Sequence

from .. import native

__all__ = ["Plans", "block_runs", "touches", "grid_indexes", "strides"]


def strides(shape: Sequence[int]) -> list[int]:
    """C-order strides of ``shape``, in items."""
    st, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        st[d] = acc
        acc *= shape[d]
    return st


def grid_indexes(counts: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Indexes of an n-d grid in C order (one empty index for 0 dimensions)."""
    return product(*map(range, counts))


def touches(r: range, a: int, b: int) -> bool:
    """Some index of ``r`` (a step of either sign) lies in ``[a, b)``."""
    if not r:
        return False
    if r.step < 0:
        r = r[::-1]
    first = r.start if a <= r.start else r.start + -(-(a - r.start) // r.step) * r.step
    return first < b and first < r.stop


def block_runs(cshape: Sequence[int], bshape: Sequence[int], origin: Sequence[int],
               lo: Sequence[int], hi: Sequence[int], ts: int,
               picks: Sequence[range] | None = None, base: int = 0) -> dict[int, list[tuple]]:
    """The blocks of the chunk at ``origin`` (by index in the block grid, C
    order) that hold items of the box ``lo``..``hi`` (items, per
    dimension), and the runs that carry those items into the box's C-order
    buffer of ``ts``-byte items, output offsets less ``base``.  A block
    that holds none of ``picks`` (the indexes wanted per dimension) is left
    out, as is one outside the box.  Trailing dimensions a block spans
    whole, as the box does, merge into one run."""
    nd = len(cshape)
    if nd == 0:                          # a 0-d array: one item
        return {0: [(0, -base, ts, 1, 0, 0)]}
    box = [h - l for l, h in zip(lo, hi)]
    ostr = [x * ts for x in strides(box)]
    bstr = [x * ts for x in strides(bshape)]
    bbytes = math.prod(bshape) * ts
    bgrid = [-(-c // b) for c, b in zip(cshape, bshape)]
    gstr = strides(bgrid)
    # per dimension, the blocks along it that hold part of the box (and a
    # pick): (offset of the block in the chunk, of the part in the block,
    # the part's extent, its offset in the box) -- offsets in bytes
    axes = []
    for d in range(nd):
        o, b, l = origin[d], bshape[d], lo[d]
        end = min(hi[d], o + cshape[d])
        along = []
        for k in range(max(0, (l - o) // b), min(bgrid[d], -(-(end - o) // b))):
            s = o + k * b
            x = max(s, l)
            e = min(s + b, end) - x
            if e > 0 and (picks is None or touches(picks[d], x, x + e)):
                along.append((k * gstr[d], (x - s) * bstr[d], e, (x - l) * ostr[d]))
        if not along:
            return {}
        axes.append(along)
    # the dimensions from k on merge into one run when every block spans
    # them whole, as the box does
    k = nd - 1
    while k > 0 and bshape[k] == box[k] and all(e == box[k] for _, _, e, _ in axes[k]):
        k -= 1
    out: dict[int, list[tuple]] = {}
    for combo in product(*axes):
        in_grid, in_block, ext, in_box = zip(*combo)
        bi = sum(in_grid)
        src = bi * bbytes + sum(in_block)
        dst = sum(in_box) - base
        run = math.prod(ext[k:]) * ts
        if k == 0:
            out[bi] = [(src, dst, run, 1, 0, 0)]
        elif k == 1:                      # one group of runs: no corner to walk
            out[bi] = [(src, dst, run, ext[0], bstr[0], ostr[0])]
        else:
            out[bi] = [(src + sum(r * b for r, b in zip(c, bstr)),
                        dst + sum(r * o for r, o in zip(c, ostr)),
                        run, ext[k - 1], bstr[k - 1], ostr[k - 1])
                       for c in grid_indexes(ext[:k - 1])]
    return out


class Plans:
    """The plans of the chunks of one read, and each chunk's plan and base:
    the arrays :func:`native.b2nd_read` takes."""

    def __init__(self, nblocks: int):
        self.nblocks = nblocks
        self.runs = array_("q")
        self.block_runs = array_("i")
        self.chunk_plan = array_("i")
        self.bases = array_("q")
        self.used = array_("i")          # per plan: the blocks that hold runs

    def add(self, runs_of, base: int) -> bool:
        """Add a chunk whose plan is ``runs_of()`` (:func:`block_runs`), at
        ``base``; False, adding nothing, when it has no run at all."""
        p = self.plan(runs_of)
        if p is None:
            return False
        self.chunk_plan.append(p)
        self.bases.append(base)
        return True

    def plan(self, runs_of) -> int | None:
        """A new plan, ``runs_of()`` (:func:`block_runs`): its index, None
        (nothing added) when it has no run."""
        per_block = runs_of()
        if not per_block:
            return None
        p = len(self.block_runs) // (self.nblocks + 1)
        counts = [0] * (self.nblocks + 1)
        counts[0] = len(self.runs) // native.RUN_FIELDS
        for bi in sorted(per_block):
            runs = per_block[bi]
            counts[bi + 1] = len(runs)
            for run in runs:
                self.runs.extend(run)
        self.block_runs.extend(accumulate(counts))
        self.used.append(len(per_block))
        return p

    def blocks_with_runs(self, sel: range) -> int:
        """How many blocks the chunks ``sel`` (entries, in the order added)
        have runs in: the blocks a region read decodes."""
        return sum(self.used[p] for p in self.chunk_plan[sel.start:sel.stop])

    def runs_of(self, i: int) -> array_:
        """The runs of the ``i``-th chunk added (for :func:`native.copy_runs`
        when the caller reads that chunk itself)."""
        p = self.chunk_plan[i]
        k = self.block_runs
        w = native.RUN_FIELDS
        return self.runs[w * k[p * (self.nblocks + 1)]:w * k[(p + 1) * (self.nblocks + 1) - 1]]
