"""The rules a chunk must satisfy, as a table beside the declarations.

Ids reuse C-Blosc2's own validation rule ids where C-Blosc2 makes the same
check (H1.., D1.., B1..); ``T-`` ids are checks blosckit adds (C-Blosc2 does
not make them and misbehaves without them).  specs/chunk.md#rules describes
each one.  The reader raises on the first failure through :func:`fail`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from ..errors import FormatError


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str       # "error" | "warning"
    anchor: str         # specs/chunk.md#<anchor>
    path: str           # the field the rule is about
    text: str


_R = Rule
RULES: dict[str, Rule] = {r.id: r for r in (
    _R("H1", "error", "rules-header", "chunk.header", "input holds at least the 16-byte header"),
    _R("H2", "error", "rules-header", "chunk.header.cbytes", "cbytes >= 16"),
    _R("H3", "error", "rules-header", "chunk.header.blocksize", "blocksize > 0"),
    _R("H4", "error", "rules-header", "chunk.header.blocksize",
       "blocksize <= 536866816 (for VL-block chunks: the block count)"),
    _R("H5", "error", "rules-header", "chunk.header.typesize", "typesize > 0"),
    _R("H6", "error", "rules-header", "chunk.header.cbytes",
       "cbytes >= 32 when the header is extended"),
    _R("H7", "error", "rules-header", "chunk.header.extended",
       "input holds the 32-byte extended header"),
    _R("H8", "error", "rules-header", "chunk.header.extended.blosc2_flags",
       "a VL-block chunk is not special"),
    _R("H9", "error", "rules-special", "chunk.header.cbytes",
       "a value chunk's value width (cbytes - 32) is positive and divides nbytes"),
    _R("H10", "error", "rules-special", "chunk.header.nbytes",
       "NaN and uninit chunks: nbytes is a multiple of typesize"),
    _R("H12", "error", "rules-header", "chunk.header.flags",
       "a VL-block chunk is not memcpyed"),
    _R("H14", "error", "rules-header", "chunk.header.cbytes",
       "cbytes <= the input length"),
    _R("D2", "error", "rules-special", "chunk.header.extended.blosc2_flags",
       "special kind is 0..4"),
    _R("D3", "error", "rules-body", "chunk.header.cbytes",
       "memcpyed chunk: cbytes == nbytes + header length"),
    _R("D4", "error", "rules-body", "chunk.header.cbytes",
       "empty regular chunk: cbytes == header length"),
    _R("D6", "error", "rules-body", "chunk.bstarts", "the bstarts fit inside cbytes"),
    _R("D7", "error", "rules-body", "chunk.dict.dsize", "room for the dictionary size"),
    _R("D8", "error", "rules-body", "chunk.dict.dsize", "dictionary size is 1..32768"),
    _R("D9", "error", "rules-body", "chunk.dict.dict", "the dictionary fits inside cbytes"),
    _R("D-nan", "error", "rules-special", "chunk.header.typesize",
       "a NaN chunk has typesize 4 or 8"),
    _R("B1", "error", "rules-body", "chunk.bstarts[]",
       "each bstart lies in the streams section: after bstarts and dictionary, "
       "at most cbytes - 4"),
    _R("B2", "error", "rules-streams", "chunk.header.blocksize",
       "split chunks: blocksize >= typesize"),
    _R("B3", "error", "rules-streams", "chunk.header.blocksize",
       "split chunks: blocksize is a multiple of typesize"),
    _R("B4", "error", "rules-streams", "chunk.blocks[].streams[].csize",
       "each stream (size field and payload) ends inside cbytes"),
    _R("B5", "error", "rules-streams", "chunk.blocks[].streams[].token",
       "a negative csize is followed by its token byte (versions >= 4)"),
    _R("B6", "error", "rules-streams", "chunk.blocks[].streams[].csize",
       "a run-length csize is -1..-255"),
    _R("B7", "error", "rules-streams", "chunk.blocks[].streams[].cdata",
       "each codec stream decodes to exactly its uncompressed size"),
    _R("VL2", "error", "rules-vlblocks", "chunk.bstarts[]",
       "VL-block starts increase strictly"),
    _R("VL3", "error", "rules-vlblocks", "chunk.bstarts[]", "VL blocks end inside cbytes"),
    _R("VL4", "error", "rules-vlblocks", "chunk.blocks[].size", "VL-block size > 0"),
    _R("VL5", "error", "rules-vlblocks", "chunk.blocks[].size",
       "VL-block size matches its span of the output"),
    _R("VL6", "error", "rules-vlblocks", "chunk.blocks[].payload",
       "VL-block payload is not empty"),
    _R("VL7", "error", "rules-vlblocks", "chunk.header.nbytes",
       "VL-block sizes add up to nbytes"),
    _R("T-version", "error", "rules-header", "chunk.header.version",
       "version is 1..6"),
    _R("T-nbytes", "error", "rules-header", "chunk.header.nbytes", "nbytes >= 0"),
    _R("T-max-nbytes", "error", "rules-header", "chunk.header.nbytes",
       "nbytes <= the caller's max_nbytes"),
    _R("T-flags2", "error", "rules-header", "chunk.header.extended.blosc2_flags2",
       "blosc2_flags2 bits 1-7 are zero"),
    _R("T-special-cbytes", "error", "rules-special", "chunk.header.cbytes",
       "zeros / NaN / uninit chunks are exactly 32 bytes"),
    _R("T-lazy", "error", "rules-header", "chunk.header.extended.blosc2_flags",
       "stored chunks are not lazy (decoding raises UnsupportedError)"),
    _R("T-instr", "warning", "rules-header", "chunk.header.extended.blosc2_flags",
       "instrumented chunks hold statistics (decoding raises UnsupportedError)"),
)}


def fail(rule: str, offset: int, path: str, message: str) -> NoReturn:
    """Raise the FormatError for a broken rule."""
    assert rule in RULES, rule
    raise FormatError(message, offset, path, rule=rule)
