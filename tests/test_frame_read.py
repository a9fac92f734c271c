"""blosckit's frame reader against the corpus of real frames
(tests/frame_corpus.py: python-blosc2 SChunks and NDArrays as cframes, files
and sframes, and every raw chunk of HDF5 datasets written with hdf5plugin's
Blosc2 filter), each case's expectations proven by tests/test_frame_corpus.py.
Every frame reads with identical data and metadata, and every frame rebuilt
by blosckit from its chunks opens in python-blosc2 with the same contents."""
from __future__ import annotations

import os
import re

import msgpack
import pytest

import blosckit
from blosckit.tools.salvage import salvage_pieces
import helpers
from blosckit.frame.build import build_frame
from frame_corpus import FrameCase, all_cases
from oracles import oracle

blosc2 = oracle("blosc2")

LONG = os.environ.get("BLOSCKIT_LONG") == "1"


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> list[FrameCase]:
    return all_cases(tmp_path_factory.mktemp("frames"), long=LONG)


def _check(case: FrameCase) -> list[str]:
    """What the reader gets wrong about ``case`` (empty: nothing)."""
    bad = []
    with blosckit.open_frame(case.source) as f:
        if f.nchunks != case.nchunks:
            return [f"nchunks {f.nchunks} != {case.nchunks}"]
        for name, got, want in (("typesize", f.typesize, case.typesize),
                                ("chunksize", f.chunksize, case.chunksize),
                                ("codec", f.codec, case.codec),
                                ("filters", f.filters, case.filters),
                                ("metalayers", list(f.metalayers.items()),
                                 list(case.metalayers.items())),
                                ("vlmetalayers", f.vlmetalayers, case.vlmetalayers)):
            if got != want:
                bad.append(f"{name}: {got!r} != {want!r}")
        offsets = f.offsets
        for i in range(case.nchunks):
            kind = case.special.get(i)
            if kind is not None and offsets[i] != kind:
                bad.append(f"chunk {i}: offset {offsets[i]!r}, expected special {kind}")
            if case.defined(i) and f.decompress_chunk(i) != case.chunks[i]:
                bad.append(f"chunk {i}: data differs")
        if all(case.defined(i) for i in range(case.nchunks)) and f.decompress() != case.data:
            bad.append("decompress() differs")
        if case.b2nd is not None:
            b = f.b2nd
            want = case.b2nd
            for key in ("shape", "chunkshape", "blockshape", "dtype"):
                if getattr(b, key) != want[key]:
                    bad.append(f"b2nd.{key}: {getattr(b, key)!r} != {want[key]!r}")
            if all(case.defined(i) for i in range(case.nchunks)) and b.read() != want["array"]:
                bad.append("b2nd.read() differs")
    return bad


def test_every_corpus_frame_reads_identically(cases):
    problems = {c.name: p for c in cases if (p := _check(c))}
    assert problems == {}
    assert len(cases) >= 100


def test_hdf5_chunks_read_as_the_dataset_values(cases):
    oracle("h5py"), oracle("hdf5plugin")
    hdf5 = [c for c in cases if c.kind == "hdf5-chunk"]
    assert hdf5
    for c in hdf5:
        f = blosckit.open_frame(c.source)
        got = f.b2nd.read() if f.b2nd is not None else f.decompress()
        assert got == c.hdf5["values"], c.name


