"""Inputs: files, ``-`` (standard input), sparse frame directories, and
structures at an offset inside a file."""
from __future__ import annotations

import mmap
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import FormatError
from ..formats import chunk as fc
from ..formats import frame as ff
from ..frame.remote import fetch_whole, is_url
from .report import UsageError

STDIO = "-"                        # as an input: standard input; as an output: standard output


@dataclass
class Source:
    """One input: ``data`` (None for a sparse frame directory), ``base``
    (where the structure starts in the file, ``--offset``, in bytes) and
    ``size`` (the file's length in bytes)."""
    name: str
    data: memoryview | None
    directory: Path | None = None
    base: int = 0
    size: int = 0

    @property
    def kind(self) -> str:
        """``"sframe"``, ``"frame"`` or ``"chunk"``."""
        if self.directory is not None:
            return "sframe"
        return "frame" if ff.looks_like_frame(self.data) else "chunk"

    @property
    def target(self) -> memoryview | Path:
        """What the library functions take: the bytes or the directory."""
        return self.directory if self.directory is not None else self.data


def load(name: str, offset: int | None = None) -> Source:
    """The input ``name`` (a file, ``-`` or a sparse frame directory); with
    ``offset`` (bytes), the structure starting there, cut to its declared
    length."""
    if name == STDIO:
        mv = memoryview(sys.stdin.buffer.read())
    elif is_url(name):                    # read by byte ranges (fsspec), mapped
        mv, _ = fetch_whole(name)
    else:
        path = Path(name)
        if path.is_dir():
            if offset is not None:
                raise UsageError(f"{name}: --offset applies to files, not directories")
            if not is_sframe(path):
                raise IsADirectoryError(21, f"a directory without {ff.SFRAME_INDEX} "
                                        "(not a sparse frame)", name)
            return Source(name, None, directory=path)
        mv = _map(path)
    if offset is None:
        return Source(name, mv, size=len(mv))
    if offset > len(mv):
        raise UsageError(f"{name}: offset {offset} is past the end ({len(mv)} bytes)")
    inner = mv[offset:]
    return Source(name, inner[:_declared_size(inner)], base=offset, size=len(mv))


def load_file(name: str, what: str) -> Source:
    """An input that must be one file (``what`` says which command wants it)."""
    src = load(name)
    if src.directory is not None:
        raise UsageError(f"{name} is a sparse frame directory; {what} reads one file")
    return src


def is_sframe(path: Path) -> bool:
    """A directory holding a sparse frame's index file."""
    return (path / ff.SFRAME_INDEX).is_file()


def relocated(e: FormatError, base: int) -> FormatError:
    """An error of a structure read at byte ``base`` of the file, in file
    offsets (the path keeps its root: ``frame``, ``chunk``)."""
    return e.relocated(base, re.split(r"[.\[]", e.path, maxsplit=1)[0]) if base else e


def _map(path: Path) -> memoryview:
    """The file's bytes, mapped (a 10 GB frame is not read whole)."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):         # a pipe or device: read it
            return memoryview(fh.read())
        if st.st_size == 0:
            return memoryview(b"")
        return memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))


def _declared_size(mv: memoryview) -> int:
    """The length in bytes a structure at the start of ``mv`` declares (a
    frame's frame_len, a chunk's cbytes), bounded by ``len(mv)``;
    ``len(mv)`` when it says none."""
    try:
        n = _frame_len(mv) if ff.looks_like_frame(mv) else fc.HEADER.get(mv, "cbytes")
    except Exception:                 # noqa: BLE001 -- damaged: the reader will say why
        return len(mv)
    return min(len(mv), n) if n > 0 else len(mv)


def _frame_len(mv: memoryview) -> int:
    """The frame_len field of the frame header at the start of ``mv``, read
    through the header layout its fixarray marker names."""
    marker = ff.HEADER.get(mv, "fixarray")       # every layout starts with it
    header = next(lay for lay in ff.FLAT_HEADERS.values() if lay["fixarray"].const == marker)
    # the whole fixed part, its markers checked: a header cut short or with
    # a wrong marker declares no length
    return header.getter("frame_len")(header.read(mv, 0))
