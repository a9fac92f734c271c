"""Snappy, the Blosc1-only codec (format 2), through python-snappy."""
from __future__ import annotations

import snappy as _snappy

from ._fit import fit_into

try:  # python-snappy >= 0.7 is built on cramjam, which decodes into a buffer
    import cramjam as _cramjam
except ImportError:  # pragma: no cover - older python-snappy
    _cramjam = None  # type: ignore[assignment]


class Snappy:
    code = 3
    name = "snappy"
    compformat = 2

    def compress_into(self, src, dst, clevel, *, dict=None, flavor="blosc1",
                      split=True) -> int:
        """Encode ``src`` into ``dst``; the stream's length, or 0 when it does
        not fit.  Snappy ignores the level."""
        return fit_into(_snappy.compress(bytes(src)), dst, 0)

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc1", split=True):
        out = _snappy.compress(bytes(src))
        if maxout is not None and len(out) > maxout:
            return None
        return out

    def decompress_into(self, src, dst, dict=None) -> int:
        try:
            if _cramjam is not None:
                # checks the stream's declared length against dst first
                return int(_cramjam.snappy.decompress_raw_into(bytes(src), dst))
            out = _snappy.uncompress(bytes(src))
        except Exception:   # the bindings raise several unrelated types
            return -1
        return fit_into(out, dst, -1)


CODECS = (Snappy(),)
