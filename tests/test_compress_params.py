"""Parameters of ``compress`` & co. that used to write chunks their readers
refuse, or chunks far worse than the caller meant."""
from __future__ import annotations

import pytest

import blosckit
from blosckit import compress, compress_special, compress_vlblocks, parse_chunk

from oracles import oracle

np = oracle("numpy")

INTS = np.arange(50_000, dtype="<i4").tobytes()


# --- delta in a 16-byte header ---------------------------------------------

def test_blosc1_refuses_delta():
    with pytest.raises(ValueError, match="blosc1-compat"):
        compress(INTS, typesize=4, filters=("delta", "shuffle"), format="blosc1")


def test_c_blosc1_refuses_a_delta_chunk_and_reads_the_plain_one():
    blosc = oracle("blosc")
    compat = compress(INTS, typesize=4, filters=("delta", "shuffle"), format="blosc1-compat")
    assert compat[0] == 2 and compat[2] & 0x08          # version 2, delta flag
    assert parse_chunk(compat).filters == [("delta", 0), ("shuffle", 0)]
    with pytest.raises(Exception, match="Error -1"):
        blosc.decompress(compat)            # C-Blosc 1.21 has no delta
    plain = compress(INTS, typesize=4, filters=("shuffle",), format="blosc1")
    assert blosc.decompress(plain) == INTS


def test_compat_chunk_reads_back_in_c_blosc2():
    blosc2 = oracle("blosc2")
    compat = compress(INTS, typesize=4, filters=("delta", "shuffle"), format="blosc1-compat")
    assert blosc2.decompress2(compat) == INTS
    assert blosckit.decompress(compat) == INTS
    # without delta, the compat format writes exactly the Blosc1 chunk
    assert compress(INTS, typesize=4, format="blosc1-compat") == \
        compress(INTS, typesize=4, format="blosc1")


# --- special chunks -----------------------------------------------------------

def test_empty_value_chunk_is_refused():
    with pytest.raises(ValueError, match="nbytes"):
        compress_special("value", 0, typesize=4, value=b"abcd")
    chunk = compress_special("value", 8, typesize=4, value=b"abcd")
    assert blosckit.decompress(chunk) == b"abcd" * 2


# --- block size ---------------------------------------------------------------

@pytest.mark.parametrize("blocksize", (2**29, 536866816 + 1))
def test_blocksize_over_the_format_maximum(blocksize):
    for fmt in ("blosc2", "blosc1"):
        with pytest.raises(ValueError, match="blocksize"):
            compress(b"x" * 1000, blocksize=blocksize, format=fmt)


def test_largest_blocksize_is_accepted():
    chunk = compress(b"x" * 1000, blocksize=536866816)
    assert blosckit.decompress(chunk) == b"x" * 1000


# --- typesize from the buffer -------------------------------------------------

def test_typesize_defaults_to_the_item_size():
    blosc2 = oracle("blosc2")
    arr = np.linspace(0, 1, 500_000)
    auto = compress(arr)
    assert parse_chunk(auto).typesize == 8
    assert auto == compress(arr, typesize=8)
    assert len(auto) < len(compress(arr, typesize=1)) // 4      # shuffle on whole items
    assert blosc2.decompress2(auto) == arr.tobytes()


@pytest.mark.parametrize("src, size", [
    (b"abc" * 100, 1), (bytearray(300), 1), (np.zeros(100, dtype="<i2"), 2),
    (np.zeros((10, 10), dtype="<f4"), 4), (np.zeros(50, dtype="<c16")[::2], 16),
])
def test_item_size_of_each_buffer(src, size):
    assert parse_chunk(compress(src)).typesize == size


def test_explicit_typesize_wins():
    assert parse_chunk(compress(np.zeros(1000), typesize=4)).typesize == 4


def test_blosc1_with_items_over_255_bytes_needs_typesize():
    wide = np.zeros(10, dtype="S300")
    with pytest.raises(ValueError, match="typesize"):
        compress(wide, format="blosc1")
    assert parse_chunk(compress(wide, typesize=1, format="blosc1")).typesize == 1


def test_vlblocks_typesize_from_the_blocks():
    blocks = [np.arange(100, dtype="<i4"), np.arange(7, dtype="<i4")]
    chunk = compress_vlblocks(blocks)
    assert parse_chunk(chunk).typesize == 4
    assert blosckit.decompress(chunk) == b"".join(b.tobytes() for b in blocks)
    # blocks of different item sizes: API.md's default, 1 (each block's bytes)
    mixed = [np.arange(4, dtype="<i4"), b"abc"]
    assert compress_vlblocks(mixed) == compress_vlblocks(mixed, typesize=1)
    assert parse_chunk(compress_vlblocks(mixed)).typesize == 1
    assert blosckit.decompress(compress_vlblocks(mixed)) == mixed[0].tobytes() + b"abc"


# --- threads ------------------------------------------------------------------

@pytest.mark.parametrize("nthreads", (10**9, 65, 0, -1, 2.0, "4", None, True))
def test_bad_nthreads(nthreads):
    with pytest.raises(ValueError, match="nthreads"):
        compress(INTS, nthreads=nthreads)


def test_thread_cap_is_accepted():
    assert compress(INTS, typesize=4, nthreads=64) == compress(INTS, typesize=4)


def test_dict_on_incompressible_input_writes_a_readable_raw_chunk():
    blosc2 = oracle("blosc2")
    from blosckit.tools import divergences
    data = np.random.default_rng(0).integers(0, 256, 100_000, dtype=np.uint8).tobytes()
    mine = blosckit.compress(data, typesize=1, codec="zstd", dict=True,
                             filters=((None,) * 5 + ("shuffle",)))
    ref = blosc2.compress2(data, typesize=1, codec=blosc2.Codec.ZSTD, use_dict=True, clevel=5)
    assert blosckit.parse_chunk(mine).memcpyed and not mine[31] & 0x01
    assert mine[:31] == ref[:31] and mine[32:] == ref[32:] and ref[31] == mine[31] | 0x01
    assert blosc2.decompress(mine) == data and blosckit.validate(mine) == []
    d = divergences.writer_divergence({"codec": "zstd", "clevel": 5, "typesize": 1,
                                       "nbytes": len(data), "dict": True, "memcpyed": True})
    assert d is not None and d.id == "W8"
