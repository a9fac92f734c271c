"""User traps of the reader (issue: chunk layer, item 9), each pinned down."""
from __future__ import annotations

import struct
import tracemalloc

import pytest

import blosckit
import helpers
from blosckit.chunk import read as reader
from helpers import b2_compress, dataset, header_dict
from oracles import oracle

np = oracle("numpy")


def test_getitem_rejects_non_integers():
    chunk = blosckit.compress(bytes(range(256)) * 16, typesize=4)
    with pytest.raises(TypeError):
        blosckit.getitem(chunk, 1.0, 2)
    with pytest.raises(TypeError):
        blosckit.getitem(chunk, 1, "2")
    assert blosckit.getitem(chunk, np.int64(1), np.int32(2)) == (bytes(range(256)) * 16)[4:12]


@pytest.mark.parametrize("nthreads", [0, -1, 65, 10**9])
def test_bad_nthreads_is_a_value_error(nthreads):
    chunk = blosckit.compress(bytes(1000), typesize=4)
    with pytest.raises(ValueError):
        blosckit.decompress(chunk, nthreads=nthreads)
    with pytest.raises(ValueError):
        blosckit.decompress_into(chunk, bytearray(1000), nthreads=nthreads)


@pytest.mark.parametrize("nthreads", [1.0, True, "2"])
def test_non_int_nthreads_is_a_type_error(nthreads):
    with pytest.raises(TypeError):
        blosckit.decompress(blosckit.compress(bytes(1000)), nthreads=nthreads)


def test_getitem_peaks_at_the_range_plus_scratch():
    data = dataset("arange", 8 << 20, 4)
    chunk = b2_compress(data, typesize=4, codec="lz4", filters=["shuffle"], blocksize=1 << 16)
    n = (6 << 20) // 4
    tracemalloc.start()
    try:
        out = blosckit.getitem(chunk, 1000, n)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == data[4000:4000 + 4 * n]
    # the result plus at most two blocks of scratch: not twice the range
    assert peak < 4 * n + 4 * (1 << 16) + (256 << 10), peak


def test_lazy_chunk_reports_its_split():
    chunk = bytearray(b2_compress(dataset("arange", 40_000, 4), typesize=4, codec="lz4",
                                  filters=["shuffle"], splitmode="always"))
    assert blosckit.parse_chunk(chunk).split
    chunk[31] |= 0x08                                   # the lazy bit
    c = blosckit.parse_chunk(chunk)
    assert c.lazy and c.split


def test_codec_format_6_in_a_16_byte_header_is_named_as_such():
    data = bytes(range(256)) * 8
    chunk = bytearray(blosckit.compress(data, typesize=4, codec="lz4", format="blosc1"))
    chunk[2] = (chunk[2] & 0x1F) | (6 << 5)
    c = blosckit.parse_chunk(chunk)
    assert c.codec == "udcodec" and not c.extended
    with pytest.raises(blosckit.UnsupportedError) as e:
        blosckit.decompress(chunk)
    assert e.value.rule == "T-codec" and "udcodec byte" in str(e.value)
    assert (e.value.offset, e.value.path) == (2, "chunk.header.flags.compformat")


def test_codec_failures_are_explained_in_words():
    data = dataset("arange", 8000, 4)
    chunk = bytearray(b2_compress(data, typesize=4, codec="lz4", filters=["shuffle"],
                                  splitmode="never"))
    b = blosckit.parse_chunk(chunk).bstarts[0]
    csize = struct.unpack_from("<i", chunk, b)[0]
    chunk[b + 4:b + 4 + csize] = b"\xff" * csize        # garbage payload
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.decompress(chunk)
    assert e.value.rule == "B7"
    assert "lz4" in e.value.message and "-" not in e.value.message.split("byte")[0][-3:]
    assert "decoded to -" not in e.value.message


def test_zero_runs_hold_no_memory_after_hostile_chunks():
    # chunks claiming huge zero streams: the reader's zero source stays small
    for nbytes in (1 << 20, 64 << 20):
        chunk = blosckit.build_chunk(header_dict(nbytes, nbytes, compformat=1, udcodec=1),
                                     [[{"csize": 0}]])
        with helpers.python_reader():
            assert blosckit.decompress(chunk) == bytes(nbytes)
    assert len(reader._ZEROS) <= 1 << 16


_CYCLE_CRASHES = {
    # the fast path held a buffer export of its input while the Python
    # reader raised: a stored error put the export in a cycle, and collecting
    # it crashed CPython
    "fast-path-export": """
import gc, blosckit
good = blosckit.compress(bytes(range(256)) * 64, typesize=4, codec="lz4")
bad = bytearray(good); bad[918] ^= 0xFF
def one():
    try: blosckit.decompress(memoryview(bytes(bad)))
    except blosckit.FormatError as e: err = e
one(); gc.collect(); one(); gc.collect()
""",
    # the reader re-raised a stored UnsupportedError whose traceback held the
    # decoder and views of the input
    "stored-codec-error": """
import gc, blosckit
chunk = bytearray(blosckit.compress(bytes(range(256)) * 64, typesize=1, codec="lz4",
                                    filters=()))
chunk[2] = (chunk[2] & 0x1F) | (5 << 5)          # the retired Lizard codec
mv = memoryview(bytes(chunk))
for _ in range(3):
    try: blosckit.decompress(mv[0:len(chunk)])
    except blosckit.FormatError: pass
    gc.collect()
""",
}


@pytest.mark.parametrize("name", sorted(_CYCLE_CRASHES))
def test_errors_on_memoryview_input_do_not_crash_the_collector(name):
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", _CYCLE_CRASHES[name]], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and "BufferError" not in r.stderr, (r.returncode, r.stderr)
