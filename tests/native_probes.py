"""Test-only windows on the native layer's internals: the C entry points the
fast path uses on its own, called directly (they are in the cdef, but the
package has no use for them from Python)."""
from __future__ import annotations

from blosckit.native._native import ffi, lib

HEADER_FIELDS = ("version", "versionlz", "flags", "typesize", "nbytes", "blocksize",
                 "cbytes", "extended", "udcodec", "compcode_meta", "flags2", "b2flags")


def read_header(src) -> dict | None:
    """The chunk header as the C fast path reads it (a dict of the C
    struct's fields, filters and filters_meta as lists), or None when
    ``src`` is shorter than the header its flags announce."""
    s = ffi.from_buffer("uint8_t[]", src)
    h = ffi.new("bk_header *")
    if lib.bk_read_header(s, len(s), h) == 0:
        return None
    out = {name: getattr(h, name) for name in HEADER_FIELDS}
    out["filters"] = list(h.filters)
    out["filters_meta"] = list(h.filters_meta)
    return out


def beyond_divergences(chunk) -> bool:
    """The C twin of divergences.beyond_all_reader_divergences."""
    return bool(lib.bk_beyond_divergences(ffi.from_buffer("uint8_t[]", chunk), len(chunk)))
