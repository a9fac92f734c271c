"""Snappy, the Blosc1-only codec (format 2), through python-snappy."""
from __future__ import annotations

import snappy as _snappy

from . import libs
from ._fit import FailureTexts, describe_count, fit_into

try:  # python-snappy >= 0.7 is built on cramjam, which decodes into a buffer
    import cramjam as _cramjam
except ImportError:  # pragma: no cover - older python-snappy
    _cramjam = None  # type: ignore[assignment]

_texts = FailureTexts()


class Snappy:
    code = 3
    name = "snappy"
    compformat = 2

    def compress_into(self, src, dst, clevel, *, dict=None, flavor="blosc1",
                      split=True) -> int:
        """Encode ``src`` into ``dst``; the stream's length, or 0 when it does
        not fit.  Snappy ignores the level (so does C-Blosc 1.x)."""
        return fit_into(_snappy.compress(bytes(src)), dst, 0)

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc1", split=True):
        out = _snappy.compress(bytes(src))
        if maxout is not None and len(out) > maxout:
            return None
        return out

    def decompress_into(self, src, dst, dict=None) -> int:
        """Decode one block stream into ``dst``: the bytes produced (the whole
        stream, its declared length), or a negative code for
        ``describe_failure``.  Like snappy's C++ ``RawUncompress`` (C-Blosc
        1.x), a stream must end exactly where its last element ends."""
        try:
            if _cramjam is not None:
                # checks the stream's declared length against dst first
                return int(_cramjam.snappy.decompress_raw_into(bytes(src), dst))
            out = _snappy.uncompress(bytes(src))
        except Exception as exc:   # the bindings raise several unrelated types
            return _texts.code(str(exc) or type(exc).__name__)
        return fit_into(out, dst, _texts.code(
            "the stream declares more bytes than the block holds"))

    def describe_failure(self, code: int, expected: int) -> str:
        """Why ``decompress_into`` returned ``code`` for a block of ``expected`` bytes."""
        if code >= 0:
            return describe_count("snappy", code, expected)
        return f"the snappy stream does not decode: {_texts.text(code) or f'error {code}'}"

    def paths(self) -> dict:
        """Snappy always runs through the Python package (cramjam's Rust
        implementation); C-Blosc2 cannot write or read snappy at all."""
        lib = "cramjam (Rust snap)" if _cramjam is not None else "python-snappy"
        ver = libs.package_version("cramjam" if _cramjam is not None else "python-snappy")
        return {
            "encode": libs.path_info(False, "snappy.compress", lib, ver),
            "decode": libs.path_info(False, "cramjam.snappy.decompress_raw_into"
                                    if _cramjam is not None else "snappy.uncompress", lib, ver),
            "packages": {"python-snappy": libs.package_version("python-snappy"),
                         "cramjam": libs.package_version("cramjam")},
            "byte_identical": False,
            "caveat": "Blosc1 only; C-Blosc2 has no snappy codec, no identity is claimed",
        }


CODECS = (Snappy(),)
