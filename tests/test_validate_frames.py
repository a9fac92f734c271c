"""``validate`` on frames: every real frame of the corpus (python-blosc2 and
hdf5plugin) is valid; damaged frames give errors with frame offsets and
paths exactly when the reader refuses them, and validate never raises."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import blosckit
from frame_corpus import all_cases

blosc2 = pytest.importorskip("blosc2")


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    return all_cases(tmp_path_factory.mktemp("vframes"))


def test_every_corpus_frame_is_valid(cases):
    bad = {c.name: [str(p) for p in blosckit.validate(c.source)] for c in cases}
    assert {k: v for k, v in bad.items() if v} == {}


def _frame():
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4, codec=blosc2.Codec.LZ4),
                       meta={"m": 1})
    for i in range(5):
        sc.append_data(np.arange(i * 1000, (i + 1) * 1000, dtype="<i4"))
    sc.vlmeta["v"] = 3
    return bytes(sc.to_cframe())


def test_faults_in_two_chunks_are_both_reported_at_frame_offsets():
    fr = _frame()
    f = blosckit.open_frame(fr)
    bad = bytearray(fr)
    s1 = f.header_len + f.offsets[1]
    b0 = s1 + blosckit.parse_chunk(f.chunk(1)).bstarts[0]
    bad[b0:b0 + 4] = struct.pack("<i", 1 << 30)
    s3 = f.header_len + f.offsets[3]
    bad[s3 + 30] |= 0x40
    got = {(p.rule, p.offset, p.path) for p in blosckit.validate(bytes(bad))}
    assert ("B4", b0, "frame.chunks[1].blocks[0].streams[0].csize") in got
    assert ("T-flags2", s3 + 30, "frame.chunks[3].header.extended.blosc2_flags2") in got


def _reader_rejects(blob) -> bool:
    try:
        with blosckit.open_frame(blob) as f:
            f.decompress()
            f.vlmetalayers
            f.b2nd
    except blosckit.FormatError:
        return True
    return False


def test_validate_agrees_with_the_reader_on_damaged_frames():
    fr = _frame()
    blobs = [fr[:n] for n in range(0, len(fr), 7)]
    for pos in range(len(fr)):
        for bit in (0, 5):
            b = bytearray(fr)
            b[pos] ^= 1 << bit
            blobs.append(bytes(b))
    disagree = []
    for blob in blobs:
        problems = blosckit.validate(blob)
        errors = [p for p in problems if p.severity == "error"]
        for p in problems:
            assert 0 <= p.offset <= len(blob) and p.rule, p
        if bool(errors) != _reader_rejects(blob):
            disagree.append((blob[:8].hex(), len(blob), [str(p) for p in errors]))
    assert disagree == []


def test_sframe_directories_validate(tmp_path):
    path = tmp_path / "s.b2frame"
    blosc2.SChunk(chunksize=4000, data=np.arange(5000, dtype="<i4"),
                  cparams=blosc2.CParams(typesize=4), urlpath=str(path), contiguous=False,
                  mode="w")
    assert blosckit.validate(path) == []
    chunk = path / "00000001.chunk"
    data = bytearray(chunk.read_bytes())
    data[30] |= 0x40
    chunk.write_bytes(data)
    assert [(p.rule, p.path) for p in blosckit.validate(path)] == [
        ("T-flags2", "frame.chunks[1].header.extended.blosc2_flags2")]


def test_shallow_validation_finds_what_the_python_rules_find():
    """validate(deep=False) checks most chunks in one native call; on damaged
    frames it must report exactly what the all-Python rules report."""
    from blosckit import chunk as reader
    fr = _frame()
    f = blosckit.open_frame(fr)
    blobs = []
    for i in range(f.nchunks):
        start = f.header_len + f.offsets[i]
        for pos in range(start, start + 48):
            for bit in (0, 3, 6):
                b = bytearray(fr)
                b[pos] ^= 1 << bit
                blobs.append(bytes(b))
    differ = []
    for blob in blobs:
        fast = blosckit.validate(blob, deep=False)
        with reader.python_reader():
            slow = blosckit.validate(blob, deep=False)
        if fast != slow:
            differ.append((fast, slow))
    assert differ == []


def test_shallow_validation_of_damaged_chunks():
    fr = _frame()
    f = blosckit.open_frame(fr)
    bad = bytearray(fr)
    s3 = f.header_len + f.offsets[3]
    bad[s3 + 30] |= 0x40                      # reserved blosc2_flags2 bit
    s1 = f.header_len + f.offsets[1]
    bad[s1 + 4:s1 + 8] = struct.pack("<i", 8000)     # chunk 1 claims twice the bytes
    rules = {(p.rule, p.path) for p in blosckit.validate(bytes(bad), deep=False)}
    assert ("T-flags2", "frame.chunks[3].header.extended.blosc2_flags2") in rules
    assert any(r[1].startswith("frame.chunks[1]") for r in rules), rules


def test_the_c_prefilter_equals_the_python_one():
    from blosckit import divergences, native
    from helpers import small_chunks
    for name, base in small_chunks().items():
        for pos in range(min(32, len(base))):
            for value in range(0, 256, 5):
                c = bytearray(base)
                c[pos] = value
                assert native.beyond_divergences(bytes(c)) == \
                    divergences.beyond_all_reader_divergences(c), (name, pos, value)


@pytest.mark.parametrize("codec", ["BLOSCLZ", "LZ4", "ZSTD", "ZLIB"])
def test_deep_validation_finds_what_the_python_rules_find(codec):
    """validate() decodes most chunks of a frame in one native call; damage
    anywhere in a chunk's blocks must give what the all-Python rules give."""
    from blosckit import chunk as reader
    rng = np.random.default_rng(7)
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(
        typesize=4, codec=getattr(blosc2.Codec, codec), blocksize=1000, nthreads=1))
    for i in range(4):
        sc.append_data(rng.integers(0, 300, 1000).astype("<i4"))
    fr = bytes(sc.to_cframe())
    f = blosckit.open_frame(fr)
    start = f.header_len + f.offsets[2]
    cbytes = struct.unpack_from("<i", fr, start + 12)[0]
    differ, found = [], 0
    for pos in range(start + 32, start + cbytes, 2):
        b = bytearray(fr)
        b[pos] ^= 0xA5
        blob = bytes(b)
        fast = blosckit.validate(blob)
        with reader.python_reader():
            slow = blosckit.validate(blob)
        found += bool(fast)
        if fast != slow:
            differ.append((pos - start, fast, slow))
    assert differ == []
    assert found > 0                 # some damage is caught by decoding


