"""The inspector's nodes, read through the declarations, agree with the bytes:
every integer leaf re-read at its offset gives its value, bit fields sit in
their byte, and the tree covers header, bstarts, dictionary and streams."""
from __future__ import annotations

import struct

import pytest

import blosckit
from blosckit.inspect_chunk import chunk_nodes
from helpers import small_chunks

CHUNKS = small_chunks()
_INT = {1: "<B", 4: "<i", 8: "<q"}


@pytest.mark.parametrize("name", sorted(CHUNKS))
def test_every_leaf_matches_its_bytes(name):
    chunk = CHUNKS[name]
    nodes = list(chunk_nodes(chunk))
    assert nodes[0].path == "chunk" and nodes[0].size == len(chunk)
    for n in nodes:
        assert 0 <= n.offset <= len(chunk), n
        if n.bit is not None:
            first, width = n.bit
            assert n.value == (chunk[n.offset] >> first) & ((1 << width) - 1), n
        elif isinstance(n.value, int) and n.size in _INT:
            fmt = _INT[n.size]
            if n.path.endswith((".flags", "blosc2_flags", "blosc2_flags2")) or fmt == "<B":
                fmt = "<B"
            got = struct.unpack_from(fmt, chunk, n.offset)[0]
            if fmt == "<B" and n.value < 0:
                got -= 256
            assert got == n.value, n


@pytest.mark.parametrize("name", sorted(CHUNKS))
def test_the_tree_reaches_every_block(name):
    chunk = CHUNKS[name]
    c = blosckit.parse_chunk(chunk)
    paths = [n.path for n in chunk_nodes(chunk)]
    assert len([p for p in paths if p.startswith("chunk.bstarts[")]) == len(c.bstarts)
    if c.dict is not None:
        assert "chunk.dict.dsize" in paths and "chunk.dict.dict" in paths
    if c.bstarts and not c.lazy:
        for j in range(len(c.bstarts)):
            assert f"chunk.blocks[{j}]" in paths
        if not c.vlblocks:
            assert any(p.startswith("chunk.blocks[0].streams[0].csize") for p in paths)


def test_damaged_streams_stop_the_tree_with_a_format_error():
    chunk = bytearray(CHUNKS["lz4-shuffle"])
    b = blosckit.parse_chunk(chunk).bstarts[1]
    chunk[b:b + 4] = struct.pack("<i", 1 << 30)
    seen = []
    with pytest.raises(blosckit.FormatError) as e:
        for n in chunk_nodes(bytes(chunk)):
            seen.append(n.path)
    assert "chunk.blocks[0]" in seen          # what came before was shown
    assert e.value.path.startswith("chunk.blocks[1].streams[0]")
    assert e.value.offset == len(chunk)       # the payload would run past the end
