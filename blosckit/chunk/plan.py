"""The encoding plan: the encoder's parameters checked, and every decision
C-Blosc2 3.3 / C-Blosc 1.21 take before they touch the data (filter slots,
block size, split, raw storage, the output budget).

A :class:`Plan` is immutable: the plans of repeated parameters are shared
(:func:`get_plan` caches them), and a writer that needs another shape of
chunk makes a variant with :func:`dataclasses.replace`.
specs/encoder.md gives the rules.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Sequence

from . import conventions, stune
from ..codecs.registry import CODECS_BY_NAME
from ..formats import chunk as fc
from ..formats import enums

__all__ = ["Plan", "make_plan", "get_plan", "filter_entries", "filter_slots", "check_int"]

LEN_BLOSC1 = fc.LEN_HEADER
LEN_BLOSC2 = fc.LEN_EXTENDED
MAX_BUFFERSIZE = 2**31 - 1 - LEN_BLOSC2      # largest input C-Blosc2 takes
MAX_BUFFERSIZE_BLOSC1 = 2**31 - 1 - LEN_BLOSC1
MAX_TYPESIZE_BLOSC2 = 536866816              # C-Blosc2's largest block (and item)
MAX_BLOCKSIZE = MAX_TYPESIZE_BLOSC2          # what any reader accepts in the header (rule H4)
MAX_THREADS = 64                             # the native layer's cap (BK_MAX_THREADS)
FORMATS = ("blosc2", "blosc1", "blosc1-compat")
NUM_FILTER_SLOTS = fc.NUM_FILTER_SLOTS
VERSION_BLOSC1 = 2
VERSION_BLOSC2 = 5
VERSION_VLBLOCKS = 6

FILTER_NAMES = ("shuffle", "bitshuffle", "delta", "trunc_prec", "bytedelta")
FILTER_IDS = {name: enums.lookup(enums.FILTERS, name) for name in FILTER_NAMES + ("nofilter",)}
_CODECS_BLOSC2 = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")
_CODECS_BLOSC1 = _CODECS_BLOSC2 + ("snappy",)
_DICT_CODECS = ("lz4", "lz4hc", "zstd")
_TRUNC_MANTISSA = {4: 23, 8: 52}
_BLOSC1_SHUFFLES = ("shuffle", "bitshuffle")


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything the encoder decided before touching the data.  Sizes are
    in bytes."""
    fmt: str                 # "blosc2", or "blosc1" for a 16-byte header
    codec: Any
    codec_name: str
    clevel: int
    typesize: int            # as stored (items over 255 bytes become 1-byte items)
    slots: tuple[int, ...]   # filter id per slot (0: empty)
    metas: tuple[int, ...]   # filter meta byte per slot
    nbytes: int
    blocksize: int           # the block size used to cut the input
    header_blocksize: int    # what the header says (a VL-block chunk: the number of blocks)
    nblocks: int
    leftover: int            # bytes of the last, shorter block (0: every block is whole)
    split: bool
    memcpyed: bool
    use_dict: bool
    overhead: int            # header bytes
    destsize: int            # the output budget: C's compressed size may not pass it
    flavor: str
    vl_blocks: bool = False  # a version-6 chunk of variable-length blocks
    # (filter id, meta) of each filter applied, in slot order (derived from
    # the slots, again for every variant)
    pipeline: tuple[tuple[int, int], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pipeline", tuple(
            (fid, meta) for fid, meta in zip(self.slots, self.metas) if fid
            # C-Blosc 1.x skips the byte shuffle of 1-byte items
            and not (self.fmt == "blosc1" and fid == FILTER_IDS["shuffle"]
                     and self.typesize == 1)))

    @property
    def version(self) -> int:
        """The chunk format version this plan writes."""
        if self.vl_blocks:
            return VERSION_VLBLOCKS
        return VERSION_BLOSC2 if self.fmt == "blosc2" else VERSION_BLOSC1

    def block_bytes(self, j: int) -> int:
        """Uncompressed bytes of block ``j``."""
        return self.leftover if (j == self.nblocks - 1 and self.leftover) else self.blocksize

    def block(self, src: memoryview, j: int) -> memoryview:
        """Block ``j`` of the input ``src``."""
        start = j * self.blocksize
        return src[start:start + self.block_bytes(j)]


