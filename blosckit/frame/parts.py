"""Frames taken apart and put back together, any field at any value: the
frame twin of ``build_chunk(check=False)``, for reader authors who want
frames that lie on purpose (specs/frame.md, "Composing frames field by
field").

:func:`frame_parts` splits a contiguous frame into its header fields, the
chunks section (as pieces in storage order), the raw offsets index
entries, the metalayers, the vlmetalayers (their stored chunks) and the
trailer fields.  :meth:`FrameParts.build` writes them back: a size left
None is computed from the bytes it describes, any other field left None
(or a whole part) is what the builder writes for the stored chunks, and
any other is written as given.  With nothing changed the input comes back
byte for byte: every structure is composed through its declaration in
:mod:`blosckit.formats.frame` and the builders of :mod:`.build`, and a
section the composer would lay out otherwise than the input did (a
writer's padding, a name stored twice) is kept as stored for as long as
what it holds is unchanged (:attr:`FrameParts.verbatim` names them).

``build(check=True)`` refuses, with a ValueError naming the field by its
path, a frame the reader refuses (:func:`~blosckit.frame.read.open_frame`,
each chunk's place and size, the vlmetalayers' chunks): the reader's own
rules decide, so the composer holds no second copy of them.
``build(check=False)`` writes the lie.
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

import construct as cs

from ..errors import FormatError
from ..formats import chunk as fc
from ..formats import frame as ff
from ..formats.rules import RaiseFirst
from .build import _section, build_frame, compress_index, stored_trailer_body
from .read import Frame, open_frame

__all__ = ["FrameParts", "frame_parts"]

# header fields computed by build() when None (trailer_len: in the trailer dict)
COMPUTED_HEADER = ("header_len", "frame_len", "nbytes", "cbytes", "has_vlmetalayers")
# those computed() leaves None: nbytes stays (a special entry's size is the
# header's to say: a short special last chunk cannot be counted)
_SIZES = ("header_len", "frame_len", "cbytes", "has_vlmetalayers")
_HAS_VLMETA = {True: 0xC3, False: 0xC2}       # msgpack true / false
_META_BASE = 0               # header metalayer offsets count from the frame's start


@dataclass
class FrameParts:
    """A contiguous frame as fields (see :func:`frame_parts`).

    ``layout``: the header's element count (14, or 13 / 12 / 11, the older
    layouts).  ``header``: every field of that layout's declaration by its
    name (markers aside), nested as declared (``general_flags``,
    ``filter_pipeline``...).  ``chunks``: the chunks section in pieces, in
    storage order (each stored chunk, and any bytes no entry points at,
    such as a deleted chunk's); ``offsets``: the offsets index's raw int64
    entries (from the chunks section's start; negative: special);
    ``index``: the stored index chunk (None: ``compress_index(offsets)``,
    as C-Blosc2 compresses it).  ``metalayers``: name -> value bytes;
    ``vlmetalayers``: name -> the stored value (a Blosc chunk).
    ``meta_index`` / ``vlmeta_index``: each section's ``idx``, and per name
    ``offsets`` (where its bin32 starts: from the frame's start, from the
    trailer's) and ``lengths`` (the bin32's length, bytes).  ``trailer``:
    ``version``, ``trailer_len``, ``fingerprint_type``, ``fingerprint``
    (16 bytes)."""
    layout: int
    header: dict[str, Any]
    chunks: list[bytes]
    offsets: list[int]
    metalayers: dict[str, bytes]
    vlmetalayers: dict[str, bytes]
    trailer: dict[str, Any]
    meta_index: dict[str, Any] = field(default_factory=lambda: _no_index())
    vlmeta_index: dict[str, Any] = field(default_factory=lambda: _no_index())
    index: bytes | None = None
    # section name -> (what it held when read, its bytes as stored)
    _stored: dict[str, tuple[Any, bytes]] = field(default_factory=dict, repr=False)

    @property
    def verbatim(self) -> set[str]:
        """The sections (``"metalayers"``, ``"index"``, ``"trailer"``) the
        composer would lay out otherwise than the input did, kept as stored
        while unchanged (empty for what python-blosc2 writes)."""
        return set(self._stored)

    def computed(self) -> FrameParts:
        """A copy with the layout's sizes None (header ``header_len``,
        ``frame_len``, ``cbytes``, ``has_vlmetalayers``; ``trailer_len``;
        each metalayer section's idx, value offsets and lengths): the
        honest frame after a change of metadata or chunks.  ``nbytes``
        stays: set it None to count the chunks (see :meth:`build`)."""
        out = copy.deepcopy(self)
        out.header.update(dict.fromkeys(_SIZES))
        out.trailer["trailer_len"] = None
        out.meta_index, out.vlmeta_index = _no_index(), _no_index()
        return out

    def build(self, check: bool = True) -> bytes:
        """The frame: header, metalayers, chunks section, offsets index,
        trailer.  Computed where None: ``header_len``, ``cbytes``,
        ``frame_len``, ``trailer_len`` (the bytes written), ``nbytes`` (each
        stored chunk's nbytes as its header says, the header's chunksize for
        a special entry), ``has_vlmetalayers``, the metalayer sections' idx,
        value offsets and lengths, the index chunk.  Any other field left
        None, nested or whole (``header``, ``trailer``, ``offsets``: one
        entry per piece of ``chunks``, ``metalayers``, ``vlmetalayers``:
        none), is what :func:`~.build.build_frame` writes for the stored
        chunks; ValueError when the builder refuses them.  ``check=True``:
        ValueError (naming the field by its path and the rule) for a frame
        the reader refuses; ``check=False`` writes any value a field can
        hold."""
        layout = self.layout
        if layout not in ff.FRAME_HEADERS:
            raise ValueError(f"layout must be one of {sorted(ff.FRAME_HEADERS)}, got {layout!r}")
        return self._filled()._compose_frame(check)

    def _filled(self) -> FrameParts:
        """A copy with the fields left None that the bytes do not size
        given what the builder writes (:func:`~.build.build_frame` of the
        stored chunks): no metalayers, an offset per piece of the chunks
        section, the builder's trailer, and every header field the
        builder derives from the chunks (typesize, codec, filters, flags,
        chunk and block sizes...)."""
        out = copy.copy(self)
        out.metalayers = {} if self.metalayers is None else self.metalayers
        out.vlmetalayers = {} if self.vlmetalayers is None else self.vlmetalayers
        out.chunks = [] if self.chunks is None else self.chunks
        if self.offsets is None:
            starts = accumulate((len(c) for c in out.chunks), initial=0)
            out.offsets = list(starts)[:len(out.chunks)]
        for i, entry in enumerate(out.offsets):
            if type(entry) is not int:
                raise ValueError(f"offsets[{i}]: an int (an index entry), got {entry!r}")
        trailer = dict.fromkeys(_TRAILER_FIELDS) if self.trailer is None else dict(self.trailer)
        header = None if self.header is None else copy.deepcopy(self.header)
        if header is None or _has_none(trailer, ("trailer_len",)) or \
                _has_none(header, COMPUTED_HEADER):
            ref = out._reference_parts()
            if header is None:
                header = dict.fromkeys(ref.header)
            _fill(trailer, ref.trailer, ("trailer_len",))
            _fill(header, ref.header, COMPUTED_HEADER)
        out.trailer, out.header = trailer, header
        return out

    def _reference_parts(self) -> FrameParts:
        """The parts of what the builder writes for these stored chunks
        (those the offsets point at, in order) and metalayers."""
        chunks = []
        section = b"".join(bytes(c) for c in self.chunks)
        for entry in self.offsets:
            if 0 <= entry and entry + fc.LEN_HEADER <= len(section):
                chunks.append(section[entry:entry + fc.stored_chunk(
                    section[entry:entry + fc.LEN_HEADER]).cbytes])
        try:
            ref = build_frame(chunks, metalayers=self.metalayers or None,
                              layout=self.layout)
        except ValueError as e:         # FormatError included
            raise ValueError(f"fields left None cannot be computed from these chunks: {e}") \
                from None
        return frame_parts(ref)

    def _compose_frame(self, check: bool) -> bytes:
        layout = self.layout
        meta = b""
        if layout in ff.LAYOUT_WITH_METALAYERS:
            meta = self._kept("metalayers", lambda: _section(
                self.metalayers, ff.LEN_FIXED[layout], 1, check=check, **_overrides(
                    self.meta_index)))
        elif self.metalayers:
            raise ValueError(f"the {layout}-element layout has no metalayers")
        section = b"".join(bytes(c) for c in self.chunks)
        index = self.index if self.index is not None else self._kept(
            "index", lambda: compress_index(list(self.offsets)))
        body = self._kept("trailer", lambda: stored_trailer_body(
            self.vlmetalayers, self.trailer["version"], check=check,
            **_overrides(self.vlmeta_index)))
        tail_fields = dict(self.trailer)
        tail_fields.pop("version")
        if tail_fields["trailer_len"] is None:
            tail_fields["trailer_len"] = len(body) + ff.LEN_TRAILER_TAIL
        if len(bytes(tail_fields["fingerprint"])) != ff.TrailerTail.fingerprint.sizeof():
            raise ValueError(f"trailer['fingerprint']: {ff.TrailerTail.fingerprint.sizeof()} "
                             "bytes (the fixext 16), padded to the left")
        tail = _build(ff.TrailerTail, tail_fields, "trailer")
        hdr = dict(self.header)
        header_len = ff.LEN_FIXED[layout] + len(meta)
        truth = dict(header_len=header_len, cbytes=len(section),
                     frame_len=header_len + len(section) + len(index) + len(body) + len(tail),
                     nbytes=self._nbytes(section),
                     has_vlmetalayers=_HAS_VLMETA[bool(self.vlmetalayers)])
        if layout < 13:     # 2.0.0-beta.1: the bool says whether metalayers follow
            truth["has_vlmetalayers"] = _HAS_VLMETA[bool(self.metalayers)]
        for name, value in truth.items():
            if hdr.get(name) is None:
                hdr[name] = value
        fixed = _build(ff.FRAME_HEADERS[layout], hdr, "header")
        out = b"".join([fixed, meta, section, index, body, tail])
        if check:
            _check(out)
        return out

    def _kept(self, name: str, compose) -> bytes:
        """Section ``name`` as stored while it holds what it held when read
        and the composer lays it out otherwise; else composed (ValueError
        naming the section for a value its declaration cannot hold)."""
        stored = self._stored.get(name)
        if stored is not None and stored[0] == self._holds(name):
            return stored[1]
        try:
            return compose()
        except cs.ConstructError as e:
            raise ValueError(f"{name}: {e}") from None

    def _holds(self, name: str) -> Any:
        """What section ``name`` is made of (compared with the input's)."""
        if name == "metalayers":
            return list(self.metalayers.items()), copy.deepcopy(self.meta_index)
        if name == "index":
            return list(self.offsets)
        return (self.trailer["version"], list(self.vlmetalayers.items()),
                copy.deepcopy(self.vlmeta_index))

    def _nbytes(self, section: bytes) -> int:
        """The data bytes the offsets stand for: each stored chunk's nbytes
        as its header says, the header's chunksize for a special entry; an
        entry pointing where no chunk header fits counts nothing."""
        total = 0
        for entry in self.offsets:
            if entry < 0:
                total += max(self.header.get("chunksize") or 0, 0)
            elif entry + fc.LEN_HEADER <= len(section):
                total += fc.stored_chunk(section[entry:entry + fc.LEN_HEADER]).nbytes
        return total


_TRAILER_FIELDS = ("version", "trailer_len", "fingerprint_type", "fingerprint")


def _has_none(values: dict[str, Any], computed: tuple[str, ...]) -> bool:
    """Some field of ``values`` (nested) other than ``computed`` is None."""
    return any(v is None and k not in computed or isinstance(v, dict) and _has_none(v, ())
               for k, v in values.items())


def _fill(values: dict[str, Any], ref: dict[str, Any], computed: tuple[str, ...]) -> None:
    """Each None of ``values`` (nested) but ``computed`` set to ``ref``'s."""
    for k, v in values.items():
        if k not in ref:            # not a field of this layout: its builder says so
            continue
        if v is None and k not in computed:
            values[k] = copy.deepcopy(ref[k])
        elif isinstance(v, dict):
            _fill(v, ref[k], ())


def _no_index() -> dict[str, Any]:
    """A metalayer section's idx, value offsets and lengths, all computed."""
    return dict(idx=None, offsets={}, lengths={})


def _overrides(index: dict[str, Any]) -> dict[str, Any]:
    return dict(idx=index.get("idx"), offsets=index.get("offsets"), lengths=index.get("lengths"))


def _build(con: cs.Construct, values: dict[str, Any], where: str) -> bytes:
    """``values`` through the declaration ``con``; ValueError naming the
    field a value does not fit (out of range, wrong type)."""
    try:
        return con.build(values)
    except cs.ConstructError as e:
        raise ValueError(f"{where}: {e}") from None


def _check(out: bytes) -> None:
    """Read ``out`` as the reader reads a frame; its first refusal as a
    ValueError naming the field."""
    try:
        with open_frame(out) as f:
            for name, raw in f.vlmetalayers_raw.items():
                path = f"frame.trailer.vlmetalayers[{name!r}]"
                RaiseFirst().run(ff.VALUE_RULES,
                                 ff.value_chunk_view(f.vlmetalayer_at[name], path, raw), raw)
            total = 0
            for i in range(f.nchunks):
                e, view = f.locate(i)
                nbytes = e.size if view is None else fc.stored_chunk(view).nbytes
                if view is not None:
                    f.check_nbytes(e, nbytes)
                total += nbytes or 0
            if f.variable_size:
                f.check_total(total)
    except FormatError as e:
        raise ValueError(f"{e.path}: {e.message} [{e.rule}] at offset {e.offset} "
                         "(build(check=False) writes it)") from None


def _fields(con: cs.Construct, parsed) -> Any:
    """``parsed`` (construct's value of ``con``) as plain dicts and lists:
    every named field of a struct, constants (the msgpack markers) left
    out."""
    inner = _inner(con)
    if isinstance(inner, cs.Struct):
        return {s.name: _fields(s, parsed[s.name]) for s in inner.subcons
                if s.name and not isinstance(_inner(s), cs.Const)}
    if isinstance(parsed, list):
        return list(parsed)
    return parsed


def _inner(sub: cs.Construct) -> cs.Construct:
    """The construct under renames and transformations (BitStruct's Struct,
    an Array's item), a Const kept whole."""
    while isinstance(sub, cs.Subconstruct) and not isinstance(sub, cs.Const):
        sub = sub.subcon
    return sub


def _section_read(buf: bytes, start: int, end: int, base: int
                  ) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The metalayer section at ``start`` (values inside ``buf[:end]``, at
    offsets from ``base``): name -> value, and its idx, offsets, lengths."""
    sec = ff.Metalayers.parse(buf[start:end])
    values, offsets, lengths = {}, {}, {}
    for e in sec.index:
        name = bytes(e.name).decode("utf-8", "surrogateescape")
        value = ff.MetaValue.parse(buf[base + e.offset:end])
        values[name], offsets[name], lengths[name] = bytes(value.content), e.offset, \
            value.len_content
    return values, dict(idx=sec.idx, offsets=offsets, lengths=lengths)


def _pieces(section: bytes, offsets: list[int]) -> list[bytes]:
    """The chunks section cut where a stored chunk starts and ends (as its
    header says), every byte in exactly one piece."""
    cuts = {0, len(section)}
    for entry in offsets:
        if 0 <= entry < len(section):
            cuts.add(entry)
            if entry + fc.LEN_HEADER <= len(section):
                end = entry + fc.stored_chunk(section[entry:entry + fc.LEN_HEADER]).cbytes
                cuts.add(min(max(end, entry), len(section)))
    points = sorted(cuts)
    return [section[a:b] for a, b in zip(points, points[1:])]


def frame_parts(frame) -> FrameParts:
    """A contiguous frame (bytes-like, the path of a cframe file, or an open
    :class:`~.read.Frame` of one) as its parts (:class:`FrameParts`);
    ``build()`` puts them back byte for byte.  FormatError for a frame the
    reader refuses (its header, metalayers, offsets index or trailer),
    ValueError for a sparse frame directory."""
    if isinstance(frame, Frame):
        if frame.directory is not None:
            raise ValueError(f"{os.fspath(frame.directory)!r} is a sparse frame directory: "
                             "frame_parts takes a contiguous frame")
        buf = bytes(frame.buffer[:frame.fields.frame_len])
    elif isinstance(frame, (str, os.PathLike)):
        if os.path.isdir(frame):
            raise ValueError(f"{os.fspath(frame)!r} is a sparse frame directory: frame_parts "
                             "takes a contiguous frame")
        with open(frame, "rb") as fh:
            buf = fh.read()
    else:
        buf = bytes(memoryview(frame).cast("B"))
    with open_frame(buf) as f:
        layout, v = f.layout, f.fields
        offsets = list(f.entries)
        index_start, trailer_start = f.index_span
        f.vlmetalayers_raw           # F-meta of the trailer's section
    header = _fields(ff.FRAME_HEADERS[layout], ff.FRAME_HEADERS[layout].parse(buf))
    metalayers: dict[str, bytes] = {}
    meta_index = _no_index()
    if layout in ff.LAYOUT_WITH_METALAYERS:
        metalayers, meta_index = _section_read(buf, ff.LEN_FIXED[layout], v.header_len, _META_BASE)
    tail_at = v.frame_len - ff.LEN_TRAILER_TAIL
    vlmetalayers, vlmeta_index = _section_read(buf, trailer_start + ff.LEN_TRAILER_HEAD, tail_at,
                                               trailer_start)
    tail = ff.TrailerTail.parse(buf[tail_at:v.frame_len])
    trailer = dict(version=ff.TrailerHead.parse(buf[trailer_start:]).version,
                   **_fields(ff.TrailerTail, tail))
    trailer["fingerprint"] = bytes(trailer["fingerprint"])
    section = buf[v.header_len:index_start]
    parts = FrameParts(layout, header, _pieces(section, offsets), offsets, metalayers,
                       vlmetalayers, trailer, meta_index, vlmeta_index)
    stored = dict(metalayers=buf[ff.LEN_FIXED[layout]:v.header_len],
                  index=buf[index_start:trailer_start], trailer=buf[trailer_start:tail_at])
    if layout not in ff.LAYOUT_WITH_METALAYERS:
        del stored["metalayers"]
    for name, raw in stored.items():
        if _compose(parts, name) != raw:
            parts._stored[name] = (parts._holds(name), raw)
    return parts


def _compose(parts: FrameParts, name: str) -> bytes | None:
    """Section ``name`` as the composer lays it out (None when it cannot:
    a name no fixstr holds)."""
    try:
        if name == "metalayers":
            return _section(parts.metalayers, ff.LEN_FIXED[parts.layout], 1, check=False,
                            **_overrides(parts.meta_index))
        if name == "index":
            return compress_index(list(parts.offsets))
        return stored_trailer_body(parts.vlmetalayers, parts.trailer["version"], check=False,
                                **_overrides(parts.vlmeta_index))
    except (ValueError, cs.ConstructError):
        return None
