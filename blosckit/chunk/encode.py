"""The chunk encoder: regular Blosc2 and Blosc1 chunks as C-Blosc2 3.3 /
C-Blosc 1.21 write them (special chunks: :mod:`.special`; VL-block chunks:
:mod:`.vlblocks`; hand-assembled chunks: :mod:`.build`).

``compress`` repeats the reference encoders' decisions one by one (block size,
split, per-stream zero and run detection, raw streams, the whole-chunk copy
fallback, the all-zeros special chunk, dictionary training) so that its output
is the same bytes; specs/encoder.md gives the rules and lists the known
differences.  The decisions taken before the data is read are the plan
(:mod:`.plan`); this module cuts, filters and encodes the blocks within the
plan's output budget.  Streams come from :mod:`blosckit.codecs`.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from .. import native
from ..native.buffers import ZEROED_BELOW as _ZEROED_BELOW, finish, new_bytes
from ..codecs import filters as _filters
from ..codecs import zstd as _zstd
from ..formats import build as _build
from ..formats import chunk as fc
from . import conventions
from .header import SPECIAL_KINDS, header
# FORMATS, MAX_BUFFERSIZE and MAX_THREADS are compress's limits: the CLI reads them here
from .plan import FORMATS, MAX_BUFFERSIZE, MAX_THREADS, Plan, get_plan

__all__ = ["compress", "byte_view", "filtered", "FORMATS", "MAX_BUFFERSIZE", "MAX_THREADS"]

MAX_DICTSIZE = 32 * 1024
MIN_USEFUL_DICT = 256

_CSIZE = fc.FAST_CSIZE


# ---------------------------------------------------------------------------
# Blocks
# ---------------------------------------------------------------------------

def filtered(plan: Plan, block: memoryview, j: int, block0: memoryview) -> memoryview:
    """``block`` (block ``j`` of the input; ``block0``: block 0) after the
    plan's filter pipeline."""
    if not plan.pipeline:
        return block
    ctx = _filters.BlockContext(plan.version, plan.typesize, j, block0)
    cur = block
    for fid, meta in plan.pipeline:
        encode = _filters.ENCODERS[fid]
        assert encode is not None       # every filter the planner accepts encodes
        out = bytearray(len(block))
        encode(cur, memoryview(out), meta, ctx)
        cur = memoryview(out)
    return cur


def _is_run(s: memoryview) -> bool:
    """Whether every byte of ``s`` is the same."""
    first = s[0]
    n = len(s)
    if s[n - 1] != first or s[n >> 1] != first:
        return False
    return not s.tobytes().lstrip(bytes((first,)))


def _stream_bound(plan: Plan, neblock: int) -> int:
    """The output limit C gives a stream before the chunk's budget applies."""
    if plan.codec_name == "snappy":
        return 32 + neblock + neblock // 6
    return neblock


def _put_run(out: bytearray, pos: int, value: int) -> int:
    """A run stream of byte ``value`` written at ``pos`` (a zero run is its
    csize alone); returns the position after it."""
    if value:
        _CSIZE.pack_into(out, pos, -value)
        out[pos + fc.LEN_CSIZE] = fc.TOKEN_RUN
        return pos + fc.LEN_CSIZE + fc.LEN_TOKEN
    _CSIZE.pack_into(out, pos, 0)
    return pos + fc.LEN_CSIZE


def _put_stream(plan: Plan, out: bytearray, pos: int, piece: memoryview, bound: int,
                budget: int | None, dictionary: bytes | None) -> int | None:
    """The coded stream of ``piece`` (raw when the codec does not shrink it)
    written at ``pos``; returns the position after it, or None when it does
    not fit the ``budget`` (bytes from the block's start; None: unlimited)."""
    at = pos + fc.LEN_CSIZE
    maxout = bound
    if budget is not None and at + maxout > budget:
        maxout = budget - at
        if maxout <= 0:
            return None
    neblock = len(piece)
    cbytes = plan.codec.compress_into(piece, memoryview(out)[at:at + maxout], plan.clevel,
                                      dict=dictionary, flavor=plan.flavor, split=plan.split)
    if cbytes == 0 or cbytes == neblock:
        if budget is not None and at + neblock > budget:
            return None
        out[at:at + neblock] = piece
        cbytes = neblock
    _CSIZE.pack_into(out, pos, cbytes)
    return at + cbytes