def check_int(name: str, value, lo: int, hi: int | None = None) -> int:
    """``value`` when it is an int in ``lo..hi`` (no upper bound: None), else
    ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, not {type(value).__name__}")
    if value < lo or (hi is not None and value > hi):
        upper = "" if hi is None else f"..{hi}"
        raise ValueError(f"{name} must be in {lo}{upper}, got {value}")
    return value


# ---------------------------------------------------------------------------
# Filters
# ---------------------------------------------------------------------------

def filter_entries(filters) -> list:
    """The ``filters`` argument as one entry per slot: None, a name, a
    ``(name, meta)`` pair, or a sequence of those."""
    if filters is None:
        return []
    if isinstance(filters, str) or _is_pair(filters):
        return [filters]
    return list(filters)


def _is_pair(filters) -> bool:
    """One ``(name, meta)`` pair given bare."""
    return (isinstance(filters, tuple) and len(filters) == 2 and isinstance(filters[0], str)
            and isinstance(filters[1], int) and not isinstance(filters[1], bool))


def _name_meta(i: int, entry) -> tuple[str, int, bool]:
    """``(name, meta, bare)`` of entry ``i``; ``bare``: given without a meta."""
    if isinstance(entry, str):
        return entry, 0, True
    if isinstance(entry, (tuple, list)) and len(entry) == 2 and isinstance(entry[0], str):
        return entry[0], check_int(f"meta of filter {entry[0]!r}", entry[1], -128, 255), False
    raise ValueError(f"filter entry {i} must be a name or (name, meta), got {entry!r}")


def _bytedelta(meta: int, bare: bool, typesize: int, fmt: str) -> tuple[int, int]:
    """The slot python-blosc2 fills for bytedelta: none on 1-byte items, and
    the item size as the meta when none is given."""
    if typesize == 1 and fmt == "blosc2":
        return 0, meta
    if bare:
        if typesize > stune.MAX_TYPESIZE:
            raise ValueError("bytedelta's meta holds the item size, which is over 255: "
                             "give ('bytedelta', meta)")
        return FILTER_IDS["bytedelta"], typesize
    return FILTER_IDS["bytedelta"], meta


def _slot(i: int, entry, typesize: int, fmt: str) -> tuple[int, int] | None:
    """Entry ``i`` as ``(filter id, meta byte)``, None for an empty slot."""
    if entry is None:
        return None
    name, meta, bare = _name_meta(i, entry)
    if name == "nofilter":
        return None
    if name not in FILTER_NAMES:
        raise ValueError(f"unknown filter {name!r} (known: {', '.join(FILTER_NAMES)})")
    if name == "trunc_prec" and bare:
        raise ValueError("trunc_prec needs its meta: ('trunc_prec', bits_kept)")
    fid = FILTER_IDS[name]
    if name == "bytedelta":
        fid, meta = _bytedelta(meta, bare, typesize, fmt)
    return fid, fc.meta_byte(meta)


def filter_slots(filters, typesize: int, fmt: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Filter ids and meta bytes per slot: entry i goes to slot i."""
    entries = filter_entries(filters)
    if len(entries) > NUM_FILTER_SLOTS:
        raise ValueError(f"at most {NUM_FILTER_SLOTS} filters, got {len(entries)}")
    slots = [0] * NUM_FILTER_SLOTS
    metas = [0] * NUM_FILTER_SLOTS
    for i, entry in enumerate(entries):
        placed = _slot(i, entry, typesize, fmt)
        if placed is not None:
            slots[i], metas[i] = placed
    return tuple(slots), tuple(metas)


def _check_trunc(slots: Sequence[int], metas: Sequence[int], typesize: int) -> None:
    """trunc_prec keeps (meta >= 0) or zeroes (meta < 0) mantissa bits of
    4- or 8-byte floats: at least one bit stays."""
    for fid, meta in zip(slots, metas):
        if fid != FILTER_IDS["trunc_prec"]:
            continue
        mantissa = _TRUNC_MANTISSA.get(typesize)
        if mantissa is None:
            raise ValueError(f"trunc_prec works on 4- or 8-byte items, not typesize {typesize}")
        bits = meta - 256 if meta > 127 else meta
        zeroed = mantissa - bits if bits >= 0 else -bits
        if abs(bits) > mantissa or zeroed >= mantissa:
            raise ValueError(f"trunc_prec meta {bits} out of range for {typesize}-byte floats")


