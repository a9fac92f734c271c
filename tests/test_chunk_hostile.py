"""Hostile input: truncations, header byte and bit mutations, i32 extremes,
the hostile seeds of C-Blosc2's validation rules, and random bytes.

The only allowed outcomes are a FormatError (UnsupportedError included)
with an offset inside the input and a ``chunk...`` path, or a successful
decode of exactly nbytes bytes.
"""
from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blosckit
from helpers import (check_blosc1_chunks_are_in, check_format_error, decode_outcome,
                     pack_extended, pack_header, raw_header, simple_chunk, small_chunks)
from oracles import oracle

oracle("blosc2")

CHUNKS = small_chunks()
NAMES = sorted(CHUNKS)


def test_the_corpus_holds_c_blosc_1x_chunks():
    check_blosc1_chunks_are_in(CHUNKS)


CAP = 1 << 22      # mutated sizes may claim up to 2 GiB of (valid) zeros


def _all_entry_points(src):
    """Every public reader on ``src``; return decompress's outcome."""
    res = decode_outcome(blosckit.decompress, src, max_nbytes=CAP)
    if isinstance(res, blosckit.FormatError) and res.rule == "T-max-nbytes":
        return res
    if isinstance(res, bytes):
        h = raw_header(src)
        assert len(res) == h["nbytes"]
        into = bytearray(len(res))
        r2 = decode_outcome(blosckit.decompress_into, src, into)
        assert r2 == len(res) and into == res
        r3 = decode_outcome(blosckit.decompress, src, nthreads=2, max_nbytes=CAP)
        assert r3 == res
        ts = max(h["typesize"], 1)
        n = len(res) // ts
        if n:
            r4 = decode_outcome(blosckit.getitem, src, n - 1, 1)
            assert r4 == res[(n - 1) * ts:n * ts]
    else:
        # parse may still succeed (it decodes nothing); if it fails it must be clean
        decode_outcome(blosckit.parse_chunk, src)
    if len(src) >= 16:
        nbytes, blocksize, cbytes = struct.unpack_from("<iii", src, 4)
        assert blosckit.chunk_sizes(src) == (nbytes, cbytes, blocksize)
    else:
        check_format_error(decode_outcome(blosckit.chunk_sizes, src), src, offset=len(src))
    return res


@pytest.mark.parametrize("name", NAMES)
def test_originals_decode(name):
    res = _all_entry_points(CHUNKS[name])
    assert isinstance(res, bytes)


@pytest.mark.parametrize("name", NAMES)
def test_truncated_at_every_byte(name):
    chunk = CHUNKS[name]
    for n in range(len(chunk)):
        src = chunk[:n]
        res = _all_entry_points(src)
        if n < len(chunk):
            # cbytes promises len(chunk) bytes: a cut chunk never decodes
            assert isinstance(res, blosckit.FormatError), n
            # a cut is the input's own rule, at the input's end, in plain
            # words naming the structure it ends inside
            check_format_error(res, src, offset=n, rule="T-truncated")
            assert res.message.startswith(f"the input ends at byte {n}, inside {res.path}")
            if n < 16:
                assert res.path == "chunk.header", res
                assert res.message.endswith(f"(16 bytes needed, {n} there)"), res
            elif raw_header(chunk)["extended"] and n < 32:
                assert res.path == "chunk.header.extended", res
                assert res.message.endswith(f"(32 bytes needed, {n} there)"), res
            else:
                # the header says cbytes = len(chunk) > n: the missing bytes
                # start at the end of the input
                assert res.path == "chunk", res
                assert f"cbytes says the chunk is {len(chunk)} bytes" in res.message, res


HEADER_VALUES = (0, 1, 0x7F, 0x80, 0xFF)


@pytest.mark.parametrize("name", NAMES)
def test_header_bytes_set(name):
    chunk = CHUNKS[name]
    hl = 32 if raw_header(chunk)["extended"] else 16
    for pos in range(hl):
        for v in HEADER_VALUES + ((chunk[pos] + 1) & 0xFF, (chunk[pos] - 1) & 0xFF):
            src = bytearray(chunk)
            src[pos] = v
            _all_entry_points(bytes(src))


