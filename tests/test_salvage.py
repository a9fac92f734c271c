"""Salvaging damaged frames (blosckit.salvage): frames written by
python-blosc2 are damaged in one place (offsets index, trailer, header,
one chunk, a cut), salvaged, and the result is checked against what
python-blosc2 itself decodes from the undamaged frame: every intact chunk
comes back with its exact data, in order, named in the report with its
offset in the damaged input; what is lost is named too."""
from __future__ import annotations

import struct
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blosckit
from blosckit.formats import b2nd as fb
from blosckit.tools.salvage import SalvageReport, salvage
import salvage_property
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")


META = {"m1": 12, "abc": [1, 2]}
VLMETA = {"hello": "world", "x": [1, 2, 3]}
NCHUNKS = 50
CODECS = [blosc2.Codec.ZSTD, blosc2.Codec.LZ4, blosc2.Codec.BLOSCLZ, blosc2.Codec.ZLIB]
MIDDLE = 20                      # the chunk damaged in the middle
CUT_CHUNK = 30                   # the chunk a truncation cuts


@dataclass
class Sample:
    """A python-blosc2 frame and where its parts lie (bytes from its start)."""
    cframe: bytes
    chunks: list[bytes]          # each chunk's data, as python-blosc2 decodes it
    offsets: list[int]           # each chunk's first byte
    header_len: int
    index_at: int                # the offsets index's first byte
    trailer_at: int              # the trailer's first byte


_CACHE: dict[tuple, Sample] = {}


