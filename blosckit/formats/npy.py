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
from .rules import declare

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

T_NPY = declare("T-npy", "error", "npy.header", "npy.md#rules",
                "a .npy header is whole and its text is a dict literal with a descr")


def read(data) -> tuple[object, int]:
    """``(descr, offset of the array data)`` of the .npy file in ``data``;
    FormatError (rule T-npy) when the header is cut or unreadable."""
    header, start = read_header(data)
    return header["descr"], start


def read_header(data) -> tuple[dict, int]:
    """``(header dict, offset of the array data)``: the dict has ``descr``,
    and as NumPy writes it ``shape`` and ``fortran_order``."""
    h = parse(NpyHeader, data, 0, "npy", rule=T_NPY.id)
    ofs_text = len(MAGIC) + 2 + (2 if h.major == 1 else 4)
    try:
        header = ast.literal_eval(h.header.decode("latin1"))
        header["descr"]
    except (ValueError, SyntaxError, KeyError, TypeError, MemoryError, RecursionError) as e:
        raise FormatError(f"unreadable .npy header: {e}", ofs_text, "npy.header",
                          rule=T_NPY.id) from e
    return header, ofs_text + h.len_header


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
            dtype = numpy.dtype(descr if isinstance(descr, str) else [tuple(f) for f in descr])
        except TypeError as e:
            raise ValueError(f"not a NumPy type: {descr!r}") from e
        if dtype.hasobject:
            raise FormatError("the .npy file holds Python objects, not raw items", 0,
                              "npy.header", rule=T_NPY.id)
        return dtype.itemsize
    m = re.fullmatch(r"[<>|=]?([a-zA-Z])(\d+)(\[\w+\])?", descr) \
        if isinstance(descr, str) else None
    if m is None:
        raise ValueError(f"cannot size items {descr!r} without numpy")
    return int(m.group(2)) * (4 if m.group(1) == "U" else 1)


def write_header(descr: str, shape: tuple[int, ...]) -> bytes:
    """A version 1.0 .npy header for a C-order array of ``descr`` items and
    ``shape``, padded (spaces, then a newline) so the data starts at a
    multiple of 64 bytes, as NumPy writes it."""
    # a Python tuple's repr is the form NumPy writes: (3, 4), (5,), ()
    text = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {tuple(shape)!r}, }}"
    fixed = len(MAGIC) + 2 + 2
    pad = -(fixed + len(text) + 1) % 64
    body = (text + " " * pad + "\n").encode("latin1")
    return NpyHeader.build({"magic": MAGIC, "major": 1, "minor": 0, "len_header": len(body),
                            "header": body})
