"""Named structure-aware mutations: each rewrites a chunk or frame the way
one class of fuzzing findings was made (issue 21, "Held-out frame fuzzing",
and the salvage and validate findings), so that :func:`corrupt
<blosckit.testing.strategies.corrupt>`, the ``blosckit fuzz`` loop and the
tests can ask for that class by name.

A mutation is ``fn(blob, pick) -> bytes | None``: ``blob`` is a contiguous
frame, a sparse frame's index (``chunks.b2frame``) or a chunk; ``pick``
chooses among the values the mutation may use (hypothesis draws them in
the strategies; :func:`first` takes the first); None when the mutation does
not apply to ``blob`` (a frame without metalayers cannot get a duplicate
metalayer name).  :data:`MUTATIONS` maps each name to its :class:`Mutation`.

The ``lie-`` family writes structure-level lies through the composer
(:func:`~blosckit.frame.parts.frame_parts`, ``build(check=False)``): one
field of the header, the offsets index, a metalayer section or the trailer
set to a value the rest of the frame contradicts, every other byte as it
was; each names the rule the reader refuses it with (:data:`LIES`).

Every byte position and width comes from the declarations in
:mod:`blosckit.formats` (header, metalayer and trailer layouts, the b2nd
value's construct); sections that change length (a metalayer renamed, a
dtype string of another length) are rebuilt with the header's
``header_len`` and ``frame_len`` or the trailer's ``trailer_len`` moved by
as much.  Nothing here needs hypothesis.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

from ..errors import FormatError
from ..formats import b2nd as fb
from ..formats import chunk as fc
from ..formats import enums
from ..formats import frame as ff
from ..frame.parts import FrameParts, frame_parts
from ..frame.read import Frame, open_frame

__all__ = ["Mutation", "MUTATIONS", "LIES", "Pick", "apply", "applicable", "first"]

Pick = Callable[[Sequence[Any]], Any]


def first(options: Sequence[Any]) -> Any:
    """The deterministic ``pick``: the first option."""
    return options[0]


@dataclass(frozen=True)
class Mutation:
    """One named mutation: ``fn(blob, pick)`` and the finding class it
    makes (``doc``, its function's docstring).  ``rule``: for a lie of the
    composer (the ``lie-`` family), the rule whose Problem every frame it
    makes gets (an error but for ``lie-fingerprint``'s warning)."""
    name: str
    doc: str
    fn: Callable[[bytes, Pick], bytes | None]
    rule: str | None = None


MUTATIONS: dict[str, Mutation] = {}


def _mutation(name: str, rule: str | None = None):
    def register(fn: Callable[[bytes, Pick], bytes | None]):
        MUTATIONS[name] = Mutation(name, " ".join((fn.__doc__ or "").split()), fn, rule)
        return fn
    return register


def apply(name: str, blob: bytes, pick: Pick = first) -> bytes | None:
    """``blob`` mutated by the mutation ``name`` (KeyError for an unknown
    name), or None when it does not apply to ``blob``."""
    try:
        return MUTATIONS[name].fn(bytes(blob), pick)
    except (FormatError, ValueError, IndexError, KeyError):
        # the blob is already damaged where this mutation looks
        return None


def applicable(blob: bytes) -> list[str]:
    """The names of the mutations that apply to ``blob``."""
    return [n for n in MUTATIONS if apply(n, blob) is not None]


# ---------------------------------------------------------------------------
# What a mutation needs to know about its blob
# ---------------------------------------------------------------------------

class _Meta(NamedTuple):
    """A metalayer section as stored: each entry's raw name and value, the
    section's advisory ``idx`` and where the section starts."""
    names: list[bytes]
    values: list[bytes]
    idx: int
    start: int


class _Parts(NamedTuple):
    """A contiguous frame, opened: the frame, its metalayer and vlmetalayer
    sections, and where each stored chunk lies (``(start, cbytes)``, the
    vlmetalayer values included, which are chunks too)."""
    frame: Frame
    meta: _Meta | None
    vlmeta: _Meta | None
    chunks: list[tuple[int, int]]


def _frame_header(blob: bytes):
    """The flat header layout of ``blob``, or None when it is no frame."""
    if not ff.looks_like_frame(blob):
        return None
    return ff.FLAT_HEADERS[ff.header_layout(blob[0]) or 14]


@functools.lru_cache(maxsize=64)
def _parts(blob: bytes) -> _Parts | None:
    """``blob`` opened as a contiguous frame, None when it does not open."""
    if not ff.looks_like_frame(blob):
        return None
    try:
        f = open_frame(blob)
        raw_vl = f.vlmetalayers_raw
    except FormatError:
        return None
    meta = None
    if f.layout in ff.LAYOUT_WITH_METALAYERS:
        meta = _read_section(blob, ff.LEN_FIXED[f.layout], f.header_len, 0)
    vlmeta = _read_section(blob, f.trailer_start + ff.LEN_TRAILER_HEAD,
                           f.fields.frame_len, f.trailer_start) if raw_vl else None
    chunks = []
    for i in range(f.nchunks):
        try:
            e, view = f.locate(i)
        except FormatError:
            continue
        if view is not None:
            chunks.append((e.start, len(view)))
    chunks += [(f.vlmetalayer_at[n], len(v)) for n, v in raw_vl.items()]
    return _Parts(f, meta, vlmeta, chunks)


def _read_section(blob: bytes, start: int, end: int, base: int) -> _Meta:
    """The metalayer section at ``start`` (value offsets count from ``base``)."""
    sec = ff.Metalayers.parse(blob[start:end])
    values = [ff.MetaValue.parse(blob[base + e.offset:]).content for e in sec.index]
    return _Meta([bytes(e.name) for e in sec.index], [bytes(v) for v in values], sec.idx,
                 start)


def _section(meta: _Meta, names: list[bytes], values: list[bytes], base: int) -> bytes:
    """The section ``meta`` with these names and values (any bytes: empty,
    not UTF-8, twice), values right after the index, offsets from ``base``;
    its advisory idx moved by the index's change in length."""
    old = sum(ff.meta_entry_size(len(n)) for n in meta.names)
    new = sum(ff.meta_entry_size(len(n)) for n in names)
    pos = meta.start - base + ff.FAST_META_HEAD.size + new + ff.FAST_VALUES_HEAD.size
    index = []
    for name, value in zip(names, values):
        index.append(dict(name_marker=dict(kind=ff.FIXSTR_KIND, len_name=len(name)),
                          name=name, offset=pos))
        pos += ff.LEN_META_VALUE_HEAD + len(value)
    head = ff.Metalayers.build(dict(idx=meta.idx + new - old, num_metalayers=len(index),
                                    index=index, num_values=len(values)))
    return head + b"".join(ff.MetaValue.build(dict(len_content=len(v), content=v))
                           for v in values)


def _with_metalayers(blob: bytes, names: list[bytes], values: list[bytes]) -> bytes | None:
    """The frame with its header's metalayers replaced; header_len and
    frame_len follow (chunk offsets count from header_len, the trailer's
    from the trailer: both stay right)."""
    p = _parts(blob)
    if p is None or p.meta is None:
        return None
    f = p.frame
    section = _section(p.meta, names, values, 0)
    out = bytearray(blob[:p.meta.start] + section + blob[f.header_len:])
    moved = len(section) - (f.header_len - p.meta.start)
    layout = ff.FLAT_HEADERS[f.layout]
    layout.put(out, "header_len", f.header_len + moved, 0)
    layout.put(out, "frame_len", f.fields.frame_len + moved, 0)
    return bytes(out)


def _with_vlmetalayers(blob: bytes, names: list[bytes], values: list[bytes]) -> bytes | None:
    """The frame with its trailer's vlmetalayers replaced (values kept as
    the chunks they are); trailer_len and frame_len follow."""
    p = _parts(blob)
    if p is None or p.vlmeta is None:
        return None
    f = p.frame
    end = f.fields.frame_len
    tail_at = end - ff.LEN_TRAILER_TAIL
    section = _section(p.vlmeta, names, values, f.trailer_start)
    trailer = bytearray(blob[f.trailer_start:p.vlmeta.start] + section + blob[tail_at:end])
    ff.FAST_TRAILER_TAIL.put(trailer, "trailer_len", len(trailer),
                             len(trailer) - ff.LEN_TRAILER_TAIL)
    out = bytearray(blob[:f.trailer_start] + trailer + blob[end:])
    ff.FLAT_HEADERS[f.layout].put(out, "frame_len", f.trailer_start + len(trailer), 0)
    return bytes(out)


def _put_header(blob: bytes, name: str, value: int) -> bytes | None:
    """The frame (or sparse index) with header field ``name`` set."""
    layout = _frame_header(blob)
    if layout is None or name not in layout.fields or len(blob) < layout.size:
        return None
    out = bytearray(blob)
    layout.put(out, name, value, 0)
    return bytes(out)


def _int_max(layout, name: str) -> int:
    """The largest value of the signed integer field ``name``."""
    return (1 << (8 * layout[name].size - 1)) - 1


def _chunk_starts(blob: bytes) -> list[tuple[int, int]]:
    """Where the chunks of ``blob`` lie: a frame's stored chunks and
    vlmetalayer values, or ``blob`` itself when it is a chunk."""
    if ff.looks_like_frame(blob):
        p = _parts(blob)
        return p.chunks if p is not None else []
    if len(blob) < fc.LEN_HEADER:
        return []
    return [(0, len(blob))]


def _header_of(blob: bytes, at: int) -> fc.RawHeader:
    return fc.raw_header(blob, at)


def _vl_blocks(h: fc.RawHeader) -> bool:
    return h.has_extended and bool(fc.EXTENDED["blosc2_flags2.vl_blocks"].of(h.blosc2_flags2))


def _put_chunk(blob: bytes, at: int, name: str, value: int) -> bytes:
    out = bytearray(blob)
    fc.HEADER.put(out, name, value, at)
    return bytes(out)


# ---------------------------------------------------------------------------
# Frame header fields
# ---------------------------------------------------------------------------

@_mutation("header-nbytes-zero")
def _nbytes_zero(blob: bytes, pick: Pick) -> bytes | None:
    """The frame header's nbytes set to 0 in a frame that holds chunks
    (validate returned [] where C-Blosc2 refuses)."""
    p = _parts(blob)
    if p is None or not p.frame.nchunks:
        return None
    return _put_header(blob, "nbytes", 0)


@_mutation("variable-nbytes-off")
def _variable_nbytes(blob: bytes, pick: Pick) -> bytes | None:
    """A frame of variable-size chunks (chunksize 0) whose header nbytes no
    longer is what its chunks add up to (blosckit returned 628 bytes for
    nbytes 632, validate said nothing; C-Blosc2 refuses)."""
    p = _parts(blob)
    if p is None or p.frame.chunksize != 0 or not p.frame.nchunks:
        return None
    change = pick([4, -4, 1, -1, 1000])
    return _put_header(blob, "nbytes", max(0, p.frame.nbytes + change))


def _special_entries(f: Frame) -> list[str]:
    return [k for k in (f.special(i) for i in range(f.nchunks)) if k is not None]


@_mutation("special-typesize-non-divisor")
def _special_typesize(blob: bytes, pick: Pick) -> bytes | None:
    """A frame of special entries whose header typesize does not divide the
    chunk size they stand for (salvage raised ValueError rebuilding them:
    "nbytes 8000 is not a multiple of typesize 24")."""
    p = _parts(blob)
    if p is None or p.frame.chunksize <= 0 or not _special_entries(p.frame):
        return None
    size = p.frame.chunksize
    ts = pick([t for t in (24, 516, 3, 5, 7, 9, 11, 13) if size % t] or [size + 1])
    return _put_header(blob, "typesize", ts)


@_mutation("header-typesize-max")
def _typesize_max(blob: bytes, pick: Pick) -> bytes | None:
    """The frame header's typesize set to 2**31-1 (salvage raised ValueError)."""
    layout = _frame_header(blob)
    if _parts(blob) is None or layout is None:
        return None
    return _put_header(blob, "typesize", _int_max(layout, "typesize"))


@_mutation("header-chunksize-huge")
def _chunksize_huge(blob: bytes, pick: Pick) -> bytes | None:
    """The frame header's chunksize raised to 1 GiB or 2**31-1 in a small
    frame of one chunk, which stays valid (deep validate allocated a
    scratch buffer of chunksize bytes however small the input: 1 GiB for a
    324-byte frame)."""
    p = _parts(blob)
    layout = _frame_header(blob)
    if p is None or layout is None or p.frame.chunksize <= 0 or p.frame.nchunks != 1:
        return None
    return _put_header(blob, "chunksize", pick([1 << 30, _int_max(layout, "chunksize")]))


@_mutation("header-filters-meta-high")
def _filters_meta_high(blob: bytes, pick: Pick) -> bytes | None:
    """A frame header filters_meta byte of 128 or more (python-blosc2's
    open() raises OverflowError; validate returned [])."""
    layout = _frame_header(blob)
    if _parts(blob) is None or layout is None:
        return None
    name = "filter_pipeline.filters_meta"
    if name not in layout.fields:
        return None
    out = bytearray(blob)
    slot = pick(range(fc.NUM_FILTER_SLOTS))
    out[layout.offset(name) + slot] = pick([128, 200, 255])
    return bytes(out)


# ---------------------------------------------------------------------------
# Metalayer and vlmetalayer names and values
# ---------------------------------------------------------------------------

def _renamed(blob: bytes, section: str, pick: Pick,
             rename: Callable[[list[bytes], int, Pick], bytes | None]) -> bytes | None:
    p = _parts(blob)
    meta = None if p is None else getattr(p, section)
    if meta is None or not meta.names:
        return None
    names = list(meta.names)
    k = pick(range(len(names)))
    new = rename(names, k, pick)
    if new is None:
        return None
    names[k] = new
    build = _with_metalayers if section == "meta" else _with_vlmetalayers
    return build(blob, names, list(meta.values))


def _empty(names: list[bytes], k: int, pick: Pick) -> bytes:
    return b""


def _not_utf8(names: list[bytes], k: int, pick: Pick) -> bytes:
    # same length: only the bytes change
    return bytes(pick([0xFF, 0xC3, 0x80]) for _ in names[k]) or b"\xff"


def _twice(names: list[bytes], k: int, pick: Pick) -> bytes | None:
    others = [n for j, n in enumerate(names) if j != k]
    return pick(others) if others else None


def _named_twice(blob: bytes, section: str, pick: Pick) -> bytes | None:
    """Another entry renamed to entry k's name, or (one entry, or picked)
    entry k stored a second time."""
    p = _parts(blob)
    meta = None if p is None else getattr(p, section)
    if meta is None or not meta.names:
        return None
    if len(meta.names) > 1 and pick(["rename", "copy"]) == "rename":
        return _renamed(blob, section, pick, _twice)
    k = pick(range(len(meta.names)))
    build = _with_metalayers if section == "meta" else _with_vlmetalayers
    return build(blob, [*meta.names, meta.names[k]], [*meta.values, meta.values[k]])


@_mutation("metalayer-name-empty")
def _meta_empty(blob: bytes, pick: Pick) -> bytes | None:
    """A metalayer named "" (python-blosc2 writes such names; salvage kept
    it and then build_frame refused it with ValueError)."""
    return _renamed(blob, "meta", pick, _empty)


@_mutation("metalayer-name-not-utf8")
def _meta_not_utf8(blob: bytes, pick: Pick) -> bytes | None:
    """A metalayer name that is not UTF-8 (salvage raised ValueError;
    python-blosc2 cannot list it: V15)."""
    return _renamed(blob, "meta", pick, _not_utf8)


@_mutation("metalayer-name-twice")
def _meta_twice(blob: bytes, pick: Pick) -> bytes | None:
    """Two metalayers of one name (blosckit's dict kept one, C-Blosc2 lists
    both; a duplicate b2nd makes python-blosc2 refuse the array)."""
    return _named_twice(blob, "meta", pick)


@_mutation("vlmetalayer-name-empty")
def _vlmeta_empty(blob: bytes, pick: Pick) -> bytes | None:
    """A vlmetalayer named "" (as for metalayers)."""
    return _renamed(blob, "vlmeta", pick, _empty)


@_mutation("vlmetalayer-name-not-utf8")
def _vlmeta_not_utf8(blob: bytes, pick: Pick) -> bytes | None:
    """A vlmetalayer name that is not UTF-8 (V15)."""
    return _renamed(blob, "vlmeta", pick, _not_utf8)


@_mutation("vlmetalayer-name-twice")
def _vlmeta_twice(blob: bytes, pick: Pick) -> bytes | None:
    """Two vlmetalayers of one name."""
    return _named_twice(blob, "vlmeta", pick)


@_mutation("vlmetalayer-bin32-short")
def _vlmeta_short(blob: bytes, pick: Pick) -> bytes | None:
    """A vlmetalayer whose msgpack bin32 length is shorter than the chunk it
    holds (C-Blosc2 refuses the frame; validate returned [])."""
    p = _parts(blob)
    if p is None or not p.frame.vlmetalayers_raw:
        return None
    name = pick(sorted(p.frame.vlmetalayers_raw))
    at = p.frame.vlmetalayer_at[name] - ff.LEN_META_VALUE_HEAD
    size = len(p.frame.vlmetalayers_raw[name])
    out = bytearray(blob)
    ff.FAST_VALUE_HEAD.put(out, "len_content", max(0, size - pick([1, 4, size // 2])), at)
    return bytes(out)


@_mutation("vlmetalayer-value-damaged")
def _vlmeta_damaged(blob: bytes, pick: Pick) -> bytes | None:
    """One vlmetalayer's chunk damaged (its version byte) beside intact ones
    (salvage dropped every vlmetalayer, the intact ones too)."""
    p = _parts(blob)
    if p is None or not p.frame.vlmetalayers_raw:
        return None
    name = pick(sorted(p.frame.vlmetalayers_raw))
    return _put_chunk(blob, p.frame.vlmetalayer_at[name], "version", pick([0xEE, 0]))


# ---------------------------------------------------------------------------
# The b2nd metalayer
# ---------------------------------------------------------------------------

def _b2nd(blob: bytes) -> tuple[int, Any] | None:
    """The index of the b2nd metalayer and its parsed value."""
    p = _parts(blob)
    if p is None or p.meta is None:
        return None
    for k, name in enumerate(p.meta.names):
        if name.decode(errors="replace") in fb.NAMES:
            try:
                return k, fb.B2ndMeta.parse(p.meta.values[k])
            except Exception:           # noqa: BLE001 -- construct's many errors
                return None
    return None


def _with_b2nd(blob: bytes, k: int, m) -> bytes | None:
    p = _parts(blob)
    assert p is not None and p.meta is not None
    values = list(p.meta.values)
    values[k] = fb.B2ndMeta.build(m)
    return _with_metalayers(blob, list(p.meta.names), values)


def _dims(m) -> list[tuple[int, int, int]]:
    return [(s.value, c.value, b.value) for s, c, b in zip(m.shape, m.chunkshape, m.blockshape)]


def _padded(c: int, b: int) -> int:
    return -(-c // b) * b if b > 0 else c


@_mutation("b2nd-shape-grid")
def _b2nd_grid(blob: bytes, pick: Pick) -> bytes | None:
    """A b2nd shape whose chunk grid no longer matches the frame's chunks
    (333 -> 80000: salvage called the frame intact, its output failed
    validate)."""
    found = _b2nd(blob)
    if found is None or not _dims(found[1]):
        return None
    k, m = found
    d = pick(range(len(m.shape)))
    s, c, _ = _dims(m)[d]
    m.shape[d].value = s * pick([240, 3]) + c + 1
    return _with_b2nd(blob, k, m)


@_mutation("b2nd-padded-chunk")
def _b2nd_padded(blob: bytes, pick: Pick) -> bytes | None:
    """A b2nd block shape whose padded chunk is not the frame's stored chunk
    (Frame.b2nd.read() raised F-b2nd where validate reported no error)."""
    found = _b2nd(blob)
    if found is None:
        return None
    k, m = found
    dims = [d for d, (s, c, b) in enumerate(_dims(m)) if c > 1]
    if not dims:
        return None
    d = pick(dims)
    _, c, b = _dims(m)[d]
    changed = [x for x in range(1, c + 1) if _padded(c, x) != _padded(c, b)]
    if not changed:
        return None
    m.blockshape[d].value = pick(changed)
    return _with_b2nd(blob, k, m)


@_mutation("b2nd-blocksize-mismatch")
def _b2nd_blocksize(blob: bytes, pick: Pick) -> bytes | None:
    """A b2nd block shape of the same padded chunk whose items no longer
    make the chunks' blocksize (prod(blockshape) * itemsize): C-Blosc2
    refuses the array, validate returned []."""
    found = _b2nd(blob)
    if found is None:
        return None
    k, m = found
    options = [(d, x) for d, (s, c, b) in enumerate(_dims(m))
               for x in range(1, c + 1) if x != b and _padded(c, x) == _padded(c, b)]
    if not options:
        return None
    d, x = pick(options)
    m.blockshape[d].value = x
    return _with_b2nd(blob, k, m)


@_mutation("b2nd-block-wider-than-chunk")
def _b2nd_wide(blob: bytes, pick: Pick) -> bytes | None:
    """A b2nd block extent larger than its chunk extent, the chunk grid and
    the padded chunk unchanged (validate returned [] where C-Blosc2 refused
    the array or read other data)."""
    found = _b2nd(blob)
    if found is None:
        return None
    k, m = found
    options = []
    for d, (s, c, b) in enumerate(_dims(m)):
        padded = _padded(c, b)
        if c < padded:                          # the block covers the padded extent
            options.append((d, c, padded))
        elif c > 1 and -(-s // (c - 1)) == -(-s // c):
            options.append((d, c - 1, padded))  # one item narrower, same grid
    if not options:
        return None
    d, c, b = pick(options)
    m.chunkshape[d].value, m.blockshape[d].value = c, b
    return _with_b2nd(blob, k, m)


def _dtype_text(m) -> str | None:
    if m.dtype is None:
        return None
    try:
        return bytes(m.dtype.dtype).decode()
    except UnicodeDecodeError:
        return None


@_mutation("b2nd-dtype-itemsize")
def _b2nd_dtype_width(blob: bytes, pick: Pick) -> bytes | None:
    """A b2nd dtype whose item size is not the frame's typesize (validate
    returned [] where C-Blosc2 refuses or reads other data)."""
    found = _b2nd(blob)
    text = None if found is None else _dtype_text(found[1])
    p = _parts(blob)
    if found is None or text is None or p is None:
        return None
    k, m = found
    kind = text.lstrip("<>|=")[:1]
    width = pick([w for w in (8, 4, 2, 1) if w != p.frame.typesize])
    new = f"<{kind if kind in ('i', 'u', 'f') and (kind, width) != ('f', 1) else 'u'}{width}"
    m.dtype.dtype, m.dtype.dtype_len = new.encode(), len(new)
    return _with_b2nd(blob, k, m)


@_mutation("b2nd-dtype-nul")
def _b2nd_dtype_nul(blob: bytes, pick: Pick) -> bytes | None:
    """A b2nd dtype string holding a NUL byte: C-Blosc2 uses the part
    before it (blosckit reported the string as stored)."""
    found = _b2nd(blob)
    if found is None or found[1].dtype is None or not found[1].dtype.dtype:
        return None
    k, m = found
    raw = bytes(m.dtype.dtype)
    how = pick(["tail", "last"])
    new = raw + b"\0junk" if how == "tail" else raw[:-1] + b"\0"
    m.dtype.dtype, m.dtype.dtype_len = new, len(new)
    return _with_b2nd(blob, k, m)


# ---------------------------------------------------------------------------
# Chunks (in a frame, its vlmetalayer values, or on their own)
# ---------------------------------------------------------------------------

@_mutation("chunk-version-3")
def _version_3(blob: bytes, pick: Pick) -> bytes | None:
    """A chunk with an extended header relabelled version 3, the alpha
    layout without udcodec (scan raised AttributeError('udcodec') on such a
    candidate)."""
    spots = [at for at, _ in _chunk_starts(blob) if _header_of(blob, at).has_extended]
    if not spots:
        return None
    return _put_chunk(blob, pick(spots), "version", 3)


def _vl_chunks(blob: bytes) -> list[int]:
    return [at for at, _ in _chunk_starts(blob) if _vl_blocks(_header_of(blob, at))]


def _in_frame(blob: bytes, spots: list[int]) -> list[int]:
    """``spots`` when ``blob`` is a frame, none for a chunk on its own: a
    chunk that claims a GiB is the class only where a frame's header says
    less (alone, its header allows the GiB to a reader given no cap)."""
    return spots if ff.looks_like_frame(blob) else []


@_mutation("vlblock-delta")
def _vl_delta(blob: bytes, pick: Pick) -> bytes | None:
    """A VL-block chunk with the delta filter set by hand in a free filter
    slot (C-Blosc2 decodes other bytes; validate returned [];
    compress_vlblocks refuses delta for this reason)."""
    options = []
    for at in _vl_chunks(blob):
        h = _header_of(blob, at)
        options += [(at, s) for s, f in enumerate(h.filters) if f == 0]
    if not options:
        return None
    at, slot = pick(options)
    out = bytearray(blob)
    out[at + fc.EXTENDED.offset("filters") + slot] = enums.lookup(enums.FILTERS, "delta")
    return bytes(out)


@_mutation("vlblock-nbytes-huge")
def _vl_nbytes(blob: bytes, pick: Pick) -> bytes | None:
    """A VL-block chunk claiming 2**31-1 bytes (allocated 2 GiB before its
    block sizes were found not to add up: VL7)."""
    spots = _in_frame(blob, _vl_chunks(blob))
    if not spots:
        return None
    return _put_chunk(blob, pick(spots), "nbytes", _int_max(fc.HEADER, "nbytes"))


@_mutation("chunk-nbytes-huge")
def _chunk_nbytes(blob: bytes, pick: Pick) -> bytes | None:
    """A chunk claiming 1 GiB in a frame whose header says far less (in a
    frame of chunksize 0 it was decoded to its own nbytes: 1 GiB from a
    212-byte frame that validated [])."""
    spots = _in_frame(blob, [at for at, _ in _chunk_starts(blob)])
    if not spots:
        return None
    return _put_chunk(blob, pick(spots), "nbytes", pick([1 << 30, _int_max(fc.HEADER, "nbytes")]))


@_mutation("special-chunk-filter-id")
def _special_filter(blob: bytes, pick: Pick) -> bytes | None:
    """A stored special chunk (a repeated value) whose filter slot names an
    id C-Blosc2 does not define: readers ignore a special chunk's filters,
    but salvage copied them into the rebuilt frame header (V14), an output
    C-Blosc2 cannot open, from a valid frame."""
    spots = [at for at, _ in _chunk_starts(blob)
             if _header_of(blob, at).has_extended
             and fc.special_kind(_header_of(blob, at).blosc2_flags)]
    if not spots:
        return None
    out = bytearray(blob)
    out[pick(spots) + fc.EXTENDED.offset("filters") + pick(range(fc.NUM_FILTER_SLOTS))] = \
        max(enums.FILTERS) + 1
    return bytes(out)


@_mutation("special-entry-nan-typesize")
def _nan_typesize(blob: bytes, pick: Pick) -> bytes | None:
    """NaN special entries under a header typesize NaN cannot have (2):
    salvage wrote special entries its own rules reject."""
    p = _parts(blob)
    if p is None or "nan" not in _special_entries(p.frame):
        return None
    return _put_header(blob, "typesize", pick([2, 1, 3]))


@_mutation("chunks-truncated")
def _truncated(blob: bytes, pick: Pick) -> bytes | None:
    """The frame cut inside its chunks section (salvage kept 2 chunks of a
    cut b2nd frame whose grid holds 20, and shifted later chunks into the
    wrong grid places when a middle one was lost)."""
    p = _parts(blob)
    if p is None or not p.chunks or p.frame.nchunks < 2:
        return None
    stored = sorted(at + n for at, n in p.chunks if at < p.frame.trailer_start)
    if len(stored) < 2:
        return None
    end = pick(stored[:-1])
    return blob[:end - pick([1, 0])]


# ---------------------------------------------------------------------------
# Sparse frames and older header layouts
# ---------------------------------------------------------------------------

@_mutation("sparse-index-cbytes-zero")
def _sparse_cbytes(blob: bytes, pick: Pick) -> bytes | None:
    """A sparse frame's index (chunks.b2frame) whose header cbytes is 0
    (C-Blosc2 refuses the frame; validate returned [])."""
    layout = _frame_header(blob)
    if layout is None or "frame_type" not in layout.fields or len(blob) < layout.size:
        return None
    if layout.get(blob, "frame_type", 0) != 1 or layout.get(blob, "cbytes", 0) == 0:
        return None
    return _put_header(blob, "cbytes", 0)


@_mutation("older-layout-header-cut")
def _older_cut(blob: bytes, pick: Pick) -> bytes | None:
    """A frame of an older header layout cut right after its
    has_vlmetalayers byte, that byte no msgpack bool (validate reported
    F-vlmeta-flag at offset 68, where today's layout has it, in a 66-byte
    input)."""
    layout = _frame_header(blob)
    if layout is None or layout is ff.HEADER or "has_vlmetalayers" not in layout.fields:
        return None
    at = layout.offset("has_vlmetalayers")
    if len(blob) <= at:
        return None
    out = bytearray(blob[:at + 1 + pick([0, 1, 3])])
    out[at] = pick([0x01, 0x00, 0xFF])
    return bytes(out)


# ---------------------------------------------------------------------------
# Structure-level lies, written through the composer (frame_parts)
# ---------------------------------------------------------------------------

def _lie(blob: bytes, edit: Callable[[FrameParts], None], *,
         index: bool = False) -> bytes | None:
    """``blob`` taken apart, ``edit``-ed and written unchecked; ``index``:
    the lie is in the offsets index, whose compressed length may change:
    frame_len follows it.  None for a blob that is no frame the reader
    opens."""
    if _parts(blob) is None:
        return None
    p = frame_parts(blob)
    if index:
        p.header["frame_len"] = None
    edit(p)
    return p.build(check=False)


def _fixed_size(f: Frame) -> bool:
    return f.chunksize > 0 and f.nchunks > 0


@_mutation("lie-frame-len", "F-frame-len")
def _lie_frame_len(blob: bytes, pick: Pick) -> bytes | None:
    """A header frame_len a few bytes off the frame's length (the header's
    length stays inside it: a trailer holds 25 bytes at least)."""
    delta = pick([1, 7, -1, -7, 1 << 20])
    return _lie(blob, lambda p: p.header.update(frame_len=p.header["frame_len"] + delta))


@_mutation("lie-header-len", "F-header-len")
def _lie_header_len(blob: bytes, pick: Pick) -> bytes | None:
    """A header header_len past the frame's end or inside the fixed header."""
    def edit(p: FrameParts) -> None:
        p.header["header_len"] = pick([p.header["frame_len"] + 1, p.header["frame_len"] + 1000,
                                       ff.LEN_FIXED[p.layout] - 1, 0, -1])
    return _lie(blob, edit)


@_mutation("lie-nbytes", "F-index")
def _lie_nbytes(blob: bytes, pick: Pick) -> bytes | None:
    """A fixed-size frame whose header nbytes makes more chunks than its
    offsets index holds."""
    p0 = _parts(blob)
    if p0 is None or not _fixed_size(p0.frame):
        return None
    more = pick([1, 2, 7]) * p0.frame.chunksize
    return _lie(blob, lambda p: p.header.update(nbytes=p.header["nbytes"] + more))


@_mutation("lie-nchunks", "F-index")
def _lie_nchunks(blob: bytes, pick: Pick) -> bytes | None:
    """A fixed-size frame whose offsets index holds an entry more (or
    fewer) than its header's nbytes and chunksize count; the frame's
    lengths follow the index."""
    p0 = _parts(blob)
    if p0 is None or not _fixed_size(p0.frame):
        return None
    how = pick(["more", "fewer"] if p0.frame.nchunks > 1 else ["more"])

    def edit(p: FrameParts) -> None:
        p.offsets = p.offsets[:-1] if how == "fewer" else [*p.offsets, p.offsets[-1]]
    return _lie(blob, edit, index=True)


@_mutation("lie-offset-past-section", "F-offset")
def _lie_offset_past(blob: bytes, pick: Pick) -> bytes | None:
    """An offsets index entry at or past the end of the chunks section
    (where no chunk header fits)."""
    p0 = _parts(blob)
    if p0 is None or not p0.frame.nchunks:
        return None
    k = pick(range(p0.frame.nchunks))
    cbytes = p0.frame.cbytes

    def edit(p: FrameParts) -> None:
        p.offsets[k] = pick([cbytes, cbytes + 1, cbytes + 1000, max(cbytes - fc.LEN_HEADER + 1, 0),
                             (1 << 62)])
    return _lie(blob, edit, index=True)


def _negative(pick: Pick, options: list[int]):
    def fn(blob: bytes) -> bytes | None:
        p0 = _parts(blob)
        if p0 is None or not p0.frame.nchunks:
            return None
        k = pick(range(p0.frame.nchunks))
        return _lie(blob, lambda p: p.offsets.__setitem__(k, pick(options)), index=True)
    return fn


@_mutation("lie-offset-stray-bits", "F-special-bits")
def _lie_offset_bits(blob: bytes, pick: Pick) -> bytes | None:
    """A negative offsets index entry with a kind bit and bits no writer
    sets (-1, -5: C-Blosc2 reads a special kind, the rest is damage)."""
    return _negative(pick, [-1, -5, ff.special_offset("zeros") | 1,
                            ff.special_offset("nan") | (1 << 60)])(blob)


@_mutation("lie-offset-no-kind", "F-special")
def _lie_offset_no_kind(blob: bytes, pick: Pick) -> bytes | None:
    """A negative offsets index entry that names no special kind (only the
    sign bit, or reserved bits of its top byte)."""
    return _negative(pick, [-(1 << 63), -(1 << 62), -(1 << 63) + 1])(blob)


@_mutation("lie-chunk-short-at-full", "F-chunk")
def _lie_short_at_full(blob: bytes, pick: Pick) -> bytes | None:
    """A full-size chunk's entry pointing at the short last chunk (a
    fixed-size frame whose last chunk is stored and shorter)."""
    p0 = _parts(blob)
    if p0 is None or not _fixed_size(p0.frame) or p0.frame.nchunks < 2:
        return None
    f = p0.frame
    last = f.entries[f.nchunks - 1]
    if last < 0 or f.nbytes % f.chunksize == 0:
        return None
    k = pick(range(f.nchunks - 1))
    return _lie(blob, lambda p: p.offsets.__setitem__(k, last), index=True)


@_mutation("lie-trailer-len", "F-trailer")
def _lie_trailer_len(blob: bytes, pick: Pick) -> bytes | None:
    """A trailer_len pointing elsewhere: past the header's start, below the
    least a trailer holds, or a few bytes into the index or the trailer."""
    def edit(p: FrameParts) -> None:
        p.trailer["trailer_len"] = pick([p.header["frame_len"] + 1, ff.MIN_TRAILER_LEN - 1, 0,
                                         (1 << 32) - 1, p.trailer["trailer_len"] + 8,
                                         p.trailer["trailer_len"] - 2])
    return _lie(blob, edit)


@_mutation("lie-metalayer-length", "F-meta")
def _lie_meta_length(blob: bytes, pick: Pick) -> bytes | None:
    """A metalayer value whose bin32 length runs past the header's end."""
    p0 = _parts(blob)
    if p0 is None or p0.meta is None or not p0.frame.metalayers:
        return None
    name = pick(sorted(p0.frame.metalayers))
    past = p0.frame.header_len - p0.frame.metalayer_at[name] + pick([1, 100, 1 << 20])
    return _lie(blob, lambda p: p.meta_index["lengths"].update({name: past}))


@_mutation("lie-vlmetalayer-length", "F-vlmeta")
def _lie_vlmeta_length(blob: bytes, pick: Pick) -> bytes | None:
    """A vlmetalayer value whose bin32 length is shorter than the chunk it
    holds (the trailer's bytes as they were)."""
    p0 = _parts(blob)
    if p0 is None or not p0.frame.vlmetalayers_raw:
        return None
    name = pick(sorted(p0.frame.vlmetalayers_raw))
    size = len(p0.frame.vlmetalayers_raw[name])
    return _lie(blob, lambda p: p.vlmeta_index["lengths"].update(
        {name: pick([size - 1, size // 2, 0])}))


@_mutation("lie-fingerprint", "F-fingerprint")
def _lie_fingerprint(blob: bytes, pick: Pick) -> bytes | None:
    """A fingerprint of a kind no writer knows, or bytes under kind 0
    (none): readers ignore it, validate warns."""
    kind = pick([4, 9, 255, 0])
    data = pick([bytes(range(16)), b"\xff" * 16]) if kind == 0 else bytes(16)
    return _lie(blob, lambda p: p.trailer.update(fingerprint_type=kind, fingerprint=data))


# the lie- family: name -> the rule each frame it makes is refused with
LIES = {name: m.rule for name, m in MUTATIONS.items() if m.rule is not None}
