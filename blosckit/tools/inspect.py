"""The inspector: every field of a chunk or a Blosc2 frame as a node with its
offset.

Nodes are ``(path, offset, size, value, doc, bit, meaning)``; the CLI renders
them as text or JSON.  Every structure is read through its declaration in
:mod:`blosckit.formats.chunk` and :mod:`blosckit.formats.frame`
(``formats.parse`` and ``formats.walk``), and the layout of a chunk or frame
comes from the public readers (:func:`blosckit.parse_chunk`,
:func:`blosckit.open_frame`), so the tree names fields as the spec and the
validator do and agrees with the reader.

Offsets are absolute byte offsets into the input: the chunk, the cframe, or
a sparse frame's index file ``chunks.b2frame`` (a sparse frame's chunks
are the one exception: their nodes count from the start of their own chunk
file, and their docs say so).  Values are JSON-serialisable: bytes become
hex (16 bytes or fewer) or ``"<N bytes>"``.

On damaged input both generators yield everything that could be read and
then raise the :class:`FormatError` where they had to stop: the reader's
own error (a chunk's streams are walked and decoded by the reader's walk,
:func:`blosckit.chunk.read.walk_chunk`; a frame's entries are checked by
:meth:`Frame.locate`), so the inspector stops at the same rule, offset and
path as ``decompress`` and ``validate``.
"""
from __future__ import annotations

import math
import mmap
import os
from pathlib import Path
from typing import Any, Callable, Generator, Iterable, Iterator, NamedTuple

import msgpack

from ..chunk.read import (MAX_NBYTES, Chunk, WalkedBlock, WalkedStream, WalkedVLBlock,
                          parse_chunk, walk_chunk)
from ..errors import FormatError, relocate_path
from ..formats import build, parse, walk
from ..formats import chunk as fc
from ..formats import b2nd as fb
from ..formats import frame as ff
from ..formats.describe import describe
from ..frame.read import Frame, open_frame, vlmeta_value

__all__ = ["Node", "chunk_nodes", "frame_nodes"]


class Node(NamedTuple):
    path: str
    offset: int
    size: int        # bytes; 0 for a bit field inside a byte, or for a value with no bytes
    value: object    # JSON-serialisable; None for a structure
    doc: str         # what the field is (the declaration's words)
    bit: tuple[int, int] | None = None    # (first bit, width) of a bit field
    meaning: str = ""    # the value in the format's own words ("lz4", "sparse")


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------

SHORT_BYTES = 16     # bytes up to this length are shown as hex


def _bytes_value(raw) -> str:
    """Bytes as a node value: hex when short, else ``"<N bytes>"``."""
    raw = bytes(raw)
    return raw.hex() if len(raw) <= SHORT_BYTES else f"<{len(raw)} bytes>"


class _NotJson(Exception):
    """A decoded value that JSON cannot carry (msgpack ext types, NaN...)."""


def _json(obj: Any) -> Any:
    """``obj`` (decoded msgpack) as JSON-serialisable data; _NotJson when it
    holds something JSON has no form for."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise _NotJson(obj)
        return obj
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return _bytes_value(obj)
    if isinstance(obj, (list, tuple)):
        return [_json(x) for x in obj]
    if isinstance(obj, dict):
        if not all(isinstance(k, (str, int, bool)) or k is None for k in obj):
            raise _NotJson(obj)
        return {str(k): _json(v) for k, v in obj.items()}
    raise _NotJson(obj)


def _msgpack_value(raw: bytes) -> tuple[Any, bool]:
    """``(value, True)`` when ``raw`` is one msgpack object JSON can carry,
    else ``("<N bytes>", False)``."""
    try:
        return _json(msgpack.unpackb(raw, raw=False, strict_map_key=False)), True
    except (ValueError, TypeError, RecursionError, _NotJson):
        # msgpack's errors are ValueErrors; TypeError: an unhashable map key
        return f"<{len(raw)} bytes>", False


def _plain(value: Any) -> Any:
    """A parsed field's value as a node value."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_value(value)
    return value


def _fields(con, obj, path: str, offset: int, context: Any, select=None) -> Iterator[Node]:
    """The nodes of a parsed structure ``obj`` declared by ``con`` at
    ``offset`` (``formats.walk``), with their meanings (``context``: the
    structure whose other fields a meaning may depend on)."""
    for p, ofs, size, value, doc, bit in walk(con, obj, path, offset, select):
        value = _plain(value)
        meaning = describe(p, value, context) if value is not None else ""
        yield Node(p, ofs, size, value, doc, bit, meaning)


