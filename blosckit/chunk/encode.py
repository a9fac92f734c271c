"""The chunk encoder: Blosc2 and Blosc1 chunks as C-Blosc2 3.3 / C-Blosc 1.21
write them, plus special and VL-block chunks (hand-assembled chunks:
:mod:`.build`).

``compress`` repeats the reference encoders' decisions one by one (block size,
split, per-stream zero and run detection, raw streams, the whole-chunk copy
fallback, the all-zeros special chunk, dictionary training) so that its output
is the same bytes; specs/encoder.md gives the rules and lists the known
differences.  Headers are built from the declarations in
:mod:`blosckit.formats.chunk`; streams come from :mod:`blosckit.codecs`.
"""
from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from .. import native
from . import stune
from ..codecs import filters as _filters
from ..codecs import zstd as _zstd
from ..codecs.registry import CODECS_BY_NAME
from ..formats import build as _build
from ..formats import enums
from ..formats import chunk as fc

__all__ = ["compress", "compress_special", "compress_vlblocks"]

LEN_BLOSC1 = fc.LEN_HEADER
LEN_BLOSC2 = fc.LEN_EXTENDED
MAX_BUFFERSIZE = 2**31 - 1 - LEN_BLOSC2      # largest input C-Blosc2 takes
MAX_BUFFERSIZE_BLOSC1 = 2**31 - 1 - LEN_BLOSC1
MAX_TYPESIZE_BLOSC2 = 536866816              # C-Blosc2's largest block (and item)
MAX_BLOCKSIZE = MAX_TYPESIZE_BLOSC2          # what any reader accepts in the header (rule H4)
MAX_THREADS = 64                             # the native layer's cap (BK_MAX_THREADS)
FORMATS = ("blosc2", "blosc1", "blosc1-compat")
MAX_DICTSIZE = 32 * 1024
MIN_USEFUL_DICT = 256
NUM_FILTER_SLOTS = fc.NUM_FILTER_SLOTS
VERSION_BLOSC1 = 2
VERSION_BLOSC2 = 5
VERSION_VLBLOCKS = 6
CODEC_STREAM_VERSION = 1                     # versionlz of every built-in codec

_CSIZE = fc.FAST_CSIZE
_LEN_VLSIZE = fc.FAST_VLSIZE.size

_FILTER_NAMES = ("shuffle", "bitshuffle", "delta", "trunc_prec", "bytedelta")
_ID = {name: enums.lookup(enums.FILTERS, name) for name in _FILTER_NAMES + ("nofilter",)}
_CODECS_BLOSC2 = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")
_CODECS_BLOSC1 = _CODECS_BLOSC2 + ("snappy",)
_DICT_CODECS = ("lz4", "lz4hc", "zstd")
_SPECIAL_KINDS = {name: code for code, name in enums.SPECIALS.items() if name}
_TRUNC_MANTISSA = {4: 23, 8: 52}


# ---------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------

@dataclass
class _Plan:
    """Everything the encoder decided before touching the data."""
    fmt: str
    codec: Any
    codec_name: str
    clevel: int
    typesize: int            # as stored (items over 255 bytes become 1-byte items)
    slots: list
    metas: list
    nbytes: int
    blocksize: int           # the block size used to cut the input
    header_blocksize: int
    nblocks: int
    leftover: int
    split: bool
    memcpyed: bool
    use_dict: bool
    overhead: int
    destsize: int
    flavor: str


