"""Declarations of every on-disk structure, plus the one choke point that turns
construct's failures into :class:`FormatError` with an offset, a path and a
rule id.

``parse`` reads a structure in place from ``(buffer, offset)``: nothing past
the bytes the structure reads is copied, so a frame can hand it a chunk, a
header or a trailer inside a multi-gigabyte mapping.
"""
from __future__ import annotations

import ast
import re

import struct as _struct
from typing import Any

import construct as cs

from ..errors import FormatError
from .layout import ConstMismatch, Field, Layout, inner, struct_code

__all__ = ["parse", "build", "fast_format", "fast_parser", "ConstMismatch", "field_offset",
           "field_offsets", "walk", "Layout", "Field", "MissingContext", "ctx_get", "inner"]


class MissingContext(TypeError):
    """A declaration needs a context value (``version=...``) that the caller
    did not pass: a mistake in the calling code, not in the input."""


def ctx_get(c: Any, name: str) -> Any:
    """Context value ``name`` from the innermost construct context that has it,
    so a declaration reads the same nested in a parent or parsed alone with
    ``parse(..., name=value)``."""
    while c is not None:
        try:
            return c[name]
        except KeyError:
            c = c.get("_")
    raise MissingContext(f"the declaration needs context value {name!r}")


class _ViewStream:
    """A read-only stream over ``mv[start:]`` for construct: ``read`` copies only
    what is asked for, ``tell`` is relative to ``start``, and the start of the
    latest read is kept so a failure can name the field that failed."""
    __slots__ = ("mv", "start", "pos", "last")

    def __init__(self, mv: memoryview, start: int) -> None:
        self.mv = mv
        self.start = start
        self.pos = start
        self.last = start

    def read(self, n: int | None = -1) -> bytes:
        end = len(self.mv) if n is None or n < 0 else min(self.pos + n, len(self.mv))
        self.last = self.pos
        data = bytes(self.mv[self.pos:end])
        self.pos = max(end, self.pos)
        return data

    def tell(self) -> int:
        return self.pos - self.start

    def seek(self, offset: int, whence: int = 0) -> int:
        base = (self.start, self.pos, len(self.mv))[whence]
        self.pos = max(self.start, base + offset)
        return self.pos - self.start

    def seekable(self) -> bool:
        return True


def _view(buf) -> memoryview:
    mv = memoryview(buf)
    if mv.ndim != 1 or mv.itemsize != 1 or mv.format != "B":
        mv = mv.cast("B")
    return mv


def parse(con: cs.Construct, buf, offset: int = 0, path: str = "", *, rule: str,
          bound: str | None = None, **context: Any) -> Any:
    """Parse ``con`` in place at ``offset`` of ``buf`` (bytes-like).

    Every failure of the input becomes a FormatError with rule ``rule`` at
    the absolute offset of the field that failed; the path is ``path``
    followed by construct's field path.  Bytes that run out are reported
    at the end of ``buf``: when ``buf`` ends where the input does, as a
    truncation (T-truncated); when it is a part of the input cut at a
    structure's own length, as ``rule``, and ``bound`` names that part in
    words ("the header (header_len)").  A declaration that needs a context
    value the caller did not pass raises MissingContext (a TypeError): that
    is the caller's mistake, not the input's.
    """
    mv = _view(buf)
    if offset < 0 or offset > len(mv):
        raise FormatError(f"structure starts outside the input ({len(mv)} bytes)",
                          len(mv), path, rule=rule)
    stream = _ViewStream(mv, offset)
    try:
        return _parse_stream(con, stream, mv, path, rule, bound, context)
    finally:
        # construct keeps the stream in every parsed Container (``_io``): let
        # go of the buffer, so a parsed header does not pin a file mapping
        stream.mv = _EMPTY