def test_a_divergence_in_the_index_chunk_is_reported():
    """C-Blosc2 decodes the offsets index with its chunk reader, so the chunk
    divergences apply to it: a raw (memcpyed) index with use_dict set is
    refused by C-Blosc2 (V11); blosckit reads it and warns."""
    fr = _frame()
    f = blosckit.open_frame(fr)
    start = f._index[0]
    assert fr[start + 2] & 0x02                  # python-blosc2 stores the index raw
    bad = bytearray(fr)
    bad[start + 31] |= 0x01                      # use_dict
    with pytest.raises(Exception):
        blosc2.schunk_from_cframe(bytes(bad))[:]
    assert blosckit.open_frame(bytes(bad)).decompress() == blosc2.schunk_from_cframe(fr)[:]
    assert [(p.severity, p.rule, p.path, p.offset) for p in blosckit.validate(bytes(bad))] == [
        ("warning", "V11", "frame.offsets", start)]


@pytest.mark.parametrize("typesize", [1, 4, 9, 255])
def test_an_index_typesize_other_than_8_is_reported(typesize):
    """C-Blosc2 fetches offsets as items of the index chunk's typesize (V13)."""
    fr = _frame()
    start = blosckit.open_frame(fr)._index[0]
    bad = bytearray(fr)
    bad[start + 3] = typesize
    with pytest.raises(Exception):
        blosc2.schunk_from_cframe(bytes(bad))[:]
    assert blosckit.open_frame(bytes(bad)).decompress() == blosc2.schunk_from_cframe(fr)[:]
    assert [(p.severity, p.rule, p.path, p.offset) for p in blosckit.validate(bytes(bad))] == [
        ("warning", "V13", "frame.offsets", start)]