def _flags_hold(names: list[str]) -> bool:
    """Whether a 16-byte header's flags can hold the filters ``names``."""
    shuffles = [n for n in names if n in _BLOSC1_SHUFFLES]
    return (all(n in _BLOSC1_SHUFFLES + ("delta",) for n in names) and len(shuffles) <= 1
            and names.count("delta") <= 1)


def _blosc1_filters(slots: Sequence[int], metas: Sequence[int], fmt: str) -> list[str]:
    """The names of the filters a 16-byte header can hold as flags: one
    shuffle, optionally delta ("blosc1-compat" only), no metas."""
    used = [(f, m) for f, m in zip(slots, metas) if f]
    names = [enums.FILTERS[f] for f, _ in used]
    if not _flags_hold(names) or any(m for _, m in used):
        raise ValueError(f"format={fmt!r} takes at most one of shuffle/bitshuffle, optionally "
                         f"delta, without metas; got {names}")
    if "delta" in names and fmt == "blosc1":
        # C-Blosc 1.x has no delta and refuses such chunks ("Error -1")
        raise ValueError("format='blosc1' cannot hold delta: C-Blosc 1.x has no delta filter; "
                         "format='blosc1-compat' writes it for C-Blosc2 readers")
    return names


# ---------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------

def _codec(codec: str, fmt: str) -> Any:
    """The codec object for ``codec`` in format ``fmt``."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    allowed = _CODECS_BLOSC2 if fmt == "blosc2" else _CODECS_BLOSC1
    if codec not in allowed:
        raise ValueError(f"unknown codec {codec!r} for format {fmt} (known: {', '.join(allowed)})")
    codec_obj = CODECS_BY_NAME.get(codec)
    if codec_obj is None:
        raise ValueError(f"codec {codec!r} is not available (its package is not installed)")
    return codec_obj


def _check_numbers(typesize, clevel, blocksize, nthreads, fmt: str) -> None:
    check_int("clevel", clevel, 0, 9)
    check_int("typesize", typesize, 1,
              MAX_TYPESIZE_BLOSC2 if fmt == "blosc2" else stune.MAX_TYPESIZE)
    # an explicit block size over the format's maximum makes a chunk no
    # reader (C-Blosc2 and blosckit included) accepts, whatever the input size
    check_int("blocksize", blocksize, 0, MAX_BLOCKSIZE)
    check_int("nthreads", nthreads, 1, MAX_THREADS)
    # C-Blosc 1.x rounds a forced block size down to whole items itself
    # (stune.blocksize_blosc1); C-Blosc2 would store a size it cannot read
    if blocksize and blocksize % typesize and fmt != "blosc1":
        raise ValueError(f"blocksize {blocksize} is not a multiple of typesize {typesize}")


def _check_modes(splitmode, use_dict) -> None:
    if splitmode not in enums.SPLITMODES.values():
        raise ValueError(f"unknown splitmode {splitmode!r}")
    if not isinstance(use_dict, bool):
        raise ValueError("dict must be True or False")


def _cut(nbytes: int, blocksize: int) -> tuple[int, int]:
    """``(number of blocks, bytes of a shorter last block or 0)``."""
    return (-(-nbytes // blocksize), nbytes % blocksize) if nbytes else (0, 0)


# ---------------------------------------------------------------------------
# Plans
# ---------------------------------------------------------------------------

def make_plan(nbytes: int, typesize, codec, clevel, filters, blocksize, splitmode, use_dict,
              fmt, nthreads) -> Plan:
    """The plan for ``nbytes`` of input with :func:`blosckit.compress`'s
    parameters (``use_dict``: its ``dict``, ``fmt``: its ``format``);
    ValueError for a bad one.  Codec, filter and split mode may be
    python-blosc2's enum members (see conventions)."""
    codec = conventions.codec_name(codec)
    splitmode = conventions.splitmode_name(splitmode)
    filters = conventions.filters_named(filters)
    codec_obj = _codec(codec, fmt)
    _check_numbers(typesize, clevel, blocksize, nthreads, fmt)
    _check_modes(splitmode, use_dict)
    slots, metas = filter_slots(filters, typesize, fmt)
    if fmt != "blosc2":
        return _plan_blosc1(nbytes, typesize, codec, codec_obj, clevel, slots, metas,
                            blocksize, splitmode, use_dict, fmt)
    return _plan_blosc2(nbytes, typesize, codec, codec_obj, clevel, slots, metas,
                        blocksize, splitmode, use_dict)