def test_frames_rebuilt_by_blosckit_open_in_python_blosc2(cases):
    rebuilt = 0
    for c in cases:
        if c.kind not in ("cframe", "b2nd-cframe") or not c.nchunks:
            continue
        f = blosckit.open_frame(c.source)
        fr = build_frame([f.chunk(i) for i in range(f.nchunks)], metalayers=f.metalayers,
                         vlmetalayers=f.vlmetalayers, chunksize=f.chunksize)
        sc = blosc2.schunk_from_cframe(fr)
        assert sc.nchunks == c.nchunks, c.name
        for i in range(c.nchunks):
            if c.defined(i):
                assert sc.decompress_chunk(i) == c.chunks[i], (c.name, i)
        assert [bytes(blosc2.blosc2_ext.meta__getitem__(sc, k)) for k in c.metalayers] == \
            list(c.metalayers.values()), c.name
        assert {k: msgpack.packb(sc.vlmeta[k]) for k in c.vlmetalayers} == {
            k: msgpack.packb(msgpack.unpackb(v)) for k, v in c.vlmetalayers.items()}, c.name
        rebuilt += 1
    assert rebuilt >= 30


def _outcome(fr: bytes):
    try:
        return blosckit.open_frame(fr).decompress()
    except blosckit.FormatError as e:
        return (e.offset, e.path, e.rule)


@pytest.mark.parametrize("group", [pytest.param(1 << 25, marks=pytest.mark.long), 8000,
                                   pytest.param(4000, marks=pytest.mark.long)])
def test_batch_decompress_equals_the_python_reader(monkeypatch, group):
    """Frame.decompress decodes runs of chunks in one native call (groups of
    ``group`` output bytes); on frames with special chunks, a short last
    chunk and damage anywhere in a chunk, it must give what the Python reader
    gives, chunk by chunk: the same bytes or the same error."""
    np = oracle("numpy")
    from blosckit.frame import read as frame_mod
    monkeypatch.setattr(frame_mod, "_DECODE_GROUP", group)
    rng = np.random.default_rng(3)
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4, blocksize=1000),
                       data=np.concatenate([rng.integers(0, 300, 3000).astype("<i4"),
                                            np.arange(500, dtype="<i4")]))
    plain = bytes(sc.to_cframe())
    zeros = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4))
    zeros.fill_special(3500, blosc2.SpecialValue.ZERO)     # special offsets
    for fr in (plain, bytes(zeros.to_cframe())):
        f = blosckit.open_frame(fr)
        blobs = [fr]
        for i in range(f.nchunks):
            if not isinstance(f.offsets[i], int):          # a special chunk
                continue
            start = f.header_len + f.offsets[i]
            cbytes = int.from_bytes(fr[start + 12:start + 16], "little")
            for pos in range(start, start + cbytes, 3):
                b = bytearray(fr)
                b[pos] ^= 0x5A
                blobs.append(bytes(b))
        differ = []
        for blob in blobs:
            fast = _outcome(blob)
            with helpers.python_reader():
                slow = _outcome(blob)
            if fast != slow:
                differ.append(blob)
        assert differ == []
        assert _outcome(fr) == blosc2.schunk_from_cframe(fr)[:]


def _status(field: str) -> int:
    """A /proc/self/status field, KiB."""
    with open("/proc/self/status") as fh:
        return int(re.search(field + r":\s+(\d+)", fh.read())[1])