def _parse_stream(con, stream: _ViewStream, mv: memoryview, path: str, rule: str,
                  bound: str | None, context: dict) -> Any:
    try:
        return con.parse_stream(stream, **context)
    except MissingContext:
        raise
    except cs.StreamError as e:
        where, n = _join(path, e), len(mv)
        want, got = _shortfall(e)
        words = "" if want is None else truncation.needed(want, got)
        if bound is not None:
            raise FormatError(f"{bound} ends at byte {n}, inside {where}"
                              f"{f' ({words})' if words else ''}", n, where, rule=rule) from e
        cut = truncation.Truncation(n, n + (1 if want is None else want - got), where, words)
        rules.RaiseFirst().run(truncation.TRUNCATION_RULES, cut, mv)
        raise AssertionError("a read past the input is a truncation") from e
    except cs.ConstructError as e:
        raise FormatError(_message(e), stream.last, _join(path, e), rule=rule) from e
    except Exception as e:   # a context lambda or adapter choking on hostile values
        raise FormatError(f"{type(e).__name__}: {e}", stream.last, path, rule=rule) from e


_EMPTY = memoryview(b"")


def build(con: cs.Construct, obj: Any, path: str = "", **context: Any) -> bytes:
    """Build ``obj`` with ``con``; construct's failures become ValueError."""
    try:
        return con.build(obj, **context)
    except MissingContext:
        raise
    except (cs.ConstructError, KeyError, TypeError, OverflowError) as e:
        raise ValueError(f"{path}: cannot build: {_message(e)}") from e


def _shortfall(e: cs.StreamError) -> tuple[int, int] | tuple[None, None]:
    """How many bytes the field wanted and found (construct says "stream
    read less than specified amount, expected 4, found 2"); Nones when it
    does not say."""
    m = re.search(r"expected (\d+), found (\d+)", str(e))
    if m is None:
        return None, None
    return int(m.group(1)), int(m.group(2))


def _message(e: Exception) -> str:
    msg = str(e).strip()
    # construct prefixes messages with "Error in path (parsing) -> a -> b"
    if msg.startswith("Error in path"):
        msg = msg.split("\n", 1)[-1].strip()
    if isinstance(e, cs.ConstError):
        msg = _const_words(msg)
    return msg or type(e).__name__


def _const_words(msg: str) -> str:
    """A constant that differs, in the format's words: construct says
    "parsing expected b'\\xce' but parsed b'\\xed'"."""
    m = re.fullmatch(r"parsing expected (b'.*'|b\".*\") but parsed (b'.*'|b\".*\")", msg)
    if m is None:
        return msg
    try:
        want, got = (ast.literal_eval(g) for g in m.groups())
    except (ValueError, SyntaxError):
        return msg
    return f"{_hex(got)} where {_hex(want)} belongs"


def _hex(b: bytes) -> str:
    return f"byte {b[0]:#04x}" if len(b) == 1 else f"the bytes {b!r}"


def _join(path: str, e: cs.ConstructError) -> str:
    """``path`` plus construct's field path, without its mode marker and the
    repeated segment a ``* "doc"`` wrapper adds."""
    names: list[str] = []
    for seg in (getattr(e, "path", None) or "").split(" -> "):
        seg = seg.strip()
        if not seg or seg.startswith("("):
            continue
        if names and names[-1] == seg:
            continue
        names.append(seg)
    tail = "".join(f"[{s}]" if s.isdigit() else f".{s}" for s in names)
    return (path + tail) if path else tail.lstrip(".")


# ---------------------------------------------------------------------------
# Fast paths derived from fixed-size declarations
# ---------------------------------------------------------------------------

def fast_format(con: cs.Construct, endian: str = "<") -> _struct.Struct:
    """A ``struct.Struct`` equivalent to the fixed-size Struct ``con`` (or to
    one fixed-size field such as an ``Int32sl``).

    Bit fields come out as their raw byte, arrays as consecutive items; the
    field order of the declaration is kept.  Used by hot paths only; tests
    check each one against its declaration.
    """
    subs = inner(con).subcons if isinstance(inner(con), cs.Struct) else [con]
    fmt = endian + "".join(struct_code(s) for s in subs)
    s = _struct.Struct(fmt)
    assert s.size == con.sizeof(), (fmt, con.sizeof())
    return s