def _bstart_region(chunk: bytes) -> tuple[int, int]:
    h = raw_header(chunk)
    hl = 32 if h["extended"] else 16
    try:
        c = blosckit.parse_chunk(chunk)
    except blosckit.FormatError:
        return hl, hl
    return hl, hl + 4 * len(c.bstarts)


@pytest.mark.parametrize("name", NAMES)
def test_bit_flips(name):
    """Every single-bit flip of the header, the bstarts and each block's
    first csize field."""
    chunk = CHUNKS[name]
    lo, hi = _bstart_region(chunk)
    positions = list(range(hi))
    try:
        for b in blosckit.parse_chunk(chunk).bstarts:
            positions += list(range(b, min(b + 4, len(chunk))))
    except blosckit.FormatError:
        pass
    for pos in sorted(set(positions)):
        for bit in range(8):
            src = bytearray(chunk)
            src[pos] ^= 1 << bit
            _all_entry_points(bytes(src))


I32_EXTREMES = (0, -1, 1, 0x7FFFFFFF, -0x80000000, 16, 32)


@pytest.mark.parametrize("name", NAMES)
def test_i32_extremes(name):
    chunk = CHUNKS[name]
    fields = [4, 8, 12]                       # nbytes, blocksize, cbytes
    lo, hi = _bstart_region(chunk)
    fields += list(range(lo, hi, 4))[:8]       # bstarts
    try:
        c = blosckit.parse_chunk(chunk)
        fields += [b for b in c.bstarts[:8]]   # csize of each block's first stream
        if c.dict is not None:
            fields.append(hi)                  # dsize
    except blosckit.FormatError:
        pass
    for ofs in fields:
        for v in I32_EXTREMES:
            src = bytearray(chunk)
            if ofs + 4 > len(src):
                continue
            struct.pack_into("<i", src, ofs, v)
            _all_entry_points(bytes(src))


# ---------------------------------------------------------------------------
# Specific seeds (validation rules §1-§3) with the expected rule and offset
# ---------------------------------------------------------------------------

def _err(fn, src, **kw) -> blosckit.FormatError:
    with pytest.raises(blosckit.FormatError) as ei:
        fn(src, **kw)
    return ei.value


def _zeros_header(nbytes: int, blocksize: int = 2**20) -> bytes:
    return pack_header(version=5, flags=0x05, typesize=4, nbytes=nbytes, blocksize=blocksize,
                       cbytes=32) + pack_extended(b2flags=0x10)


def test_bomb_2gib_zeros_capped():
    src = _zeros_header(2**31 - 1)
    e = _err(blosckit.decompress, src, max_nbytes=1 << 20)
    check_format_error(e, src, offset=4, rule="T-max-nbytes")
    assert e.path == "chunk.header.nbytes"


def test_bomb_512mib_zero_run_block_capped():
    n = 512 << 20
    hdr = pack_header(version=5, flags=0x05 | 0x10, typesize=1, nbytes=n, blocksize=n,
                      cbytes=0) + pack_extended()
    src = bytearray(hdr + struct.pack("<i", 36) + struct.pack("<i", 0))
    struct.pack_into("<i", src, 12, len(src))
    e = _err(blosckit.decompress, bytes(src), max_nbytes=1 << 20)
    check_format_error(e, src, offset=4, rule="T-max-nbytes")
    assert blosckit.chunk_sizes(bytes(src)) == (n, len(src), n)


def test_memcpyed_cbytes_mismatch():
    good = CHUNKS["memcpyed"]
    src = bytearray(good) + b"\0"
    struct.pack_into("<i", src, 12, len(src))
    e = _err(blosckit.decompress, bytes(src))
    check_format_error(e, src, offset=12, rule="D3")


@pytest.mark.parametrize("dsize", [0, -1, 32769, -0x80000000])
def test_dict_dsize_out_of_range(dsize):
    chunk = CHUNKS["zstd-dict"]
    c = blosckit.parse_chunk(chunk)
    ofs = 32 + 4 * c.nblocks
    src = bytearray(chunk)
    struct.pack_into("<i", src, ofs, dsize)
    e = _err(blosckit.decompress, bytes(src))
    check_format_error(e, src, offset=ofs, rule="D8")