def _encode_block(plan: Plan, src: memoryview, j: int, start: int | None,
                  dictionary: bytes | None, block0: memoryview):
    """Encode block ``j`` as C does when the chunk's output so far is ``start``
    bytes.  Returns ``(bytes_view, need)`` -- ``need`` is the highest output
    position the encoder compared with the budget, relative to ``start`` -- or
    None when the budget runs out (the caller then stores the chunk raw).
    ``start=None`` encodes as if the budget were unlimited."""
    bsize = plan.block_bytes(j)
    data = filtered(plan, plan.block(src, j), j, block0)
    nstreams = fc.streams_in_block(plan.split, plan.typesize, bsize, plan.blocksize)
    neblock = bsize // nstreams
    bound = _stream_bound(plan, neblock)
    out = bytearray(nstreams * (fc.LEN_CSIZE + fc.LEN_TOKEN) + max(bsize, nstreams * bound))
    detect_runs = plan.fmt == "blosc2"
    budget = None if start is None else plan.destsize - start
    pos = need = 0
    for k in range(nstreams):
        piece = data[k * neblock:(k + 1) * neblock]
        if detect_runs and _is_run(piece):
            end: int | None = _put_run(out, pos, piece[0])
            need = max(need, end)
            if budget is not None and end > budget:
                return None
        else:
            need = max(need, pos + fc.LEN_CSIZE + bound)
            end = _put_stream(plan, out, pos, piece, bound, budget, dictionary)
            if end is None:
                return None
        pos = end
    return memoryview(out)[:pos], need


def _native_blocks(plan: Plan, src: memoryview, nthreads: int):
    """Every block encoded by the native encoder with an unlimited budget:
    ``(view of block j, need_j)`` per block, or None when the codec has no
    native entry point."""
    enc = getattr(plan.codec, "native_encoder", None)
    spec = enc(plan.clevel, plan.flavor) if enc is not None else None
    if spec is None or plan.nbytes == 0:
        return None
    kind, param, fns = spec
    out, cap, sizes, needs = native.encode_blocks(
        src, nbytes=plan.nbytes, blocksize=plan.blocksize, typesize=plan.typesize,
        version=plan.version, split=plan.split, detect_runs=plan.fmt == "blosc2",
        pipeline=list(plan.pipeline), codec_kind=kind, clevel=plan.clevel, codec_param=param,
        codec_fns=fns, nthreads=nthreads)
    mv = memoryview(out)
    return [(mv[j * cap:j * cap + sizes[j]], needs[j]) for j in range(plan.nblocks)]


def _encode_blocks(plan: Plan, src: memoryview, start: int, dictionary: bytes | None,
                   nthreads: int):
    """All blocks' bytes and their starts, or None when they do not fit."""
    block0 = src[:plan.blocksize]
    pieces, starts = [], []
    pos = start
    results = _native_blocks(plan, src, nthreads) if dictionary is None else None
    if results is None and nthreads > 1 and plan.nblocks > 1:
        with ThreadPoolExecutor(min(nthreads, plan.nblocks)) as pool:
            results = list(pool.map(
                lambda j: _encode_block(plan, src, j, None, dictionary, block0),
                range(plan.nblocks)))
    for j in range(plan.nblocks):
        res = results[j] if results is not None else None
        if res is None or pos + res[1] > plan.destsize:
            # encode again with the budget C had at this point
            res = _encode_block(plan, src, j, pos, dictionary, block0)
            if res is None:
                return None
        starts.append(pos)
        pieces.append(res[0])
        pos += len(res[0])
    return pieces, starts


# ---------------------------------------------------------------------------
# Chunks
# ---------------------------------------------------------------------------

def _memcpy_chunk(plan: Plan, src: memoryview, *, use_dict: bool = False) -> bytes:
    cbytes = plan.overhead + plan.nbytes
    head = header(plan, cbytes, memcpyed=True, use_dict=use_dict)
    if plan.nbytes < _ZEROED_BELOW:
        return head + src.tobytes()
    # one buffer, one copy of the data: header + tobytes() made two 4 MiB
    # buffers per large chunk, and freeing them made the allocator hand
    # memory back to the system (a page fault per 4 KiB on the next chunk)
    chunk, view = new_bytes(cbytes)
    view[:len(head)] = head
    view[len(head):] = src
    view.release()
    return finish(chunk)


def _all_zero_runs(plan: Plan, start: int, end: int) -> bool:
    """Whether the streams between ``start`` and ``end`` are all zero runs
    (csizes alone)."""
    nstreams = plan.nblocks * (plan.typesize if plan.split else 1)
    if plan.split and plan.leftover:
        nstreams -= plan.typesize - 1
    return end == start + fc.LEN_CSIZE * nstreams


def _assemble(plan: Plan, src: memoryview, nthreads: int, dictionary: bytes | None,
              use_dict: bool) -> bytes:
    dict_part = b""
    if dictionary is not None:
        dict_part = _build(fc.DictSection, {"dsize": len(dictionary), "dict": dictionary},
                           "chunk.dict")
    start = plan.overhead + fc.LEN_BSTART * plan.nblocks + len(dict_part)
    enc = _encode_blocks(plan, src, start, dictionary, nthreads)
    if enc is None:
        # the data is stored raw, with no dictionary section: C-Blosc2 keeps
        # use_dict set here and then cannot read its own chunk (divergence
        # W8); blosckit writes the raw chunk every reader reads
        return _memcpy_chunk(plan, src)
    pieces, starts = enc
    total = starts[-1] + len(pieces[-1]) if pieces else start
    if plan.fmt == "blosc2" and dictionary is None and _all_zero_runs(plan, start, total):
        # every stream is a zero run: the chunk is the all-zeros special
        return header(plan, plan.overhead, memcpyed=False, special=SPECIAL_KINDS["zeros"],
                      use_dict=use_dict)
    bstarts = fc.fast_bstarts(plan.nblocks).pack(*starts)
    return b"".join([header(plan, total, memcpyed=False, use_dict=use_dict), bstarts,
                     dict_part, *pieces])


