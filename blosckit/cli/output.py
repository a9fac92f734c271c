"""Writing what a command produces to a file or (``-``) standard output."""
from __future__ import annotations

import sys
from typing import BinaryIO, Iterable

from .source import STDIO


def write_output(name: str, parts: Iterable[bytes]) -> int:
    """Write the byte strings of ``parts`` to ``name`` (``-``: stdout);
    returns the byte count."""
    out = _open(name)
    n = 0
    try:
        for part in parts:
            out.write(part)
            n += len(part)
    finally:
        if out is not sys.stdout.buffer:
            out.close()
        else:
            out.flush()
    return n


def _open(name: str) -> BinaryIO:
    return sys.stdout.buffer if name == STDIO else open(name, "wb")