# Frames hold thousands of chunks compressed with the same parameters and,
# but for the last, the same size: their plan is computed once.
_cached_plan = functools.lru_cache(maxsize=256)(make_plan)


def get_plan(nbytes: int, typesize, codec, clevel, filters, blocksize, splitmode, use_dict,
             fmt, nthreads) -> Plan:
    """:func:`make_plan`, computed once for repeated parameters."""
    try:
        return _cached_plan(nbytes, typesize, codec, clevel, filters, blocksize, splitmode,
                            use_dict, fmt, nthreads)
    except TypeError:           # unhashable filters (lists): plan without the cache
        return make_plan(nbytes, typesize, codec, clevel, filters, blocksize, splitmode,
                         use_dict, fmt, nthreads)


def _plan_blosc2(nbytes, typesize, codec, codec_obj, clevel, slots, metas, blocksize,
                 splitmode, use_dict) -> Plan:
    """The plan of a 32-byte-header chunk."""
    if nbytes > MAX_BUFFERSIZE:
        raise ValueError(f"input of {nbytes} bytes is larger than {MAX_BUFFERSIZE}")
    if use_dict and codec not in _DICT_CODECS:
        raise ValueError(f"dict needs one of {', '.join(_DICT_CODECS)}, not {codec!r}")
    stored_ts = typesize if typesize <= stune.MAX_TYPESIZE else 1
    _check_trunc(slots, metas, stored_ts)
    shuffle = FILTER_IDS["shuffle"] in slots
    bsize = stune.blocksize_blosc2(nbytes, typesize, clevel, codec, shuffle, splitmode, blocksize)
    nblocks, leftover = _cut(nbytes, bsize)
    destsize = nbytes + LEN_BLOSC2
    memcpyed = (clevel == 0 or nbytes < stune.MIN_BUFFER_BLOSC2
                or LEN_BLOSC2 + fc.LEN_BSTART * nblocks > destsize)
    # C-Blosc2 would store the caller's block size while cutting blocks of
    # another size (an explicit size over an input that is not a whole
    # number of items) and could not read its chunk; store the real one.
    header_bsize = stune.header_blocksize_blosc2(nbytes, bsize, blocksize) if memcpyed else bsize
    split = (not memcpyed) and stune.split_blosc2(splitmode, codec, clevel, shuffle,
                                                  stored_ts, bsize)
    return Plan("blosc2", codec_obj, codec, clevel, stored_ts, slots, metas, nbytes, bsize,
                header_bsize, nblocks, leftover, split, memcpyed,
                use_dict and clevel > 0, LEN_BLOSC2, destsize, "blosc2")


def _plan_blosc1(nbytes, typesize, codec, codec_obj, clevel, slots, metas, blocksize,
                 splitmode, use_dict, fmt: str = "blosc1") -> Plan:
    """The plan of a 16-byte-header chunk.  ``fmt`` "blosc1" is what C-Blosc
    1.x reads; "blosc1-compat" also takes delta (flag bit 3), which only
    C-Blosc2 reads."""
    if use_dict:
        raise ValueError(f"format={fmt!r} has no dictionaries")
    if nbytes > MAX_BUFFERSIZE_BLOSC1:
        raise ValueError(f"input of {nbytes} bytes is larger than {MAX_BUFFERSIZE_BLOSC1}")
    names = _blosc1_filters(slots, metas, fmt)
    # A Blosc1 header keeps filters as flags; a reader places them in slots
    # (delta before the shuffle)
    slots = tuple(fc.blosc1_slots(sum(bit for bit, _slot, fid in fc.BLOSC1_FLAG_SLOTS
                                      if enums.FILTERS[fid] in names)))
    bsize = stune.blocksize_blosc1(nbytes, typesize, clevel, codec, splitmode, blocksize)
    nblocks, leftover = _cut(nbytes, bsize)
    memcpyed = clevel == 0 or nbytes < stune.MIN_BUFFER_BLOSC1
    split = stune.split_blosc1(splitmode, codec, typesize, bsize)
    return Plan("blosc1", codec_obj, codec, clevel, typesize, slots, (0,) * NUM_FILTER_SLOTS,
                nbytes, bsize, bsize, nblocks, leftover, split, memcpyed, False, LEN_BLOSC1,
                nbytes + LEN_BLOSC1, "blosc1")