def _peak_growth(job) -> int:
    """MiB by which ``job()`` raises the peak resident memory (VmHWM, reset
    first) of a child forked for it: the imports are already done."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                      # the child
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")       # the peak starts again from the RSS now
            before = _status("VmRSS")
            job()
            os.write(w, str((_status("VmHWM") - before) >> 10).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as fh:
        said = fh.read()
    os.waitpid(pid, 0)
    assert said, "the job failed in the child"
    return int(said)


def test_a_frame_file_read_through_gives_its_pages_back(tmp_path):
    """A file is mapped, and every page of a mapping that has been read
    counts in the process's RSS until it is closed: a 64 MiB frame read
    through made the process 64 MiB larger.  Decompressing it piece by
    piece and validating it give the pages back as they go (MiB here;
    touching every page shows that the measure sees mapped pages)."""
    np = oracle("numpy")
    path = tmp_path / "noise.b2frame"
    data = np.frombuffer(np.random.default_rng(0).bytes(64 << 20), np.uint8)
    blosc2.SChunk(chunksize=1 << 20, data=data, urlpath=str(path), contiguous=True, mode="w",
                  cparams=blosc2.CParams(typesize=1, codec=blosc2.Codec.LZ4, clevel=1))
    assert path.stat().st_size > 64 << 20            # incompressible: stored as it is

    def decompress():
        with blosckit.open_frame(path) as f:
            assert sum(len(p) for p in f.iter_decompress()) == f.nbytes

    def validate():
        assert blosckit.validate(path) == []

    def touch():
        with blosckit.open_frame(path) as f:
            assert sum(f.buffer[::4096]) >= 0

    cut = tmp_path / "cut.b2frame"            # a cut copy: salvage's scan route
    with open(path, "rb") as src, open(cut, "wb") as dst:
        for _ in range(60):
            dst.write(src.read(1 << 20))

    def salvage():
        # its pieces streamed out, as the CLI writes them
        pieces, report = salvage_pieces(cut)
        with open(tmp_path / "out.b2frame", "wb") as out:
            for piece in pieces:
                out.write(piece)
        assert len(report.recovered) > 50

    got = {job.__name__: _peak_growth(job) for job in (decompress, validate, touch)}
    assert got["touch"] >= 60, got
    assert got["decompress"] < 48 and got["validate"] < 48, got
    # salvage keeps about 16 MiB of the mapped input (it held the input,
    # a copy of every chunk and the whole output: three times the file)
    assert _peak_growth(salvage) < 48, got
    assert blosckit.validate(tmp_path / "out.b2frame") == []


def _opened(src):
    """What opening ``src`` and reading its metadata and data gives: the
    values, or the FormatError's (rule, offset, path)."""
    try:
        with blosckit.open_frame(src) as f:
            return (f.nchunks, f.metalayers, f.metalayer_at, f.vlmetalayers,
                    f.vlmetalayer_at, sorted(f.odd_names), f.decompress())
    except blosckit.FormatError as e:
        return ("error", e.rule, e.offset, e.path)


def test_a_frame_file_opens_unmapped_as_its_bytes_open(tmp_path):
    """A frame file is opened by reading its header, its index's header and
    its trailer, and mapped only when its chunks are read: over every
    damaged byte of those parts (and cuts), the file gives what the same
    bytes in memory give, errors included (offset, path, rule)."""
    np = oracle("numpy")
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4), meta={"m": [1, 2]})
    for i in range(5):
        sc.append_data(np.arange(i * 1000, (i + 1) * 1000, dtype="<i4"))
    sc.vlmeta["v"] = {"k": "x" * 40}
    good = bytes(sc.to_cframe())
    path = tmp_path / "f.b2frame"
    path.write_bytes(good)
    with blosckit.open_frame(path) as f:
        assert f.vlmetalayers and f.metalayers
        assert "buffer" not in f.__dict__            # nothing mapped yet
        assert f.decompress() == np.arange(5000, dtype="<i4").tobytes()
    f = blosckit.open_frame(good)
    index_at = f.index_span[0]
    places = [*range(f.header_len + 40), *range(index_at - 8, len(good))]
    cases = [good[:k] for k in (len(good) - 1, len(good) - 40, index_at + 5)]
    for k in places:
        for byte in (good[k] ^ 0xFF, 0):
            if byte != good[k]:
                cases.append(good[:k] + bytes([byte]) + good[k + 1:])
    # the older header layouts, and a frame without chunks
    chunks = [f.chunk(i) for i in range(f.nchunks)]
    cases += [build_frame(chunks, metalayers={"m": b"\x01"} if layout != 11 else None,
                          vlmetalayers={"v": b"x"}, layout=layout) for layout in (11, 12, 13)]
    cases.append(build_frame([], vlmetalayers={"v": b"x"}))
    for data in cases:
        path.write_bytes(data)
        assert _opened(path) == _opened(data)
