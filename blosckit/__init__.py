"""blosckit: read, validate and build every Blosc1/Blosc2 chunk and frame.

The public API is listed in ``__all__``; the declared structures stay reachable
as ``blosckit.formats.chunk.<name>``.  ``blosckit.strategies`` (hypothesis) is
not imported here.
"""
from __future__ import annotations

from .frame.b2nd import B2nd, compress_b2nd
from .codecs.buildinfo import native_info
from .chunk.read import Chunk, chunk_sizes, decompress, decompress_into, getitem, parse_chunk
from .chunk.build import build_chunk
from .chunk.encode import compress
from .chunk.special import compress_special
from .chunk.vlblocks import compress_vlblocks
from .errors import FormatError, Problem, UnsupportedError
from .frame.edit import EditableFrame, open_frame
from .frame.read import Frame
from .frame.build import build_frame
from .frame.parts import FrameParts, frame_parts
from .frame.sframe import sframe_files, to_sframe
from .frame.writer import B2ndWriter, FrameWriter, compress_frame
from .native import bitshuffle, bitunshuffle, shuffle, unshuffle
from .tools.salvage import SalvageReport, salvage
from .tools.validate import validate

__version__ = "0.1.0"

__all__ = [
    "FormatError", "UnsupportedError", "Problem",
    "Chunk", "parse_chunk", "decompress", "decompress_into", "getitem", "chunk_sizes",
    "compress", "compress_special", "compress_vlblocks", "build_chunk",
    "shuffle", "unshuffle", "bitshuffle", "bitunshuffle",
    "Frame", "EditableFrame", "open_frame", "build_frame", "compress_frame", "to_sframe",
    "sframe_files", "frame_parts", "FrameParts",
    "B2nd", "compress_b2nd", "FrameWriter", "B2ndWriter",
    "validate", "salvage", "SalvageReport", "native_info",
    "__version__",
]
