"""zarr v3 for blosckit (the ``zarr`` extra): Blosc2 frames shown as zarr
arrays (:class:`FrameStore`).  Importing ``blosckit`` does not import this
package, nor zarr."""
from __future__ import annotations

from .store import B2ndCodec, FrameStore