def _sample(codec=blosc2.Codec.ZSTD, typesize: int = 4) -> Sample:
    """50 chunks of 4000 bytes (the last one 3000) of compressible but
    distinct data, metalayers and vlmetalayers."""
    key = (codec, typesize)
    if key not in _CACHE:
        rng = np.random.default_rng(7)
        items = (NCHUNKS * 4000 - 1000) // typesize
        data = (np.arange(items) // 3 + rng.integers(0, 40, items)).astype(f"<i{typesize}")
        sc = blosc2.SChunk(chunksize=4000, data=data, meta=META,
                           cparams=dict(typesize=typesize, codec=codec))
        for k, v in VLMETA.items():
            sc.vlmeta[k] = v
        cf = sc.to_cframe()
        f = blosckit.open_frame(cf)
        _CACHE[key] = Sample(cf, [sc.decompress_chunk(i) for i in range(sc.nchunks)],
                             [f.header_len + o for o in f.offsets], f.header_len,
                             f.header_len + f.cbytes, f.trailer_start)
    return _CACHE[key]


def _junk(n: int, seed: int = 3) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def _overwrite(buf: bytes, at: int, new: bytes) -> bytes:
    return buf[:at] + new + buf[at + len(new):]


def _check(out: bytes, report: SalvageReport, s: Sample, kept: list[int],
           found_by: str | None = None, lost: tuple[int, ...] = ()) -> object:
    """python-blosc2 opens ``out`` and finds the chunks ``kept`` (indexes of
    the undamaged frame) with their exact data, in order, each lost chunk
    of ``lost`` (indexes of the undamaged frame, in their places among the
    kept ones) as zeros of its size; the report names each kept chunk with
    its offset in the damaged input and each lost one by its place.
    Returns the opened schunk."""
    places = sorted(kept + list(lost))
    sc = blosc2.schunk_from_cframe(out, copy=True)
    assert sc.nchunks == len(places)
    for k, i in enumerate(places):
        want = bytes(len(s.chunks[i])) if i in lost else s.chunks[i]
        assert sc.decompress_chunk(k) == want, f"chunk {k} (was {i})"
    at = {i: k for k, i in enumerate(places)}
    assert [r.index for r in report.recovered] == [at[i] for i in kept]
    assert [r.offset for r in report.recovered] == [s.offsets[i] for i in kept]
    assert [r.nbytes for r in report.recovered] == [len(s.chunks[i]) for i in kept]
    start = {i: sum(len(c) for c in s.chunks[:i]) for i in lost}
    assert report.lost_regions == [(at[i], ((start[i], start[i] + len(s.chunks[i])),))
                                   for i in lost]
    if found_by is not None:
        assert {r.found_by for r in report.recovered} == {found_by}
    blosckit.open_frame(out).decompress()          # and blosckit reads it back whole
    assert [p for p in blosckit.validate(out) if p.severity == "error"] == []
    return sc


def _meta(sc) -> dict:
    return {k: sc.meta[k] for k in sc.meta.keys()}


def _vlmeta(sc) -> dict:
    return dict(sc.vlmeta.getall()) if len(sc.vlmeta) else {}


ALL = list(range(NCHUNKS))


# ---------------------------------------------------------------------------
# Undamaged frames
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_undamaged_frame_keeps_data_and_metadata(codec):
    s = _sample(codec)
    out, report = salvage(s.cframe)
    sc = _check(out, report, s, ALL, "index")
    assert [r.source_index for r in report.recovered] == ALL
    assert _meta(sc) == META and _vlmeta(sc) == VLMETA
    assert report.intact and not report.damage and not report.dropped
    assert report.metalayers_kept and report.vlmetalayers_kept
    assert report.chunksize == 4000


def test_path_input_reads_the_same(tmp_path):
    s = _sample()
    p = tmp_path / "damaged.b2frame"
    p.write_bytes(s.cframe[:s.trailer_at + 10])
    assert salvage(p)[0] == salvage(s.cframe[:s.trailer_at + 10])[0]
    assert salvage(str(p))[0] == salvage(p)[0]


def test_unreadable_path_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        salvage(tmp_path / "missing.b2frame")


# ---------------------------------------------------------------------------
# The offsets index and the trailer
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_index_overwritten_with_junk_scans_every_chunk(codec):
    s = _sample(codec)
    bad = _overwrite(s.cframe, s.index_at, _junk(s.trailer_at - s.index_at))
    out, report = salvage(bad)
    sc = _check(out, report, s, ALL, "scan")
    assert _meta(sc) == META and _vlmeta(sc) == VLMETA
    first = report.damage[0]           # the normal route's error: inside the index
    assert s.index_at <= first.offset < s.trailer_at
    assert first.path.startswith("frame.offsets") and first.rule


@pytest.mark.parametrize("codec", CODECS[:2])
def test_trailer_overwritten_drops_only_vlmetalayers(codec):
    s = _sample(codec)
    bad = _overwrite(s.cframe, s.trailer_at, _junk(len(s.cframe) - s.trailer_at))
    out, report = salvage(bad)
    sc = _check(out, report, s, ALL, "index")
    assert _meta(sc) == META and _vlmeta(sc) == {}
    assert not report.vlmetalayers_kept and report.metalayers_kept
    assert [d.what for d in report.dropped] == ["vlmetalayers"]
    assert report.damage[0].path.startswith("frame.trailer")


@pytest.mark.parametrize("codec", CODECS[:2])
def test_cut_in_the_trailer(codec):
    s = _sample(codec)
    cut = (s.trailer_at + len(s.cframe)) // 2
    out, report = salvage(s.cframe[:cut])
    sc = _check(out, report, s, ALL, "index")
    assert _meta(sc) == META and _vlmeta(sc) == {}
    # the input's truncation, named where the input ends: in the trailer
    assert (report.damage[0].rule, report.damage[0].path) == ("T-truncated", "frame.trailer")
    assert report.damage[0].offset == cut
    assert report.damage[0].message.startswith(f"the input ends at byte {cut}, inside "
                                               "frame.trailer")
    # each value is dropped on its own, by name, where it lies
    assert sorted((d.what, d.name) for d in report.dropped) == \
        [("vlmetalayer", "hello"), ("vlmetalayer", "x")]


@pytest.mark.parametrize("codec", CODECS[:2])
def test_cut_in_the_index(codec):
    s = _sample(codec)
    out, report = salvage(s.cframe[:s.index_at + 20])
    sc = _check(out, report, s, ALL, "scan")
    assert _meta(sc) == META and _vlmeta(sc) == {}


# ---------------------------------------------------------------------------
# Chunks
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_cut_in_a_chunk_keeps_the_chunks_before(codec):
    s = _sample(codec)
    cut = s.offsets[CUT_CHUNK] + 50
    out, report = salvage(s.cframe[:cut])
    # the header still counts 50 chunks: the lost ones keep their places
    _check(out, report, s, list(range(CUT_CHUNK)), "scan", tuple(range(CUT_CHUNK, NCHUNKS)))
    # the cut chunk's 50 bytes are named as lost
    assert any(d.what == "bytes" and d.offset == s.offsets[CUT_CHUNK] and d.length == 50
               for d in report.dropped)
    assert any(f"announces {NCHUNKS} chunks, {CUT_CHUNK} were found" in n for n in report.notes)


@pytest.mark.parametrize("codec", CODECS)
def test_corrupted_chunk_in_the_middle_is_dropped(codec):
    s = _sample(codec)
    bad = _overwrite(s.cframe, s.offsets[MIDDLE], b"\xff" * 32)
    out, report = salvage(bad)
    kept = [i for i in ALL if i != MIDDLE]
    sc = _check(out, report, s, kept, "index", (MIDDLE,))
    assert [r.source_index for r in report.recovered] == kept
    assert _meta(sc) == META and _vlmeta(sc) == VLMETA
    [lost] = report.dropped
    assert (lost.what, lost.offset, lost.source_index) == ("chunk", s.offsets[MIDDLE], MIDDLE)
    assert report.damage[0].path.startswith(f"frame.chunks[{MIDDLE}]")


@pytest.mark.parametrize("codec", CODECS[:2])
def test_corrupted_chunk_and_index_scan_around_it(codec):
    s = _sample(codec)
    bad = _overwrite(s.cframe, s.offsets[MIDDLE], b"\xff" * 32)
    bad = _overwrite(bad, s.index_at, _junk(s.trailer_at - s.index_at))
    out, report = salvage(bad)
    # the chunks after the lost one end the chunks section: counted back
    # from the end, they keep their places
    _check(out, report, s, [i for i in ALL if i != MIDDLE], "scan", (MIDDLE,))
    gap = s.offsets[MIDDLE + 1] - s.offsets[MIDDLE]
    assert [(d.what, d.offset, d.length) for d in report.dropped] == \
        [("bytes", s.offsets[MIDDLE], gap)]


def test_wrong_index_entry_is_filled_by_the_scan():
    s = _sample(blosc2.Codec.LZ4)
    f = blosckit.open_frame(s.cframe)
    offsets = [o - s.header_len for o in s.offsets]
    offsets[MIDDLE] = 10**9          # points nowhere: the chunk is an orphan
    index = blosckit.compress(struct.pack(f"<{NCHUNKS}q", *offsets), typesize=8,
                              codec="blosclz", clevel=5, filters=("shuffle",))
    bad = blosckit.build_frame([f.chunk(i) for i in ALL], metalayers=f.metalayers,
                               vlmetalayers=f.vlmetalayers)
    g = blosckit.open_frame(bad)
    at = g.header_len + g.cbytes
    bad = bad[:at] + index + bad[g.trailer_start:]
    bad = _overwrite(bad, 0x10, struct.pack(">Q", len(bad)))
    out, report = salvage(bad)
    sc = blosc2.schunk_from_cframe(out, copy=True)
    assert [sc.decompress_chunk(i) for i in ALL] == s.chunks
    assert report.recovered[MIDDLE].found_by == "scan"
    assert report.recovered[MIDDLE].offset == g.header_len + g.offsets[MIDDLE]
    # the damage is the reader's own error for that entry (F-offset at the entry)
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(bad).decompress_chunk(MIDDLE)
    assert e.value.rule == "F-offset" and e.value.path == f"frame.offsets[{MIDDLE}]"
    assert not report.dropped
    assert (report.damage[0].rule, report.damage[0].offset, report.damage[0].path) == \
        (e.value.rule, e.value.offset, e.value.path)


def test_chunk_of_another_size_in_the_middle_is_dropped():
    s = _sample(blosc2.Codec.LZ4)
    f = blosckit.open_frame(s.cframe)
    odd = blosckit.compress(bytes(range(200)) * 5, typesize=4, codec="lz4")   # 1000 bytes
    section = b"".join(f.chunk(i) for i in range(25)) + odd + \
        b"".join(f.chunk(i) for i in range(25, NCHUNKS))
    head = _overwrite(s.cframe[:s.header_len], 0x27, struct.pack(">q", len(section)))
    bad = head + section + _junk(200)            # no index, no trailer
    out, report = salvage(bad)
    sc = blosc2.schunk_from_cframe(out, copy=True)
    assert [sc.decompress_chunk(i) for i in ALL] == s.chunks
    odd_at = s.offsets[25]
    assert [(d.what, d.offset) for d in report.dropped if d.what == "chunk"] == \
        [("chunk", odd_at)]
    assert [r.offset for r in report.recovered][24:26] == [s.offsets[24], odd_at + len(odd)]
    [odd_drop] = [d for d in report.dropped if d.what == "chunk"]
    assert "holds 1000 bytes, the chunk at place 25 4000" in odd_drop.reason


# ---------------------------------------------------------------------------
# The header
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS[:2])
def test_corrupted_magic(codec):
    s = _sample(codec)
    out, report = salvage(_overwrite(s.cframe, 1, b"\x00" * 9))
    sc = _check(out, report, s, ALL, "index")
    assert _meta(sc) == META and _vlmeta(sc) == VLMETA
    assert report.damage[0].path.startswith("frame.header.magic")