def _bit_fields(bits: cs.Construct) -> list[tuple[str, int, int, bool]]:
    """``(name, shift, mask, is_flag)`` per field of a one-byte BitStruct,
    most significant bits first as construct lays them out."""
    out, shift = [], 8
    for sub in inner(bits).subcons:
        width = inner(sub).sizeof()
        shift -= width
        out.append((sub.name, shift, (1 << width) - 1, inner(sub) is cs.Flag))
    return out


def _compile(con: cs.Construct) -> tuple[str, Any]:
    """``(struct codes, decode)`` for a fixed-size Struct: ``decode(values,
    k)`` turns the unpacked values from index ``k`` on into a Container and
    returns ``(container, next k)``."""
    steps: list[tuple[str, int, Any]] = []
    codes = ""
    for sub in inner(con).subcons:
        sub_in = inner(sub)
        if isinstance(sub_in, cs.Struct):
            sub_codes, sub_decode = _compile(sub_in)
            codes += sub_codes
            steps.append((sub.name, -1, sub_decode))
        elif isinstance(sub_in, cs.Const):
            codes += f"{len(sub_in.value)}s"
            steps.append((sub.name, 1, ("const", sub_in.value)))
        elif isinstance(sub_in, cs.Array):
            codes += struct_code(sub_in)
            steps.append((sub.name, sub_in.count, cs.ListContainer))
        elif isinstance(sub_in, cs.Transformed):
            codes += "B"
            fields = _bit_fields(sub_in.subcon)
            steps.append((sub.name, 1, lambda b, f=fields: cs.Container(
                (n, bool(b >> sh & m) if flag else b >> sh & m) for n, sh, m, flag in f)))
        else:
            codes += struct_code(sub_in)
            steps.append((sub.name, 1, None))

    def decode(values: tuple, k: int) -> tuple[cs.Container, int]:
        out = cs.Container()
        for name, count, how in steps:
            if count == -1:
                out[name], k = how(values, k)
                continue
            if how is None:
                out[name] = values[k]
            elif how is cs.ListContainer:
                out[name] = cs.ListContainer(values[k:k + count])
            elif isinstance(how, tuple):
                if values[k] != how[1]:
                    raise ConstMismatch(name)
                out[name] = values[k]
            else:
                out[name] = how(values[k])
            k += count
        return out, k
    return codes, decode


def fast_parser(con: cs.Struct, endian: str = "<"):
    """A function ``(buf, offset) -> Container`` equal to ``con.parse`` of
    the fixed-size Struct ``con`` (without construct's ``_io`` entries),
    built from the declaration: ints and int arrays, constants, nested
    Structs and one-byte BitStructs (split by their declared bit widths).
    A constant that differs raises :class:`ConstMismatch`.  Hypothesis
    tests check it against ``con.parse``; it exists because construct
    spends some 200 us on a 32-byte header."""
    codes, decode = _compile(con)
    fmt = _struct.Struct(endian + codes)
    assert fmt.size == con.sizeof(), (codes, con.sizeof())

    def parse_fast(buf, offset: int = 0) -> cs.Container:
        return decode(fmt.unpack_from(buf, offset), 0)[0]
    parse_fast.size = fmt.size      # type: ignore[attr-defined]
    return parse_fast


def field_offset(con: cs.Struct, name: str) -> int:
    """Byte offset of field ``name`` in the Struct ``con`` (the fields before
    it must have a fixed size)."""
    pos = 0
    for sub in inner(con).subcons:
        if sub.name == name:
            return pos
        pos += sub.sizeof()
    raise KeyError(name)


