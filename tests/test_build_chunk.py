"""``build_chunk``: round trips through the reader, and ``check=False`` chunks
that the reader rejects with the rule and offset each lie should trigger."""
from __future__ import annotations

import struct

import pytest

import blosckit
from blosckit import FormatError, build_chunk, compress, compress_vlblocks, parse_chunk
from helpers import header_dict, stored_blocks
from oracles import oracle

np = oracle("numpy")

BLOCK = 64          # bytes per block of the hand-made chunks


def header(nbytes: int = 2 * BLOCK, *, cbytes=None, use_dict: bool = False,
           memcpyed: bool = False) -> dict:
    """A version-5 header: 1-byte items, unsplit BLOCK-byte blocks, no filter."""
    return header_dict(nbytes, BLOCK, cbytes=cbytes, use_dict=use_dict, memcpyed=memcpyed)


DATA = bytes(range(BLOCK)) + bytes(range(100, 100 + BLOCK))
RAW_BLOCKS = [[DATA[:BLOCK]], [DATA[BLOCK:]]]      # raw streams: csize == block size


def rule_of(chunk: bytes) -> tuple[str | None, int]:
    """The rule and offset of the FormatError the reader raises on ``chunk``."""
    with pytest.raises(FormatError) as err:
        parse_chunk(chunk)
        blosckit.decompress(chunk)
    return err.value.rule, err.value.offset


# ---------------------------------------------------------------------------
# Round trips
# ---------------------------------------------------------------------------

def test_hand_made_chunk_decodes():
    chunk = build_chunk(header(), RAW_BLOCKS)
    assert len(chunk) == 32 + 8 + 2 * (4 + BLOCK)
    assert blosckit.decompress(chunk) == DATA


@pytest.mark.parametrize("kw", [
    dict(typesize=4, codec="zlib", blocksize=16384),
    dict(typesize=8, codec="zstd", splitmode="always"),
    dict(typesize=4, codec="blosclz", filters=("delta", "shuffle"), format="blosc1-compat"),
    dict(typesize=2, codec="lz4", format="blosc1"),
])
def test_compressed_chunk_round_trips(kw):
    data = np.arange(40_000, dtype="<i8").tobytes()
    chunk = compress(data, **kw)
    info = parse_chunk(chunk)
    assert build_chunk(info.header, stored_blocks(chunk)) == chunk
    assert build_chunk(info.header, stored_blocks(chunk), check=False) == chunk


def test_dict_chunk_round_trips():
    data = np.linspace(0, 1, 50_000).tobytes()
    chunk = compress(data, typesize=8, codec="zstd", dict=True)
    info = parse_chunk(chunk)
    assert info.dict
    assert build_chunk(info.header, stored_blocks(chunk), dict=info.dict) == chunk


def test_raw_and_vl_chunks_round_trip():
    raw = compress(b"abc" * 10, clevel=0)
    info = parse_chunk(raw)
    assert build_chunk(info.header, raw[32:]) == raw
    vl = compress_vlblocks([b"a" * 100, bytes(range(200))])
    info = parse_chunk(vl)
    ends = info.bstarts[1:] + [len(vl)]
    blocks = [{"size": struct.unpack_from("<i", vl, s)[0], "payload": vl[s + 4:e]}
              for s, e in zip(info.bstarts, ends)]
    assert build_chunk(info.header, blocks) == vl


def test_header_bit_fields_as_raw_bytes():
    h = header()
    h["flags"] = 0x15                      # shuffle + bitshuffle + dont_split
    h["extended"]["blosc2_flags"] = 0
    h["extended"]["blosc2_flags2"] = 0
    assert build_chunk(h, RAW_BLOCKS) == build_chunk(header(), RAW_BLOCKS)


def test_bstarts_in_any_order():
    first = 32 + 8
    chunk = build_chunk(header(), RAW_BLOCKS, bstarts=[first + 4 + BLOCK, first])
    assert parse_chunk(chunk).bstarts == [first + 4 + BLOCK, first]
    assert blosckit.decompress(chunk) == DATA


# ---------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("check", (True, False))
@pytest.mark.parametrize("field", ("version", "versionlz", "flags", "typesize", "nbytes",
                                   "blocksize"))
def test_missing_header_field_is_named(field, check):
    h = header()
    del h[field]
    with pytest.raises(ValueError, match=rf"header\.{field}\b"):
        build_chunk(h, RAW_BLOCKS, check=check)


@pytest.mark.parametrize("check", (True, False))
def test_missing_extended_field_is_named(check):
    h = header()
    del h["extended"]["filters_meta"]
    with pytest.raises(ValueError, match=r"header\.extended\.filters_meta"):
        build_chunk(h, RAW_BLOCKS, check=check)