def _relocated(nodes: Iterable[Node], base: int, root: str) -> Iterator[Node]:
    """Nodes of an inner structure seen from the outer input: offsets plus
    ``base``, the path's root swapped for ``root``; its errors likewise."""
    try:
        for n in nodes:
            yield n._replace(path=relocate_path(n.path, root), offset=n.offset + base)
    except FormatError as e:
        raise e.relocated(base, root) from None


# ---------------------------------------------------------------------------
# Chunks
# ---------------------------------------------------------------------------

def chunk_nodes(src, *, max_nbytes: int = MAX_NBYTES) -> Iterator[Node]:
    """Nodes for a chunk: header fields, bstarts, dictionary and streams.
    The chunk is read as :func:`blosckit.decompress` reads it (every stream
    decoded; ``max_nbytes`` as decompress's) and raises decompress's
    FormatError where the chunk stops making sense, after yielding
    everything before that point."""
    mv = memoryview(src).cast("B") if not isinstance(src, bytes) else memoryview(src)
    try:
        c = parse_chunk(mv, max_nbytes=max_nbytes)
    except FormatError:
        yield from _header_as_read(mv)       # what was read before the stop
        raise
    overhead = fc.LEN_EXTENDED if c.extended else fc.LEN_HEADER
    yield Node("chunk", 0, c.cbytes, None, f"Blosc chunk, format version {c.version}")
    yield Node("chunk.header", 0, overhead, None, "header")
    yield from _fields(fc.Header, c.header, "chunk.header", 0, c.header, fc.switch_case)
    if c.bstarts:
        bst = parse(fc.Bstarts, mv, overhead, "chunk.bstarts", rule=fc.bstarts_fit.id,
                    num_blocks=len(c.bstarts))
        for j, b in enumerate(bst):
            yield Node(f"chunk.bstarts[{j}]", overhead + fc.LEN_BSTART * j, fc.LEN_BSTART, b,
                       "start of block")
    ofs = overhead + fc.LEN_BSTART * len(c.bstarts)
    if c.dict is not None:
        d = parse(fc.DictSection, mv, ofs, "chunk.dict", rule=fc.dict_fits.id)
        yield Node("chunk.dict", ofs, c.ofs_streams - ofs, None, "dictionary section")
        yield from _fields(fc.DictSection, d, "chunk.dict", ofs, c.header)
    if c.special == "value" and c.value is not None:
        # the value itself, whole: it is what the chunk means
        yield Node("chunk.value", fc.LEN_EXTENDED, len(c.value), c.value.hex(),
                   "the repeated value")
    if c.lazy:
        yield from _lazy_trailer(mv, c, ofs)
    elif c.memcpyed and c.nbytes:
        yield Node("chunk.data", overhead, c.nbytes, f"<{c.nbytes} bytes>", "uncompressed data")
    for w in walk_chunk(mv, max_nbytes=max_nbytes):   # the reader's checks, in its order
        if isinstance(w, WalkedBlock):
            yield Node(f"chunk.blocks[{w.j}]", w.start, 0, None,
                       f"block of {w.size} bytes in {w.nstreams} stream(s)")
        elif isinstance(w, WalkedStream):
            yield from _stream(mv, c, w)
        else:
            yield from _vl_block(mv, c, w)


def _header_as_read(mv: memoryview) -> Iterator[Node]:
    """The header's fields of a chunk the reader stops at, as far as the
    declaration reads them (nothing when not even they parse)."""
    try:
        h = parse(fc.Header, mv, 0, "chunk.header", rule=fc.version_known.id)
    except FormatError:
        return
    size = fc.LEN_EXTENDED if "extended" in h and h.extended is not None else fc.LEN_HEADER
    yield Node("chunk", 0, len(mv), None,
               f"Blosc chunk, format version {h.version} (read up to the error below)")
    yield Node("chunk.header", 0, size, None, "header")
    yield from _fields(fc.Header, h, "chunk.header", 0, h, fc.switch_case)