@pytest.mark.parametrize("codec", CODECS[:2])
def test_corrupted_header_and_frame_lengths(codec):
    s = _sample(codec)
    bad = _overwrite(s.cframe, 0x0A, b"\x00\x7f\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff")
    out, report = salvage(bad)
    sc = _check(out, report, s, ALL, "index")
    assert _meta(sc) == META and _vlmeta(sc) == VLMETA
    assert report.damage[0].path.startswith("frame.header")
    assert any(f"metalayers end at {s.header_len}" in n for n in report.notes)


@pytest.mark.parametrize("typesize", [4, 8])
def test_header_wiped_scans_and_excludes_index_and_trailer(typesize):
    """No header: no typesize, no section end.  Typesize 8 is the hard case:
    the offsets index and python-blosc2's vlmetalayer chunks have typesize 8
    too and must be told apart from data by the heuristics."""
    s = _sample(blosc2.Codec.ZSTD, typesize)
    bad = bytes(s.header_len) + s.cframe[s.header_len:]
    out, report = salvage(bad)
    sc = _check(out, report, s, ALL, "scan")
    assert _meta(sc) == {} and not report.metalayers_kept
    assert _vlmeta(sc) == VLMETA
    assert ("index", s.index_at) in [(d.what, d.offset) for d in report.dropped]
    assert not any(d.what == "chunk" for d in report.dropped)


