"""Opening a container of Blosc chunks, whichever kind it is (an HDF5 file,
a zarr store): :func:`open_container`.  specs/containers.md."""
from __future__ import annotations

import os
from pathlib import Path

from .containers import Container, container_kind
from .hdf5 import open_hdf5
from .zarr_store import open_zarr

__all__ = ["open_container"]


def open_container(path: str | os.PathLike) -> Container:
    """The container at ``path`` (see :func:`container_kind`); ValueError
    when it is none, :class:`ExtraNeeded` when h5py is missing for an HDF5
    file."""
    kind = container_kind(path)
    if kind == "hdf5":
        return open_hdf5(Path(path))
    if kind == "zarr":
        return open_zarr(Path(path))
    raise ValueError(f"{path}: not an HDF5 file or a zarr store")