def _lazy_trailer(mv: memoryview, c: Chunk, ofs: int) -> Iterator[Node]:
    """The trailer of a lazy chunk, when the input holds it (the reader
    refuses lazy chunks, T-lazy, right after)."""
    try:
        t = parse(fc.LazyTrailer, mv, ofs, "chunk.lazy_trailer", rule=fc.not_lazy.id,
                  num_blocks=len(c.bstarts))
    except FormatError:
        return
    yield Node("chunk.lazy_trailer", ofs, fc.LazyTrailer.sizeof(num_blocks=len(c.bstarts)),
               None, "trailer of an in-memory lazy chunk")
    yield from _fields(fc.LazyTrailer, t, "chunk.lazy_trailer", ofs, c.header)


def _stream(mv: memoryview, c: Chunk, w: WalkedStream) -> Iterator[Node]:
    """A stream the reader read and decoded."""
    p = f"chunk.blocks[{w.j}].streams[{w.k}]"
    s = parse(fc.Stream, mv[:c.cbytes], w.start, p, rule=fc.stream_inside_chunk.id,
              bound=_CHUNK_END,
              version=c.version)
    kind = ("all zeros" if w.csize == 0 else "byte run" if w.csize < 0 else
            "raw bytes" if w.raw else "codec stream")
    yield Node(p, w.start, w.size, None, f"stream {w.k}: {kind}")
    yield from _fields(fc.Stream, s, p, w.start, c.header)


_CHUNK_END = "the chunk (cbytes)"


def _vl_block(mv: memoryview, c: Chunk, w: WalkedVLBlock) -> Iterator[Node]:
    """A VL block the reader read and decoded."""
    path = f"chunk.blocks[{w.j}]"
    blk = parse(fc.VLBlock, mv[:c.cbytes], w.start, path, rule=fc.vl_block_inside_chunk.id,
                bound=_CHUNK_END,
                len_payload=w.stop - w.start - fc.LEN_VLSIZE)
    yield Node(path, w.start, w.stop - w.start, None, f"VL block of {blk.size} bytes")
    yield from _fields(fc.VLBlock, blk, path, w.start, c.header)


def _chunk_meaning(c: Chunk) -> str:
    """A chunk in one line: "nbytes 4000, cbytes 123, lz4, shuffle"."""
    parts = [f"nbytes {c.nbytes}", f"cbytes {c.cbytes}"]
    if c.special:
        parts.append(f"special: {c.special}")
    elif c.memcpyed:
        parts.append("stored raw")
    else:
        parts.append(c.codec)
        parts += [f"{name} {meta}" if meta else name for name, meta in c.filters] \
            or ["no filters"]
    return ", ".join(parts)


def _inner_chunk(view: memoryview, base: int, root: str,
                 max_nbytes: int = MAX_NBYTES) -> Iterator[Node]:
    """A chunk inside a frame to field level, relocated to ``base`` and
    ``root``, without its root node (the frame's own node stands for it)."""
    nodes = _relocated(chunk_nodes(view, max_nbytes=max_nbytes), base, root)
    next(nodes)
    yield from nodes


# ---------------------------------------------------------------------------
# Frames
# ---------------------------------------------------------------------------

def frame_nodes(src, *, chunk: int | None = None) -> Iterator[Node]:
    """Nodes for a Blosc2 frame, in file order: the frame, its fixed header
    fields, the metalayers, one summary node per chunk (with ``chunk=N``,
    chunk N also to field level), the offsets index and its entries, and
    the trailer with its vlmetalayers.

    ``src`` is bytes-like (a cframe), or a path to a sparse frame directory
    (offsets are then into its ``chunks.b2frame``) or to a frame file.
    Paths are the validator's (``frame.header.typesize``,
    ``frame.metalayers['b2nd']``, ``frame.chunks[3].header.nbytes``,
    ``frame.offsets[3]``, ``frame.trailer.vlmetalayers['x']``).

    A frame that does not open shows its header and metalayers when they
    parse, then raises the reader's FormatError; a header that does not
    parse raises at once.  IndexError when ``chunk`` is not a chunk index.
    """
    try:
        f = open_frame(src)
    except FormatError as e:
        yield from _unopened(_input_view(src), e, _is_dir(src))
        return
    with f:
        if chunk is not None:
            f.check_index(chunk)
        yield from _frame(f, chunk)


def _is_dir(src) -> bool:
    return isinstance(src, (str, os.PathLike)) and Path(src).is_dir()