def test_header_and_first_chunk_and_index_wiped():
    s = _sample(blosc2.Codec.LZ4, 8)
    bad = bytes(s.offsets[1]) + s.cframe[s.offsets[1]:]
    bad = _overwrite(bad, s.index_at, _junk(s.trailer_at - s.index_at))
    out, report = salvage(bad)
    _check(out, report, s, ALL[1:], "scan")
    assert ("bytes", 0, s.offsets[1]) in [(d.what, d.offset, d.length) for d in report.dropped]


# ---------------------------------------------------------------------------
# Garbage and hostile input
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("junk", [b"", b"\x9e", _junk(5000), bytes(3000), b"\x01" * 4000])
def test_garbage_gives_an_empty_valid_frame(junk):
    out, report = salvage(junk)
    sc = blosc2.schunk_from_cframe(out, copy=True)
    assert sc.nchunks == 0 and blosckit.open_frame(out).nchunks == 0
    assert report.nothing_found and report.chunksize == -1
    assert any("no intact chunk" in n for n in report.notes)
    assert report.damage                       # the normal route's error is kept


@settings(max_examples=60)
@given(cuts=st.lists(st.tuples(st.integers(0, 10**6), st.binary(min_size=1, max_size=40)),
                     max_size=4),
       keep=st.integers(0, 10**6))