def _int(name: str, value, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, not {type(value).__name__}")
    if value < lo or (hi is not None and value > hi):
        upper = "" if hi is None else f"..{hi}"
        raise ValueError(f"{name} must be in {lo}{upper}, got {value}")
    return value


def _filter_slots(filters, typesize: int, fmt: str) -> tuple[list, list]:
    """Filter ids and metas per slot: entry i goes to slot i (None = empty)."""
    if filters is None:
        filters = ()
    elif isinstance(filters, str):
        filters = (filters,)
    elif isinstance(filters, tuple) and len(filters) == 2 and isinstance(filters[0], str) \
            and isinstance(filters[1], int) and not isinstance(filters[1], bool):
        filters = (filters,)      # one (name, meta) pair given bare
    filters = list(filters)
    if len(filters) > NUM_FILTER_SLOTS:
        raise ValueError(f"at most {NUM_FILTER_SLOTS} filters, got {len(filters)}")
    slots = [0] * NUM_FILTER_SLOTS
    metas = [0] * NUM_FILTER_SLOTS
    for i, entry in enumerate(filters):
        if entry is None:
            continue
        if isinstance(entry, str):
            name, meta, bare = entry, 0, True
        elif isinstance(entry, (tuple, list)) and len(entry) == 2 and isinstance(entry[0], str):
            name, bare = entry[0], False
            meta = _int(f"meta of filter {name!r}", entry[1], -128, 255)
        else:
            raise ValueError(f"filter entry {i} must be a name or (name, meta), got {entry!r}")
        if name == "nofilter":
            continue
        if name not in _FILTER_NAMES:
            raise ValueError(f"unknown filter {name!r} (known: {', '.join(_FILTER_NAMES)})")
        if name == "trunc_prec" and bare:
            raise ValueError("trunc_prec needs its meta: ('trunc_prec', bits_kept)")
        fid = _ID[name]
        if name == "bytedelta" and typesize == 1 and fmt == "blosc2":
            fid = 0            # python-blosc2 drops bytedelta on 1-byte items
        elif name == "bytedelta" and bare:
            if typesize > 255:
                raise ValueError("bytedelta's meta holds the item size, which is over 255: "
                                 "give ('bytedelta', meta)")
            meta = typesize    # python-blosc2 stores the item size as its meta
        slots[i] = fid
        metas[i] = fc.meta_byte(meta)
    return slots, metas


def _check_trunc(slots, metas, typesize: int) -> None:
    for fid, meta in zip(slots, metas):
        if fid != _ID["trunc_prec"]:
            continue
        mantissa = _TRUNC_MANTISSA.get(typesize)
        if mantissa is None:
            raise ValueError(f"trunc_prec works on 4- or 8-byte items, not typesize {typesize}")
        bits = meta - 256 if meta > 127 else meta
        zeroed = mantissa - bits if bits >= 0 else -bits
        if abs(bits) > mantissa or zeroed >= mantissa:
            raise ValueError(f"trunc_prec meta {bits} out of range for {typesize}-byte floats")


def _plan(nbytes, typesize, codec, clevel, filters, blocksize, splitmode, use_dict, fmt,
          nthreads) -> _Plan:
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    allowed = _CODECS_BLOSC2 if fmt == "blosc2" else _CODECS_BLOSC1
    if codec not in allowed:
        raise ValueError(f"unknown codec {codec!r} for format {fmt} (known: {', '.join(allowed)})")
    codec_obj = CODECS_BY_NAME.get(codec)
    if codec_obj is None:
        raise ValueError(f"codec {codec!r} is not available (its package is not installed)")
    _int("clevel", clevel, 0, 9)
    _int("typesize", typesize, 1, MAX_TYPESIZE_BLOSC2 if fmt == "blosc2" else stune.MAX_TYPESIZE)
    # an explicit block size over the format's maximum makes a chunk no
    # reader (C-Blosc2 and blosckit included) accepts, whatever the input size
    _int("blocksize", blocksize, 0, MAX_BLOCKSIZE)
    _int("nthreads", nthreads, 1, MAX_THREADS)
    if blocksize and blocksize % typesize:
        raise ValueError(f"blocksize {blocksize} is not a multiple of typesize {typesize}")
    if splitmode not in enums.SPLITMODES.values():
        raise ValueError(f"unknown splitmode {splitmode!r}")
    if not isinstance(use_dict, bool):
        raise ValueError("dict must be True or False")
    slots, metas = _filter_slots(filters, typesize, fmt)
    if fmt != "blosc2":
        return _plan_blosc1(nbytes, typesize, codec, codec_obj, clevel, slots, metas,
                            blocksize, splitmode, use_dict, fmt)
    if nbytes > MAX_BUFFERSIZE:
        raise ValueError(f"input of {nbytes} bytes is larger than {MAX_BUFFERSIZE}")
    if use_dict and codec not in _DICT_CODECS:
        raise ValueError(f"dict needs one of {', '.join(_DICT_CODECS)}, not {codec!r}")
    stored_ts = typesize if typesize <= stune.MAX_TYPESIZE else 1
    _check_trunc(slots, metas, stored_ts)
    shuffle = _ID["shuffle"] in slots
    bsize = stune.blocksize_blosc2(nbytes, typesize, clevel, codec, shuffle, splitmode, blocksize)
    header_bsize = stune.header_blocksize_blosc2(nbytes, bsize, blocksize)
    nblocks, leftover = (-(-nbytes // bsize), nbytes % bsize) if nbytes else (0, 0)
    overhead = LEN_BLOSC2
    destsize = nbytes + LEN_BLOSC2
    memcpyed = clevel == 0 or nbytes < stune.MIN_BUFFER_BLOSC2
    if not memcpyed and overhead + fc.LEN_BSTART * nblocks > destsize:
        memcpyed = True
    if not memcpyed and header_bsize != bsize:
        # C-Blosc2 would store the caller's block size while cutting blocks of
        # another size (an explicit size over an input that is not a whole
        # number of items) and could not read its chunk; store the real one.
        header_bsize = bsize
    split = (not memcpyed) and stune.split_blosc2(splitmode, codec, clevel, shuffle,
                                                  stored_ts, bsize)
    return _Plan("blosc2", codec_obj, codec, clevel, stored_ts, slots, metas, nbytes, bsize,
                 header_bsize, nblocks, leftover, split, memcpyed,
                 use_dict and clevel > 0, overhead, destsize, "blosc2")


# Frames hold thousands of chunks compressed with the same parameters and,
# but for the last, the same size: their plan is computed once.  compress()
# never changes a plan (compress_vlblocks, which does, calls _plan itself).
_plan_cached = functools.lru_cache(maxsize=256)(_plan)


def _plan_blosc1(nbytes, typesize, codec, codec_obj, clevel, slots, metas, blocksize,
                 splitmode, use_dict, fmt: str = "blosc1") -> _Plan:
    """The plan of a 16-byte-header chunk.  ``fmt`` "blosc1" is what C-Blosc
    1.x reads; "blosc1-compat" also takes delta (flag bit 3), which only
    C-Blosc2 reads."""
    if use_dict:
        raise ValueError(f"format={fmt!r} has no dictionaries")
    if nbytes > MAX_BUFFERSIZE_BLOSC1:
        raise ValueError(f"input of {nbytes} bytes is larger than {MAX_BUFFERSIZE_BLOSC1}")
    used = [(f, m) for f, m in zip(slots, metas) if f]
    names = [enums.FILTERS[f] for f, _ in used]
    shuffles = [n for n in names if n in ("shuffle", "bitshuffle")]
    if any(n not in ("shuffle", "bitshuffle", "delta") for n in names) or len(shuffles) > 1 \
            or names.count("delta") > 1 or any(m for _, m in used):
        raise ValueError(f"format={fmt!r} takes at most one of shuffle/bitshuffle, optionally "
                         f"delta, without metas; got {names}")
    if "delta" in names and fmt == "blosc1":
        # C-Blosc 1.x has no delta and refuses such chunks ("Error -1")
        raise ValueError("format='blosc1' cannot hold delta: C-Blosc 1.x has no delta filter; "
                         "format='blosc1-compat' writes it for C-Blosc2 readers")
    # A Blosc1 header keeps filters as flags; a reader places them in slots
    # (delta before the shuffle)
    slots = fc.blosc1_slots(sum(bit for bit, _slot, fid in fc.BLOSC1_FLAG_SLOTS
                                if enums.FILTERS[fid] in names))
    bsize = stune.blocksize_blosc1(nbytes, typesize, clevel, codec, splitmode, blocksize)
    nblocks, leftover = (-(-nbytes // bsize), nbytes % bsize) if nbytes else (0, 0)
    memcpyed = clevel == 0 or nbytes < stune.MIN_BUFFER_BLOSC1
    split = stune.split_blosc1(splitmode, codec, typesize, bsize)
    return _Plan("blosc1", codec_obj, codec, clevel, typesize, slots, [0] * NUM_FILTER_SLOTS,
                 nbytes, bsize, bsize, nblocks, leftover, split, memcpyed, False, LEN_BLOSC1,
                 nbytes + LEN_BLOSC1, "blosc1")


# ---------------------------------------------------------------------------
# Headers
# ---------------------------------------------------------------------------

def _flags(plan: _Plan, memcpyed: bool) -> dict:
    names = {enums.FILTERS[f] for f in plan.slots if f}
    full = plan.fmt == "blosc1" or not plan.memcpyed
    return {
        "compformat": plan.codec.compformat if full else 0,
        "dont_split": (not plan.split) if full else False,
        "delta": "delta" in names and full,
        "bitshuffle": plan.fmt == "blosc2" or "bitshuffle" in names,
        "memcpyed": memcpyed,
        "shuffle": plan.fmt == "blosc2" or "shuffle" in names,
    }


def _b2flags(special: int = 0, use_dict: bool = False) -> dict:
    return {"instrumented": False, "special": special, "lazy": False, "unimplemented": False,
            "big_endian": False, "use_dict": use_dict}


def _header(plan: _Plan, cbytes: int, *, memcpyed: bool, special: int = 0,
            use_dict: bool = False) -> bytes:
    hdr = {
        "version": VERSION_BLOSC2 if plan.fmt == "blosc2" else VERSION_BLOSC1,
        "versionlz": CODEC_STREAM_VERSION,
        "flags": _flags(plan, memcpyed),
        "typesize": plan.typesize,
        "nbytes": plan.nbytes,
        "blocksize": plan.header_blocksize,
        "cbytes": cbytes,
        "extended": None,
    }
    if plan.fmt == "blosc2":
        hdr["extended"] = {
            "filters": plan.slots, "udcodec": plan.codec.code, "compcode_meta": 0,
            "filters_meta": plan.metas,
            "blosc2_flags2": {"reserved": 0, "vl_blocks": False},
            "blosc2_flags": _b2flags(special, use_dict),
        }
    return fc.pack_header(hdr)


# ---------------------------------------------------------------------------
# Blocks
# ---------------------------------------------------------------------------

def _filtered(plan: _Plan, src: memoryview, j: int, bsize: int, block0: memoryview,
              version: int) -> memoryview:
    """Block ``j`` after the filter pipeline (slot order)."""
    cur = src[j * plan.blocksize:j * plan.blocksize + bsize]
    if not any(plan.slots):
        return cur
    ctx = _filters.BlockContext(version, plan.typesize, j, block0)
    for fid, meta in zip(plan.slots, plan.metas):
        if not fid:
            continue
        if plan.fmt == "blosc1" and fid == _ID["shuffle"] and plan.typesize == 1:
            continue       # C-Blosc 1.x skips the byte shuffle of 1-byte items
        encode = _filters.ENCODERS[fid]
        assert encode is not None       # every filter the planner accepts encodes
        out = bytearray(bsize)
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


def _stream_bound(plan: _Plan, neblock: int) -> int:
    """The output limit C gives a stream before the chunk's budget applies."""
    if plan.codec_name == "snappy":
        return 32 + neblock + neblock // 6
    return neblock


def _encode_block(plan: _Plan, src: memoryview, j: int, start: int | None,
                  dictionary: bytes | None, block0: memoryview):
    """Encode block ``j`` as C does when the chunk's output so far is ``start``
    bytes.  Returns ``(bytes_view, need)`` -- ``need`` is the highest output
    position the encoder compared with the budget, relative to ``start`` -- or
    None when the budget runs out (the caller then stores the chunk raw).
    ``start=None`` encodes as if the budget were unlimited."""
    last = j == plan.nblocks - 1
    bsize = plan.leftover if (last and plan.leftover) else plan.blocksize
    version = VERSION_BLOSC2 if plan.fmt == "blosc2" else VERSION_BLOSC1
    data = _filtered(plan, src, j, bsize, block0, version)
    nstreams = fc.streams_in_block(plan.split, plan.typesize, bsize, plan.blocksize)
    neblock = bsize // nstreams
    bound = _stream_bound(plan, neblock)
    out = bytearray(nstreams * (fc.LEN_CSIZE + fc.LEN_TOKEN) + max(bsize, nstreams * bound))
    pos = 0
    need = 0
    detect_runs = plan.fmt == "blosc2"
    budget = None if start is None else plan.destsize - start
    codec = plan.codec
    for k in range(nstreams):
        piece = data[k * neblock:(k + 1) * neblock]
        pos += fc.LEN_CSIZE
        if detect_runs and _is_run(piece):
            value = piece[0]
            if value:
                _CSIZE.pack_into(out, pos - fc.LEN_CSIZE, -value)
                out[pos] = fc.TOKEN_RUN
                pos += fc.LEN_TOKEN
            else:
                _CSIZE.pack_into(out, pos - fc.LEN_CSIZE, 0)
            need = max(need, pos)
            if budget is not None and pos > budget:
                return None
            continue
        maxout = bound
        if budget is not None and pos + maxout > budget:
            maxout = budget - pos
            if maxout <= 0:
                return None
        need = max(need, pos + bound)
        dst = memoryview(out)[pos:pos + maxout]
        cbytes = codec.compress_into(piece, dst, plan.clevel, dict=dictionary,
                                     flavor=plan.flavor, split=plan.split)
        if cbytes == 0 or cbytes == neblock:
            if budget is not None and pos + neblock > budget:
                return None
            out[pos:pos + neblock] = piece
            cbytes = neblock
        _CSIZE.pack_into(out, pos - fc.LEN_CSIZE, cbytes)
        pos += cbytes
    return memoryview(out)[:pos], need


def _native_blocks(plan: _Plan, src: memoryview, nthreads: int):
    """Every block encoded by the native encoder with an unlimited budget:
    ``(view of block j, need_j)`` per block, or None when the codec has no
    native entry point."""
    enc = getattr(plan.codec, "native_encoder", None)
    spec = enc(plan.clevel, plan.flavor) if enc is not None else None
    if spec is None or plan.nbytes == 0:
        return None
    kind, param, fns = spec
    pipeline = [(f, m) for f, m in zip(plan.slots, plan.metas) if f
                and not (plan.fmt == "blosc1" and f == _ID["shuffle"] and plan.typesize == 1)]
    version = VERSION_BLOSC2 if plan.fmt == "blosc2" else VERSION_BLOSC1
    out, cap, sizes, needs = native.encode_blocks(
        src, nbytes=plan.nbytes, blocksize=plan.blocksize, typesize=plan.typesize,
        version=version, split=plan.split, detect_runs=plan.fmt == "blosc2",
        pipeline=pipeline, codec_kind=kind, clevel=plan.clevel, codec_param=param,
        codec_fns=fns, nthreads=nthreads)
    mv = memoryview(out)
    return [(mv[j * cap:j * cap + sizes[j]], needs[j]) for j in range(plan.nblocks)]


def _encode_blocks(plan: _Plan, src: memoryview, start: int, dictionary: bytes | None,
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


def _memcpy_chunk(plan: _Plan, src: memoryview, *, use_dict: bool = False) -> bytes:
    cbytes = plan.overhead + plan.nbytes
    return _header(plan, cbytes, memcpyed=True, use_dict=use_dict) + src.tobytes()


def _assemble(plan: _Plan, src: memoryview, nthreads: int, dictionary: bytes | None,
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
    if plan.fmt == "blosc2" and dictionary is None:
        nstreams = plan.nblocks * (plan.typesize if plan.split else 1)
        if plan.split and plan.leftover:
            nstreams -= plan.typesize - 1
        if total == start + fc.LEN_CSIZE * nstreams:
            # every stream is a zero run: the chunk is the all-zeros special
            return _header(plan, plan.overhead, memcpyed=False,
                           special=_SPECIAL_KINDS["zeros"], use_dict=use_dict)
    bstarts = fc.fast_bstarts(plan.nblocks).pack(*starts)
    return b"".join([_header(plan, total, memcpyed=False, use_dict=use_dict), bstarts,
                     dict_part, *pieces])


def _train(plan: _Plan, src: memoryview) -> bytes | None:
    """The dictionary C-Blosc2 builds for this chunk, or None when it falls
    back to plain compression."""
    block0 = src[:plan.blocksize]
    samples = bytearray()
    for j in range(plan.nblocks):
        last = j == plan.nblocks - 1
        bsize = plan.leftover if (last and plan.leftover) else plan.blocksize
        samples += _filtered(plan, src, j, bsize, block0, VERSION_BLOSC2)
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


def _byte_view(src) -> tuple[memoryview, int]:
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
             dict: bool = False, format: str = "blosc2", nthreads: int = 1) -> bytes:
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
    work.
    """
    view, itemsize = _byte_view(src)
    if typesize is None:
        typesize = itemsize
    try:
        plan = _plan_cached(len(view), typesize, codec, clevel, filters, blocksize, splitmode,
                            dict, format, nthreads)
    except TypeError:           # unhashable filters (lists): plan without the cache
        plan = _plan(len(view), typesize, codec, clevel, filters, blocksize, splitmode, dict,
                     format, nthreads)
    if plan.memcpyed:
        if plan.use_dict and plan.nbytes:
            return _small_dict_chunk(plan, view, nthreads)
        if plan.use_dict:
            # C-Blosc2's dictionary pass finds no stream at all in empty input
            # and takes that for "every stream is zeros"
            return _header(plan, plan.overhead, memcpyed=True, special=_SPECIAL_KINDS["zeros"])
        return _memcpy_chunk(plan, view)
    if plan.use_dict:
        dictionary = _train(plan, view)
        if dictionary is not None:
            return _assemble(plan, view, nthreads, dictionary, True)
    return _assemble(plan, view, nthreads, None, False)


def _small_dict_chunk(plan: _Plan, view: memoryview, nthreads: int) -> bytes:
    """dict=True on input under 32 bytes.  C-Blosc2 stores it raw while
    training, finds it too small for a dictionary and encodes it again without
    one, but keeps the raw-storage flags of the first pass: when that second
    pass compresses, its chunk claims to be raw and no reader can decode it.
    blosckit writes the raw chunk, which is C-Blosc2's output whenever that
    output is readable (specs/encoder.md#dictionaries)."""
    return _memcpy_chunk(plan, view)


# ---------------------------------------------------------------------------
# Special chunks
# ---------------------------------------------------------------------------

def compress_special(kind: str, nbytes: int, *, typesize: int = 1, value=None) -> bytes:
    """A chunk holding no data, only a claim: all zeros, all NaN, one repeated
    item (``value``, ``typesize`` bytes) or uninitialized memory -- as
    C-Blosc2's ``blosc2_chunk_zeros/nans/repeatval/uninit`` with its default
    parameters write it."""
    if kind not in _SPECIAL_KINDS:
        raise ValueError(f"kind must be one of {', '.join(_SPECIAL_KINDS)}, got {kind!r}")
    _int("typesize", typesize, 1, MAX_TYPESIZE_BLOSC2)
    _int("nbytes", nbytes, 0, MAX_BUFFERSIZE)
    if nbytes % typesize:
        raise ValueError(f"nbytes {nbytes} is not a multiple of typesize {typesize}")
    tail = b""
    if kind == "value":
        if value is None:
            raise ValueError("kind 'value' needs value (typesize bytes)")
        tail = memoryview(value).cast("B").tobytes()
        if len(tail) != typesize:
            raise ValueError(f"value has {len(tail)} bytes, typesize is {typesize}")
    elif value is not None:
        raise ValueError(f"kind {kind!r} takes no value")
    if kind == "value" and nbytes == 0:
        # the value's width must divide a positive nbytes (rule H9): no
        # reader, blosckit's included, accepts an empty value chunk
        raise ValueError("kind 'value' needs nbytes > 0")
    if kind == "nan" and typesize not in fc.NAN_WIDTHS:
        raise ValueError("kind 'nan' needs 4- or 8-byte floats")
    bsize = stune.blocksize_blosc2(nbytes, typesize, 5, "blosclz", True, "forward_compat")
    hdr = {
        "version": VERSION_BLOSC2, "versionlz": CODEC_STREAM_VERSION,
        "flags": {"compformat": 0, "dont_split": False, "delta": False, "bitshuffle": True,
                  "memcpyed": False, "shuffle": True},
        "typesize": typesize if typesize <= stune.MAX_TYPESIZE else 1,
        "nbytes": nbytes, "blocksize": bsize, "cbytes": LEN_BLOSC2 + len(tail),
        "extended": {"filters": [0] * fc.NUM_FILTER_SLOTS, "udcodec": 0, "compcode_meta": 0,
                     "filters_meta": [0] * fc.NUM_FILTER_SLOTS,
                     "blosc2_flags2": {"reserved": 0, "vl_blocks": False},
                     "blosc2_flags": _b2flags(_SPECIAL_KINDS[kind])},
    }
    return fc.pack_header(hdr) + tail


# ---------------------------------------------------------------------------
# VL-block chunks
# ---------------------------------------------------------------------------

def compress_vlblocks(blocks: Iterable, *, typesize: int | None = None,
                      codec: str = "blosclz", clevel: int = 5, filters=("shuffle",)) -> bytes:
    """A version-6 chunk with one variable-length block per entry of
    ``blocks`` (each at least one byte), as C-Blosc2's
    ``blosc2_vlcompress_ctx`` writes it.  ``typesize`` (bytes per item) None
    takes the item size the blocks' buffers share (ValueError when they
    differ); an explicit value wins."""
    pairs = [_byte_view(b) for b in blocks]
    views = [v for v, _ in pairs]
    if not views:
        raise ValueError("at least one block is needed")
    if typesize is None:
        sizes = sorted({size for _, size in pairs})
        if len(sizes) > 1:
            raise ValueError(f"blocks of item sizes {sizes}: give typesize")
        typesize = sizes[0]
    if any(len(v) == 0 for v in views):
        raise ValueError("every VL block needs at least one byte")
    total = sum(len(v) for v in views)
    names = [f if isinstance(f, str) else (f[0] if f else None) for f in
             ((filters,) if isinstance(filters, str) else (filters or ()))]
    if "delta" in names:
        raise ValueError("delta in a VL-block chunk: C-Blosc2 cannot read it back "
                         "(see specs/encoder.md#vl-blocks)")
    plan = _plan(total, typesize, codec, clevel, filters, 0, "never", False, "blosc2", 1)
    plan.memcpyed = False
    plan.split = False
    plan.nblocks = len(views)
    plan.header_blocksize = len(views)
    plan.destsize = total + LEN_BLOSC2 * (len(views) + 1) + 64
    pos = LEN_BLOSC2 + fc.LEN_BSTART * len(views)
    starts, pieces = [], []
    for v in views:
        data = v
        if any(plan.slots):
            sub = _Plan(**{**plan.__dict__, "blocksize": len(v), "nblocks": 1, "leftover": 0})
            data = _filtered(sub, v, 0, len(v), v, VERSION_VLBLOCKS)
        n = len(v)
        maxout = min(n, plan.destsize - pos - _LEN_VLSIZE)
        buf = bytearray(_LEN_VLSIZE + max(maxout, 0))
        fc.FAST_VLSIZE.pack_into(buf, 0, n)
        # clevel 0 stores every block raw, as for regular chunks
        cbytes = plan.codec.compress_into(data, memoryview(buf)[_LEN_VLSIZE:], clevel) \
            if maxout > 0 and clevel > 0 else 0
        if cbytes == 0 or cbytes == n:
            piece: bytes | memoryview = fc.FAST_VLSIZE.pack(n) + data.tobytes()
        else:
            piece = memoryview(buf)[:_LEN_VLSIZE + cbytes]
        starts.append(pos)
        pieces.append(piece)
        pos += len(piece)
    hdr = {
        "version": VERSION_VLBLOCKS, "versionlz": CODEC_STREAM_VERSION,
        "flags": {**_flags(plan, False), "dont_split": True},
        "typesize": plan.typesize, "nbytes": total, "blocksize": len(views), "cbytes": pos,
        "extended": {"filters": plan.slots, "udcodec": plan.codec.code, "compcode_meta": 0,
                     "filters_meta": plan.metas,
                     "blosc2_flags2": {"reserved": 0, "vl_blocks": True},
                     "blosc2_flags": _b2flags()},
    }
    return b"".join([fc.pack_header(hdr), fc.fast_bstarts(len(starts)).pack(*starts), *pieces])