def _input_view(src) -> memoryview:
    """The bytes offsets count in: the cframe, or an sframe's index file
    (a file is mapped, not read: only its header is wanted here)."""
    if _is_dir(src):
        return memoryview((Path(src) / ff.SFRAME_INDEX).read_bytes())
    if isinstance(src, (str, os.PathLike)):
        with open(src, "rb") as fh:
            if os.fstat(fh.fileno()).st_size == 0:
                return memoryview(b"")
            return memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
    mv = memoryview(src)
    return mv if mv.format == "B" and mv.ndim == 1 else mv.cast("B")


def _frame(f: Frame, chunk: int | None) -> Iterator[Node]:
    mv, h = f.buffer, f.header
    yield from _head(h, f.layout, len(mv), f.directory is not None)
    if f.layout in ff.LAYOUT_WITH_METALAYERS:
        yield from _metalayers(mv, f.layout, h.header_len, b2nd=lambda name, at: _b2nd(f, at, name))
    yield from _chunks(f, chunk)
    yield from _index(f)
    yield from _trailer(f)


def _unopened(mv: memoryview, err: FormatError, sparse: bool) -> Iterator[Node]:
    """What a frame the reader refuses still shows (its header and
    metalayers, when they parse), then the reader's error."""
    layout = ff.header_layout(mv[0]) if len(mv) else None
    if layout is None:
        raise err
    try:
        h = parse(ff.FRAME_HEADERS[layout], mv, 0, "frame.header", rule=ff.markers_declared.id)
    except FormatError:
        raise err from None
    yield from _head(h, layout, len(mv), sparse)
    if layout in ff.LAYOUT_WITH_METALAYERS:
        try:
            yield from _metalayers(mv, layout, max(0, min(h.header_len, len(mv))))
        except FormatError:
            pass      # the reader's error, raised below, comes first in its order
    raise err


def _head(h, layout: int, n: int, sparse: bool) -> Iterator[Node]:
    """The frame node and the fixed header's fields."""
    version = h.general_flags.version
    kind = "sparse frame (its index file chunks.b2frame)" if sparse else "contiguous frame"
    doc = f"Blosc2 {kind}, format version {version}, header layout of {layout} elements"
    if h.frame_len != n:
        doc += f" (the header declares {h.frame_len} bytes, the input has {n})"
    yield Node("frame", 0, max(0, min(h.frame_len, n)), None, doc)
    covers = " also covers the metalayers" if layout in ff.LAYOUT_WITH_METALAYERS else ""
    yield Node("frame.header", 0, ff.LEN_FIXED[layout], None,
               f"the header's fixed part: a msgpack array of {layout} elements "
               f"(header_len {h.header_len}{covers})")
    yield from _fields(ff.FRAME_HEADERS[layout], h, "frame.header", 0, h)


# -- metalayers (the header's) and vlmetalayers (the trailer's): one layout

_ValueReader = Callable[[bytes, int, str], tuple[Any, str]]


def _metalayers(mv: memoryview, layout: int, header_len: int,
                b2nd: Callable[[str, int], Iterator[Node]] | None = None) -> Iterator[Node]:
    """The header's metalayers section: from the fixed part to header_len."""
    def children(name: str, at: int) -> Iterator[Node]:
        return b2nd(name, at) if b2nd is not None else iter(())
    start = ff.LEN_FIXED[layout]
    yield from _meta_section(mv, start, header_len, header_len, 0, "frame.metalayers",
                             "metalayers: msgpack [index size, {name: offset}, [values]]",
                             _meta_value, children)


