"""Output buffers: a fresh ``bytes`` object the decoder may fill in place.

``decompress`` must return ``bytes``; decoding into a bytearray and copying
would add a full pass over the data.  CPython lets us allocate an
uninitialised bytes object and write into it before anyone else sees it (the
same thing C extensions do with ``PyBytes_FromStringAndSize(NULL, n)``).
"""
from __future__ import annotations

import ctypes
import sys
from typing import Iterable

_new = None
BYTES_OFS = 0
if sys.implementation.name == "cpython":
    _new = ctypes.pythonapi.PyBytes_FromStringAndSize
    _new.restype = ctypes.py_object
    _new.argtypes = (ctypes.c_void_p, ctypes.c_ssize_t)
    _OFS = sys.getsizeof(b"") - 1         # offset of ob_sval in a bytes object
    BYTES_OFS = _OFS

# Below this size bytes(n) (allocate and zero) is cheaper than the ctypes call
# that allocates without zeroing (about 0.6 us more per call here).
ZEROED_BELOW = _ZEROED_BELOW = 16384


def new_bytes(n: int) -> tuple[bytes | bytearray, memoryview]:
    """A new bytes object of ``n`` bytes (contents undefined) and a writable
    view of it.  Keep the view only until the bytes are handed out."""
    if n == 0:
        return b"", memoryview(bytearray())
    if _new is None:
        buf = bytearray(n)
        return buf, memoryview(buf)   # pragma: no cover - non-CPython
    obj = _new(None, n)
    arr = (ctypes.c_char * n).from_address(id(obj) + _OFS)
    return obj, memoryview(arr).cast("B")


def new_bytes_at(n: int) -> tuple[bytes | bytearray, int]:
    """A new, unshared object of ``n`` >= 2 bytes (contents undefined) and the
    address of its first byte, for C code to fill before the object is handed
    out.  ``n`` < 2 is refused: CPython may share such small bytes objects.
    Keep the object alive while the address is in use."""
    if n < 2:
        raise ValueError(f"new_bytes_at needs n >= 2, got {n}")
    if _new is None:      # pragma: no cover - non-CPython: a bytearray's buffer
        import ctypes as _c
        buf = bytearray(n)
        return buf, _c.addressof((_c.c_char * n).from_buffer(buf))
    # bytes(n) builds a new object for every n >= 1 (only b"" is shared)
    obj = bytes(n) if n < _ZEROED_BELOW else _new(None, n)
    return obj, id(obj) + _OFS


def finish(obj) -> bytes:
    """The bytes to return for a buffer made by :func:`new_bytes`."""
    return obj if isinstance(obj, bytes) else bytes(obj)


def joined(pieces: Iterable, nbytes: int) -> bytes:
    """The bytes-like ``pieces`` joined: one new bytes object of ``nbytes``
    bytes, allocated when the first piece comes (the checks a reader makes
    before its first piece have passed by then) and filled in place, each
    piece dropped once copied (``b"".join`` of a list would hold every piece
    and the whole at once: twice the output).  ValueError when the pieces do
    not add up to ``nbytes``."""
    out, view, at = None, memoryview(b""), 0
    for piece in pieces:
        if out is None:
            out, view = new_bytes(nbytes)
        n = len(piece)
        if at + n > nbytes:
            raise ValueError(f"pieces of more than the {nbytes} bytes announced")
        view[at:at + n] = piece
        at += n
    if at != nbytes:
        raise ValueError(f"pieces of {at} bytes, {nbytes} announced")
    view.release()
    return b"" if out is None else finish(out)