def test_dict_past_end():
    chunk = CHUNKS["zstd-dict"]
    c = blosckit.parse_chunk(chunk)
    ofs = 32 + 4 * c.nblocks
    src = bytearray(chunk)
    struct.pack_into("<i", src, ofs, 32768)
    e = _err(blosckit.decompress, bytes(src))
    check_format_error(e, src, offset=len(src), rule="D9")


@pytest.mark.parametrize("target", [0, 4, 16, 31])
def test_bstart_into_header(target):
    chunk = CHUNKS["lz4-shuffle"]
    src = bytearray(chunk)
    struct.pack_into("<i", src, 32, target)
    e = _err(blosckit.decompress, bytes(src))
    check_format_error(e, src, offset=32, rule="B1")
    assert e.path == "chunk.bstarts[0]"


def test_lazy_flag_flip():
    src = bytearray(CHUNKS["lz4-shuffle"])
    src[31] |= 0x08
    assert blosckit.parse_chunk(bytes(src)).lazy is True
    e = _err(blosckit.decompress, bytes(src))
    assert isinstance(e, blosckit.UnsupportedError)
    check_format_error(e, src, offset=31, rule="T-lazy")


def test_instr_flag_flip():
    src = bytearray(CHUNKS["lz4-shuffle"])
    src[31] |= 0x80
    assert blosckit.parse_chunk(bytes(src)).instrumented is True
    e = _err(blosckit.decompress, bytes(src))
    assert isinstance(e, blosckit.UnsupportedError)
    check_format_error(e, src, offset=31, rule="T-instr")


def test_bigendian_flag_is_ignored():
    chunk = CHUNKS["lz4-shuffle"]
    src = bytearray(chunk)
    src[31] |= 0x02
    assert blosckit.decompress(bytes(src)) == blosckit.decompress(chunk)


def test_value_special_lazy_cbytes_past_end():
    """V1: a VALUE chunk with LAZY set and cbytes > the input."""
    src = bytearray(CHUNKS["special-value"])
    src[31] |= 0x08
    struct.pack_into("<i", src, 12, 4096 + 32)
    struct.pack_into("<i", src, 4, 4096 * 4)
    res = decode_outcome(blosckit.decompress, bytes(src))
    assert isinstance(res, blosckit.FormatError)
    res = decode_outcome(blosckit.getitem, bytes(src), 0, 1)
    assert isinstance(res, blosckit.FormatError)


@pytest.mark.parametrize("version", [0, 7, 0xFF])
def test_bad_version(version):
    src = bytearray(CHUNKS["lz4-shuffle"])
    src[0] = version
    e = _err(blosckit.decompress, bytes(src))
    check_format_error(e, src, offset=0, rule="T-version")
    e = _err(blosckit.parse_chunk, bytes(src))
    check_format_error(e, src, offset=0, rule="T-version")


@pytest.mark.parametrize("nbytes", [-1, -0x80000000])
def test_negative_nbytes(nbytes):
    src = bytearray(CHUNKS["lz4-shuffle"])
    struct.pack_into("<i", src, 4, nbytes)
    e = _err(blosckit.decompress, bytes(src))
    check_format_error(e, src, offset=4, rule="T-nbytes")


def _run_chunk(csize: int, token: int | None, version: int = 5) -> bytes:
    hdr = pack_header(version=version, flags=0x05 | 0x10, typesize=1, nbytes=64, blocksize=64,
                      cbytes=0) + pack_extended()
    stream = struct.pack("<i", csize) + (b"" if token is None else bytes([token]))
    out = bytearray(hdr + struct.pack("<i", 36) + stream)
    struct.pack_into("<i", out, 12, len(out))
    return bytes(out)


def test_run_valid():
    assert blosckit.decompress(_run_chunk(-0x41, 0x01)) == b"\x41" * 64
    assert blosckit.decompress(_run_chunk(-0xFF, 0xFF)) == b"\xff" * 64   # C accepts 0xFF


def test_csize_below_minus_255():
    src = _run_chunk(-256, 0x01)
    e = _err(blosckit.decompress, src)
    check_format_error(e, src, offset=36, rule="B6")


@pytest.mark.parametrize("token", [0x00, 0x02, 0xFE])
def test_run_token_without_run_bit(token):
    src = _run_chunk(-0x41, token)
    e = _err(blosckit.decompress, src)
    check_format_error(e, src, offset=40)
    assert e.path.endswith(".token")


