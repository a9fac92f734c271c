"""zarr v3 for blosckit (the ``zarr`` extra, zarr >= 3): blosckit's
``blosc`` codec (:class:`BloscCodec`) and Blosc2 frames shown as zarr arrays
(:class:`FrameStore`).  Importing ``blosckit`` does not import this
package, nor zarr."""
from __future__ import annotations

from .codec import BloscCodec
from .store import B2ndCodec, FrameStore

__all__ = ["BloscCodec", "B2ndCodec", "FrameStore"]
