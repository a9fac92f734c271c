"""Snappy, the Blosc1-only codec (format 2), through python-snappy."""
from __future__ import annotations

import snappy as _snappy


class Snappy:
    code = 3
    name = "snappy"
    compformat = 2

    def compress_into(self, src, dst, clevel, *, dict=None, flavor="blosc1",
                      split=True) -> int:
        """Encode ``src`` into ``dst``; the stream's length, or 0 when it does
        not fit.  Snappy ignores the level."""
        out = _snappy.compress(bytes(src))
        if len(out) > len(dst):
            return 0
        dst[:len(out)] = out
        return len(out)

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc1", split=True):
        out = _snappy.compress(bytes(src))
        if maxout is not None and len(out) > maxout:
            return None
        return out

    def decompress_into(self, src, dst, dict=None) -> int:
        src = bytes(src)
        try:
            if _snappy.uncompressed_length(src) > len(dst):
                return -1
            out = _snappy.uncompress(src)
        except Exception:   # python-snappy raises several unrelated types
            return -1
        dst[:len(out)] = out
        return len(out)


CODECS = (Snappy(),)