def test_mutated_frames_never_raise(cuts, keep):
    s = _sample(blosc2.Codec.LZ4)
    bad = s.cframe
    for at, new in cuts:
        bad = _overwrite(bad, at % len(bad), new)[:len(bad)]
    bad = bad[:keep % (len(bad) + 1)]
    try:
        out, report = salvage(bad)
    except blosckit.FormatError:
        return
    sc = blosc2.schunk_from_cframe(out, copy=True)
    assert sc.nchunks == len(report.recovered) + len(report.lost_regions)
    # a chunk whose bytes were not touched comes back with its exact data
    touched = [(at % len(s.cframe), at % len(s.cframe) + len(new)) for at, new in cuts]
    for r in report.recovered:
        if r.offset is None or r.offset + 16 > len(bad):
            continue
        i = s.offsets.index(r.offset) if r.offset in s.offsets else None
        if i is None:
            continue
        end = s.offsets[i] + blosckit.chunk_sizes(s.cframe[s.offsets[i]:])[1]
        if end <= len(bad) and all(b <= r.offset or a >= end for a, b in touched):
            assert sc.decompress_chunk(r.index) == s.chunks[i]


def test_multi_megabyte_scan():
    """A 4 MB frame of incompressible chunks with its header and index gone
    is scanned whole (in well under a second on a laptop)."""
    rng = np.random.default_rng(1)
    data = rng.integers(0, 2**62, 500_000, dtype=np.int64)
    sc = blosc2.SChunk(chunksize=80_000, data=data, cparams=dict(typesize=8,
                                                                codec=blosc2.Codec.LZ4))
    cf = sc.to_cframe()
    f = blosckit.open_frame(cf)
    index_at = f.header_len + f.cbytes
    bad = bytes(f.header_len) + cf[f.header_len:index_at] + _junk(len(cf) - index_at)
    out, report = salvage(bad)
    got = blosc2.schunk_from_cframe(out, copy=True)
    assert got.nchunks == sc.nchunks
    assert got[:] == sc[:]
    assert [r.offset for r in report.recovered] == [f.header_len + o for o in f.offsets]


def test_chunk_with_an_undecodable_codec_is_dropped_and_collected():
    """A chunk naming a codec this build cannot decode (lizard) is dropped;
    collecting the failed decode's garbage afterwards must not crash (it did
    when the decoder was handed a view into the input)."""
    import gc
    s = _sample(blosc2.Codec.ZSTD)
    at = s.offsets[MIDDLE] + 2                      # the flags byte: codec format 5
    bad = _overwrite(s.cframe, at, bytes([(s.cframe[at] & 0x1F) | 5 << 5]))
    out, report = salvage(bad)
    gc.collect()
    _check(out, report, s, [i for i in ALL if i != MIDDLE], "index", (MIDDLE,))
    assert report.damage[0].rule == "T-codec"
    assert report.dropped[0].source_index == MIDDLE


# ---------------------------------------------------------------------------
# b2nd frames: chunks keep their grid places
# ---------------------------------------------------------------------------

def _b2nd_frame():
    np = oracle("numpy")
    blosc2 = oracle("blosc2")
    a = np.arange(333 * 517, dtype="i8").reshape(333, 517) % 1000
    return a, bytes(blosc2.asarray(a, chunks=(100, 128), blocks=(25, 32)).to_cframe())


@pytest.mark.parametrize("cut", [20_000, 60_000, -10])
def test_a_truncated_array_keeps_its_shape_and_every_chunk_s_place(cut):
    """The issue's case: python-blosc2's array cut short.  Every recovered
    chunk stays at its grid place, every lost one is zeros there and named
    in lost_regions; the output validates and python-blosc2 reads it."""
    np = oracle("numpy")
    blosc2 = oracle("blosc2")
    a, frame = _b2nd_frame()
    out, report = salvage(frame[:cut])
    assert blosckit.validate(out) == []
    theirs = blosc2.ndarray_from_cframe(out)
    assert theirs.shape == a.shape and theirs.dtype == a.dtype
    got = theirs[...]
    lost = np.zeros(a.shape, bool)
    for _, region in report.lost_regions:
        lost[tuple(slice(x, y) for x, y in region)] = True
    assert (got[~lost] == a[~lost]).all() and (got[lost] == 0).all()
    assert len(report.recovered) + len(report.lost_regions) == 20
    if cut == 20_000:
        assert len(report.recovered) == 2 and report.lost_regions[0] == (2, ((0, 100), (256, 384)))


