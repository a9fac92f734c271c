"""Where a command's result goes, written so that no input is ever destroyed
and no partial output is ever left: the zstd and gzip conventions.

* ``-`` is standard output, written as the parts come.
* An OUT that is the same file as an input is refused before anything is
  read or written (exit 2), with or without ``--force``.
* An existing OUT is kept unless ``--force``/``-f`` (exit 2).
* A file is written under a temporary name in OUT's folder and renamed into
  place once the command has succeeded; a failure, an interrupt or SIGTERM
  removes the temporary file.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Iterable

from .report import UsageError
from .source import STDIO

PART_SUFFIX = ".part"


def check_output(name: str, inputs: Iterable[str], force: bool) -> None:
    """UsageError when ``name`` may not be written: it is one of ``inputs``
    (the same file, by device and inode), or it exists and ``force`` is off.
    Called before a command reads anything."""
    if name == STDIO:
        return
    out = Path(name)
    for src in inputs:
        if src != STDIO and same_file(out, Path(src)):
            raise UsageError(f"{name} is the input {src}: writing it would destroy it "
                             "(give another OUT)")
    if out.is_dir():
        raise UsageError(f"{name} is a directory: give a file name")
    if out.exists() and not force:
        raise UsageError(f"{name} exists: give --force to overwrite it")


def same_file(a: str | Path, b: str | Path) -> bool:
    """``a`` and ``b`` name the same file (device and inode)."""
    try:
        return os.path.samefile(a, b)
    except OSError:                   # one of them does not exist (yet)
        return False


class Output:
    """A context manager writing to ``name`` (see the module docstring):
    ``write(part)`` appends bytes; leaving the block without an exception
    puts the file in place, with one removes it.  ``written`` counts bytes."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.written = 0
        self._tmp: str | None = None
        self._file: BinaryIO | None = None

    def __enter__(self) -> Output:
        if self.name == STDIO:
            self._file = sys.stdout.buffer
            return self
        folder = os.path.dirname(os.path.abspath(self.name))
        fd, self._tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(self.name)}.",
                                         suffix=PART_SUFFIX)
        os.fchmod(fd, _default_mode())
        self._file = os.fdopen(fd, "wb")
        return self

    def write(self, part: bytes | bytearray | memoryview) -> None:
        assert self._file is not None
        self._file.write(part)
        self.written += len(part)

    @property
    def stream(self) -> BinaryIO:
        """The file being written (for writers that seek back, e.g. a
        frame's header after its chunks); it is seekable unless OUT is ``-``."""
        assert self._file is not None
        return self._file

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        f, self._file = self._file, None
        if f is None:
            return
        if self._tmp is None:             # standard output
            if kind is None:
                f.flush()
            return
        try:
            f.close()
            if kind is None:
                os.replace(self._tmp, self.name)
                self._tmp = None
        finally:
            if self._tmp is not None:
                os.unlink(self._tmp)


def write_output(name: str, parts: Iterable[bytes]) -> int:
    """Write the byte strings of ``parts`` to ``name`` (``-``: stdout) as an
    :class:`Output`; returns the byte count."""
    with Output(name) as out:
        for part in parts:
            out.write(part)
    return out.written


def _default_mode() -> int:
    """The mode a plain ``open(name, "wb")`` gives a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask
