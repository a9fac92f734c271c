"""What this build of blosckit runs: SIMD level and, per codec, the native or
Python path behind encoding and decoding.

Nothing falls back silently: when a codec package's C library cannot be
reached, ``native_info()`` says "python" for that path, and whether byte
identity with C-Blosc2 still holds.  The codec modules own the facts
(``paths()`` on each codec); this module only gathers them.
"""
from __future__ import annotations

from .. import native
from . import registry

# The C-Blosc2 release the byte-identity claims were checked against.
C_BLOSC2_VERSION = "3.3.5"


def native_info() -> dict:
    """The shape::

        {"c_blosc2": "3.3.5",
         "simd": {"level": "avx2", "available": ["scalar", "sse2", "avx2"]},
         "codecs": {name: {"available": True,
                           "encode": {"path": "native" | "python", "via": str,
                                      "library": str | None, "version": str | None},
                           "decode": {... same keys ...},
                           "chunk_decoder": "native" | "python",
                           "packages": {distribution: version | None},
                           "byte_identical": bool,
                           "caveat": str | None}},
         "b2nd": {"path": "native", "via": "bk_copy_runs"}}

    for codec names blosclz, lz4, lz4hc, zlib, zstd, snappy (``{"available":
    False}`` when this build lacks one).  ``byte_identical`` is True only for
    a native encoder whose library release matches C-Blosc2's (lz4: liblz4
    1.10.0); ``caveat`` says what differs otherwise.  ``b2nd``: the kernel
    that moves items between b2nd chunks and arrays (native only).
    """
    return {
        "c_blosc2": C_BLOSC2_VERSION,
        "simd": {"level": native.simd_level(), "available": native.available_simd_levels()},
        "codecs": registry.codec_paths(),
        "b2nd": {"path": "native", "via": "bk_copy_runs"},
    }


def fallbacks() -> list[str]:
    """``"codec.encode"`` / ``"codec.decode"`` for every path running in Python."""
    out = []
    for name, info in native_info()["codecs"].items():
        for side in ("encode", "decode"):
            if info.get("available") and name != "snappy" and info[side]["path"] == "python":
                out.append(f"{name}.{side}")
    return out
