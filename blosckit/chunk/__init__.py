"""Chunks: reading (:mod:`.read`) and writing Blosc1 and Blosc2 chunks of
every format version: the plan (:mod:`.plan`), regular chunks
(:mod:`.encode`), special chunks (:mod:`.special`), VL-block chunks
(:mod:`.vlblocks`) and hand-assembled ones (:mod:`.build`)."""
from __future__ import annotations

from .build import build_chunk
from .encode import compress
from .read import Chunk, chunk_sizes, decompress, decompress_into, getitem, parse_chunk
from .special import compress_special
from .vlblocks import compress_vlblocks

__all__ = ["Chunk", "parse_chunk", "decompress", "decompress_into", "getitem", "chunk_sizes",
           "compress", "compress_special", "compress_vlblocks", "build_chunk"]
