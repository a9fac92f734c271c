"""``validate`` on frames: every real frame of the corpus (python-blosc2 and
hdf5plugin) is valid; damaged frames give errors with frame offsets and
paths exactly when the reader refuses them, and validate never raises."""
from __future__ import annotations

import signal
import struct
import subprocess
import sys

import pytest

import blosckit
import helpers
from frame_corpus import all_cases
from helpers import oracle_verdicts
import native_probes
import cli_runner
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")
# these need python-blosc2 at import
from blosckit.testing.fuzz import frame_digest


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


@pytest.mark.long
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
        with helpers.python_reader():
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
    from blosckit.tools import divergences
    from helpers import small_chunks
    for name, base in small_chunks().items():
        for pos in range(min(32, len(base))):
            for value in range(0, 256, 5):
                c = bytearray(base)
                c[pos] = value
                assert native_probes.beyond_divergences(bytes(c)) == \
                    divergences.beyond_all_reader_divergences(c), (name, pos, value)


@pytest.mark.parametrize("codec", ["ZSTD"] + [pytest.param(c, marks=pytest.mark.long)
                                             for c in ("BLOSCLZ", "LZ4", "ZLIB")])
def test_deep_validation_finds_what_the_python_rules_find(codec):
    """validate() decodes most chunks of a frame in one native call; damage
    anywhere in a chunk's blocks must give what the all-Python rules give."""
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
        with helpers.python_reader():
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
    start = f.index_span[0]
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
    start = blosckit.open_frame(fr).index_span[0]
    bad = bytearray(fr)
    bad[start + 3] = typesize
    with pytest.raises(Exception):
        blosc2.schunk_from_cframe(bytes(bad))[:]
    assert blosckit.open_frame(bytes(bad)).decompress() == blosc2.schunk_from_cframe(fr)[:]
    assert [(p.severity, p.rule, p.path, p.offset) for p in blosckit.validate(bytes(bad))] == [
        ("warning", "V13", "frame.offsets", start)]


def test_a_divergence_in_a_vlmetalayer_chunk_is_reported():
    """vlmetalayer values are chunks too: C-Blosc2 refuses a raw one with
    use_dict set (V11) and blosckit reads it; the warning sits at the value."""
    fr = _frame()
    f = blosckit.open_frame(fr)
    f.vlmetalayers
    at = f.vlmetalayer_at["v"]
    bad = bytearray(fr)
    assert bad[at + 2] & 0x02                    # stored raw
    bad[at + 31] |= 0x01
    assert blosckit.open_frame(bytes(bad)).vlmetalayers == {"v": b"\x03"}
    v, = oracle_verdicts([bytes(bad)], kind="frame")
    assert not v.b2_ok
    assert [(p.severity, p.rule, p.path, p.offset) for p in blosckit.validate(bytes(bad))] == [
        ("warning", "V11", "frame.trailer.vlmetalayers['v']", at)]


def test_frame_header_filter_ids_c_blosc2_refuses_are_exactly_v14():
    """C-Blosc2 builds compression parameters from the frame header's filter
    pipeline and refuses ids it does not define; blosckit decodes with each
    chunk's own pipeline, reads the frame and warns (V14) for exactly the
    ids C-Blosc2 refuses, at the slot's offset."""
    fr = _frame()
    slot = 71 + 5                                # the last of the 6 slots
    assert fr[70] == 6 and fr[slot] == 1         # python-blosc2: 6 slots, shuffle last
    blobs = []
    for fid in range(256):
        b = bytearray(fr)
        b[slot] = fid
        blobs.append(bytes(b))
    verdicts = oracle_verdicts(blobs, kind="frame")
    want = blosc2.schunk_from_cframe(fr)[:]
    wrong = []
    for fid, (blob, v) in enumerate(zip(blobs, verdicts)):
        assert blosckit.open_frame(blob).decompress() == want
        got = [(p.severity, p.rule, p.offset, p.path) for p in blosckit.validate(blob)]
        expect = [] if v.b2_ok else [("warning", "V14", slot,
                                      "frame.header.filter_pipeline.filters[5]")]
        if got != expect:
            wrong.append((fid, v.b2_ok, got))
    assert wrong == []
    assert sum(not v.b2_ok for v in verdicts) == 27 + 123   # 5-31 and 37-159