def test_run_token_missing():
    src = _run_chunk(-0x41, None)
    e = _err(blosckit.decompress, src)
    check_format_error(e, src, offset=len(src), rule="B5")


def test_run_without_token_before_version_4():
    src = _run_chunk(-0x41, None, version=3)
    assert blosckit.decompress(src) == b"\x41" * 64


def test_cbytes_past_input():
    src = bytearray(CHUNKS["zlib-shuffle"])
    struct.pack_into("<i", src, 12, len(src) + 1)
    e = _err(blosckit.decompress, bytes(src))
    check_format_error(e, src, offset=len(src), rule="T-truncated")
    assert e.path == "chunk" and e.message == (
        f"the input ends at byte {len(src)}, inside chunk (cbytes says the chunk is "
        f"{len(src) + 1} bytes)")


@pytest.mark.parametrize("field,ofs,value,rule", [
    ("blocksize", 8, 0, "H3"), ("blocksize", 8, -1, "H3"),
    ("blocksize", 8, 536866817, "H4"), ("typesize", 3, 0, "H5"), ("cbytes", 12, 15, "H2"),
    ("cbytes", 12, 20, "H6"),
])
def test_header_rules(field, ofs, value, rule):
    src = bytearray(CHUNKS["lz4-shuffle"])
    if ofs == 3:
        src[3] = value
    else:
        struct.pack_into("<i", src, ofs, value)
    e = _err(blosckit.decompress, bytes(src))
    check_format_error(e, src, offset=ofs, rule=rule)


def test_flags2_reserved_bits():
    src = bytearray(CHUNKS["lz4-shuffle"])
    src[30] = 0x02
    e = _err(blosckit.decompress, bytes(src))
    check_format_error(e, src, offset=30, rule="T-flags2")


def test_special_kind_out_of_range():
    src = bytearray(CHUNKS["special-zeros"])
    src[31] = 0x50
    e = _err(blosckit.decompress, bytes(src))
    check_format_error(e, src, offset=31, rule="D2")


def test_vl_and_special():
    src = bytearray(CHUNKS["special-zeros"])
    src[30] = 0x01
    e = _err(blosckit.decompress, bytes(src))
    check_format_error(e, src, offset=31, rule="H8")


def test_split_block_not_multiple_of_typesize():
    """B3: C-Blosc2 'succeeds' with a short output; blosckit refuses."""
    src = bytearray(simple_chunk(bytes(range(200)) * 2, typesize=4, blocksize=64, split=True))
    struct.pack_into("<i", src, 8, 66)
    e = _err(blosckit.decompress, bytes(src))
    check_format_error(e, src, offset=8, rule="B3")


def test_nan_wrong_typesize():
    src = bytearray(CHUNKS["special-nan"])
    src[3] = 2
    e = _err(blosckit.decompress, bytes(src))
    check_format_error(e, src, offset=3)


# ---------------------------------------------------------------------------
# Random bytes (and random bytes behind a plausible header)
# ---------------------------------------------------------------------------

@settings(deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes(src):
    _all_entry_points(src)
    if len(src) >= 16:
        assert len(blosckit.chunk_sizes(src)) == 3


@settings(deadline=None)
@given(version=st.integers(1, 6), flags=st.integers(0, 255), typesize=st.integers(0, 255),
       nbytes=st.integers(-5, 5000), blocksize=st.integers(-5, 5000),
       ext=st.binary(min_size=16, max_size=16), body=st.binary(max_size=400))
def test_random_body_behind_header(version, flags, typesize, nbytes, blocksize, ext, body):
    src = bytearray(pack_header(version=version, flags=flags, typesize=typesize, nbytes=nbytes,
                                blocksize=blocksize, cbytes=0) + ext + body)
    struct.pack_into("<i", src, 12, len(src))
    _all_entry_points(bytes(src))


@settings(deadline=None)
@given(name=st.sampled_from(NAMES), data=st.data())
def test_random_mutations(name, data):
    src = bytearray(CHUNKS[name])
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(src) - 1))
        src[pos] = data.draw(st.integers(0, 255))
    _all_entry_points(bytes(src))
