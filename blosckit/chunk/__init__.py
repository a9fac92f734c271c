"""Chunks: reading (:mod:`.read`) and writing (:mod:`.encode`) Blosc1 and
Blosc2 chunks of every format version."""
from __future__ import annotations

from .build import build_chunk
from .encode import compress, compress_special, compress_vlblocks
from .read import Chunk, chunk_sizes, decompress, decompress_into, getitem, parse_chunk

__all__ = ["Chunk", "parse_chunk", "decompress", "decompress_into", "getitem", "chunk_sizes",
           "compress", "compress_special", "compress_vlblocks", "build_chunk"]