def _name_bytes(fr: bytes) -> list[tuple[int, str]]:
    """Where the one-letter names of _frame() sit: metalayer "m", vlmetalayer "v"."""
    trailer = blosckit.open_frame(fr).trailer_start
    return [(fr.index(b"\xa1m") + 1, "frame.metalayers.index[0].name"),
            (fr.index(b"\xa1v", trailer) + 1, "frame.trailer.vlmetalayers.index[0].name")]


@pytest.mark.parametrize("byte,rule", [(0xFF, "V15"), (0, "V20")])
def test_odd_names_are_reported(byte, rule):
    """C-Blosc2 reads any name bytes, but python-blosc2 cannot list a name
    that is not UTF-8 (V15), and C-Blosc2 keeps names as C strings: a name
    "m" whose byte became NUL is "" to it (V20, found by the differential
    fuzzer), "\\x00" to blosckit.  blosckit reads the frame and warns at the
    byte."""
    fr = _frame()
    for at, path in _name_bytes(fr):
        bad = bytearray(fr)
        bad[at] = byte
        g = blosckit.open_frame(bytes(bad))
        v, = oracle_verdicts([bytes(bad)], kind="frame")
        assert g.decompress() == blosc2.schunk_from_cframe(fr)[:]
        if rule == "V15":
            assert v.python_only
        else:
            assert v.b2_ok and v.digest != frame_digest(g)        # the names differ
            assert "\x00" in {*g.metalayers, *g.vlmetalayers}
        assert [(p.severity, p.rule, p.offset, p.path)
                for p in blosckit.validate(bytes(bad))] == [("warning", rule, at, path)]


def _frames_for_the_oracle():
    """Small frames of varied make: the LZ4 frame with a metalayer and a
    vlmetalayer, and a ZSTD frame with a zeros chunk and a delta filter."""
    out = [_frame()]
    sc = blosc2.SChunk(chunksize=2048, cparams=blosc2.CParams(
        typesize=8, codec=blosc2.Codec.ZSTD, filters=[blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE],
        filters_meta=[0, 0]))
    sc.append_data(np.linspace(0, 1, 256))
    sc.append_data(np.zeros(256))
    sc.append_data(np.arange(100, dtype="<f8"))
    out.append(bytes(sc.to_cframe()))
    return out


# The mutations in parts: the cuts in every run, the byte patterns (about
# 7,000 frames each pair) in the long tier.
FRAME_MUTATIONS = [pytest.param((), True, id="cuts"),
                   pytest.param((0x01, 0xFF), False, id="01-ff", marks=pytest.mark.long),
                   pytest.param((0x20, 0x80), False, id="20-80", marks=pytest.mark.long)]


@pytest.mark.parametrize("patterns,cuts", FRAME_MUTATIONS)
def test_validate_flags_what_c_blosc2_refuses_in_frames(patterns, cuts):
    """Every mutation of a small frame that C-Blosc2 refuses (crashes
    included: it runs in a forked child), or reads to other chunk data,
    metalayers or vlmetalayers than blosckit, or that python-blosc2 cannot
    read, gets at least one Problem.  Mutations: cuts every 3 bytes, and
    each byte XORed with each pattern."""
    blobs = []
    for fr in _frames_for_the_oracle():
        blobs += [fr[:n] for n in range(0, len(fr), 3)] if cuts else []
        for pos in range(len(fr)):
            for x in patterns:
                b = bytearray(fr)
                b[pos] ^= x
                blobs.append(bytes(b))
    verdicts = oracle_verdicts(blobs, kind="frame")
    missed = []
    for blob, v in zip(blobs, verdicts):
        try:
            with blosckit.open_frame(blob) as f:
                ours = frame_digest(f)
        except blosckit.FormatError:
            ours = None
        if (not v.b2_ok or ours != v.digest) and not blosckit.validate(blob):
            missed.append((blob[:16].hex(), len(blob), v))
    assert missed == []
    assert sum(not v.b2_ok for v in verdicts) > (100 if not patterns else 1000)   # C's checks reached


