"""hypothesis strategies for Blosc chunks and Blosc2 frames, for the people
who test Blosc readers (needs the ``fuzz`` extra: ``pip install blosckit[fuzz]``).

* :func:`chunks` draws ``(data, chunk)``: a valid chunk and the bytes a
  correct reader decodes it to, over every codec, filter pipeline (with
  metas), typesize, blocksize, split mode, dictionary, memcpyed and special
  chunk, VL-block chunk, both formats, and layouts only the low-level
  builder makes (blocks stored out of order, raw and run-length streams).
* :func:`frames` draws ``(chunks_data, frame)``: a contiguous frame and each
  chunk's decoded bytes, with metalayers, vlmetalayers and special chunks,
  or an n-d array (b2nd) frame; :func:`sframes` the same as sparse-frame
  files.
* :func:`corrupt` mutates drawn blobs where the format is fragile: the
  fields the declarations in :mod:`blosckit.formats` name (set to boundary
  values), msgpack markers, truncation, splices of two blobs, random bytes,
  and the named structure-aware mutations of :mod:`.mutations`, each the
  way one class of fuzzing findings was made (``mutations=`` asks for
  some of them only).

Strategies shrink toward small data and few chunks.  ``compatible_with=
"c-blosc2"`` keeps only what C-Blosc2 reads identically, decided by the
known-divergences table (:mod:`blosckit.divergences`).
"""
from __future__ import annotations

import functools
import math
import re
import struct
from typing import Any, Callable, Iterable, Iterator, Sequence

import msgpack
from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ..chunk.build import build_chunk
from ..chunk.encode import compress
from ..chunk.special import compress_special
from ..chunk.vlblocks import compress_vlblocks
from ..chunk.read import decompress
from ..errors import FormatError
from ..formats import b2nd as fb
from ..formats import chunk as fc
from ..formats.frame import looks_like_frame
from ..frame.b2nd import chunk_data, compress_b2nd
from ..frame.build import build_frame
from ..frame.read import open_frame
from ..frame.sframe import sframe_files
from ..tools import divergences
from ..tools import inspect as _inspect
from . import mutations as _mutations

__all__ = ["chunks", "frames", "sframes", "corrupt", "targets", "CODECS", "FORMATS"]

CODECS = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")
FORMATS = ("blosc1", "blosc2")
KINDS = ("compressed", "special", "vlblocks", "lowlevel")
_LOSSY = ("trunc_prec",)
_FILTER_NAMES = ("shuffle", "bitshuffle", "delta", "trunc_prec", "bytedelta")
_SPLITMODES = ("always", "never", "auto", "forward_compat")
_DICT_MIN = 16 << 10
_INDEX = re.compile(r"\[[^\]]*\]")     # [3], ['name']: one kind of field


def _check(name: str, value, allowed: Iterable) -> None:
    allowed = tuple(allowed)
    bad = [v for v in (value if isinstance(value, (list, tuple)) else [value])
           if v not in allowed]
    if bad:
        raise InvalidArgument(f"{name}={value!r}: {bad[0]!r} is not one of {allowed}")


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------

