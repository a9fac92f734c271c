"""Output buffers: a fresh ``bytes`` object the decoder may fill in place.

``decompress`` must return ``bytes``; decoding into a bytearray and copying
would add a full pass over the data.  CPython lets us allocate an
uninitialised bytes object and write into it before anyone else sees it (the
same thing C extensions do with ``PyBytes_FromStringAndSize(NULL, n)``).
"""
from __future__ import annotations

import ctypes
import sys

_new = None
if sys.implementation.name == "cpython":
    _new = ctypes.pythonapi.PyBytes_FromStringAndSize
    _new.restype = ctypes.py_object
    _new.argtypes = (ctypes.c_void_p, ctypes.c_ssize_t)
    _OFS = sys.getsizeof(b"") - 1         # offset of ob_sval in a bytes object


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


def finish(obj) -> bytes:
    """The bytes to return for a buffer made by :func:`new_bytes`."""
    return obj if isinstance(obj, bytes) else bytes(obj)