def _set_i32(blob: bytes, at: int, value: int) -> bytes:
    b = bytearray(blob)
    b[at:at + 4] = struct.pack(">i", value)
    return bytes(b)


def test_special_entries_c_blosc2_cannot_rebuild_are_exactly_v16():
    """C-Blosc2 rebuilds a special entry's chunk from the header's typesize
    and blocksize: a zeros entry of partial items or a negative block size
    makes it refuse the frame.  blosckit reads the zeros and warns (V16) for
    exactly those frames."""
    fr = _frames_for_the_oracle()[1]             # chunksize 2048, a zeros entry
    assert "zeros" in blosckit.open_frame(fr).offsets
    blobs = [_set_i32(fr, 48, t) for t in (1, 2, 3, 4, 5, 8, 255, 256, 2048, 4096, 2**31 - 1)]
    blobs += [_set_i32(fr, 53, b) for b in (-1, -2**31, 0, 3, 4096, 2**31 - 1)]
    want = blosckit.open_frame(fr).decompress()
    wrong = []
    for blob, v in zip(blobs, oracle_verdicts(blobs, kind="frame")):
        assert blosckit.open_frame(blob).decompress() == want
        rules = [p.rule for p in blosckit.validate(blob)]
        if rules != ([] if v.b2_ok else ["V16"]):
            wrong.append((blob[48:57].hex(), v.b2_ok, rules))
    assert wrong == []


@pytest.mark.parametrize("kind,typesize", [("nan", 5), ("nan", 2), ("uninit", 3)])
def test_special_entries_whose_chunk_breaks_the_chunk_rules_are_errors(kind, typesize):
    """A NaN entry needs typesize 4 or 8 and NaN / uninit entries whole items,
    as their chunks do (D-nan, H10): F-special at the index entry, from the
    reader and from validate; C-Blosc2 refuses these frames too."""
    value = {"nan": blosc2.SpecialValue.NAN, "uninit": blosc2.SpecialValue.UNINIT}[kind]
    sc = blosc2.SChunk(chunksize=800, cparams=blosc2.CParams(typesize=8))
    sc.fill_special(250, value)
    fr = bytes(sc.to_cframe())
    assert blosckit.validate(fr) == []
    bad = _set_i32(fr, 48, typesize)
    f = blosckit.open_frame(bad)
    with pytest.raises(blosckit.FormatError) as e:
        f.decompress()
    assert e.value.rule == "F-special" and e.value.path.startswith("frame.offsets[")
    with pytest.raises(blosckit.FormatError):
        f.chunk(0)
    errors = [(p.rule, p.offset, p.path) for p in blosckit.validate(bad)
              if p.severity == "error"]
    assert errors and {r for r, _, _ in errors} == {"F-special"}
    start, end = f.index_span
    for _, o, path in errors:
        # at the entry: its own 8 bytes in a raw (memcpyed) index, else the
        # index chunk's start (a compressed entry has no offset of its own)
        i = int(path[len("frame.offsets["):-1])
        if f.entries_stored_raw:
            assert start < o < end and struct.unpack_from("<q", bad, o)[0] == f.entries[i]
        else:
            assert o == start
    v, = oracle_verdicts([bad], kind="frame")
    assert not v.b2_ok


