"""Frames behind a URL (``https://``, ``s3://``, ``file://``, anything fsspec
opens), read with byte ranges only.

The remote file's bytes go, as they are fetched, into a sparse temporary
file of the same size, which the ordinary frame reader maps; a
:class:`RemoteFrame` fetches what a read needs before the reader looks at
it.  Opening costs at most three requests for frames whose offsets index
and trailer fit in the last :data:`TAIL_BYTES` (a frame of 10,000 chunks
does): the size, the first :data:`HEAD_BYTES` (the header and its
metalayers) and the last bytes; one chunk costs one request (from its index
entry to the next chunk's), and a read of every chunk one request for the
whole chunks section.  Bytes never fetched are never read: every path to a
chunk's bytes goes through :meth:`RemoteFrame.locate` or
:meth:`RemoteFrame.native_batch`.  fsspec (and, for HTTP, aiohttp) is
needed: the ``remote`` extra.
"""
from __future__ import annotations

import mmap
import re
import tempfile
import threading
from bisect import bisect_right
from typing import Any

from ..formats import chunk as fc
from ..formats import frame as ff
from .read import Frame, _unmap

__all__ = ["is_url", "RangeFile", "RemoteFrame", "open_remote_frame", "HEAD_BYTES",
           "TAIL_BYTES"]

HEAD_BYTES = 64 << 10          # fetched at open: the header and metalayers, usually all
TAIL_BYTES = 256 << 10         # fetched at open: the trailer and the offsets index
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_HEADER = ff.FLAT_HEADERS[14]           # the older layouts put these fields alike


def is_url(src: Any) -> bool:
    """``src`` is a URL string (``scheme://...``), which fsspec opens."""
    return isinstance(src, str) and bool(_URL.match(src))


def _fsspec():
    try:
        import fsspec
    except ImportError:
        raise ImportError("reading URLs needs fsspec (pip install 'blosckit[remote]'; "
                          "for https://, aiohttp too)") from None
    return fsspec


class RangeFile:
    """The bytes of the file at ``url``, fetched by byte range on demand
    into a sparse temporary file that :attr:`view` maps (read-only).
    :attr:`requests` counts the requests made (the size, then one per
    fetch)."""

    def __init__(self, url: str) -> None:
        fs, path = _fsspec().core.url_to_fs(url)
        self.url, self._fs, self._path = url, fs, path
        self.size = int(fs.size(path))
        self.requests = 1
        self._have: list[tuple[int, int]] = []        # fetched ranges, sorted, disjoint
        self._lock = threading.Lock()
        self._tmp = tempfile.TemporaryFile(prefix="blosckit-remote-")
        self._tmp.truncate(self.size)
        self._map = mmap.mmap(self._tmp.fileno(), 0, access=mmap.ACCESS_READ) if self.size \
            else None
        self.view = memoryview(self._map) if self._map is not None else memoryview(b"")

    def ensure(self, start: int, end: int) -> None:
        """Bytes ``start`` to ``end`` are fetched (one request for whatever
        part of them is missing).  Thread-safe: zarr asks for chunks from
        several threads."""
        start, end = max(0, start), min(self.size, end)
        if start >= end:
            return
        with self._lock:
            if self._covered(start, end):
                return
            data = self._fs.cat_file(self._path, start=start, end=end)
            self.requests += 1
            if len(data) != end - start:
                raise OSError(f"{self.url}: asked for bytes {start}..{end}, got {len(data)}")
            self._tmp.seek(start)
            self._tmp.write(data)
            self._tmp.flush()
            self._add(start, end)

    def _covered(self, start: int, end: int) -> bool:
        k = bisect_right(self._have, (start, float("inf"))) - 1
        return k >= 0 and self._have[k][0] <= start and end <= self._have[k][1]

    def _add(self, start: int, end: int) -> None:
        merged = []
        for a, b in self._have:
            if b < start or end < a:
                merged.append((a, b))
            else:
                start, end = min(a, start), max(b, end)
        merged.append((start, end))
        self._have = sorted(merged)

    def close(self) -> None:
        if self._map is not None:
            _unmap(self.view, self._map.close)
            self._map = None
        self._tmp.close()


class RemoteFrame(Frame):
    """A contiguous frame read from a :class:`RangeFile`: as
    :class:`~blosckit.frame.read.Frame`, fetching each chunk's bytes
    before they are read."""

    def __init__(self, rf: RangeFile) -> None:
        self.remote = rf
        super().__init__(rf.view, closer=rf.close)
        self._starts: list[int] | None = None

    def locate(self, i: int):
        e = self.entries[i]
        if e >= 0:
            start, end = self._chunk_span(e)
            self.remote.ensure(start, end)
            if start + fc.LEN_HEADER <= self.remote.size:
                # a chunk may say it runs on past the next one's start: all of
                # what it says is fetched before the reader looks
                cbytes = fc.HEADER.get(self.buffer, "cbytes", start)
                self.remote.ensure(start, start + max(cbytes, 0))
        return super().locate(i)

    def _chunk_span(self, entry: int) -> tuple[int, int]:
        """From the chunk's start to the next stored chunk's (or the end of
        the chunks section): its bytes, in one request."""
        if self._starts is None:
            self._starts = sorted({e for e in self.entries if e >= 0})
        k = bisect_right(self._starts, entry)
        end = self._starts[k] if k < len(self._starts) else self.cbytes
        return self.header_len + entry, self.header_len + max(end, entry + 1)

    def native_batch(self):
        batch = super().native_batch()
        if batch is not None:            # every chunk is read: the section, in one request
            self.remote.ensure(self.header_len, self.header_len + self.cbytes)
        return batch


def open_remote_frame(url: str) -> RemoteFrame:
    """Open the contiguous frame at ``url`` (see the module docstring);
    FormatError for a malformed frame, OSError when it cannot be read."""
    rf = RangeFile(url)
    try:
        rf.ensure(0, HEAD_BYTES)
        if rf.size >= ff.LEN_FIXED[14]:
            rf.ensure(0, _HEADER.get(rf.view, "header_len"))   # a header of many metalayers
        rf.ensure(rf.size - TAIL_BYTES, rf.size)
        _ensure_index(rf)
        return RemoteFrame(rf)
    except BaseException:
        rf.close()
        raise


def _ensure_index(rf: RangeFile) -> None:
    """The offsets index, when the tail fetched at open began after it:
    from the end of the chunks section on (the header says where)."""
    if rf.size < ff.LEN_FIXED[14]:
        return
    header_len, cbytes = _HEADER.get(rf.view, "header_len"), _HEADER.get(rf.view, "cbytes")
    if 0 <= cbytes and 0 <= header_len and header_len + cbytes < rf.size:
        rf.ensure(header_len + cbytes, rf.size)


def fetch_whole(url: str) -> tuple[memoryview, Any]:
    """Every byte of ``url`` (one request after the size), mapped from a
    temporary file, and what releases it: for readers that read it all
    (validate, the command line)."""
    rf = RangeFile(url)
    rf.ensure(0, rf.size)
    return rf.view, rf.close
