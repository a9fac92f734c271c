"""One registry of codecs, keyed by codec id, by stored format and by name.

The ids and names come from :mod:`blosckit.formats.enums`; this module only
maps them to implementations.  A codec is a tiny protocol: ``code``, ``name``,
``compformat``, ``compress``, ``compress_into``, ``decompress_into``,
``describe_failure`` and ``paths``; codecs the native block loops can call also
have ``native_encoder`` (see ``libs``).  ``codec_paths`` collects what every
codec reports about its encode/decode paths (``blosckit.native_info()`` shows it).
"""
from __future__ import annotations

from typing import Protocol

from ..formats import enums
from . import blosclz, libs, lz4, zlib, zstd

try:                 # python-snappy is optional at run time
    from . import snappy
except ImportError:
    snappy = None    # type: ignore[assignment]


class Codec(Protocol):
    code: int           # codec id (enums.CODECS)
    name: str
    compformat: int     # the header's codec format (enums.COMPFORMATS)

    def compress(self, src: memoryview, clevel: int, *, dict: bytes | None = None,
                 maxout: int | None = None, flavor: str = "blosc2",
                 split: bool = True) -> bytes | None:
        """Encode ``src``; None when the result would exceed ``maxout`` bytes."""

    def compress_into(self, src: memoryview, dst: memoryview, clevel: int, *,
                      dict: bytes | None = None, flavor: str = "blosc2",
                      split: bool = True) -> int:
        """Encode ``src`` into ``dst`` (its length is the limit); the stream's
        length, or 0 when it does not fit.  ``flavor`` picks the library
        whose bytes to reproduce ("blosc2" or "blosc1")."""

    def decompress_into(self, src: memoryview, dst: memoryview,
                        dict: bytes | None = None) -> int:
        """Decode ``src`` into ``dst``; returns the number of bytes produced
        by a complete, well-formed stream, else a failure code (never writes
        past ``dst``).  Success means a result equal to ``len(dst)`` when the
        caller expects a full block; anything else goes to
        ``describe_failure``."""

    def describe_failure(self, code: int, expected: int) -> str:
        """One sentence saying why ``decompress_into`` returned ``code`` where
        ``expected`` bytes were due (a short count or a codec error)."""

    def paths(self) -> dict:
        """``{"encode": path, "decode": path, "packages": {dist: version},
        "byte_identical": bool, "caveat": str | None}``; a path is
        ``{"path": "native" | "python", "via", "library", "version"}``."""


CODECS_BY_CODE: dict[int, Codec] = {}
CODECS_BY_NAME: dict[str, Codec] = {}
CODECS_BY_FORMAT: dict[int, Codec] = {}


def register(codec: Codec) -> Codec:
    assert enums.CODECS[codec.code] == codec.name, codec.name
    CODECS_BY_CODE[codec.code] = codec
    CODECS_BY_NAME[codec.name] = codec
    # lz4hc shares lz4's format; the decoder registered for it is lz4's.
    CODECS_BY_FORMAT.setdefault(codec.compformat, codec)
    return codec


def describe_failure(codec: Codec, code: int, expected: int) -> str:
    """Why ``codec.decompress_into`` returned ``code`` instead of ``expected`` bytes."""
    return codec.describe_failure(code, expected)


# The codecs native_info reports, in a fixed order (snappy may be missing).
REPORTED = ("blosclz", "lz4", "lz4hc", "zlib", "zstd", "snappy")


def codec_paths() -> dict[str, dict]:
    """Per codec name: its ``paths()``, plus ``chunk_decoder`` ("native" when
    the whole-chunk C decoder has this codec's entry points, else "python").
    A codec this build lacks is reported with ``"available": False``."""
    out: dict[str, dict] = {}
    for name in REPORTED:
        codec = CODECS_BY_NAME.get(name)
        if codec is None:
            out[name] = {"available": False}
            continue
        info = {"available": True, **codec.paths()}
        info["chunk_decoder"] = "native" if codec.code in libs.NATIVE_DECODERS else "python"
        out[name] = info
    return out


def _load() -> None:
    for mod in (blosclz, lz4, zlib, zstd, snappy):
        for c in (mod.CODECS if mod is not None else ()):
            register(c)


_load()