def test_trailer_version_and_fingerprint_are_warnings():
    """No reader looks at the trailer version or the fingerprint: odd values
    are warnings at their byte, and the frame still reads."""
    fr = _frame()
    f = blosckit.open_frame(fr)
    cases = [(f.trailer_start + 1, 7, "F-trailer-version", "frame.trailer.version"),
             (len(fr) - 17, 9, "F-fingerprint", "frame.trailer.fingerprint_type"),
             (len(fr) - 1, 1, "F-fingerprint", "frame.trailer.fingerprint")]
    for at, value, rule, path in cases:
        bad = bytearray(fr)
        bad[at] = value
        got = [(p.severity, p.rule, p.path) for p in blosckit.validate(bytes(bad))]
        assert got == [("warning", rule, path)], (at, got)
        assert blosckit.open_frame(bytes(bad)).decompress() == f.decompress()
    for version in (0, 1):                       # 0: frames before 2.0.0-beta.2
        ok = bytearray(fr)
        ok[f.trailer_start + 1] = version
        assert blosckit.validate(bytes(ok)) == []


def test_older_header_layouts_are_v18_for_c_blosc2():
    """C-Blosc2 3.3.5 reads no header layout but the 14-element one; blosckit
    reads all four and warns (V18) for the older ones, at offset 0."""
    chunks = [blosckit.compress(np.arange(i * 100, (i + 1) * 100, dtype="<i4"))
              for i in range(3)]
    frames = {layout: blosckit.build_frame(chunks, layout=layout, vlmetalayers={"v": b"\x02"},
                                           metalayers=None if layout == 11 else {"m": b"\x01"})
              for layout in (14, 13, 12, 11)}
    verdicts = oracle_verdicts(list(frames.values()), kind="frame")
    for (layout, fr), v in zip(frames.items(), verdicts):
        assert blosckit.open_frame(fr).decompress() == b"".join(
            blosckit.decompress(c) for c in chunks)
        got = [(p.severity, p.rule, p.offset, p.path) for p in blosckit.validate(fr)]
        assert v.b2_ok == (layout == 14)
        assert got == ([] if layout == 14 else
                       [("warning", "V18", 0, "frame.header.fixarray")]), layout


@pytest.mark.parametrize("delta", [-4, 4, -1000])
def test_variable_size_chunks_must_add_up_to_nbytes(delta):
    """Held-out fuzzing finding: a python-blosc2 variable-size frame (append_data
    of 1000, 500 and 1000 int32) whose header nbytes is changed.  C-Blosc2
    refuses it; blosckit returned the chunks' bytes for another nbytes and
    validate said nothing.  Now F-nbytes, at the header's nbytes."""
    blosc2 = oracle("blosc2")
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4))
    sc.append_data(np.arange(1000, dtype="<i4"))
    sc.append_data(np.arange(500, dtype="<i4"))
    sc.append_data(np.arange(1000, dtype="<i4"))
    frame = bytearray(sc.to_cframe())
    f = blosckit.open_frame(bytes(frame))
    assert f.chunksize == 0 and f.nbytes == 10000
    assert [(p.severity, p.rule) for p in blosckit.validate(bytes(frame))] == \
        [("warning", "V22")]
    at = blosckit.formats.frame.HEADER.offset("nbytes")
    frame[at:at + 8] = struct.pack(">q", 10000 + delta)
    blob = bytes(frame)
    verdict, = oracle_verdicts([blob], kind="frame")
    assert not verdict.b2_ok                       # C-Blosc2 refuses it too
    problems = [p for p in blosckit.validate(blob) if p.severity == "error"]
    assert [(p.rule, p.offset, p.path) for p in problems] == \
        [("F-nbytes", at, "frame.header.nbytes")], problems
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(blob).decompress()
    assert (e.value.rule, e.value.offset) == ("F-nbytes", at)


_SLICE_ALL = """
import sys, blosc2
print(len(blosc2.schunk_from_cframe(bytes.fromhex(sys.argv[1]))[:]))
"""