def field_offsets(con: cs.Struct, path: str, base: int = 0) -> dict[str, int]:
    """``{field path: byte offset}`` for every named fixed-size field of
    ``con`` and of the Structs and one-byte BitStructs inside it (a bit field
    maps to its byte).  Fields after the first variable-size one are left out."""
    out: dict[str, int] = {}
    pos = base
    for sub in inner(con).subcons:
        sub_in = inner(sub)
        p = f"{path}.{sub.name}"
        out[p] = pos
        if isinstance(sub_in, cs.Struct):
            out.update(field_offsets(sub_in, p, pos))
        elif isinstance(sub_in, cs.Transformed):       # a one-byte BitStruct
            for bsub in inner(sub_in.subcon).subcons:
                out[f"{p}.{bsub.name}"] = pos
        try:
            pos += sub.sizeof()
        except cs.SizeofError:
            break
    return out


def walk(con: cs.Construct, obj: Any, path: str, offset: int, select=None):
    """The fields of a parsed fixed-layout ``obj`` as ``(path, offset, size,
    value, doc, bit)`` tuples in declaration order, for renderers (the
    inspector).  ``size`` is in bytes; ``bit`` is ``(first bit, width)`` for a
    bit field (LSB 0) and None otherwise.  Parents (a Struct, a BitStruct's
    byte) come before their fields with value None, except a BitStruct whose
    byte value is given.  ``select`` picks a Switch case: ``select(switch, obj)``.
    """
    pos = offset
    for sub in inner(con).subcons:
        name = sub.name
        doc = getattr(sub, "docs", "") or ""
        sub_in = inner(sub)
        value: Any = obj.get(name) if obj is not None else None
        if isinstance(sub_in, cs.IfThenElse):
            if value is None:
                continue
            sub_in = inner(sub_in.thensubcon)
        if isinstance(sub_in, cs.Switch):
            sub_in = inner(select(sub_in, obj) if select else sub_in.default)
        p = f"{path}.{name}"
        if isinstance(sub_in, cs.Struct):
            size = _size(sub_in, value)
            yield (p, pos, size, None, doc, None)
            yield from walk(sub_in, value, p, pos, select)
            pos += size
        elif isinstance(sub_in, cs.Transformed):          # a one-byte BitStruct
            raw = sub_in.build(value)[0]
            yield (p, pos, 1, raw, doc, None)
            bit = 8
            for bsub in inner(sub_in.subcon).subcons:
                width = inner(bsub).sizeof()     # in bits inside a BitStruct
                bit -= width
                yield (f"{p}.{bsub.name}", pos, 0, int(value[bsub.name]),
                       getattr(bsub, "docs", "") or "", (bit, width))
            pos += 1
        elif isinstance(sub_in, cs.Array):
            size = sub_in.subcon.sizeof()
            item = inner(sub_in.subcon)
            if isinstance(item, cs.Struct):
                yield (p, pos, size * len(value), None, doc, None)
            for k, v in enumerate(value):
                if isinstance(item, cs.Struct):      # an array of structures: their fields
                    yield (f"{p}[{k}]", pos + k * size, size, None, doc, None)
                    yield from walk(item, v, f"{p}[{k}]", pos + k * size, select)
                else:
                    yield (f"{p}[{k}]", pos + k * size, size, v, doc, None)
            pos += size * len(value)
        else:
            size = len(value) if isinstance(value, bytes) else sub_in.sizeof()
            yield (p, pos, size, value, doc, None)
            pos += size


def _size(con: cs.Construct, value: Any) -> int:
    """Bytes of a parsed structure: its fixed size, or (a field sized by
    another) the size of the value built again."""
    try:
        return con.sizeof()
    except cs.SizeofError:
        return len(con.build(value))


# Every declaration module registers its rules on import: load them all, so
# the registry is whole whatever a caller imports first.  (``parse`` reports
# a truncation through ``rules`` and ``truncation``, which import it.)
from . import b2nd, chunk, frame, npy, rules, truncation  # noqa: E402,F401
