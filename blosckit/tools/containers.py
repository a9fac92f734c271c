"""Containers of Blosc chunks: HDF5 files and zarr stores, as inputs.

A container is recognised by its own marks (the HDF5 signature; a
directory with ``.zarray``, ``.zgroup`` or ``zarr.json``) and opened as a
list of :class:`StoredArray`, one per dataset or array stored with Blosc,
each listing its chunks as :class:`StoredChunk` (where the stored bytes lie,
named by dataset and chunk coordinates).  :func:`validate_container` runs
blosckit's chunk and frame checks on every chunk (:mod:`.validate`); each
Problem carries the chunk's ``location`` and a byte offset in the file that
holds the chunk.  The readers are :mod:`.hdf5` (h5py: the chunk index) and
:mod:`.zarr_store` (the JSON metadata and the files; no zarr library
needed); :mod:`.stores` opens either.
specs/containers.md.
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator

from ..errors import Problem
from ..formats.signatures import is_hdf5

__all__ = ["ExtraNeeded", "StoredChunk", "StoredArray", "Container", "container_kind",
           "in_container", "split_location"]

ZARR_MARKS = (".zarray", ".zgroup", "zarr.json")
_HEAD = 65536 + 8                 # the last place the HDF5 signature may be (user blocks)


class ExtraNeeded(ImportError):
    """An optional dependency that reading this input needs is missing; the
    message names the extra to install."""


def optional(module: str, needed_for: str, install: str) -> ModuleType:
    """The optional module ``module``, imported; :class:`ExtraNeeded` naming
    what it is ``needed_for`` and the ``install`` command when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ExtraNeeded(f"{needed_for} needs {module} ({e}): {install}") from None


@dataclass(frozen=True)
class StoredChunk:
    """One chunk as a container stores it.

    ``location`` is ``"/group/ds[2,0]"``; ``coords`` the chunk's place in the
    chunk grid; ``file`` the file that holds it; ``offset`` where its stored
    bytes start in that file (bytes); ``data`` the stored bytes; ``blosc``
    False for a chunk stored without Blosc (an HDF5 chunk whose filter
    mask skips Blosc: raw items); ``tail`` the checksum bytes after the
    Blosc data (Fletcher32, crc32c)."""
    location: str
    coords: tuple[int, ...]
    file: Path
    offset: int
    data: memoryview
    blosc: bool = True
    tail: int = 0

    @property
    def blosc_data(self) -> memoryview:
        """The Blosc chunk or frame itself, checksum left out."""
        return self.data[:len(self.data) - self.tail] if self.tail else self.data


ChunkItem = StoredChunk | Problem     # a chunk, or a fault of the index that lists them


@dataclass
class StoredArray:
    """A dataset (HDF5) or array (zarr) stored with Blosc: ``name`` its path
    (``"/group/ds"``), ``shape`` and ``chunkshape`` in items (for a sharded
    zarr array, the inner chunks), ``dtype`` (numpy's type string),
    ``fill`` its fill value, ``codec`` what compressed it, ``problems``
    what its metadata says is wrong or out of reach, ``chunks`` a function
    listing its stored chunks (or faults of its chunk index), ``decodable``
    None when blosckit can turn its chunks into items, else why not."""
    name: str
    shape: tuple[int, ...]
    chunkshape: tuple[int, ...]
    dtype: object
    fill: object
    codec: str
    chunks: Callable[[], Iterator[ChunkItem]]
    problems: list[Problem] = field(default_factory=list)
    decodable: str | None = None

    def location(self, coords: tuple[int, ...]) -> str:
        """The location of chunk ``coords``: ``"/group/ds[2,0]"``."""
        return f"{self.name}[{','.join(map(str, coords))}]"


@dataclass
class Container:
    """An opened container: ``kind`` (``"hdf5"``, ``"zarr"``), ``path``,
    ``arrays`` (its Blosc datasets or arrays, in name order) and what to
    close."""
    kind: str
    path: Path
    arrays: list[StoredArray]
    close: Callable[[], None] = lambda: None

    def __enter__(self) -> Container:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def array(self, name: str) -> StoredArray:
        """The dataset or array ``name`` (``"/group/ds"``); KeyError naming
        the ones there are."""
        for a in self.arrays:
            if a.name == name or a.name == "/" + name.lstrip("/"):
                return a
        known = ", ".join(a.name for a in self.arrays) or "none"
        raise KeyError(f"{self.path}: no Blosc {_WORD[self.kind]} {name!r} (there are: {known})")


_WORD = {"hdf5": "dataset", "zarr": "array"}
_KINDS = {"hdf5": "HDF5 file", "zarr": "zarr store"}


def describe(kind: str) -> str:
    """A container kind in words (``"HDF5 file"``)."""
    return _KINDS[kind]


def container_kind(path: str | os.PathLike) -> str | None:
    """``"hdf5"``, ``"zarr"``, or None when ``path`` is no container."""
    p = Path(path)
    if p.is_dir():
        return "zarr" if any((p / m).is_file() for m in ZARR_MARKS) else None
    if not p.is_file():
        return None
    with open(p, "rb") as fh:
        return "hdf5" if is_hdf5(fh.read(_HEAD)) else None


def in_container(p: Problem, chunk: StoredChunk) -> Problem:
    """``p`` of the Blosc data of ``chunk`` (offsets in those bytes) in the
    container's terms: at the chunk's location, offsets in its file."""
    return replace(p, offset=p.offset + chunk.offset, location=chunk.location)


def split_location(name: str) -> tuple[str, str | None]:
    """``FILE:/group/ds[2,0]`` -> ``("FILE", "/group/ds[2,0]")``: a name that
    is not itself a path and holds ``:/`` after an existing container; else
    ``(name, None)``."""
    if os.path.exists(name):
        return name, None
    at = name.find(":/")
    while at != -1:
        if container_kind(name[:at]) is not None:
            return name[:at], name[at + 1:]
        at = name.find(":/", at + 1)
    return name, None