def test_variable_size_frames_warn_of_the_slice_reader_crash():
    """V22: python-blosc2's own variable-size frame reads chunk by chunk, but
    schunk[:] dies with SIGFPE in C-Blosc2's slice reader (asked in a child
    process); validate warns at the header's chunksize."""
    blosc2 = oracle("blosc2")
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4))
    for n in (1000, 500, 1000):
        sc.append_data(np.arange(n, dtype="<i4"))
    frame = bytes(sc.to_cframe())
    child = cli_runner.python(_SLICE_ALL, frame.hex(), text=True, timeout=120)
    assert child.returncode == -signal.SIGFPE, child
    at = blosckit.formats.frame.HEADER.offset("chunksize")
    assert [(p.severity, p.rule, p.offset, p.path) for p in blosckit.validate(frame)] == \
        [("warning", "V22", at, "frame.header.chunksize")]
    assert blosckit.open_frame(frame).decompress() == b"".join(
        bytes(sc.decompress_chunk(i)) for i in range(3))
    fixed = bytes(blosc2.SChunk(chunksize=4000, data=np.arange(2500, dtype="<i4"),
                                cparams=blosc2.CParams(typesize=4)).to_cframe())
    assert blosckit.validate(fixed) == []


def test_a_chunk_of_a_variable_size_frame_is_capped_by_the_frame_s_nbytes():
    """Held-out fuzzing finding: in a frame of chunksize 0 a chunk was
    decoded to whatever its own header claimed (1 GiB from a frame of a
    few hundred bytes that validated []).  Now the frame's nbytes caps each
    chunk: the 1 GiB zeros chunk is refused by its T-max-nbytes before
    anything is allocated, by the reader and by validate alike."""
    blosc2 = oracle("blosc2")
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4))
    sc.append_data(np.arange(1000, dtype="<i4"))
    sc.append_data(np.arange(500, dtype="<i4"))
    small = [bytes(sc.get_chunk(i)) for i in range(2)]
    huge = blosckit.compress_special("zeros", 1 << 30, typesize=4)
    frame = bytearray(blosckit.build_frame(small + [huge], chunksize=0))
    at = blosckit.formats.frame.HEADER.offset("nbytes")
    frame[at:at + 8] = struct.pack(">q", 6000)          # what the small chunks hold
    blob = bytes(frame)
    assert len(blob) < 1000
    f = blosckit.open_frame(blob)
    with pytest.raises(blosckit.FormatError) as e:
        f.decompress_chunk(2)
    assert e.value.rule == "T-max-nbytes" and e.value.path.startswith("frame.chunks[2]")
    errors = [(p.rule, p.path) for p in blosckit.validate(blob) if p.severity == "error"]
    assert errors[0][0] == "T-max-nbytes" and errors[0][1].startswith("frame.chunks[2]")


_OPEN_PATH = """
import sys, blosc2
print(blosc2.open(sys.argv[1])[:].__len__())
"""


def test_a_filters_meta_byte_python_blosc2_cannot_reapply_is_v23(tmp_path):
    """Held-out fuzzing finding: python-blosc2's open() raises OverflowError
    for a frame header filters_meta byte >= 128 (it reapplies it as int8);
    validate returned []."""
    blosc2 = oracle("blosc2")
    frame = bytearray(blosc2.SChunk(chunksize=4000, data=np.arange(3000, dtype="<i4"),
                                    cparams=blosc2.CParams(typesize=4)).to_cframe())
    at = blosckit.formats.frame.HEADER.offset("filter_pipeline.filters_meta")
    assert frame[at] == 0
    frame[at] = 200
    path = tmp_path / "m.b2frame"
    path.write_bytes(frame)
    child = cli_runner.python(_OPEN_PATH, str(path), text=True, timeout=120)
    assert child.returncode != 0 and "OverflowError" in child.stderr
    assert [(p.severity, p.rule, p.offset, p.path) for p in blosckit.validate(bytes(frame))] \
        == [("warning", "V23", at, "frame.header.filter_pipeline.filters_meta[0]")]
    assert blosckit.open_frame(bytes(frame)).decompress() == np.arange(3000, dtype="<i4").tobytes()


_UNDER_512_MIB = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))
import blosckit
blob = bytes.fromhex(sys.stdin.read())
problems = blosckit.validate(blob, deep=True)
print(repr([(p.severity, p.rule) for p in problems]))
try:
    blosckit.open_frame(blob).decompress() if blob[:1] == b"\\x9e" else blosckit.decompress(blob)
    print("read")