def test_a_lost_middle_chunk_leaves_the_others_in_place():
    np = oracle("numpy")
    blosc2 = oracle("blosc2")
    a, frame = _b2nd_frame()
    f = blosckit.open_frame(frame)
    start = f.header_len + f.offsets[7]
    blob = bytearray(frame)
    blob[start + 40:start + 200] = bytes(160)             # chunk 7's streams zeroed
    out, report = salvage(bytes(blob))
    assert blosckit.validate(out) == [] and [i for i, _ in report.lost_regions] == [7]
    got = blosc2.ndarray_from_cframe(out)[...]
    assert (got[100:200, 256:384] == 0).all()            # grid place (1, 2) of (4, 5)
    keep = np.ones(a.shape, bool)
    keep[100:200, 256:384] = False
    assert (got[keep] == a[keep]).all()


def test_a_b2nd_metalayer_that_disagrees_is_dropped_not_kept_broken():
    """The issue's case: the b2nd shape changed (333 -> 80000): salvage
    called the frame intact and wrote an output validate rejects."""
    a, frame = _b2nd_frame()
    f = blosckit.open_frame(frame)
    at = f.b2nd.offset + fb.extent_offset(2, "shape", 0)
    blob = bytearray(frame)
    blob[at:at + 8] = struct.pack(">q", 80_000)
    out, report = salvage(bytes(blob))
    assert not report.intact and blosckit.validate(out) == []
    assert "b2nd" not in blosckit.open_frame(out).metalayers
    assert any(d.what == "metalayer" and d.name == "b2nd" for d in report.dropped)
    assert blosckit.open_frame(out).decompress() == f.decompress()


def test_salvage_property_on_a_ci_share_of_mutations():
    """The salvage property (tests/salvage_property.py) on 400 mutations of
    python-blosc2's b2nd, variable-size, special-chunk, plain and sparse
    frames: FormatError, or an output validate accepts, C-Blosc2 reads to
    blosckit's reading (child process), python-blosc2 reads as an array
    when it is one, holding every intact chunk identical at its place."""
    tally = salvage_property.run(400, seed_value=11)
    assert tally.checked > 300 and tally.intact_checked > 1000


_SHARE = """
import sys
sys.path.insert(0, sys.argv[1])
import salvage_property
t = salvage_property.run(int(sys.argv[2]), seed_value=int(sys.argv[3]))
print(t.inputs, t.refused, t.checked, t.intact_checked)
"""


@pytest.mark.long
def test_salvage_property_on_20000_mutations():
    """The issue's bar: 20,000 mutations, in eight children of 2,500 (two
    at a time; each child asks C-Blosc2 in its own grandchild)."""
    import concurrent.futures
    import subprocess
    import sys
    from pathlib import Path

    def share(k: int) -> list[int]:
        r = subprocess.run([sys.executable, "-c", _SHARE, str(Path(__file__).parent), "2500",
                            str(2026 + k)], capture_output=True, text=True, timeout=1500)
        assert r.returncode == 0, r.stderr[-3000:]
        return [int(x) for x in r.stdout.split()]

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        tallies = list(pool.map(share, range(8)))
    inputs, refused, checked, intact = (sum(t[i] for t in tallies) for i in range(4))
    assert inputs == 20_000 and checked + refused == inputs
    assert intact > 50_000


def test_a_sparse_chunk_file_numbered_far_away_places_nothing(tmp_path):
    """A sparse frame without its index file and a chunk file named
    FFFFFFFF.chunk: places come from file numbers, and that one would have
    made a list of 2**32 places (MemoryError); it is dropped, named."""
    blosc2 = oracle("blosc2")
    np = oracle("numpy")
    d = tmp_path / "s.b2frame"
    blosc2.SChunk(chunksize=4000, data=np.arange(3000, dtype="<i4"), urlpath=str(d),
                  contiguous=False, mode="w", cparams=blosc2.CParams(typesize=4))
    (d / "chunks.b2frame").unlink()
    (d / "00000001.chunk").rename(d / "FFFFFFFF.chunk")
    out, report = salvage(d)
    assert blosckit.validate(out) == []
    assert [r.file for r in report.recovered] == ["00000000.chunk", "00000002.chunk"]
    assert any(x.reason.startswith("chunk file FFFFFFFF.chunk: its number is past")
               for x in report.dropped)