@pytest.mark.parametrize("bad", [
    dict(bstarts=[3, 40]),                               # inside the header
    dict(bstarts=[40, 10**6]),                           # far past the data
])
def test_check_refuses_bad_bstarts(bad):
    with pytest.raises(ValueError, match="bstart"):
        build_chunk(header(), RAW_BLOCKS, **bad)


def test_check_refuses_lying_csize_and_dsize():
    with pytest.raises(ValueError, match="csize"):
        build_chunk(header(), [[{"csize": 99, "cdata": DATA[:BLOCK]}], [DATA[BLOCK:]]])
    with pytest.raises(ValueError, match="dsize"):
        build_chunk(header(use_dict=True), RAW_BLOCKS, dict={"dsize": 5, "dict": b"abc"})


def test_check_refuses_what_does_not_parse():
    with pytest.raises(FormatError):
        build_chunk(header(cbytes=10_000), RAW_BLOCKS)


# ---------------------------------------------------------------------------
# check=False: invalid chunks, each rejected for the planted lie
# ---------------------------------------------------------------------------

def test_bstart_inside_the_header():
    chunk = build_chunk(header(), RAW_BLOCKS, bstarts=[40, 5], check=False)
    assert struct.unpack_from("<2i", chunk, 32) == (40, 5)
    assert DATA[BLOCK:] in chunk                  # the block's bytes are still written
    assert rule_of(chunk) == ("B1", 32 + 4)


def test_bstart_past_the_end():
    # an empty block takes no room, so its bstart can point anywhere
    chunk = build_chunk(header(nbytes=BLOCK * 2), [[DATA[:BLOCK]], []],
                        bstarts=[40, 5000], check=False)
    assert len(chunk) == 40 + 4 + BLOCK
    assert rule_of(chunk) == ("B1", 36)


def test_negative_bstart():
    chunk = build_chunk(header(), RAW_BLOCKS, bstarts=[-1, 40], check=False)
    assert rule_of(chunk) == ("B1", 32)


def test_csize_past_the_end():
    streams = [[DATA[:BLOCK]], [{"csize": 1000, "cdata": b"\x07" * 10}]]
    chunk = build_chunk(header(), streams, check=False)
    second = 40 + 4 + BLOCK
    assert struct.unpack_from("<i", chunk, second)[0] == 1000
    assert chunk[second + 4:] == b"\x07" * 10
    assert rule_of(chunk) == ("B4", second)


def test_csize_without_payload():
    chunk = build_chunk(header(), [[DATA[:BLOCK]], [{"csize": 64}]], check=False)
    assert len(chunk) == 40 + 4 + BLOCK + 4
    assert rule_of(chunk) == ("B4", 40 + 4 + BLOCK)


def test_cbytes_past_the_input():
    good = build_chunk(header(), RAW_BLOCKS)
    chunk = build_chunk(header(cbytes=len(good) + 7), RAW_BLOCKS, check=False)
    assert chunk[12:16] == struct.pack("<i", len(good) + 7) and len(chunk) == len(good)
    assert rule_of(chunk) == ("T-truncated", len(chunk))
    with pytest.raises(FormatError) as e:
        parse_chunk(chunk)
    assert e.value.message == (f"the input ends at byte {len(chunk)}, inside chunk (cbytes says "
                               f"the chunk is {len(good) + 7} bytes)")


def test_cbytes_below_the_data():
    # cbytes 60 ends inside the first stream: the bstarts still fit, the
    # first stream runs past cbytes
    chunk = build_chunk(header(cbytes=60), RAW_BLOCKS, check=False)
    assert rule_of(chunk) == ("B1", 32 + 4)


@pytest.mark.parametrize("dsize", (0, -3, 40_000))
def test_dict_size_out_of_range(dsize):
    chunk = build_chunk(header(use_dict=True), RAW_BLOCKS,
                        dict={"dsize": dsize, "dict": b"dictionary"}, check=False)
    assert struct.unpack_from("<i", chunk, 40)[0] == dsize
    assert chunk[44:54] == b"dictionary"
    assert rule_of(chunk) == ("D8", 40)


def test_memcpyed_nbytes_lies():
    chunk = build_chunk(header(nbytes=10, memcpyed=True), b"0123456789abc", check=False)
    assert rule_of(chunk) == ("D3", 12)


def test_value_chunk_with_no_value():
    h = header(nbytes=16)
    h["extended"]["blosc2_flags"]["special"] = 3
    chunk = build_chunk(h, b"", check=False)
    assert len(chunk) == 32
    assert rule_of(chunk) == ("H9", 12)


def test_field_that_cannot_hold_the_value_is_a_value_error():
    h = header()
    h["typesize"] = 256
    with pytest.raises(ValueError, match="typesize|256|chunk.header"):
        build_chunk(h, RAW_BLOCKS, check=False)
