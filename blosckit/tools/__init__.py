"""Tools over chunks and frames: validation, inspection, salvage, scanning and
the table of what C-Blosc2 and C-Blosc read otherwise (divergences)."""
from __future__ import annotations

from .salvage import SalvageReport, salvage
from .validate import validate

__all__ = ["validate", "salvage", "SalvageReport"]