except blosckit.FormatError as e:
    print(e.rule)
"""


def _under_512_mib(blob: bytes) -> list[str]:
    """validate (deep) and a full read of ``blob`` in a child limited to
    512 MiB of address space: its two output lines."""
    child = subprocess.run([sys.executable, "-c", _UNDER_512_MIB], input=blob.hex(),
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr[-2000:]
    return child.stdout.splitlines()


def test_deep_validate_allocates_what_the_chunks_claim_not_the_header_chunksize():
    """Held-out finding: deep validate allocated a scratch of the header's
    chunksize however small the input (1 GiB for a 324-byte frame:
    MemoryError under a 512 MiB limit).  A python-blosc2 frame of 400 bytes
    of data whose header chunksize is set to 1 GiB (a legal frame: its one
    chunk is the last, holding fewer) now validates and reads in 512 MiB."""
    blosc2 = oracle("blosc2")
    frame = bytearray(blosc2.SChunk(chunksize=400, data=np.arange(100, dtype="<i4"),
                                    cparams=blosc2.CParams(typesize=4)).to_cframe())
    at = blosckit.formats.frame.HEADER.offset("chunksize")
    frame[at:at + 4] = struct.pack(">i", 1 << 30)
    assert len(frame) < 400
    assert _under_512_mib(bytes(frame)) == ["[]", "read"]
    assert blosckit.open_frame(bytes(frame)).decompress() == np.arange(100, dtype="<i4").tobytes()


def test_a_vl_block_chunk_claiming_2_gib_is_refused_before_it_is_allocated():
    """Held-out finding: a VL-block chunk whose header claims 2**31 - 1
    bytes made decompress allocate 2 GiB before its block sizes were added
    up (VL7).  Now every check a decode makes comes before the output:
    VL7 from validate and from decompress under a 512 MiB limit."""
    blocks = [b"abcd" * 10, b"xy" * 30]
    vl = bytearray(helpers.vl_chunk(blocks, typesize=1))       # C-Blosc2 writes it
    assert blosckit.decompress(bytes(vl)) == b"".join(blocks)
    vl[4:8] = struct.pack("<i", 2**31 - 1)                        # header nbytes
    assert _under_512_mib(bytes(vl)) == ["[('error', 'VL7')]", "VL7"]


@pytest.mark.parametrize("delta", [-3, -1, 1, 5])
def test_a_vlmetalayer_length_other_than_its_chunk_s_is_f_vlmeta(delta):
    """The issue's held-out case: a vlmetalayer whose bin32 length is not
    its chunk's cbytes (shorter or longer).  C-Blosc2 refuses such a frame
    (asked in a child); validate, the reader and salvage all name it at the
    chunk's cbytes, and salvage rebuilds the value whole."""
    fr = _frame()
    f = blosckit.open_frame(fr)
    f.vlmetalayers
    at = f.vlmetalayer_at["v"] - 4
    bad = bytearray(fr)
    n = struct.unpack(">I", bad[at:at + 4])[0]
    bad[at:at + 4] = struct.pack(">I", n + delta)
    bad = bytes(bad)
    [verdict] = oracle_verdicts([bad], kind="frame")
    assert not verdict.b2_ok
    cbytes_at = at + 4 + blosckit.formats.chunk.HEADER.offset("cbytes")
    got = [(p.rule, p.offset, p.path) for p in blosckit.validate(bad)]
    assert got == [("F-vlmeta", cbytes_at, "frame.trailer.vlmetalayers['v'].header.cbytes")]
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(bad).vlmetalayers
    assert (e.value.rule, e.value.offset) == ("F-vlmeta", cbytes_at)
    out, report = blosckit.salvage(bad)
    assert (report.damage[0].rule, report.damage[0].offset) == ("F-vlmeta", cbytes_at)
    assert blosckit.validate(out) == []
    theirs = blosc2.schunk_from_cframe(out, copy=True)
    assert theirs.vlmeta["v"] == 3
