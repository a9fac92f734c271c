"""HDF5 files as containers of Blosc chunks (h5py: the chunk index only).

Every chunked dataset whose filter pipeline holds the Blosc filter (32001)
or the Blosc2 filter (32026) is listed; its chunks come from HDF5's chunk
index (``get_num_chunks``/``get_chunk_info``: the chunk's first item, its
filter mask, its byte offset and size in the file) and are read from the
mapped file at that offset, never through the filter.  No filter plugin is
needed: blosckit reads the stored bytes itself.  specs/containers.md#hdf5.
"""
from __future__ import annotations

import errno
import mmap
import os
from pathlib import Path
from typing import Iterator

from ..formats.container import (BLOSC_FILTERS, FLETCHER32, HDF5_HEAD, blosc_tail,
                                  codec_problems, hdf5_length_holds)
from .containers import ChunkItem, Container, StoredArray, StoredChunk, optional

__all__ = ["open_hdf5"]


def _check_length(path: Path) -> None:
    """A file shorter than its superblock says: T-truncated at its end
    (h5py's own refusal names no offset)."""
    with open(path, "rb") as fh:
        head = fh.read(HDF5_HEAD)
        size = os.fstat(fh.fileno()).st_size
    hdf5_length_holds(head, size)


def open_hdf5(path: Path) -> Container:
    """The Blosc datasets of the HDF5 file at ``path``, in name order."""
    h5py = optional("h5py", "reading HDF5 files", "pip install 'blosckit[hdf5]'")
    _check_length(path)
    try:
        f = h5py.File(path, "r")
    except OSError as e:              # h5py's errors carry no errno: name what it said
        raise OSError(errno.EIO, f"h5py cannot open it ({e})", str(path)) from None
    try:
        with open(path, "rb") as fh:
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        view = memoryview(mapped)
    except Exception:
        f.close()
        raise
    names: list[str] = []
    f.visititems(lambda name, obj: names.append(name)
                 if isinstance(obj, h5py.Dataset) else None)
    arrays = [a for a in (_dataset(f["/" + n], path, view) for n in sorted(names))
              if a is not None]

    def close() -> None:
        f.close()
        try:
            view.release()
            mapped.close()
        except BufferError:       # a chunk's bytes still held by the caller: freed with them
            pass
    return Container("hdf5", path, arrays, close)


def _pipeline(ds) -> list[int]:
    """The filter ids of ``ds``'s pipeline, in the order they are applied
    when writing."""
    plist = ds.id.get_create_plist()
    return [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]


def _dataset(ds, path: Path, view: memoryview) -> StoredArray | None:
    """The dataset ``ds`` when it is chunked and stored with a Blosc filter."""
    if ds.chunks is None:
        return None
    ids = _pipeline(ds)
    at = next((i for i, f in enumerate(ids) if f in BLOSC_FILTERS), None)
    if at is None:
        return None
    after, before = ids[at + 1:], ids[:at]
    problems = codec_problems(after, f"hdf5.filters[{at + 1}]")
    a = StoredArray(ds.name, tuple(ds.shape), tuple(ds.chunks), ds.dtype, ds.fillvalue,
                    BLOSC_FILTERS[ids[at]], lambda: iter(()), problems)
    if before:
        a.decodable = f"filters {before} run before Blosc (read the dataset with h5py)"
    if problems:
        a.decodable = problems[0].message
        return a                    # the Blosc data are out of reach
    a.chunks = lambda: _chunks(a, ds, path, view, at, FLETCHER32 in after)
    return a


def _chunks(a: StoredArray, ds, path: Path, view: memoryview, blosc_at: int,
            fletcher: bool) -> Iterator[ChunkItem]:
    """Every stored chunk of ``ds`` in the order of HDF5's chunk index."""
    dsid = ds.id
    for i in range(dsid.get_num_chunks()):
        info = dsid.get_chunk_info(i)
        coords = tuple(o // c for o, c in zip(info.chunk_offset, a.chunkshape))
        skipped = bool(info.filter_mask >> blosc_at & 1)   # stored without Blosc
        tail = blosc_tail([FLETCHER32] if fletcher and not info.filter_mask >> (blosc_at + 1) & 1
                          else [])
        start = info.byte_offset
        yield StoredChunk(a.location(coords), coords, path, start,
                          view[start:start + info.size], blosc=not skipped, tail=tail or 0)
