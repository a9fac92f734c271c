"""The inputs under directories: files in name order, sparse frame
directories and zarr stores whole, and which files could hold a chunk or a
frame (or are HDF5 files)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator

from ..formats import chunk as fc
from ..formats import enums
from ..formats import frame as ff
from ..tools.containers import container_kind
from .source import STDIO, is_sframe

# The first byte tells a chunk (its format version) from a frame (its
# header's fixarray marker).
_FIRST = fc.HEADER["version"]


def walk(names: Iterable[str]) -> Iterator[tuple[str, bool]]:
    """``(name, named)``: the inputs, with the files under directories in
    name order (``named`` False) and sparse frame directories whole."""
    for name in names:
        path = Path(name)
        if name == STDIO or not path.is_dir() or is_sframe(path) or container_kind(path):
            yield name, True
            continue
        for root, dirs, files in os.walk(path):
            dirs.sort()
            here = Path(root)
            for d in list(dirs):
                if is_sframe(here / d) or container_kind(here / d):
                    yield str(here / d), False
                    dirs.remove(d)
            for f in sorted(files):
                yield str(here / f), False


def looks_blosc(path: str) -> bool:
    """A file found in a directory is checked when its first byte could
    start a chunk (a known format version) or a frame (a header fixarray)."""
    with open(path, "rb") as fh:
        head = fh.read(_FIRST.size)
    return bool(head) and (_FIRST.unpack(head, 0) in enums.VERSIONS or ff.looks_like_frame(head)
                           or container_kind(path) is not None)


def holds_inputs(directory: str) -> bool:
    """A directory named on its own holds something to read: a file that
    looks like a chunk or a frame, or a directory."""
    return any(Path(n).is_dir() or looks_blosc(n) for n, _ in walk([directory]))
