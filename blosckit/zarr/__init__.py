"""zarr v3 integration: blosckit's ``blosc`` codec (needs zarr >= 3)."""
from __future__ import annotations

from .codec import BloscCodec
