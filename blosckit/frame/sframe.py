"""Sparse frames: a contiguous frame written as a directory of chunk files
beside an index file (``chunks.b2frame``), as C-Blosc2 stores them."""
from __future__ import annotations

import os
from pathlib import Path

from ..formats import frame as ff
from .build import compress_index
from .read import Frame, open_frame

__all__ = ["sframe_files", "to_sframe"]


def sframe_files(frame) -> dict[str, bytes]:
    """A contiguous frame (bytes-like or an open Frame) as the files of a
    sparse frame, name -> bytes: ``chunks.b2frame`` (the frame without its
    chunks, the index holding chunk file numbers) and one
    ``XXXXXXXX.chunk`` per stored chunk (special chunks stay offsets)."""
    f = frame if isinstance(frame, Frame) else open_frame(frame)
    if f.layout not in (14, 13):
        raise ValueError(f"the {f.layout}-element header layout has no frame type: "
                         "it cannot describe a sparse frame")
    files: dict[str, bytes] = {}
    offsets: list[int] = []
    for i in range(f.nchunks):
        kind = f.special(i)
        if kind is not None:
            offsets.append(ff.special_offset(kind))
            continue
        files[ff.chunk_file_name(len(files))] = bytes(f.chunk(i))
        offsets.append(len(files) - 1)
    mv = f.buffer
    header = bytearray(mv[:f.header_len])
    index = compress_index(offsets)
    trailer = bytes(mv[f.trailer_start:f.fields.frame_len])
    fixed = ff.FRAME_HEADERS[f.layout].parse(bytes(header))
    fixed.frame_len = len(header) + len(index) + len(trailer)
    fixed.frame_type = 1
    header[:ff.LEN_FIXED[f.layout]] = ff.FRAME_HEADERS[f.layout].build(fixed)
    files[ff.SFRAME_INDEX] = bytes(header) + index + trailer
    return files


def to_sframe(frame, path: str | os.PathLike) -> None:
    """Write a contiguous frame (bytes-like or an open Frame) as a sparse
    frame directory (see :func:`sframe_files`); ``path`` must not exist."""
    out = Path(path)
    files = sframe_files(frame)
    out.mkdir(parents=True, exist_ok=False)
    for name, data in files.items():
        (out / name).write_bytes(data)
