"""Frames: reading contiguous and sparse frames (:mod:`.read`), building them
(:mod:`.build`), and n-dimensional arrays stored in them (:mod:`.b2nd`)."""
from __future__ import annotations

from .b2nd import B2nd, compress_b2nd
from .build import build_frame, compress_frame
from .read import Frame, open_frame
from .sframe import sframe_files, to_sframe

__all__ = ["Frame", "open_frame", "build_frame", "compress_frame", "to_sframe",
           "sframe_files", "B2nd", "compress_b2nd"]
