"""Frames: reading contiguous and sparse frames (:mod:`.read`), building them
(:mod:`.build`; field by field, lies included: :mod:`.parts`), writing them
chunk by chunk (:mod:`.writer`), editing them in place (:mod:`.edit`), and
n-dimensional arrays stored in them (:mod:`.b2nd`)."""
from __future__ import annotations

from .b2nd import B2nd, compress_b2nd
from .build import build_frame
from .edit import EditableFrame, open_frame
from .parts import FrameParts, frame_parts
from .read import Frame
from .sframe import sframe_files, to_sframe
from .writer import B2ndWriter, FrameWriter, compress_frame

__all__ = ["Frame", "EditableFrame", "open_frame", "build_frame", "compress_frame", "to_sframe",
           "sframe_files", "frame_parts", "FrameParts", "B2nd", "compress_b2nd", "FrameWriter",
           "B2ndWriter"]