@st.composite
def _data(draw, max_nbytes: int, typesize: int, min_nbytes: int = 0) -> bytes:
    """Bytes that shrink toward few items: runs, ramps, noise or a mix, so
    codecs and filters meet both easy and hard input."""
    top = max(0, max_nbytes // typesize)
    nitems = draw(st.integers(min(top, -(-min_nbytes // typesize)), top))
    shape = draw(st.sampled_from(("ramp", "runs", "noise", "zeros")))
    n = nitems * typesize
    if shape == "zeros":
        return bytes(n)
    if shape == "noise":
        return draw(st.binary(min_size=n, max_size=n))
    if shape == "ramp":
        start = draw(st.integers(0, 255))
        return bytes((start + i // typesize) % 256 if i % typesize == 0 else 0
                     for i in range(n))
    run = draw(st.integers(1, 64))
    value = draw(st.integers(0, 255))
    return bytes(value if (i // run) % 2 else 0 for i in range(n))


# ---------------------------------------------------------------------------
# Chunks
# ---------------------------------------------------------------------------

@st.composite
def _pipeline(draw, typesize: int, fmt: str) -> tuple:
    """A filter pipeline with metas: at most one of shuffle/bitshuffle for
    Blosc1, up to 6 slots for Blosc2."""
    if fmt == "blosc1":
        return (draw(st.sampled_from(("shuffle", "bitshuffle", "nofilter"))),)
    n = draw(st.integers(0, 3))
    out: list[Any] = []
    for _ in range(n):
        name = draw(st.sampled_from(_FILTER_NAMES))
        if name == "trunc_prec":
            if typesize not in (4, 8):
                continue
            out.append((name, draw(st.integers(1, 23 if typesize == 4 else 52))))
        elif name == "shuffle" and typesize > 1 and draw(st.booleans()):
            out.append((name, draw(st.integers(1, typesize))))    # bytes of each item
        else:
            out.append(name)
    return tuple(out) or ("nofilter",)


def _lossy(filters) -> bool:
    """A pipeline that drops bits (frames want data that reads back whole)."""
    return any(isinstance(f, tuple) and f[0] in _LOSSY for f in filters)


@st.composite
def _compressed(draw, codecs, fmt, max_nbytes) -> tuple[bytes, bytes]:
    codec = draw(st.sampled_from(codecs))
    typesize = draw(st.sampled_from((1, 2, 4, 8)) | st.integers(1, 255))
    # a dictionary is trained only from 16 KiB of input on
    use_dict = fmt == "blosc2" and codec in ("lz4", "lz4hc", "zstd") and draw(st.booleans())
    data = draw(_data(max_nbytes, typesize, _DICT_MIN if use_dict else 0))
    filters = draw(_pipeline(typesize, fmt))
    kw: dict[str, Any] = dict(typesize=typesize, codec=codec, clevel=draw(st.integers(0, 9)),
                              filters=filters, format=fmt)
    if fmt == "blosc2":
        kw["splitmode"] = draw(st.sampled_from(_SPLITMODES))
        kw["dict"] = use_dict
        if draw(st.booleans()):
            kw["blocksize"] = draw(st.sampled_from((16, 64, 256, 4096))) * typesize
    chunk = compress(data, **kw)
    lossy = _lossy(filters)
    return (decompress(chunk) if lossy else data), chunk


@st.composite
def _special(draw, max_nbytes) -> tuple[bytes, bytes]:
    kind = draw(st.sampled_from(("zeros", "nan", "value", "uninit")))
    typesize = draw(st.sampled_from((4, 8))) if kind == "nan" else draw(st.integers(1, 16))
    least = 1 if kind == "value" else 0          # a value chunk holds at least one item
    nbytes = draw(st.integers(least, max(least, max_nbytes // typesize))) * typesize
    if kind == "value":
        value = draw(st.binary(min_size=typesize, max_size=typesize))
        return value * (nbytes // typesize), compress_special("value", nbytes,
                                                              typesize=typesize, value=value)
    chunk = compress_special(kind, nbytes, typesize=typesize)
    if kind == "nan":
        unit = struct.pack("<f" if typesize == 4 else "<d", math.nan)
        return unit * (nbytes // typesize), chunk
    # uninit: no defined content; blosckit (like a zeroed buffer) gives zeros
    return bytes(nbytes), chunk


@st.composite
def _vlblocks(draw, codecs, max_nbytes) -> tuple[bytes, bytes]:
    n = draw(st.integers(1, 4))
    blocks = [draw(st.binary(min_size=1, max_size=max(1, max_nbytes // n))) for _ in range(n)]
    chunk = compress_vlblocks(blocks, typesize=1, codec=draw(st.sampled_from(codecs)),
                              clevel=draw(st.integers(0, 9)), filters=())
    return b"".join(blocks), chunk


def _stream(block: bytes) -> dict:
    """A raw stream, or a run-length stream when the block is one byte value
    (a zero run is csize 0)."""
    if block and block.count(block[0]) == len(block):
        if block[0] == 0:
            return {"csize": 0, "token": None, "cdata": None}
        return {"csize": -block[0], "token": 1, "cdata": None}
    return {"csize": len(block), "token": None, "cdata": block}


@st.composite
def _lowlevel(draw, max_nbytes) -> tuple[bytes, bytes]:
    """Valid layouts writers rarely make: version-5 chunks of raw and run
    streams whose blocks are stored in any order (bstarts unsorted)."""
    blocksize = draw(st.sampled_from((8, 16, 64)))
    nblocks = draw(st.integers(1, max(1, min(8, max_nbytes // blocksize))))
    data = b"".join(draw(st.sampled_from((bytes(blocksize), b"\x07" * blocksize)) |
                         st.binary(min_size=blocksize, max_size=blocksize))
                    for _ in range(nblocks))
    blocks = [[_stream(data[j * blocksize:(j + 1) * blocksize])] for j in range(nblocks)]
    order = draw(st.permutations(range(nblocks)))
    header = {"version": 5, "versionlz": 1,
              "flags": {"compformat": 0, "dont_split": True, "delta": False,
                        "bitshuffle": True, "memcpyed": False, "shuffle": True},
              "typesize": 1, "nbytes": len(data), "blocksize": blocksize, "cbytes": None,
              "extended": {"filters": [0] * fc.NUM_FILTER_SLOTS, "udcodec": 0,
                           "compcode_meta": 0, "filters_meta": [0] * fc.NUM_FILTER_SLOTS,
                           "blosc2_flags2": {"reserved": 0, "vl_blocks": False},
                           "blosc2_flags": {"instrumented": False, "special": 0,
                                            "lazy": False, "unimplemented": False,
                                            "big_endian": False, "use_dict": False}}}
    start = fc.LEN_EXTENDED + fc.LEN_BSTART * nblocks
    sizes = [sum(fc.LEN_CSIZE + (fc.LEN_TOKEN if s["token"] is not None else 0)
                 + len(s["cdata"] or b"") for s in b) for b in blocks]
    bstarts = [0] * nblocks
    for j in order:                        # lay the blocks out in the drawn order
        bstarts[j] = start
        start += sizes[j]
    return data, build_chunk(header, blocks, bstarts=bstarts)


def chunks(*, codecs: Sequence[str] | None = None, format: str | None = None,
           max_nbytes: int = 32768, compatible_with: str | None = None,
           kinds: Sequence[str] = KINDS) -> st.SearchStrategy[tuple[bytes, bytes]]:
    """``(data, chunk)`` pairs: ``chunk`` is valid and blosckit decompresses
    it to ``data`` (for lossy filters, ``data`` is what they keep).

    ``codecs`` narrows the codec names (default all; snappy makes Blosc1
    chunks only), ``format`` picks ``"blosc1"`` or ``"blosc2"``
    chunks (default both), ``max_nbytes`` bounds the decoded size in bytes,
    ``kinds`` the makers (``"compressed"``, ``"special"``, ``"vlblocks"``,
    ``"lowlevel"``: unusual layouts from :func:`blosckit.build_chunk`), and
    ``compatible_with="c-blosc2"`` keeps only chunks C-Blosc2 3.3.5 decodes
    to ``data`` (no known divergence applies)."""
    names = tuple(codecs) if codecs is not None else CODECS + ("snappy",)
    _check_chunk_args(names, format, kinds, compatible_with, max_nbytes)
    fmts = (format,) if format is not None else FORMATS
    parts = [_compressed(usable, fmt, max_nbytes)
             for fmt, usable in _compressed_kinds(names, fmts, kinds)]
    if "blosc2" in fmts:
        parts += _blosc2_parts(names, kinds, max_nbytes)
    if not parts:
        raise InvalidArgument("no chunk kind fits these constraints")
    out = st.one_of(*parts)
    if compatible_with == "c-blosc2":
        out = out.filter(lambda pair: not divergences.reader_divergences(pair[1]))
    return out


def _check_chunk_args(names: tuple, format: str | None, kinds: Sequence[str],
                      compatible_with: str | None, max_nbytes: int) -> None:
    _check("codecs", names, CODECS + ("snappy",))
    if format is not None:
        _check("format", format, FORMATS)
    _check("kinds", tuple(kinds), KINDS)
    if compatible_with not in (None, "c-blosc2"):
        raise InvalidArgument(f"compatible_with={compatible_with!r}: only 'c-blosc2'")
    if not isinstance(max_nbytes, int) or max_nbytes < 0:
        raise InvalidArgument(f"max_nbytes={max_nbytes!r} must be a non-negative int")
    if not names:
        raise InvalidArgument("codecs=(): at least one codec")


def _compressed_kinds(names: tuple, fmts: tuple,
                      kinds: Sequence[str]) -> Iterator[tuple[str, tuple]]:
    """``(format, its usable codecs)`` for each format whose compressed
    chunks are drawn (snappy writes Blosc1 chunks only)."""
    if "compressed" not in kinds:
        return
    for fmt in fmts:
        usable = tuple(c for c in names if fmt == "blosc1" or c != "snappy")
        if usable:
            yield fmt, usable


def _blosc2_parts(names: tuple, kinds: Sequence[str], max_nbytes: int) -> list:
    """The strategies of the Blosc2-only kinds asked for, in their order."""
    b2_codecs = tuple(c for c in names if c != "snappy")
    parts = [_blosc2_kind(k, b2_codecs, max_nbytes) for k in kinds]
    return [p for p in parts if p is not None]


def _blosc2_kind(kind: str, b2_codecs: tuple, max_nbytes: int) -> st.SearchStrategy | None:
    """The strategy of a Blosc2-only kind, None when it draws nothing here."""
    if kind == "special":
        return _special(max_nbytes)
    if kind == "vlblocks" and b2_codecs:
        return _vlblocks(b2_codecs, max_nbytes)
    if kind == "lowlevel":
        return _lowlevel(max_nbytes)
    return None


# ---------------------------------------------------------------------------
# Frames
# ---------------------------------------------------------------------------

_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-2**40, 2**40) |
                       st.text(max_size=12), lambda kids: st.lists(kids, max_size=3),
                       max_leaves=6)


# How a frame's chunks are sized and made: of the frame's chunk size (the
# last one shorter), of sizes of their own (a variable-size frame, chunksize
# 0, as python-blosc2's append_data of a shorter chunk makes one), or
# VL-block chunks (each chunk a few variable-length blocks)
CHUNKINGS = ("fixed", "variable", "vlblocks")


@st.composite
def _frame(draw, max_chunks: int, layouts: tuple[int, ...],
           chunkings: tuple[str, ...] = ("fixed",),
           stored_specials: bool = False) -> tuple[list[bytes], bytes]:
    typesize = draw(st.sampled_from((1, 2, 4, 8)))
    codec = draw(st.sampled_from(CODECS))
    chunk_items = draw(st.integers(1, 256))
    chunksize = chunk_items * typesize
    n = draw(st.integers(1, max_chunks))
    filters = draw(_pipeline(typesize, "blosc2").filter(lambda f: not _lossy(f)))
    # one way drawn nothing (the draws of a fixed seed stay those of before)
    chunking = chunkings[0] if len(chunkings) == 1 else draw(st.sampled_from(chunkings))
    datas, stored = [], []
    for i in range(n):
        size = chunksize if i < n - 1 and chunking != "variable" else \
            draw(st.integers(1, chunk_items)) * typesize
        d, c = _frame_chunk(draw, chunking, size, typesize, codec, filters, stored_specials)
        datas.append(d)
        stored.append(c)
    if chunking == "variable":
        chunksize = 0
    layout = draw(st.sampled_from(layouts))
    meta = draw(st.dictionaries(_NAMES.filter(lambda s: s not in fb.NAMES), _VALUES,
                                min_size=1 if layout == 12 else 0,      # 12: with metalayers,
                                max_size=3 if layout != 11 else 0))     # 11: without
    vlmeta = draw(st.dictionaries(_NAMES, _VALUES, max_size=3))
    frame = build_frame(stored, chunksize=chunksize, layout=layout,
                        metalayers={k: msgpack.packb(v) for k, v in meta.items()},
                        vlmetalayers={k: msgpack.packb(v) for k, v in vlmeta.items()})
    return datas, frame


@st.composite
def _b2nd_frame(draw, max_chunks: int) -> tuple[list[bytes], bytes]:
    """An n-d array frame: small extents, edge chunks and blocks, blocks
    wider than chunks, 0-d arrays, empty ones, and now and then 16
    dimensions (most of them 1, so the grid stays small)."""
    ndim = draw(st.sampled_from((1, 2, 3, 0, 1, 2, 3, 3, 16)))   # 3-d arrays are often empty
    shape, cshape, bshape = [], [], []
    for d in range(ndim):
        s = draw(st.integers(0, 6)) if ndim < 16 or d >= 14 else 1
        c = draw(st.integers(1, max(s, 1) + 1))
        b = draw(st.integers(1, c + 1))
        shape.append(s)
        cshape.append(c)
        bshape.append(b)
    if math.prod(fb.chunk_grid(shape, cshape)) > max_chunks:
        cshape = [max(s, 1) for s in shape]           # one chunk per dimension
        bshape = [min(b, c) for b, c in zip(bshape, cshape)]
    ts = draw(st.sampled_from((1, 2, 4, 8)))
    dtype = {1: "|u1", 2: "<i2", 4: "<f4", 8: "<f8"}[ts]
    data = _fill(draw, math.prod(shape) * ts)
    codec = draw(st.sampled_from(CODECS))
    filters = draw(_pipeline(ts, "blosc2").filter(lambda f: not _lossy(f)))
    frame = compress_b2nd(data, shape=shape, dtype=dtype, chunkshape=cshape,
                          blockshape=bshape, codec=codec, clevel=draw(st.integers(1, 9)),
                          filters=filters)
    return chunk_data(data, shape, cshape, bshape, ts), frame


def _frame_chunk(draw, chunking: str, size: int, typesize: int, codec: str,
                 filters: tuple, stored_specials: bool) -> tuple[bytes, bytes]:
    """One chunk of a frame holding ``size`` bytes, and that data: a
    special chunk (zeros, NaN and uninit become special offsets in a
    fixed-size frame; with ``stored_specials`` also a repeated value, which
    is stored), a VL-block chunk (a frame holds VL-block chunks only:
    C-Blosc2 refuses a mix), or a compressed one.  A function of ``draw``,
    not a strategy of its own, so that a fixed seed draws what it drew
    before these kinds came."""
    kinds = (None, None, None, "zeros", "nan", "uninit") + (("value",) if stored_specials else ())
    special = None if chunking == "vlblocks" else draw(st.sampled_from(kinds))
    if special == "nan" and typesize not in (4, 8):
        special = "zeros"
    if special == "value":
        value = draw(st.binary(min_size=typesize, max_size=typesize))
        return value * (size // typesize), compress_special("value", size, typesize=typesize,
                                                            value=value)
    if special is not None:
        c = compress_special(special, size, typesize=typesize)
        return decompress(c), c
    d = _fill(draw, size)
    if chunking == "vlblocks":
        cuts = sorted(set(draw(st.lists(st.integers(1, max(1, size // typesize - 1)),
                                        max_size=3))))
        edges = [0, *(k * typesize for k in cuts if k * typesize < size), size]
        blocks = [d[a:b] for a, b in zip(edges, edges[1:])]
        return d, compress_vlblocks(blocks, typesize=typesize, codec=codec, filters=())
    return d, compress(d, typesize=typesize, codec=codec, filters=filters,
                       clevel=draw(st.integers(1, 9)))


def _fill(draw, size: int) -> bytes:
    """``size`` bytes that shrink toward zeros."""
    head = draw(st.binary(max_size=min(size, 64)))
    return (head * (size // max(1, len(head)) + 1))[:size] if head else bytes(size)


LAYOUTS = (14, 13, 12, 11)


def frames(*, max_chunks: int = 8, compatible_with: str | None = None,
           layouts: Sequence[int] = LAYOUTS, b2nd: bool = True,
           chunkings: Sequence[str] = ("fixed",), stored_specials: bool = False
           ) -> st.SearchStrategy[tuple[list[bytes], bytes]]:
    """``(chunks_data, frame)`` pairs: a valid contiguous frame and each
    chunk's decoded bytes (what python-blosc2's ``schunk[:]`` joins).

    Super-chunk frames come with metalayers and vlmetalayers (msgpack
    values, as python-blosc2 stores them) and zeros / NaN / uninit chunks
    stored as special offsets; with ``b2nd`` (the current layout only) also
    n-d array frames: 0 to 3 or 16 dimensions, edge chunks and blocks,
    blocks wider than chunks, empty arrays (a chunk's data is then its
    padded bytes).  ``max_chunks`` bounds the chunk count; ``layouts`` the
    header layouts drawn (14 elements today; 13, 12 and 11 in frames
    written before 2021); ``compatible_with="c-blosc2"`` keeps frames
    C-Blosc2 and python-blosc2 read alike (the current layout, no uninit
    chunks: C-Blosc2 leaves their bytes undefined, no frame divergence).
    ``chunkings`` picks how super-chunk frames are chunked (drawn among
    those given): ``"fixed"`` (every chunk of the frame's chunk size, the
    last shorter), ``"variable"`` (chunks of their own sizes: a
    variable-size frame, chunksize 0, which C-Blosc2's slice reader cannot
    read: V22), ``"vlblocks"`` (VL-block chunks); ``stored_specials`` adds
    special chunks of a repeated value (stored as chunks).
    :func:`sframes` gives the same frames as sparse-frame files."""
    if not isinstance(max_chunks, int) or max_chunks < 1:
        raise InvalidArgument(f"max_chunks={max_chunks!r} must be a positive int")
    if compatible_with not in (None, "c-blosc2"):
        raise InvalidArgument(f"compatible_with={compatible_with!r}: only 'c-blosc2'")
    _check("layouts", tuple(layouts), LAYOUTS)
    _check("chunkings", tuple(chunkings), CHUNKINGS)
    if not layouts or not chunkings:
        raise InvalidArgument("layouts and chunkings: at least one each")
    out = _frame(max_chunks, tuple(layouts), tuple(chunkings), stored_specials)
    if b2nd and 14 in layouts:
        out = st.one_of(out, _b2nd_frame(max_chunks))
    if compatible_with == "c-blosc2":
        out = out.filter(_c_blosc2_frame)
    return out


def sframes(*, max_chunks: int = 8, compatible_with: str | None = None, b2nd: bool = True
            ) -> st.SearchStrategy[tuple[list[bytes], dict[str, bytes]]]:
    """``(chunks_data, files)``: the frames of :func:`frames` (current
    layout) as sparse frames, ``files`` mapping each file name of the
    directory (``chunks.b2frame``, ``00000000.chunk``, ...) to its bytes.
    Write them into an empty directory to open it (``open_frame(path)``,
    ``blosc2.open(path)``)."""
    return frames(max_chunks=max_chunks, compatible_with=compatible_with, layouts=(14,),
                  b2nd=b2nd).map(lambda pair: (pair[0], sframe_files(pair[1])))


def _c_blosc2_frame(pair) -> bool:
    f = open_frame(pair[1])
    if "uninit" in f.offsets or divergences.frame_divergences(f):
        return False
    return not any(divergences.reader_divergences(f.chunk(i)) for i in range(f.nchunks)
                   if isinstance(f.offsets[i], int))


# ---------------------------------------------------------------------------
# Corruption
# ---------------------------------------------------------------------------

def targets(blob: bytes) -> list[tuple[str, int, int, str]]:
    """``(path, offset, size, byte order)`` of every field the declarations
    name in ``blob`` (a chunk or a frame; as far as it parses), for
    format-aware mutation."""
    return list(_targets(bytes(blob)))


@functools.lru_cache(maxsize=64)
def _targets(blob: bytes) -> tuple[tuple[str, int, int, str], ...]:
    # corrupt() draws from a few seed blobs many times: walk each once
    nodes = (_inspect.frame_nodes(blob) if looks_like_frame(blob)
             else _inspect.chunk_nodes(blob))
    out = []
    try:
        for n in nodes:
            if n.size and n.size <= 8 and n.bit is None:
                order = ">" if n.path.startswith(("frame.header", "frame.metalayers",
                                                  "frame.trailer")) else "<"
                out.append((n.path, n.offset, n.size, order))
    except (FormatError, IndexError):
        pass                            # a damaged blob: the fields before the damage
    return tuple(out)


def _boundary(size: int) -> list[int]:
    top = (1 << (8 * size)) - 1
    return sorted({0, 1, top, top >> 1, (top >> 1) + 1, top - 1})


def _picker(draw) -> _mutations.Pick:
    """A named mutation's ``pick``, drawn (so that hypothesis shrinks it)."""
    return lambda options: draw(st.sampled_from(list(options)))


@st.composite
def _named(draw, blob: bytes, names: Sequence[str],
           observe: Callable[[str], None] | None) -> bytes | None:
    """``blob`` changed by one of the named mutations that fits it (tried in
    a drawn order), or None when none does."""
    for name in draw(st.permutations(list(names))):
        out = _mutations.apply(name, blob, _picker(draw))
        if out is not None:
            if observe is not None:
                observe(f"mutation {name}")
            return out
    return None


@st.composite
def _mutate(draw, blob: bytes, other: bytes,
            observe: Callable[[str], None] | None) -> bytes:
    how = draw(st.sampled_from(("field", "field", "field", "marker", "truncate", "splice",
                                "bytes", "named", "named")))
    if how == "named":
        name = draw(st.sampled_from(list(_mutations.MUTATIONS)))
        out = draw(_named(blob, [name], observe))
        if out is not None:
            return out
        how = "field"               # the drawn class does not fit this blob
    fields = targets(blob) if how in ("field", "marker") else []
    if how == "marker":
        fields = [f for f in fields if f[0].rsplit(".", 1)[-1].endswith("marker")] or fields
    if fields:
        # a kind of field first, then one of its instances: the header of
        # the one b2nd metalayer is as likely a target as a chunk header
        kinds: dict[str, list] = {}
        for f in fields:
            kinds.setdefault(_INDEX.sub("[]", f[0]), []).append(f)
        path, at, size, order = draw(st.sampled_from(kinds[draw(st.sampled_from(list(kinds)))]))
        value = draw(st.sampled_from(_boundary(size)) | st.integers(0, (1 << 8 * size) - 1))
        if observe is not None:
            observe(path)
        return blob[:at] + value.to_bytes(size, "big" if order == ">" else "little") \
            + blob[at + size:]
    if how == "truncate" or not blob:
        return blob[:draw(st.integers(0, max(0, len(blob) - 1)))]
    if how == "splice":
        cut = draw(st.integers(0, len(blob)))
        return blob[:cut] + other[draw(st.integers(0, len(other))):]
    at = draw(st.integers(0, len(blob) - 1))
    noise = draw(st.binary(min_size=1, max_size=8))
    return blob[:at] + noise + blob[at + len(noise):]


def corrupt(blobs: st.SearchStrategy[bytes] | Sequence[bytes], *,
            observe: Callable[[str], None] | None = None,
            mutations: Sequence[str] | None = None) -> st.SearchStrategy[bytes]:
    """Blobs drawn from ``blobs`` (a strategy, or a list of blobs) and then
    damaged once: a declared field set to a boundary or random value, a
    msgpack marker changed, a truncation, a splice with a second blob, a
    few random bytes, or one of the named structure-aware mutations of
    :mod:`blosckit.testing.mutations` (each makes one class of the fuzzing
    findings: a header typesize of 2**31-1, a metalayer name twice, a b2nd
    block shape that no longer fits the chunks, ...).  ``mutations``, when
    given, names the only mutations to apply: from a list of blobs, a
    mutation is drawn first (each as likely as the others) and then a blob
    it fits; from a strategy, a blob and then a mutation that fits it (a
    blob none fits is rejected).  ``observe``,
    when given, is called with the path of each field mutated (for coverage
    counts), and with ``"mutation <name>"`` for a named mutation."""
    source = blobs if isinstance(blobs, st.SearchStrategy) else st.sampled_from(list(blobs))
    if mutations is not None:
        unknown = [m for m in mutations if m not in _mutations.MUTATIONS]
        if unknown or not mutations:
            raise InvalidArgument(f"mutations={mutations!r}: each one of "
                                  f"{sorted(_mutations.MUTATIONS)}")
        if not isinstance(blobs, st.SearchStrategy):
            return _named_classes([bytes(b) for b in blobs], mutations, observe)

    @st.composite
    def _one(draw):
        blob = bytes(draw(source))
        if mutations is not None:
            out = draw(_named(blob, mutations, observe))
            if out is None:
                reject()
            return out
        other = bytes(draw(source))
        return draw(_mutate(blob, other, observe))
    return _one()


def _named_classes(blobs: list[bytes], names: Sequence[str],
                   observe: Callable[[str], None] | None) -> st.SearchStrategy[bytes]:
    """A named mutation drawn first (each class as likely as the others),
    then a blob of the list it fits (InvalidArgument when it fits none)."""
    fits = {n: [b for b in blobs if _mutations.apply(n, b) is not None] for n in names}
    usable = [n for n in names if fits[n]]
    if not usable:
        raise InvalidArgument(f"mutations={list(names)!r} fit none of the blobs")

    @st.composite
    def _one(draw):
        name = draw(st.sampled_from(usable))
        out = draw(_named(draw(st.sampled_from(fits[name])), [name], observe))
        assert out is not None              # it fitted with the first picks
        return out
    return _one()