def _train(plan: Plan, src: memoryview) -> bytes | None:
    """The dictionary C-Blosc2 builds for this chunk, or None when it falls
    back to plain compression."""
    block0 = src[:plan.blocksize]
    samples = bytearray()
    for j in range(plan.nblocks):
        samples += filtered(plan, plan.block(src, j), j, block0)
    maxsize = min(MAX_DICTSIZE, plan.nbytes // 20)
    count = plan.nblocks * (plan.typesize if plan.split else 1)
    count = max(count, 8)
    sample_size = plan.nbytes // count // 16
    if maxsize < MIN_USEFUL_DICT or sample_size == 0:
        return None
    if plan.codec_name in ("lz4", "lz4hc"):
        return bytes(samples[:min(count * sample_size, maxsize)])
    return _zstd.train_dict(memoryview(samples)[:count * sample_size], [sample_size] * count,
                            maxsize)


def byte_view(src) -> tuple[memoryview, int]:
    """``src`` as a flat, contiguous byte view, and the item size in bytes of
    its buffer (8 for a float64 numpy array, 1 for bytes)."""
    view = memoryview(src)
    itemsize = view.itemsize
    if not view.c_contiguous:
        view = memoryview(view.tobytes())
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    return view, itemsize


def compress(src, *, typesize: int | None = None, codec: str = "blosclz", clevel: int = 5,
             filters=("shuffle",), blocksize: int = 0, splitmode: str = "forward_compat",
             dict: bool = False, format: str = "blosc2", nthreads: int = 1,
             cparams=None) -> bytes:
    """Compress ``src`` into one chunk, byte for byte as C-Blosc2
    (``format="blosc2"``) or C-Blosc 1.x (``format="blosc1"``) would.

    ``typesize`` (bytes per item) None takes the item size of ``src``'s
    buffer; an explicit value wins.  ``blocksize`` (bytes, 0 = automatic) is at
    most 536866816.  ``nthreads`` is 1..64 (the native layer's thread cap);
    the output does not depend on it.  ``format``: "blosc2" (32-byte header),
    "blosc1" (16-byte header that C-Blosc 1.x reads: shuffle or bitshuffle
    only) or "blosc1-compat" (a 16-byte header as C-Blosc2's Blosc1-compat
    mode writes it, which may also hold delta: C-Blosc2 reads such chunks,
    C-Blosc 1.x cannot, since it has no delta).  See the README's Python API
    section for the other parameters; bad ones raise ValueError before any
    work.  ``codec``, ``filters`` and ``splitmode`` also take python-blosc2's
    ``Codec`` / ``Filter`` / ``SplitMode`` members.  ``cparams``: a
    python-blosc2 ``CParams`` or a dict of its fields, used instead of the
    other parameters but ``format`` (then left at their defaults) with python-blosc2's
    defaults for the fields it leaves out, as ``blosc2.compress2`` does.
    """
    if cparams is not None:
        return compress(src, format=format, **_cparams_args(
            cparams, typesize, codec, clevel, filters, blocksize, splitmode, dict, nthreads))
    view, itemsize = byte_view(src)
    if typesize is None:
        typesize = itemsize
    plan = get_plan(len(view), typesize, codec, clevel, filters, blocksize, splitmode, dict,
                    format, nthreads)
    if plan.memcpyed:
        if plan.use_dict and plan.nbytes:
            return _small_dict_chunk(plan, view, nthreads)
        if plan.use_dict:
            # C-Blosc2's dictionary pass finds no stream at all in empty input
            # and takes that for "every stream is zeros"
            return header(plan, plan.overhead, memcpyed=True, special=SPECIAL_KINDS["zeros"])
        return _memcpy_chunk(plan, view)
    if plan.use_dict:
        dictionary = _train(plan, view)
        if dictionary is not None:
            return _assemble(plan, view, nthreads, dictionary, True)
    return _assemble(plan, view, nthreads, None, False)


def _cparams_args(cparams, *given) -> dict:
    """compress's arguments from ``cparams``; ValueError when a parameter it
    replaces was passed too (python-blosc2 refuses both as well)."""
    defaults = (None, "blosclz", 5, ("shuffle",), 0, "forward_compat", False, 1)
    if given != defaults:
        raise ValueError("pass either cparams or the parameters it holds, not both")
    return conventions.from_cparams(cparams)


def _small_dict_chunk(plan: Plan, view: memoryview, nthreads: int) -> bytes:
    """dict=True on input under 32 bytes.  C-Blosc2 stores it raw while
    training, finds it too small for a dictionary and encodes it again without
    one, but keeps the raw-storage flags of the first pass: when that second
    pass compresses, its chunk claims to be raw and no reader can decode it.
    blosckit writes the raw chunk, which is C-Blosc2's output whenever that
    output is readable (specs/encoder.md#dictionaries)."""
    return _memcpy_chunk(plan, view)
