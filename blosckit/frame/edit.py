"""Editing frames in place, as C-Blosc2's super-chunk calls edit them:
:func:`open_frame` with ``mode="a"`` gives an :class:`EditableFrame` (a
contiguous frame file or a sparse frame directory) that appends, inserts,
replaces and deletes chunks and sets metalayers and vlmetalayers.

What each edit does to the bytes is what C-Blosc2 3.3 does (its
``frame_append_chunk``, ``frame_insert_chunk``, ``frame_update_chunk``,
``frame_delete_chunk``, the header and trailer rewrites; specs/frame.md,
"Editing in place"): a new chunk goes at the end of the chunks section (a
sparse frame: a new chunk file numbered one past the highest), a replaced
chunk takes its predecessor's place with the chunks after it moved up or
down, a deleted chunk's bytes stay (a sparse frame: its file is removed),
and the offsets index and the trailer are written again after the chunks
section, the file cut where the trailer ends.  So python-blosc2 making the
same edits on a copy gives the same bytes, with two deliberate exceptions
(a special chunk in a frame of varying chunk sizes is stored, since C-Blosc2
cannot read it back; the header's thread counts are the frame's own).

Writes come in an order that keeps the frame recoverable: the chunks first,
then the index and trailer, the header last (readers take the sizes from
it); a sparse frame's index file is replaced whole (a rename).  An edit cut
short leaves a frame that opens with the old content or that
:func:`blosckit.salvage` recovers.  Memory: one chunk, the index (8 bytes a
chunk) and a moving buffer of :data:`MOVE_BYTES`, whatever the frame's size.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..chunk.encode import byte_view, compress
from ..chunk.read import check_chunk
from ..formats import chunk as fc
from ..formats import enums
from ..formats import frame as ff
from .build import (FRAME_VERSION, FRAME_VERSION_VL, PYTHON_BLOSC2_VLMETA_PARAMS,
                    SPECIAL_OFFSET_CODES, SPLITMODE_CODES, compress_index, stored_trailer_body,
                    vlmeta_chunk)
from .journal import Region, journal_path, roll_back, temporary, write_journal
from .read import Frame
from .remote import is_url, open_remote_frame
from .read import open_frame as _open_read

__all__ = ["EditableFrame", "open_frame", "FileIO", "MOVE_BYTES"]

MOVE_BYTES = 1 << 20          # the most bytes moved at a time when chunks shift
# the header's split-mode code -> compress()'s name (build.py holds the table)
_SPLITMODES = {code: name for name, code in SPLITMODE_CODES.items()}
# C-Blosc2 takes a stored chunk of exactly a header's length for no chunk
# when it counts the bytes a replaced or deleted chunk frees
_EMPTY_CHUNK = fc.LEN_EXTENDED
# the "being edited" mark: a header frame_len of 0, which every reader refuses
_FRAME_LEN_AT = ff.FLAT_HEADERS[14].offset("frame_len")
_NO_LENGTH = bytes(ff.FLAT_HEADERS[14]["frame_len"].size)


def open_frame(src, mode: str = "r") -> Frame:
    """Open a Blosc2 frame.  ``mode="r"`` (default): read it (``src``
    bytes-like, a contiguous frame file or a sparse frame directory, see
    :func:`blosckit.frame.read.open_frame`; or the URL of a contiguous
    frame, read by byte ranges, see :mod:`blosckit.frame.remote`).  ``mode="a"``: edit the frame
    file or directory at path ``src`` in place (:class:`EditableFrame`).
    FormatError for a malformed frame, ValueError for another mode."""
    if mode == "r":
        return open_remote_frame(src) if is_url(src) else _open_read(src)
    if mode == "a":
        if not isinstance(src, (str, os.PathLike)) or is_url(src):
            raise ValueError("mode='a' edits a frame file or a sparse frame directory: give "
                             "its path")
        return EditableFrame(src)
    raise ValueError(f"mode must be 'r' or 'a', got {mode!r}")


class FileIO:
    """The file operations edits make (one object so tests can fail any
    one of them): positional writes, truncation, atomic replacement and
    removal of files."""

    def write(self, path: Path, data, at: int) -> None:
        with open(path, "r+b") as fh:
            fh.seek(at)
            fh.write(data)

    def read(self, path: Path, at: int, size: int) -> bytes:
        with open(path, "rb") as fh:
            fh.seek(at)
            return fh.read(size)

    def append(self, path: Path, data) -> None:
        with open(path, "ab") as fh:
            fh.write(data)

    def size(self, path: Path) -> int:
        return os.stat(path).st_size

    def truncate(self, path: Path, size: int) -> None:
        os.truncate(path, size)

    def replace(self, path: Path, data) -> None:
        """``path`` holds ``data`` afterwards, or is left as it was."""
        tmp = temporary(path)
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)

    def remove(self, path: Path) -> None:
        os.unlink(path)


@dataclass
class _State:
    """What an edit changes: the index entries, the header's sizes and
    chunk size, and the stored vlmetalayer values (name -> chunk)."""
    entries: list[int]
    nbytes: int
    cbytes: int
    chunksize: int
    vlmeta: dict[str, bytes]
    metalayers: dict[str, bytes] = field(default_factory=dict)


class EditableFrame:
    """A frame file or sparse frame directory open for editing in place
    (:func:`open_frame` with ``mode="a"``).  Reading goes through the
    frame as it is after the last edit (every attribute and method of
    :class:`~blosckit.frame.read.Frame`).  Chunks are compressed Blosc
    chunks (bytes-like); ``i`` counts from 0, negative from the end.
    Each edit is done when its call returns; ValueError (nothing written)
    for a chunk or value the frame cannot take.  An edit cut short (see
    :mod:`.journal`) is undone when the frame is next opened this way;
    :attr:`rolled_back` says whether that happened.  A context manager."""

    def __init__(self, path: str | os.PathLike, *, io: FileIO | None = None) -> None:
        self.path = Path(path)
        self.sparse = self.path.is_dir()
        self._io = io if io is not None else FileIO()
        self._frame: Frame | None = None
        # an edit cut short left its journal: put the old bytes back first
        self.rolled_back = roll_back(self._io, self.path, MOVE_BYTES)
        self._load()

    # -- reading ------------------------------------------------------------

    def _load(self) -> None:
        self._release()
        f = _open_read(self.path)
        if f.layout != 14:
            f.close()
            raise ValueError(f"a frame of the older {f.layout}-element header layout: only "
                             "current frames are edited (C-Blosc2 edits no other)")
        self._frame = f

    def _release(self) -> None:
        if self._frame is not None:
            self._frame.close()
            self._frame = None

    @property
    def frame(self) -> Frame:
        """The frame as it is now (read-only)."""
        if self._frame is None:
            raise ValueError("the frame is closed")
        return self._frame

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.frame, name)

    def close(self) -> None:
        """Release the frame (every edit is already on disk)."""
        self._release()

    def __enter__(self) -> EditableFrame:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<EditableFrame {str(self.path)!r} nchunks={self.frame.nchunks}>"

    # -- chunks ---------------------------------------------------------------

    def append_chunk(self, chunk) -> int:
        """Append a compressed chunk; returns the frame's chunk count."""
        return self.insert_chunk(self.frame.nchunks, chunk)

    def append_data(self, data) -> int:
        """Compress ``data`` (bytes-like or NumPy array, items in C order)
        with the frame's parameters (the header's typesize, codec, clevel,
        filters, split mode and block size, as python-blosc2's
        ``append_data``) and append it as one chunk."""
        view, _ = byte_view(data)
        return self.append_chunk(compress(view, **self.compression_params()))

    def compression_params(self) -> dict[str, Any]:
        """The keyword arguments of :func:`blosckit.compress` that compress
        as the frame's header says (what python-blosc2 compresses with
        after opening the frame)."""
        v = self.frame.fields
        filters = [None if f == 0 else (enums.filter_name(f), m)
                   for f, m in zip(v.filters, v.filters_meta)]
        return dict(typesize=v.typesize, codec=self.frame.codec, clevel=v.clevel,
                    filters=filters, blocksize=max(v.blocksize, 0),
                    splitmode=_SPLITMODES[self.frame.header.other_flags.splitmode])

    def insert_chunk(self, i: int, chunk) -> int:
        """Insert a compressed chunk before chunk ``i`` (``i`` = the chunk
        count appends); returns the frame's chunk count."""
        f = self.frame
        n = f.nchunks
        k = _place(i, n + 1)
        view, h = _chunk(chunk)
        self._check_kind(h, skip=None)
        st = self._state()
        pieces: list[tuple[int, Any]] = []       # (chunks-section offset, bytes) to write
        files: dict[int, Any] = {}               # sparse: chunk file number -> bytes
        st.chunksize = self._size_rule(st, h.nbytes, k, inserting=True)
        self._store_specials_if_variable(st, pieces, files, skip=None)
        st.nbytes += h.nbytes
        code = self._special_code(h, st.chunksize)
        if code is not None:
            st.entries.insert(k, code)
        elif self.sparse:
            number = _next_number(st.entries)
            st.entries.insert(k, number)
            files[number] = view
            st.cbytes += len(view)
        else:
            st.entries.insert(k, st.cbytes)
            pieces.append((st.cbytes, view))
            st.cbytes += len(view)
        self._commit(st, pieces=pieces, files=files)
        return len(st.entries)

    def update_chunk(self, i: int, chunk) -> int:
        """Replace chunk ``i`` with a compressed chunk; the chunks after it
        move to follow it (a contiguous frame).  Returns the chunk count."""
        f = self.frame
        k = _place(i, f.nchunks)
        view, h = _chunk(chunk)
        self._check_kind(h, skip=k)
        st = self._state()
        old_entry = st.entries[k]
        old_nbytes, old_cbytes = self._old_sizes(k)
        pieces: list[tuple[int, Any]] = []
        files: dict[int, Any] = {}
        gone: list[int] = []
        st.chunksize = self._size_rule(st, h.nbytes, k, inserting=False)
        st.nbytes += h.nbytes - old_nbytes
        code = self._special_code(h, st.chunksize)
        new_cbytes = 0 if code is not None else len(view)
        move: tuple[int, int, int] | None = None       # (from, to, length) in the section
        if self.sparse:
            st.cbytes += new_cbytes - old_cbytes
            number = old_entry if old_entry >= 0 else _next_number(st.entries)
            if code is not None:
                st.entries[k] = code
                if old_entry >= 0:          # C-Blosc2 removes the old file
                    gone = [old_entry]
            else:
                st.entries[k] = number
                files[number] = view
        elif old_entry >= 0:
            # the chunks after the old one move by the size difference
            delta = new_cbytes - old_cbytes
            tail_from = old_entry + old_cbytes
            if st.cbytes - tail_from > 0 and delta:
                move = (tail_from, tail_from + delta, st.cbytes - tail_from)
            st.entries = [e + delta if (j != k and e > old_entry) else e
                          for j, e in enumerate(st.entries)]
            st.entries[k] = old_entry if code is None else code
            if code is None:
                pieces.append((old_entry, view))
            st.cbytes += delta
        elif code is not None:
            st.entries[k] = code
        else:
            st.entries[k] = st.cbytes
            pieces.append((st.cbytes, view))
            st.cbytes += new_cbytes
        # after the move: the stored specials go at the section's new end
        self._store_specials_if_variable(st, pieces, files, skip=k)
        self._commit(st, pieces=pieces, files=files, move=move, gone=gone)
        return len(st.entries)

    def delete_chunk(self, i: int) -> int:
        """Remove chunk ``i`` from the index.  In a contiguous frame its
        bytes stay where they are (as C-Blosc2 leaves them); a sparse
        frame's chunk file is removed.  Returns the chunk count."""
        f = self.frame
        k = _place(i, f.nchunks)
        st = self._state()
        old_entry = st.entries.pop(k)
        old_nbytes, old_cbytes = self._old_sizes(k)
        st.nbytes -= old_nbytes
        gone = []
        if self.sparse:
            st.cbytes -= old_cbytes
            if old_entry >= 0:
                gone.append(old_entry)
        self._commit(st, gone=gone)
        return len(st.entries)

    # -- metalayers -------------------------------------------------------------

    def update_metalayer(self, name: str, value: bytes) -> None:
        """Replace the value of metalayer ``name`` by ``value`` of the same
        length (C-Blosc2 allows no other: the header's length is fixed)."""
        old = self.frame.metalayers
        if name not in old:
            raise ValueError(f"no metalayer {name!r} (metalayers are added only when a frame "
                             "is created)")
        value = bytes(value)
        if len(value) != len(old[name]):
            raise ValueError(f"metalayer {name!r} holds {len(old[name])} bytes: a new value "
                             f"must be as long, got {len(value)}")
        st = self._state()
        st.metalayers = {name: value}
        self._commit(st)

    def set_vlmetalayer(self, name: str, value: bytes) -> None:
        """Store ``value`` (bytes; python-blosc2 reads msgpack) as the
        variable-length metalayer ``name``, compressed as python-blosc2's
        ``vlmeta[name] = ...`` has C-Blosc2 store it (zstd, level 5,
        shuffle, typesize 1); a new name goes after the others."""
        st = self._state()
        st.vlmeta[name] = vlmeta_chunk(value, PYTHON_BLOSC2_VLMETA_PARAMS)
        stored_trailer_body(st.vlmeta)          # ValueError now for a bad name or count
        self._commit(st)

    def delete_vlmetalayer(self, name: str) -> None:
        """Remove the variable-length metalayer ``name``."""
        st = self._state()
        if name not in st.vlmeta:
            raise ValueError(f"no vlmetalayer {name!r}")
        del st.vlmeta[name]
        self._commit(st)

    # -- the rules of an edit ---------------------------------------------------

    def _state(self) -> _State:
        f = self.frame
        return _State(entries=list(f.entries), nbytes=f.nbytes, cbytes=f.cbytes,
                      chunksize=f.chunksize, vlmeta=dict(f.vlmetalayers_raw))

    def _old_sizes(self, k: int) -> tuple[int, int]:
        """Chunk ``k``'s data bytes and the bytes C-Blosc2 counts it for
        (0 for a special entry, and for a stored chunk of a header's length)."""
        f = self.frame
        nbytes = f.chunk_nbytes(k) if f.chunksize > 0 else None
        if f.entries[k] < 0:
            return (nbytes if nbytes is not None else 0), 0
        stored = fc.stored_chunk(f.chunk_view(k)[1])      # its header only: no copy
        cbytes = 0 if stored.cbytes == _EMPTY_CHUNK else stored.cbytes
        return stored.nbytes, cbytes

    def _check_kind(self, h: fc.StoredChunk, skip: int | None) -> None:
        """A frame holds VL-block chunks or regular ones, not both."""
        f = self.frame
        ref = next((j for j in range(min(f.nchunks, 2)) if j != skip), None)
        if ref is None:
            return
        if f.entries[ref] >= 0 and \
                fc.stored_chunk(f.chunk_view(ref)[1]).vl_blocks != h.vl_blocks:
            raise ValueError("a frame holds VL-block chunks or regular ones, not both "
                             "(C-Blosc2 refuses the mix)")

    def _size_rule(self, st: _State, nbytes: int, k: int, inserting: bool) -> int:
        """The chunk size after a chunk of ``nbytes`` goes to place ``k``:
        C-Blosc2's super-chunk rule (the first chunk sets it; a chunk longer
        than it, one of another size not last, or one after a short last
        chunk makes the frame variable-size, chunk size 0)."""
        size = st.chunksize
        n = len(st.entries)
        if size == 0:
            return 0
        if size < 0 or n == 0 and inserting:
            return nbytes if size < 0 else (0 if nbytes > size else size)
        last = n - 1
        if inserting:
            last_nbytes = self.frame.chunk_nbytes(last) or 0
            if last_nbytes < size or nbytes > size or (k != n and nbytes != size):
                return 0
        elif nbytes > size or (k != last and nbytes != size):
            return 0
        return size

    def _special_code(self, h: fc.StoredChunk, chunksize: int) -> int | None:
        """The special entry that stands for a chunk (zeros, NaN, uninit),
        None for one to store: any other chunk, and every chunk of a
        variable-size frame (C-Blosc2 writes special entries there but
        cannot read them back)."""
        code = SPECIAL_OFFSET_CODES.get(h.special)
        if code is None or chunksize == 0:
            return None
        ts = self.frame.typesize
        return code if h.nbytes % max(ts, 1) == 0 else None

    def _store_specials_if_variable(self, st: _State, pieces: list, files: dict,
                                    skip: int | None) -> None:
        """A frame turning variable-size keeps no special entry (C-Blosc2
        cannot read one back there): each, but the one at ``skip`` (being
        replaced), becomes a stored chunk at the end of the section (a new
        chunk file), as build_frame stores them.  ``st.entries`` still has
        the frame's places."""
        f = self.frame
        if st.chunksize != 0 or f.chunksize == 0:
            return
        for j, e in enumerate(st.entries):
            if e >= 0 or j == skip:
                continue
            chunk = f.chunk(j)                 # the special chunk the entry stands for
            if self.sparse:
                number = _next_number(st.entries)
                st.entries[j] = number
                files[number] = chunk
            else:
                st.entries[j] = st.cbytes
                pieces.append((st.cbytes, chunk))
            st.cbytes += len(chunk)

    # -- writing --------------------------------------------------------------

    def _commit(self, st: _State, *, pieces: list | None = None, files: dict | None = None,
                move: tuple[int, int, int] | None = None, gone: list | None = None) -> None:
        """Write the edit: first the journal of every byte it changes, then
        the header marked "being edited" (frame_len 0: every reader refuses
        the frame until the edit is done), the chunks, the index and the
        trailer, the header, and last the journal's removal."""
        f = self.frame
        head = self._header_bytes(st)
        index = compress_index(st.entries)
        trailer = self._trailer(st)
        hl = f.header_len
        pieces, files, gone = pieces or [], files or {}, gone or []
        self._release()
        io = self._io
        if self.sparse:
            names = [ff.chunk_file_name(n) for n in [*files, *gone]]
            write_journal(io, self.path, [Region(n) for n in [*names, ff.SFRAME_INDEX]],
                          MOVE_BYTES)
            index_file = self.path / ff.SFRAME_INDEX
            io.write(index_file, _NO_LENGTH, _FRAME_LEN_AT)
            for number, data in files.items():
                io.replace(self.path / ff.chunk_file_name(number), data)
            end = hl + len(index) + len(trailer)
            io.replace(index_file, _with_frame_len(head, end) + index + trailer)
            for number in gone:
                io.remove(self.path / ff.chunk_file_name(number))
        else:
            # no chunk left: C-Blosc2 writes the trailer right after the
            # header (cbytes stays; no reader looks for a chunks section)
            tail_at = hl + st.cbytes if st.entries else hl
            end = tail_at + len(index) + len(trailer)
            first = min([tail_at, *(hl + at for at, _ in pieces),
                         *([hl + min(move[0], move[1])] if move else [])])
            write_journal(io, self.path, [Region("", 0, hl), Region("", first)], MOVE_BYTES)
            io.write(self.path, _NO_LENGTH, _FRAME_LEN_AT)
            if move is not None:
                self._move(hl, *move)
            for at, data in pieces:
                io.write(self.path, data, hl + at)
            io.write(self.path, index + trailer, tail_at)
            io.write(self.path, _with_frame_len(head, end), 0)
            io.truncate(self.path, end)
        io.remove(journal_path(self.path))
        self._load()

    def _move(self, base: int, src: int, dst: int, length: int) -> None:
        """Move ``length`` bytes of the chunks section from ``src`` to
        ``dst`` in pieces (from the end when moving up, so nothing is
        overwritten before it is copied)."""
        step = MOVE_BYTES
        starts = range(0, length, step)
        for s in (reversed(starts) if dst > src else starts):
            n = min(step, length - s)
            data = self._io.read(self.path, base + src + s, n)
            self._io.write(self.path, data, base + dst + s)

    def _header_bytes(self, st: _State) -> bytes:
        """The header (fixed part and metalayer section) after the edit:
        the frame's own with the fields C-Blosc2 rewrites (sizes, chunk
        size, variable-size and vlmetalayer flags, version)."""
        f = self.frame
        hdr = ff.FRAME_HEADERS[14].parse(bytes(f.buffer[:ff.LEN_FIXED[14]]))
        hdr.nbytes, hdr.cbytes = st.nbytes, st.cbytes
        hdr.chunksize = st.chunksize
        vl = bool(hdr.general_flags.vl_blocks)
        variable = st.chunksize == 0
        hdr.general_flags.variable_chunks = variable
        hdr.general_flags.version = FRAME_VERSION_VL if (vl or variable) else FRAME_VERSION
        hdr.has_vlmetalayers = 0xC3 if st.vlmeta else 0xC2
        fixed = ff.FRAME_HEADERS[14].build(hdr)
        section = bytearray(f.buffer[ff.LEN_FIXED[14]:f.header_len])
        for name, value in st.metalayers.items():
            at = f.metalayer_at[name] - ff.LEN_FIXED[14]       # where the value's bytes start
            assert len(section[at:at + len(value)]) == len(value)
            section[at:at + len(value)] = value
        return fixed + bytes(section)

    def _trailer(self, st: _State) -> bytes:
        body = stored_trailer_body(st.vlmeta)
        trailer_len = len(body) + ff.LEN_TRAILER_TAIL
        return body + ff.TrailerTail.build(dict(trailer_len=trailer_len, fingerprint_type=0,
                                                fingerprint=bytes(16)))


