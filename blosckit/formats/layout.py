"""Layouts: a fixed-size structure compiled from its construct declaration.

A :class:`Layout` knows, for every field of the declaration, its byte offset,
its width and byte order, its place in the one ``struct`` call that reads the
whole structure, and for the fields of a ``BitStruct`` their shift and mask.
Everything outside ``formats/`` reads and writes bytes through layouts (and
the derived values beside each declaration), never through literal offsets,
shifts or masks; the C code gets the same numbers through a header generated
from the layouts (:mod:`.cheader`).

Layouts are built once, at import, from the declarations; the declarations
stay the single source of truth (construct parses and builds with them, and
tests check that a layout reads what construct reads).
"""
from __future__ import annotations

import functools
import operator
import struct as _struct
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import construct as cs

__all__ = ["Field", "Layout", "ConstMismatch", "BuildError", "inner", "struct_code"]


class BuildError(cs.ConstructError, ValueError):
    """A value the declaration cannot hold, from :meth:`Layout.build`: a
    ConstructError as construct's own build raises, so that callers catch
    one kind whichever builds."""


class ConstMismatch(Exception):
    """A constant of the declaration differs in the input (the caller then
    parses with construct to name the field)."""


def inner(sub: cs.Construct) -> cs.Construct:
    """``sub`` without the naming and doc wrappers around it."""
    while isinstance(sub, cs.Renamed):
        sub = sub.subcon
    return sub


_SIMPLE = {
    cs.Int8ul: "B", cs.Int8sl: "b", cs.Int16ul: "H", cs.Int16sl: "h",
    cs.Int32ul: "I", cs.Int32sl: "i", cs.Int64ul: "Q", cs.Int64sl: "q",
    cs.Int8ub: "B", cs.Int16ub: "H", cs.Int32ub: "I", cs.Int64ub: "Q",
    cs.Int8sb: "b", cs.Int16sb: "h", cs.Int32sb: "i", cs.Int64sb: "q",
}


def struct_code(sub: cs.Construct) -> str:
    """The ``struct`` code (without byte order) of a fixed-size field."""
    sub = inner(sub)
    if sub in _SIMPLE:
        return _SIMPLE[sub]
    if isinstance(sub, cs.FormatField):
        return sub.fmtstr[1:]
    if isinstance(sub, cs.Array) and isinstance(sub.count, int):
        return struct_code(sub.subcon) * sub.count
    if isinstance(sub, (cs.Transformed, cs.Restreamed)) and sub.sizeof() == 1:
        return "B"    # a one-byte BitStruct: read as its raw byte
    if isinstance(sub, cs.Const):
        return f"{len(sub.value)}s"
    if isinstance(sub, cs.Bytes) and isinstance(sub.length, int):
        return f"{sub.length}s"
    raise TypeError(f"no struct code for {sub!r}")


