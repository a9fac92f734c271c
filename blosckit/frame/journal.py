"""The undo journal of an edit in place (:mod:`.edit`): before an edit
overwrites anything, the bytes it will overwrite are copied to a file
beside the frame (``<frame>.blosckit-journal``); the edit removes it once
done.  An edit cut short (a write error, a kill) leaves the journal, and
the next :class:`~blosckit.frame.edit.EditableFrame` on that frame puts the
old bytes back first.  A journal cut short itself has no end mark: the
frame was not touched yet, and the journal is dropped.

The journal is a list of records, each the old state of one region of one
file: its name (relative to the frame's directory, "" for the frame file
itself), the file's size then (-1: it did not exist), the region's start
and its bytes; then the end mark.  Copies go through in pieces of
``piece`` bytes: memory stays bounded whatever the region's size.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Protocol

from ..formats import journal as fj

__all__ = ["JOURNAL_SUFFIX", "journal_path", "Region", "write_journal", "roll_back",
           "temporary", "is_complete", "restored_copy"]

JOURNAL_SUFFIX = ".blosckit-journal"
_MAGIC = fj.MAGIC
_RECORD = fj.RECORD.struct                # name length, old file size, start, length
_END = fj.END


class IO(Protocol):
    def read(self, path: Path, at: int, size: int) -> bytes: ...
    def write(self, path: Path, data, at: int) -> None: ...
    def append(self, path: Path, data) -> None: ...
    def truncate(self, path: Path, size: int) -> None: ...
    def remove(self, path: Path) -> None: ...
    def size(self, path: Path) -> int: ...


def journal_path(frame: Path) -> Path:
    """Where the journal of the frame file or directory ``frame`` goes."""
    return frame.with_name(frame.name + JOURNAL_SUFFIX)


class Region:
    """A region of a file an edit will change: ``name`` ("" for the frame
    file), bytes ``start`` to ``end`` (None: the end of the file; a file
    of a sparse frame directory is kept whole, start 0)."""
    __slots__ = ("name", "start", "end")

    def __init__(self, name: str, start: int = 0, end: int | None = None) -> None:
        self.name, self.start, self.end = name, start, end


def _file(frame: Path, name: str) -> Path:
    return frame if name == "" else frame / name


def write_journal(io: IO, frame: Path, regions: list[Region], piece: int) -> Path:
    """Copy each region's bytes as they are now into the journal of
    ``frame``; the end mark goes last.  Returns the journal's path."""
    jp = journal_path(frame)
    io.append(jp, _MAGIC)
    for r in regions:
        path = _file(frame, r.name)
        try:
            size = io.size(path)
        except FileNotFoundError:
            size = -1
        have = max(size, 0)
        start = min(r.start, have)
        length = (have if r.end is None else min(r.end, have)) - start
        raw = r.name.encode()
        io.append(jp, _RECORD.pack(len(raw), size, start, length) + raw)
        for at in range(start, start + length, piece):
            io.append(jp, io.read(path, at, min(piece, start + length - at)))
    io.append(jp, _RECORD.pack(_END, 0, 0, 0))
    return jp


def roll_back(io: IO, frame: Path, piece: int) -> bool:
    """Put back what the journal of ``frame`` holds, if it is complete,
    then remove the journal (and any temporary file a replacement left
    beside a file it names).  Returns whether a journal was there."""
    jp = journal_path(frame)
    if not jp.exists():
        return False
    for leftover in _temporaries(frame):
        io.remove(leftover)
    if _complete(jp):
        _apply(io, jp, frame, piece)
    io.remove(jp)
    return True


def is_complete(frame: Path) -> bool:
    """A complete journal lies beside ``frame``: an edit of it was cut short."""
    jp = journal_path(frame)
    return jp.is_file() and _complete(jp)


def restored_copy(io: IO, frame: Path, into: Path, piece: int) -> Path:
    """A copy of ``frame`` (file or sparse frame directory) in the folder
    ``into``, with its complete journal put back into the copy: the frame
    as it was before the edit that was cut short.  ``frame`` and its
    journal are left as they are."""
    copy = into / frame.name
    if frame.is_dir():
        shutil.copytree(frame, copy, ignore=shutil.ignore_patterns("*" + TEMP_SUFFIX))
    else:
        shutil.copyfile(frame, copy)
    _apply(io, journal_path(frame), copy, piece)
    return copy


def _apply(io: IO, jp: Path, frame: Path, piece: int) -> None:
    """Write the old bytes the journal ``jp`` holds into ``frame``."""
    with open(jp, "rb") as fh:
        fh.read(len(_MAGIC))
        while True:
            n, size, start, length = _RECORD.unpack(fh.read(_RECORD.size))
            if n == _END:
                break
            path = _file(frame, fh.read(n).decode())
            if size < 0:
                if path.exists():
                    io.remove(path)
                fh.seek(length, 1)
                continue
            if not path.exists():
                io.append(path, b"")
            for at in range(start, start + length, piece):
                io.write(path, fh.read(min(piece, start + length - at)), at)
            io.truncate(path, size)


TEMP_SUFFIX = ".blosckit-tmp"


def temporary(path: Path) -> Path:
    """Where a file is written before it replaces ``path`` (a rename)."""
    return path.with_name(path.name + TEMP_SUFFIX)


def _temporaries(frame: Path) -> list[Path]:
    """Temporary files an edit cut short may have left: beside the frame
    file, or in the sparse frame's directory."""
    where = frame if frame.is_dir() else frame.parent
    return [p for p in where.glob("*" + TEMP_SUFFIX)
            if frame.is_dir() or p.name == frame.name + TEMP_SUFFIX]


def _complete(jp: Path) -> bool:
    """The journal was written to its end mark (walks its records)."""
    total = jp.stat().st_size
    with open(jp, "rb") as fh:
        if fh.read(len(_MAGIC)) != _MAGIC:
            return False
        pos = len(_MAGIC)
        while pos + _RECORD.size <= total:
            fh.seek(pos)
            n, _, _, length = _RECORD.unpack(fh.read(_RECORD.size))
            if n == _END:
                return pos + _RECORD.size == total
            pos += _RECORD.size + n + length
    return False
