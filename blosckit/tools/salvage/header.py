"""The parts of a damaged frame around its chunks, each read on its own: the
header's fields, each metalayer, the trailer's vlmetalayers one by one.  A
damaged field or value loses itself only, never its neighbours."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from ...chunk import read as _chunk
from ...errors import FormatError
from ...formats import chunk as fc
from ...formats import frame as ff
from ...formats.layout import ConstMismatch
from ...formats.rules import RaiseFirst
from ...frame.read import read_metalayers
from .report import Damage, Dropped, SalvageReport

__all__ = ["Header", "read_header", "read_field", "keep_vlmetalayers"]


@dataclass
class Header:
    """The header fields that could be read, each on its own (None: not
    readable); sizes in bytes.  ``variable``: the chunksize field reads 0
    (chunks of varying size)."""
    layout: int = 14
    header_len: int | None = None
    nbytes: int | None = None
    cbytes: int | None = None
    typesize: int | None = None
    chunksize: int | None = None
    blocksize: int | None = None
    variable: bool = False
    metalayers: dict[str, bytes] | None = None
    meta_at: dict[str, int] = field(default_factory=dict)   # where each value's bytes start

    def section(self, n: int) -> tuple[int, int] | None:
        """The chunks section ``(start, end)`` clipped to ``n`` input bytes,
        when header_len and cbytes are both known."""
        if self.header_len is None or self.cbytes is None:
            return None
        return self.header_len, min(n, self.header_len + self.cbytes)

    def nchunks(self) -> int | None:
        """Chunks the header announces (fixed chunk size only)."""
        if self.nbytes is None or not self.chunksize or self.chunksize <= 0:
            return None
        return -(-self.nbytes // self.chunksize)

    def size_of(self, i: int) -> int | None:
        """Decoded size (bytes) of chunk ``i`` by the header, None if unknown."""
        n = self.nchunks()
        if n is None or not 0 <= i < n:
            return None
        assert self.chunksize is not None and self.nbytes is not None
        return min(self.nbytes - i * self.chunksize, self.chunksize)


def read_field(mv: memoryview, con, name: str, base: int = 0,
               marker_name: str | None = None) -> int | None:
    """Field ``name`` of the msgpack structure ``con`` (a frame header, the
    trailer's tail) at ``base``, its marker and width from the declaration;
    None when the marker is not the declared one (the field is damaged) or
    the input ends first."""
    at, marker, fmt = ff.marked_field(con, name, marker_name)
    at += base
    if len(mv) < at + 1 + fmt.size or mv[at] != marker:
        return None
    return fmt.unpack_from(mv, at + 1)[0]


def read_header(mv: memoryview, report: SalvageReport) -> Header:
    """Every header field that can be read on its own: a damaged magic or
    one bad field does not discard the others.  The layout comes from byte 0
    (14 elements when that byte is damaged)."""
    n = len(mv)
    h = Header(layout=(ff.header_layout(mv[0]) if n else None) or 14)
    con = ff.FRAME_HEADERS[h.layout]
    header_len = read_field(mv, con, "header_len")
    if header_len is not None and not ff.LEN_FIXED[h.layout] <= header_len <= n:
        header_len = None
    nbytes = read_field(mv, con, "nbytes")
    h.nbytes = nbytes if nbytes is not None and nbytes >= 0 else None
    cbytes = read_field(mv, con, "cbytes")
    h.cbytes = cbytes if cbytes is not None and cbytes >= 0 else None
    ts = read_field(mv, con, "typesize")
    h.typesize = ts if ts is not None and 0 < ts else None
    cs = read_field(mv, con, "chunksize")
    h.chunksize = cs if cs is not None and cs > 0 else None
    h.variable = cs == 0 and bool(h.nbytes)
    # the older layouts have no blocksize field
    bs = read_field(mv, con, "blocksize") if "blocksize" in ff.FLAT_HEADERS[h.layout].fields \
        else None
    h.blocksize = bs if bs is not None and bs > 0 else None
    h.header_len = _metalayers(mv, h, header_len, report)
    return h


def _metalayers(mv: memoryview, h: Header, header_len: int | None,
                report: SalvageReport) -> int | None:
    """Read the metalayers into ``h`` and return the header length: where
    the metalayers end when all of them read (the field is then damaged if
    it says otherwise), else the field."""
    fixed = ff.LEN_FIXED[h.layout]
    if h.layout not in ff.LAYOUT_WITH_METALAYERS:
        h.metalayers = {}
        return header_len
    limit = len(mv) if header_len is None else header_len
    section = _section(mv, fixed, limit, 0, "frame.metalayers", "metalayer", report)
    if section is None:
        report.metalayers_kept = False
        return header_len
    h.metalayers, h.meta_at = section.values, section.at
    if not section.whole:
        report.metalayers_kept = False
        return header_len
    if header_len != section.end:
        said = "is damaged" if header_len is None else f"reads {header_len}"
        report.notes.append(f"the header_len field {said}, the metalayers end at "
                            f"{section.end}: using {section.end}")
    return section.end


# ---------------------------------------------------------------------------
# A metalayer section, entry by entry
# ---------------------------------------------------------------------------

class _Section(NamedTuple):
    values: dict[str, bytes]     # name -> the value's content (raw bytes)
    at: dict[str, int]           # name -> where the content starts in the input
    end: int                     # where the last value read ends
    whole: bool                  # every entry read


def _section(mv: memoryview, start: int, limit: int, base: int, root: str, what: str,
             report: SalvageReport,
             check: Callable[[str, bytes, int], bytes] | None = None) -> _Section | None:
    """The metalayer section at ``start`` (value offsets from ``base``, all
    inside ``mv[:limit]``), entry by entry: each entry whose name, offset and
    value read is kept (``check(name, content, offset)`` may turn the
    content into what is kept, or raise FormatError); an entry that does not read is dropped with its
    name (the entries after a damaged name have no known place: dropped
    too).  None, the whole section dropped, when its head does not read."""
    try:        # the frame reader's own first error, as every tool reports it
        read_metalayers(mv, start, limit, base, root)
    except FormatError as e:
        report.damage.append(Damage.of(e))
    scope = mv[:limit]
    head = ff.read_or_none(ff.FAST_META_HEAD, scope, start)
    count = None if head is None else _NUM_METALAYERS(head)
    if count is None or count > ff.MAX_METALAYERS:
        reason = "its head does not read" if count is None else f"it counts {count} entries"
        report.dropped.append(Dropped(what + "s", start, None, f"the section is damaged: "
                                      f"{reason}"))
        return None
    values: dict[str, bytes] = {}
    at: dict[str, int] = {}
    end = start + ff.FAST_META_HEAD.size + ff.FAST_VALUES_HEAD.size
    pos = start + ff.FAST_META_HEAD.size
    whole = True
    for k in range(count):
        entry = _entry(scope, pos)
        if entry is None:
            report.dropped.append(Dropped(what, pos, None, f"entries {k}..{count - 1} of "
                                          f"{root}: entry {k} does not read"))
            return _Section(values, at, end, False)
        raw_name, offset, size = entry
        pos += size
        name = _usable_name(raw_name, values)
        value_at = base + offset
        problem = name[1] if isinstance(name, tuple) else None
        content = None
        if problem is None:
            content = _value(scope, value_at)
            if content is None:
                problem = f"its value at {value_at} does not read"
        if problem is None:
            assert content is not None and isinstance(name, str)
            try:
                values[name] = content if check is None else check(name, content, value_at)
            except FormatError as e:
                report.damage.append(Damage.of(e.relocated(0, f"{root}[{name!r}]")))
                problem = e.message
            else:
                at[name] = value_at + ff.LEN_META_VALUE_HEAD
                end = max(end, at[name] + len(content))
                continue
        whole = False
        report.dropped.append(Dropped(what, value_at, None, problem,
                                      name=raw_name.decode("utf-8", "replace")))
    return _Section(values, at, end, whole)


def _entry(scope: memoryview, pos: int) -> tuple[bytes, int, int] | None:
    """(name, value offset, entry size) of the index entry at ``pos``, or
    None when its marker, name or offset does not read."""
    if pos >= len(scope):
        return None
    n = ff.fixstr_len(scope[pos])
    if n is None:
        return None
    name_at = pos + ff.LEN_NAME_MARKER
    tail = ff.read_or_none(ff.FAST_ENTRY_TAIL, scope, name_at + n)
    if tail is None:
        return None
    return bytes(scope[name_at:name_at + n]), _ENTRY_OFFSET(tail), ff.meta_entry_size(n)


def _usable_name(raw: bytes, kept: dict[str, bytes]) -> str | tuple[None, str]:
    """The name to keep, or (None, why not): an empty, non-UTF-8 or
    NUL-holding name is one no writer makes (C-Blosc2 cuts at a NUL), a
    repeated one C-Blosc2 never finds."""
    try:
        name = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "its name is not UTF-8"
    if not name or "\0" in name:
        return None, "its name is empty" if not name else "its name holds a NUL byte"
    if name in kept:
        return None, "the name appears twice (the first is kept)"
    return name


def _value(scope: memoryview, at: int) -> bytes | None:
    """The content of the bin32 value at ``at``, None when it does not read
    or runs past the section."""
    if not 0 <= at < len(scope):
        return None
    try:
        head = ff.FAST_VALUE_HEAD.read(scope, at)
    except (ConstMismatch, struct.error):
        return None
    start = at + ff.LEN_META_VALUE_HEAD
    n = _LEN_CONTENT(head)
    if start + n > len(scope):
        return None
    return bytes(scope[start:start + n])


_NUM_METALAYERS = ff.FAST_META_HEAD.getter("num_metalayers")
_ENTRY_OFFSET = ff.FAST_ENTRY_TAIL.getter("offset")
_LEN_CONTENT = ff.FAST_VALUE_HEAD.getter("len_content")


# ---------------------------------------------------------------------------
# The trailer's vlmetalayers
# ---------------------------------------------------------------------------

def keep_vlmetalayers(mv: memoryview, h: Header, index_end: int | None,
                      report: SalvageReport) -> dict[str, bytes]:
    """The trailer's vlmetalayers that read, decoded, each on its own.  The
    trailer starts where its tail says (read from the end of the input), or
    else right after the offsets index (``index_end``); a value is kept when
    it is a Blosc chunk that decodes."""
    n = len(mv)
    t = ff.trailer_view(n, n, h.header_len or 0, mv)
    start = t.start if t.head is not None else None
    if start is None:
        if index_end is not None and \
                ff.read_or_none(ff.FAST_TRAILER_HEAD, mv, index_end) is not None:
            start = index_end
            report.notes.append(f"the trailer's tail is damaged or cut off: its vlmetalayers "
                                f"read from the trailer's start, after the index ({start})")
        else:
            try:
                RaiseFirst().run(ff.TRAILER_RULES, t, mv)
            except FormatError as e:
                report.damage.append(Damage.of(e))
            report.vlmetalayers_kept = False
            report.dropped.append(Dropped("vlmetalayers", max(t.tail_at, 0), None,
                                          "the trailer is unreadable"))
            return {}
    def decoded(name: str, content: bytes, at: int) -> bytes:
        # the reader's rules for a value (F-vlmeta, F-lazy); a value whose
        # bin32 length is not its chunk's is read by the chunk's own cbytes
        head = at + ff.LEN_META_VALUE_HEAD
        try:
            RaiseFirst().run(ff.VALUE_RULES, ff.value_chunk_view(
                head, f"frame.trailer.vlmetalayers[{name!r}]", content), mv)
        except FormatError as e:
            report.damage.append(Damage.of(e))
            if e.rule == "F-vlmeta" and len(content) >= fc.LEN_HEADER:
                content = bytes(mv[head:head + max(fc.raw_header(content).cbytes, 0)])
        try:
            return _chunk.decompress(content)
        except FormatError as e:
            raise e.relocated(head, "") from None

    section = _section(mv, start + ff.LEN_TRAILER_HEAD, n, start,
                       "frame.trailer.vlmetalayers", "vlmetalayer", report, decoded)
    if section is None or not section.whole:
        report.vlmetalayers_kept = False
    return {} if section is None else section.values
