"""Values to human text, for the inspector and error messages."""
from __future__ import annotations

from . import enums


def describe(path: str, value) -> str:
    """A short human reading of ``value`` found at structure ``path``."""
    leaf = path.rsplit(".", 1)[-1]
    if leaf == "version" and path.startswith("chunk."):
        return enums.VERSIONS.get(value, "unknown version")
    if leaf == "compformat":
        return enums.COMPFORMATS.get(value, "?")
    if leaf == "udcodec":
        return enums.codec_name(value) if value else ""
    if leaf == "special":
        return enums.SPECIALS.get(value) or ("none" if value == 0 else "reserved")
    if leaf.startswith("filters[") and not path.endswith("meta"):
        return enums.filter_name(value) if value else ""
    if leaf == "csize" and isinstance(value, int):
        if value == 0:
            return "all zeros"
        if value < 0:
            return f"run of byte {-value & 0xFF:#04x}" if value >= -255 else "bad run"
    return ""