def _meta_section(mv: memoryview, start: int, end: int, limit: int, base: int, root: str,
                  doc: str, read_value: _ValueReader,
                  children: Callable[[str, int], Iterator[Node]] | None = None
                  ) -> Iterator[Node]:
    """A metalayers section from ``start`` to ``end``, read as the reader
    does: everything inside ``mv[:limit]``, value offsets counted from
    ``base``.  Yields the section, its head, each index entry, the values'
    head, then each value as ``root['name']``."""
    scope = mv[:limit]
    section = f"the section's space (up to byte {limit})"
    m = parse(ff.Metalayers, scope, start, root, rule=ff.metalayers_well_formed.id,
              bound=section)
    yield Node(root, start, end - start, None, doc)
    yield from _fields(ff.MetalayersHead, m, root, start, m)
    pos = start + ff.MetalayersHead.sizeof()
    for k, e in enumerate(m.index):
        pos = yield from _meta_entry(e, f"{root}.index[{k}]", pos)
    yield from _fields(ff.ValuesHead, m, root, pos, m)
    for e in m.index:
        name = _name_text(e.name)
        path = f"{root}[{name!r}]"
        v = parse(ff.MetaValue, scope, base + e.offset, path, rule=ff.metalayers_well_formed.id,
                  bound=section)
        at = base + e.offset + ff.LEN_META_VALUE_HEAD
        value, meaning = read_value(v.content, at, path)
        yield Node(path, at, v.len_content, value,
                   f"the value: the content of a msgpack bin32 (its "
                   f"{ff.LEN_META_VALUE_HEAD}-byte head at {at - ff.LEN_META_VALUE_HEAD})",
                   None, meaning)
        if children is not None:
            yield from children(name, at)


def _meta_entry(e, path: str, pos: int) -> Generator[Node, None, int]:
    """One index entry's nodes (name shown as text); returns where the next
    entry starts."""
    size = len(build(ff.MetaEntry, e, path))
    yield Node(path, pos, size, None, f"index entry: name and value offset of {_name_text(e.name)!r}")
    for n in _fields(ff.MetaEntry, e, path, pos, e):
        yield n._replace(value=_name_text(e.name)) if n.path.endswith(".name") else n
    return pos + size


def _name_text(raw: bytes) -> str:
    """A metalayer name as the reader keys it (U+FFFD where not UTF-8)."""
    return bytes(raw).decode("utf-8", "replace")


def _meta_value(content: bytes, at: int, path: str) -> tuple[Any, str]:
    """A header metalayer's value: msgpack, as python-blosc2 writes them."""
    value, ok = _msgpack_value(content)
    return value, ("msgpack" if ok else "not msgpack: opaque bytes")


def _vlmeta_value(content: bytes, at: int, path: str) -> tuple[Any, str]:
    """A vlmetalayer's value: a Blosc chunk holding msgpack."""
    data = vlmeta_value(content, at, path)
    value, ok = _msgpack_value(data)
    what = "msgpack" if ok else "opaque bytes"
    return value, f"a Blosc chunk of {len(content)} bytes holding {len(data)} bytes of {what}"


def _b2nd(f: Frame, at: int, name: str) -> Iterator[Node]:
    """The b2nd metalayer's fields at their offsets inside the value at
    ``at``, from the declaration, and the chunk grid they give."""
    b = f.b2nd
    if b is None or b.name != name:
        return
    root = f"frame.metalayers[{name!r}]"
    extents = {f"{root}.{k}": getattr(b, k) for k in ("shape", "chunkshape", "blockshape")}
    for p, ofs, size, value, doc, _ in walk(fb.B2ndMeta, b.fields, root, at):
        if p in extents:            # the array as a whole, then its items
            ext = extents[p]
            yield Node(p, ofs, size, list(ext), doc, None, " x ".join(map(str, ext))
                       + (f" items of {b.dtype}" if p.endswith(".shape") else " items"))
            continue
        if p.endswith(".dtype"):    # the pair, and its string: shown as text
            value = b.dtype
        yield Node(p, ofs, size, _plain(value), doc, None, _b2nd_meaning(p, value, b))
    count = math.prod(b.grid)
    yield Node(f"{root}.chunk_grid", at, 0, b.grid,
               "chunks per dimension: ceil(shape / chunkshape) (derived)", None,
               f"{count} chunks" + ("" if count == f.nchunks else
                                    f", but the frame has {f.nchunks}"))


def _b2nd_meaning(path: str, value: Any, b) -> str:
    leaf = path.rsplit(".", 1)[-1]
    if leaf.endswith("_marker") and leaf != "dtype_marker":
        return "" if value == fb.array_marker(b.ndim) else "not a msgpack fixarray marker"
    if leaf == "dtype_format":
        return "NumPy dtype string" if value == fb.DTYPE_FORMAT_NUMPY else "unknown"
    return ""


# -- chunks

