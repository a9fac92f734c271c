"""``validate``: every problem of a blob, as a list, never an exception.

The checks are the reader's own rules (``formats/``) run into a collecting
sink, plus warnings for chunks that are valid but that C-Blosc2 misreads
(the table in :mod:`blosckit.divergences`).
"""
from __future__ import annotations

import os
from pathlib import Path

from . import divergences
from .chunk import _view, check_chunk
from .errors import Problem

__all__ = ["validate", "Problem"]


def _read_source(src) -> memoryview:
    if isinstance(src, (str, os.PathLike)):
        return memoryview(Path(src).read_bytes())
    return _view(src)


def divergence_warnings(mv: memoryview) -> list[Problem]:
    """A warning for each known divergence of C-Blosc2 (or, for chunk versions
    1-2, C-Blosc 1.x) in decoding the (valid) chunk in ``mv``: the library
    refuses it or returns other data."""
    return [Problem("warning", 0, "chunk", f"{d.library} {d.c_blosc2} refuses or misreads "
                    f"this chunk: {d.title} (blosckit reads it; see {d.anchor})", d.id)
            for d in divergences.reader_divergences(mv, operation="decompress")]


def validate(src, *, deep: bool = True) -> list[Problem]:
    """Every problem of the chunk in ``src`` (bytes-like, or a path to a chunk
    file), in the order found; ``[]`` means valid.

    ``deep`` decodes every block and checks every size; without it only the
    header, bstarts and dictionary are checked.  Each Problem has a severity
    (``"error"`` makes the input invalid; ``"warning"``: legal, but misread by
    C-Blosc2 3.3.5 or suspicious), a byte offset inside the input, a field
    path and the id of the rule in ``specs/``.  Never raises for bytes input
    (a path that cannot be read raises OSError).
    """
    mv = _read_source(src)
    problems = check_chunk(mv, deep=deep)
    if not any(p.severity == "error" for p in problems):
        problems += divergence_warnings(mv)
    return problems
