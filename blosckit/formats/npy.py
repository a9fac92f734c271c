"""The header of a NumPy ``.npy`` file, for commands that take arrays.

specs/npy.md.  Only what blosckit needs: where the array's bytes start and
the item description (``descr``) that gives their size.
"""
from __future__ import annotations

import ast
import re

import construct as cs

from ..errors import FormatError
from . import parse
from .rules import RaiseFirst, explain, rule

MAGIC = b"\x93NUMPY"

# specs/npy.md#header -- version 1.x keeps the header length in 2 bytes,
# later versions in 4
NpyHeader = cs.Struct(
    "magic" / cs.Const(MAGIC) * "the NumPy file signature",
    "major" / cs.Int8ul * "format major version",
    "minor" / cs.Int8ul * "format minor version",
    "len_header" / cs.IfThenElse(cs.this.major == 1, cs.Int16ul, cs.Int32ul)
    * "length of the header text",
    "header" / cs.Bytes(cs.this.len_header) * "a Python dict literal: descr, fortran_order, shape",
)

class NpyView:
    """A .npy header as read: ``fields`` the parsed structure (None when it
    does not parse), ``text_error`` why its text is no dict literal with a
    descr (None when it is), ``objects`` true when its items are Python
    objects (no raw bytes of their own)."""
    __slots__ = ("fields", "text_error", "objects")

    def __init__(self, fields, text_error: Exception | None = None, objects: bool = False):
        self.fields, self.text_error, self.objects = fields, text_error, objects

    @property
    def text_at(self) -> int:
        """Where the header's text starts."""
        return len(MAGIC) + 2 + (2 if self.fields.major == 1 else 4)


@rule("T-npy", "error", "npy.header", "npy.md#rules",
      "a .npy header reads and its text is a dict literal with a descr")
def npy_header_readable(v, src, sink):
    if v.fields is None:
        if not explain(NpyHeader, src, 0, "npy", sink):
            sink("the header disagrees with its declaration", 0)
    elif v.text_error is not None:
        sink(f"unreadable .npy header: {v.text_error}", v.text_at)
    elif v.objects:
        sink("the .npy file holds Python objects, not raw items: Blosc compresses an "
             "array's bytes (save it with a fixed-size dtype, e.g. strings as 'S' or 'U')", 0)


NPY_RULES = (npy_header_readable,)


def read(data) -> tuple[object, int]:
    """``(descr, offset of the array data)`` of the .npy file in ``data``;
    FormatError when the header is unreadable (T-npy) or cut short
    (T-truncated)."""
    header, start = read_header(data)
    return header["descr"], start


def read_header(data) -> tuple[dict, int]:
    """``(header dict, offset of the array data)``: the dict has ``descr``,
    and as NumPy writes it ``shape`` and ``fortran_order``."""
    try:
        h = parse(NpyHeader, data, 0, "npy", rule=npy_header_readable.id)   # in place
    except FormatError:
        h = None                  # T-npy explains which field
    header, why = None, None
    if h is not None:
        try:
            header = ast.literal_eval(h.header.decode("latin1"))
            header["descr"]
        except (ValueError, SyntaxError, KeyError, TypeError, MemoryError, RecursionError) as e:
            why = e
    v = NpyView(h, why)
    RaiseFirst().run(NPY_RULES, v, data)
    return header, v.text_at + h.len_header


def itemsize(descr) -> int:
    """Bytes per item of a NumPy type description: with NumPy any of them,
    without it the simple forms ("<f8", "|S10", "<U3": 12).  ValueError when
    it cannot be sized; FormatError (T-npy) for Python objects, which have
    no bytes of their own."""
    try:
        import numpy
    except ImportError:
        numpy = None  # type: ignore[assignment]
    if numpy is not None:
        try:
            if isinstance(descr, str):
                descr = npy_descr(descr)
            dtype = numpy.dtype(descr if isinstance(descr, str) else [tuple(f) for f in descr])
        except (ValueError, FormatError):
            raise
        except Exception as e:       # noqa: BLE001 -- NumPy parses some strings with
            # ast.literal_eval ("<f8," raises SyntaxError): none of it is ours
            raise ValueError(f"not a NumPy type: {descr!r}") from e
        # the header (if any) was read before: only the items are in question
        RaiseFirst().run(NPY_RULES, NpyView(True, objects=dtype.hasobject), b"")
        return dtype.itemsize
    m = re.fullmatch(r"[<>|=]?([a-zA-Z])(\d+)(\[\w+\])?", descr) \
        if isinstance(descr, str) else None
    if m is None:
        raise ValueError(f"cannot size items {descr!r} without numpy")
    return int(m.group(2)) * (4 if m.group(1) == "U" else 1)


def b2nd_dtype(descr) -> str:
    """The dtype string a ``b2nd`` metalayer holds for a .npy ``descr``, as
    python-blosc2 writes it: a simple type's string (``"<f8"``), or a
    record type's field list written out (``"[('x', '<i4'), ('y', '<f8')]"``)."""
    return descr if isinstance(descr, str) else str([tuple(f) for f in descr])


def dtype_string(dtype) -> str:
    """The b2nd dtype string of ``dtype``: a string as it is, a NumPy dtype
    (anything with ``str``, ``descr`` and ``fields``) as python-blosc2
    writes it (a record type's fields written out, else its type string)."""
    if isinstance(dtype, str):
        return dtype
    return b2nd_dtype(dtype.descr) if getattr(dtype, "fields", None) else dtype.str


def npy_descr(dtype: str):
    """The .npy ``descr`` of a ``b2nd`` dtype string (the inverse of
    :func:`b2nd_dtype`): a record type's field list as a list, any other
    string as it is.  C-Blosc2 hands the string on as a C string, so it
    ends at a NUL byte."""
    text = dtype.split("\0", 1)[0]
    if text.startswith("["):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return text
        if isinstance(value, list):
            return value
    return text


def b2nd_itemsize(dtype: str) -> int | None:
    """Bytes per item of a ``b2nd`` dtype string where it can be told (with
    NumPy any dtype, without it the simple type strings), else None."""
    try:
        return itemsize(npy_descr(dtype))
    except (ValueError, FormatError):       # FormatError: Python objects
        return None


def write_header(descr, shape: tuple[int, ...]) -> bytes:
    """A version 1.0 .npy header for a C-order array of ``descr`` items (a
    type string, or a record type's field list) and ``shape``, padded (spaces, then a newline) so the data starts at a
    multiple of 64 bytes, as NumPy writes it."""
    # a Python tuple's repr is the form NumPy writes: (3, 4), (5,), ()
    text = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {tuple(shape)!r}, }}"
    fixed = len(MAGIC) + 2 + 2
    pad = -(fixed + len(text) + 1) % 64
    body = (text + " " * pad + "\n").encode("latin1")
    return NpyHeader.build({"magic": MAGIC, "major": 1, "minor": 0, "len_header": len(body),
                            "header": body})