def _chunks(f: Frame, chunk: int | None) -> Iterator[Node]:
    """The chunks section and one node per chunk (chunk ``chunk`` also to
    field level).  The offsets index is decoded here: chunks come first in
    the file, but only the index says where they are."""
    if f.directory is not None:
        yield Node("frame.chunks", f.header_len, 0, None,
                   f"chunks: {f.cbytes} bytes in one file per chunk beside "
                   f"{ff.SFRAME_INDEX}; their offsets count from their file's start")
    else:
        yield Node("frame.chunks", f.header_len, f.cbytes, None,
                   "chunks section (in the order the offsets index gives)")
    f.entries                        # decoded now: FormatError here if it does not
    for i in range(f.nchunks):
        yield from _chunk_summary(f, i, i == chunk)


def _chunk_summary(f: Frame, i: int, inner: bool) -> Iterator[Node]:
    """Chunk ``i``'s node, read as the reader reads it (its entry, where it
    lies, its header, capped at the frame's chunk size), then with
    ``inner`` the chunk to field level, then its size against the frame's."""
    path = f"frame.chunks[{i}]"
    e, view = f.locate(i)
    if view is None:
        at = f.index_span[0]
        yield Node(path, at, 0, None,
                   f"a special offset: no bytes stored (its entry is in the offsets "
                   f"index at {at})", None, f"special: {e.kind} (no bytes stored)")
        return
    cap = f.chunk_cap(e)
    try:
        c = parse_chunk(view, max_nbytes=cap)
    except FormatError as err:
        raise err.relocated(e.start, path) from None
    if f.directory is not None:
        doc = f"chunk file {ff.chunk_file_name(e.entry)}: offsets within that file"
    else:
        doc = f"chunk {i}, at offset {e.entry} of the chunks section"
    yield Node(path, e.start, c.cbytes, None, doc, None, _chunk_meaning(c))
    if inner:
        yield from _inner_chunk(view, e.start, path, cap)
    f.check_nbytes(e, c.nbytes)


# -- the offsets index

def _index(f: Frame) -> Iterator[Node]:
    """The index chunk to field level, then one node per entry.  Entries of
    a compressed index have no byte offset of their own: they are shown at
    the index chunk's start with size 0; a memcpyed index stores them raw,
    and they are shown where they are."""
    start, end = f.index_span
    if end == start:
        yield Node("frame.offsets", start, 0, None, "no offsets index: the frame has no chunks")
        return
    yield Node("frame.offsets", start, end - start, None,
               f"offsets index: a Blosc chunk of int64, one per chunk ({f.nchunks})")
    yield from _inner_chunk(f.buffer[start:end], start, "frame.offsets")
    size = ff.LEN_OFFSET if f.entries_stored_raw else 0
    for i, o in enumerate(f.entries):
        if size:
            doc = f"offset of chunk {i}"
        else:
            doc = (f"offset of chunk {i}, decoded from the compressed index chunk (shown at "
                   "its start: no byte offset of its own)")
        path = f"frame.offsets[{i}]"
        yield Node(path, f.entry_offset(i), size, o, doc, None,
                   describe(path, o) or _points_at(f, o))


def _points_at(f: Frame, o: int) -> str:
    if f.directory is not None:
        return f"chunk file {ff.chunk_file_name(o)}"
    return f"chunk at byte {f.header_len + o} of the frame"


# -- the trailer

def _trailer(f: Frame) -> Iterator[Node]:
    """The trailer's head, its vlmetalayers and its tail."""
    mv, start, n = f.buffer, f.trailer_start, f.fields.frame_len
    yield Node("frame.trailer", start, n - start, None,
               "trailer: msgpack [version, vlmetalayers, trailer_len, fingerprint]")
    head = parse(ff.TrailerHead, mv, start, "frame.trailer", rule=ff.trailer_ends_frame.id)
    yield from _fields(ff.TrailerHead, head, "frame.trailer", start, head)
    f.vlmetalayers_raw                          # the reader's checks of the section come first
    tail_at = n - ff.LEN_TRAILER_TAIL
    # the reader reads the section within the whole frame (limit n)
    yield from _meta_section(mv, start + ff.LEN_TRAILER_HEAD, tail_at, n, start,
                             "frame.trailer.vlmetalayers",
                             "vlmetalayers: as the metalayers, offsets from the trailer's "
                             "start, each value a Blosc chunk", _vlmeta_value)
    tail = parse(ff.TrailerTail, mv, tail_at, "frame.trailer", rule=ff.trailer_ends_frame.id)
    yield from _fields(ff.TrailerTail, tail, "frame.trailer", tail_at, tail)