@dataclass(frozen=True)
class Field:
    """One field of a layout.

    ``offset`` is in bytes from the start of the structure, ``size`` in bytes
    (a bit field: the size of its byte, 1).  ``index``/``count`` place the
    field in the flat tuple :meth:`Layout.read` returns.  A bit field has
    ``width`` > 0 bits starting at bit ``shift`` (LSB 0) of its byte;
    ``mask`` is ``(1 << width) - 1`` (the value's mask, before shifting) and
    ``bits`` the mask in place in the byte.  ``const`` is the declared value
    of a constant (a msgpack marker)."""
    name: str
    offset: int
    size: int
    code: str
    order: str
    index: int
    count: int = 1
    shift: int = 0
    width: int = 0
    const: bytes | None = None
    doc: str = ""
    signed: bool = False

    @functools.cached_property        # (read per parsed byte: computed once)
    def mask(self) -> int:
        return (1 << self.width) - 1 if self.width else (1 << 8 * self.size) - 1

    @property
    def item_mask(self) -> int:
        """The mask of one item of an array field (of the field otherwise)."""
        return (1 << 8 * self.size // self.count) - 1

    @functools.cached_property
    def bits(self) -> int:
        return self.mask << self.shift

    @property
    def format(self) -> _struct.Struct:
        return _struct.Struct(self.order + self.code)

    def of(self, byte: int) -> int:
        """This bit field's value in ``byte`` (the byte's value)."""
        return (byte >> self.shift) & self.mask

    def into(self, byte: int, value: int) -> int:
        """``byte`` with this bit field set to ``value``."""
        return (byte & ~self.bits & 0xFF) | ((value & self.mask) << self.shift)

    def unpack(self, buf, at: int) -> Any:
        """The field's value in ``buf``, the structure starting at ``at``."""
        values = _struct.unpack_from(self.order + self.code, buf, at + self.offset)
        if self.width:
            return self.of(values[0])
        return values[0] if self.count == 1 else list(values)

    def pack_into(self, buf, at: int, value: Any) -> None:
        """Write ``value`` into the field (``buf`` writable)."""
        pos = at + self.offset
        if self.width:
            buf[pos] = self.into(buf[pos], int(value))
        elif self.count == 1:
            _struct.pack_into(self.order + self.code, buf, pos, value)
        else:
            _struct.pack_into(self.order + self.code, buf, pos, *value)


class Layout:
    """A fixed-size construct ``Struct`` compiled into field offsets.

    ``root`` is the path the structure has in reports (``"chunk.header"``)
    and ``base`` where it starts in its parent (the extended chunk header
    starts at byte 16 of the chunk): :meth:`offset` and the ``at`` defaults
    of the readers use it, so offsets come out in the parent's terms.
    Field names are relative paths (``"flags.compformat"``,
    ``"filter_pipeline.udcodec"``)."""

    def __init__(self, con: cs.Construct, order: str = "<", *, root: str = "",
                 base: int = 0) -> None:
        self.con = con
        self.order = order
        self.root = root
        self.base = base
        self.fields: dict[str, Field] = {}
        self.groups: dict[str, tuple[int, int]] = {}      # nested Struct -> (offset, size)
        self._n = 0
        self._pos = 0
        codes = self._walk(inner(con), "")
        self.struct = _struct.Struct(order + codes)
        self.size = self.struct.size
        assert self.size == con.sizeof(), (codes, con.sizeof())
        consts = [f for f in self.fields.values() if f.const is not None]
        self._const_pos = tuple(f.index for f in consts)
        self._const_val = tuple(f.const for f in consts)
        # the constants of a flat tuple in one C call; the first repeated, so
        # that the getter returns a tuple even for one constant
        self._consts_of = (operator.itemgetter(*self._const_pos, *self._const_pos[:1])
                           if consts else lambda values: ())
        self._const_want = self._const_val + self._const_val[:1]

    def _walk(self, con: cs.Struct, prefix: str) -> str:
        codes = ""
        for sub in con.subcons:
            sub_in = inner(sub)
            name = prefix + sub.name
            doc = getattr(sub, "docs", "") or ""
            if isinstance(sub_in, cs.Struct):
                start = self._pos
                codes += self._walk(sub_in, name + ".")
                self.groups[name] = (start, self._pos - start)
                continue
            code = struct_code(sub_in)
            count = len(_struct.unpack(self.order + code, bytes(_struct.calcsize(self.order + code))))
            size = _struct.calcsize(self.order + code)
            const = sub_in.value if isinstance(sub_in, cs.Const) else None
            signed = code[-1] in "bhiq"
            self.fields[name] = Field(name, self._pos, size, code, self.order, self._n, count,
                                      const=const, doc=doc, signed=signed)
            if isinstance(sub_in, cs.Transformed):          # a one-byte BitStruct
                bit = 8
                for bsub in inner(sub_in.subcon).subcons:
                    width = inner(bsub).sizeof()        # in bits, inside a BitStruct
                    bit -= width
                    self.fields[f"{name}.{bsub.name}"] = Field(
                        f"{name}.{bsub.name}", self._pos, 1, "B", self.order, self._n, 1,
                        shift=bit, width=width, doc=getattr(bsub, "docs", "") or "")
            codes += code
            self._n += count
            self._pos += size
        return codes

    # -- where things are
    def __getitem__(self, name: str) -> Field:
        return self.fields[name]

    def __contains__(self, name: str) -> bool:
        return name in self.fields

    def offset(self, name: str) -> int:
        """Offset of field (or nested structure) ``name`` in the parent
        (``base`` + its offset in the structure)."""
        if name in self.groups:
            return self.base + self.groups[name][0]
        return self.base + self.fields[name].offset

    def path(self, name: str) -> str:
        """The report path of field ``name``."""
        return f"{self.root}.{name}" if self.root else name

    def offsets(self) -> dict[str, int]:
        """``{report path: offset in the parent}`` of every field and nested
        structure, the structure itself included."""
        out = {self.root: self.base} if self.root else {}
        for name in self.groups:
            out[self.path(name)] = self.offset(name)
        for name in self.fields:
            out[self.path(name)] = self.offset(name)
        return out

    def leaves(self) -> Iterator[Field]:
        """Every field that holds a value of its own (bit fields instead of
        their byte), in declaration order."""
        for f in self.fields.values():
            if f.width or not any(g.startswith(f.name + ".") for g in self.fields):
                yield f

    # -- reading
    def read(self, buf, at: int | None = None) -> tuple:
        """The flat values (one ``struct`` call) of the structure starting
        at ``at`` (default: ``base``); ConstMismatch when a constant differs,
        ``struct.error`` when ``buf`` ends early."""
        values = self.struct.unpack_from(buf, self.base if at is None else at)
        if self._consts_of(values) != self._const_want:
            raise ConstMismatch("a constant differs")
        return values

    def get(self, buf, name: str, at: int | None = None) -> Any:
        """Field ``name`` of the structure starting at ``at`` (default:
        ``base``) in ``buf``; ``struct.error`` when ``buf`` ends early."""
        return self.fields[name].unpack(buf, self.base if at is None else at)

    def put(self, buf, name: str, value: Any, at: int | None = None) -> None:
        """Write field ``name`` of the structure starting at ``at``."""
        self.fields[name].pack_into(buf, self.base if at is None else at, value)

    def build(self, values: dict) -> bytes:
        """The structure's bytes from ``values``, nested dicts as construct
        builds from (bit fields by name, constants filled in), with one
        ``struct`` call: construct's build costs ~100 us a header, this a
        few.  BuildError for a value that does not fit its field."""
        flat: list = []
        for kind, path, extra in self._plan:
            if kind is _PUT_KEY:
                flat.append(values[path])
            elif kind is _PUT_CONST:
                flat.append(extra)
            elif kind is _PUT_PATH:
                flat.append(_lookup(values, path))
            elif kind is _PUT_BITS:
                byte = 0
                for bpath, f in extra:
                    v = int(_lookup(values, bpath))
                    if not 0 <= v <= f.mask:
                        raise BuildError(f"{self.path(f.name)}: {v} does not fit {f.width} bits")
                    byte = f.into(byte, v)
                flat.append(byte)
            else:
                items = list(_lookup(values, path))
                if len(items) != extra:
                    raise BuildError(f"{self.path('.'.join(path))}: {len(items)} items "
                                     f"where it holds {extra}")
                flat += items
        try:
            return self.struct.pack(*flat)
        except _struct.error as e:
            raise BuildError(f"{self.root or 'structure'}: {e}") from None

    @functools.cached_property
    def _plan(self) -> tuple:
        """Per byte-aligned field, in order: (how it is put, its path or
        key, the constant / the bit fields as (path, Field) / the item
        count)."""
        plan = []
        for name, f in self.fields.items():
            if f.width:
                continue
            path = tuple(name.split("."))
            bits = tuple((tuple(b.name.split(".")), b) for b in self.fields.values()
                         if b.width and b.name.rpartition(".")[0] == name)
            if f.const is not None:
                plan.append((_PUT_CONST, path, f.const))
            elif bits:
                plan.append((_PUT_BITS, path, bits))
            elif f.count > 1:
                plan.append((_PUT_ITEMS, path, f.count))
            elif len(path) == 1:
                plan.append((_PUT_KEY, name, None))
            else:
                plan.append((_PUT_PATH, path, None))
        return tuple(plan)

    def getter(self, name: str) -> Callable[[tuple], Any]:
        """A function ``flat values -> the field's value`` (bit fields cut
        out, arrays as lists)."""
        f = self.fields[name]
        pos = f.index
        if f.width:
            shift, mask = f.shift, f.mask
            return lambda values: (values[pos] >> shift) & mask
        if f.count > 1:
            end = pos + f.count
            return lambda values: list(values[pos:end])
        return lambda values: values[pos]

    # FlatLayout compatibility: path -> (place, shift, mask) of the old index
    @property
    def index(self) -> dict[str, tuple[int, int, int]]:
        out: dict[str, tuple[int, int, int]] = {}
        for name, f in self.fields.items():
            if f.width:
                out[name] = (f.index, f.shift, f.mask)
            elif f.count > 1:
                out[name] = (f.index, f.count, -2)
            else:
                out[name] = (f.index, 0, -1)
        return out

    def __repr__(self) -> str:
        return f"<Layout {self.root or '?'} {self.size} bytes, {len(self.fields)} fields>"


# how Layout.build puts a field (compared by identity)
_PUT_KEY, _PUT_CONST, _PUT_PATH, _PUT_BITS, _PUT_ITEMS = "key", "const", "path", "bits", "items"


def _lookup(values: dict, path: tuple[str, ...]) -> Any:
    """``values[a][b]...`` along ``path``."""
    for key in path:
        values = values[key]
    return values
