"""The one copy step of every codec's Python fallback path."""
from __future__ import annotations


def fit_into(out: bytes | None, dst, missing: int) -> int:
    """Copy ``out`` to the start of ``dst`` and return its length; return
    ``missing`` (0 for an encoder, -1 for a decoder) when there is no output
    or it does not fit."""
    if out is None or len(out) > len(dst):
        return missing
    dst[:len(out)] = out
    return len(out)