def _with_frame_len(head: bytes, frame_len: int) -> bytes:
    out = bytearray(head)
    ff.FLAT_HEADERS[14].put(out, "frame_len", frame_len)
    return bytes(out)


def _place(i: int, n: int) -> int:
    """Index ``i`` (negative from the end) as a place among ``n``."""
    if type(i) is not int:
        raise ValueError(f"a chunk index is an int, got {i!r}")
    k = i + n if i < 0 else i
    if not 0 <= k < n:
        raise IndexError(f"chunk {i} of {n} places")
    return k


def _chunk(chunk) -> tuple[Any, fc.StoredChunk]:
    """A chunk given to an edit, checked as a frame needs it: a Blosc2
    chunk (C-Blosc2 reads no Blosc1 chunk inside a frame) that passes the
    chunk rules on its header, block starts and dictionary."""
    v = chunk if isinstance(chunk, bytes) else memoryview(chunk).cast("B")
    errors = [p for p in check_chunk(v, deep=False) if p.severity == "error"]
    if errors:
        p = errors[0]
        raise ValueError(f"not a chunk a frame can hold: {p.message} (byte {p.offset}, "
                         f"{p.path}) [{p.rule}]")
    if len(v) < fc.LEN_EXTENDED or not fc.raw_header(v).six_slots:
        raise ValueError("a Blosc1 chunk (16-byte header): C-Blosc2 reads none inside a frame")
    return v, fc.stored_chunk(v)


def _next_number(entries: list[int]) -> int:
    """The chunk file number C-Blosc2 gives a new chunk of a sparse
    frame: one past the highest in the index (0 for none)."""
    return max((e for e in entries if e >= 0), default=-1) + 1
