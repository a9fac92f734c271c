"""Declarations of every on-disk structure, plus the one choke point that turns
construct's failures into :class:`FormatError` with an offset and a path."""
from __future__ import annotations

import struct as _struct
from typing import Any

import construct as cs

from ..errors import FormatError

__all__ = ["parse", "build", "fast_format", "field_offset"]


def parse(con: cs.Construct, buf, offset: int = 0, path: str = "", **context: Any) -> Any:
    """Parse ``con`` at ``offset`` of ``buf``; any failure becomes a FormatError.

    Truncation reports the offset where the missing bytes start (the input
    length); other failures report ``offset``, the start of the structure.
    """
    mv = memoryview(buf).cast("B") if not isinstance(buf, (bytes, bytearray)) else buf
    if offset < 0 or offset > len(mv):
        raise FormatError(f"structure starts outside the input ({len(mv)} bytes)",
                          len(mv), path)
    try:
        size = con.sizeof(**context)
    except (cs.SizeofError, KeyError, AttributeError, TypeError):
        size = None
    data = mv[offset:] if size is None else mv[offset:offset + size]
    try:
        return con.parse(bytes(data), **context)
    except cs.StreamError as e:
        raise FormatError(f"input ends early: {_clean(e)}", len(mv), path) from e
    except cs.ConstructError as e:
        raise FormatError(_clean(e), offset, path) from e
    except (ValueError, OverflowError, TypeError) as e:
        raise FormatError(str(e), offset, path) from e


def build(con: cs.Construct, obj: Any, path: str = "", **context: Any) -> bytes:
    """Build ``obj`` with ``con``; construct's failures become ValueError."""
    try:
        return con.build(obj, **context)
    except (cs.ConstructError, KeyError, TypeError, OverflowError) as e:
        raise ValueError(f"{path}: cannot build: {_clean(e)}") from e


def _clean(e: Exception) -> str:
    msg = str(e).strip()
    # construct prefixes messages with "Error in path (parsing) -> a -> b"
    if msg.startswith("Error in path"):
        msg = msg.split("\n", 1)[-1].strip()
    return msg or type(e).__name__


_SIMPLE = {
    cs.Int8ul: "B", cs.Int8sl: "b", cs.Int16ul: "H", cs.Int16sl: "h",
    cs.Int32ul: "I", cs.Int32sl: "i", cs.Int64ul: "Q", cs.Int64sl: "q",
    cs.Int8ub: "B", cs.Int16ub: "H", cs.Int32ub: "I", cs.Int64ub: "Q",
    cs.Int8sb: "b", cs.Int16sb: "h", cs.Int32sb: "i", cs.Int64sb: "q",
}


def _code(sub: cs.Construct) -> str:
    while isinstance(sub, cs.Renamed):
        sub = sub.subcon
    if sub in _SIMPLE:
        return _SIMPLE[sub]
    if isinstance(sub, cs.FormatField):
        return sub.fmtstr[1:]
    if isinstance(sub, cs.Array) and isinstance(sub.count, int):
        return _code(sub.subcon) * sub.count
    if isinstance(sub, (cs.Transformed, cs.Restreamed)) and sub.sizeof() == 1:
        return "B"    # BitStruct of one byte: the fast path reads the raw byte
    if isinstance(sub, cs.Bytes) and isinstance(sub.length, int):
        return f"{sub.length}s"
    raise TypeError(f"no struct code for {sub!r}")


def fast_format(con: cs.Struct, endian: str = "<") -> _struct.Struct:
    """A ``struct.Struct`` equivalent to the fixed-size Struct ``con``.

    Bit fields come out as their raw byte, arrays as consecutive items; the
    field order of the declaration is kept.  Used by hot paths only.
    """
    fmt = endian + "".join(_code(s) for s in con.subcons)
    s = _struct.Struct(fmt)
    assert s.size == con.sizeof(), (fmt, con.sizeof())
    return s


def field_offset(con: cs.Struct, name: str) -> int:
    """Byte offset of field ``name`` in the fixed-size Struct ``con``."""
    pos = 0
    for sub in con.subcons:
        if sub.name == name:
            return pos
        pos += sub.sizeof()
    raise KeyError(name)
