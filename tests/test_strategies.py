"""``blosckit.strategies``: what the drawn chunks and frames cover, that
C-Blosc2 reads the compatible ones alike, and that ``corrupt`` reaches every
declared field."""
from __future__ import annotations

import collections
import hashlib
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

import blosckit
from blosckit.formats.describe import chunk_codec
from helpers import oracle_verdicts
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")
# these need python-blosc2 at import
from blosckit.testing import fuzz
from blosckit.testing import strategies as bst
from blosckit.testing.fuzz import frame_digest


_FAST = settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                 database=None)


def _draw_many(strategy, n: int) -> list:
    """``n`` examples of ``strategy``, the same on every run (seed 0)."""
    return fuzz._draw(strategy, n, 0)


def _chunks_until_covered():
    """Draws of 500 chunks (seeds 0, 1, 2): the next only while a filter
    is still unseen.  Which chunks a seed gives depends on hypothesis's state
    as earlier tests of the run leave it; 500 draws give each filter 13
    times or more on their own, but a full run once drew no trunc_prec."""
    filters = {"shuffle", "bitshuffle", "delta", "trunc_prec", "bytedelta"}
    seen: set[str] = set()
    for seed in range(3):
        for data, chunk in fuzz._draw(bst.chunks(), 500, seed):
            c = blosckit.parse_chunk(chunk)
            seen.update(name for name, _ in c.filters)
            yield data, chunk
        if filters <= seen:
            return


@pytest.mark.long
def test_500_chunks_cover_every_codec_filter_split_special_and_format():
    seen: dict[str, set] = collections.defaultdict(set)
    for data, chunk in _chunks_until_covered():
        assert blosckit.decompress(chunk) == data
        assert [p for p in blosckit.validate(chunk) if p.severity == "error"] == []
        c = blosckit.parse_chunk(chunk)
        seen["format"].add("blosc1" if c.version < 3 else "blosc2")
        if c.special:
            seen["special"].add(c.special)
            continue
        seen["codec"].add(chunk_codec(c))
        seen["filter"].update(name for name, _ in c.filters)
        seen["split"].add(c.split if c.nbytes and not c.memcpyed else None)
        seen["vlblocks"].add(c.vlblocks)
        seen["dict"].add(c.dict is not None)
        seen["memcpyed"].add(c.memcpyed)
        bstarts = list(c.bstarts)
        seen["unsorted bstarts"].add(bstarts != sorted(bstarts))
    assert seen["format"] == {"blosc1", "blosc2"}
    assert seen["codec"] >= {"blosclz", "lz4", "lz4hc", "zlib", "zstd", "snappy"}
    assert seen["filter"] >= {"shuffle", "bitshuffle", "delta", "trunc_prec", "bytedelta"}
    assert {True, False} <= seen["split"]
    assert seen["special"] == {"zeros", "nan", "value", "uninit"}
    for flag in ("vlblocks", "dict", "memcpyed", "unsorted bstarts"):
        assert True in seen[flag], flag


def test_constraints_narrow_the_chunks():
    for data, chunk in _draw_many(bst.chunks(codecs=["zstd"], format="blosc2",
                                             max_nbytes=100, kinds=["compressed"]), 60):
        c = blosckit.parse_chunk(chunk)
        assert c.version >= 3 and c.nbytes <= 100
        assert c.codec == "zstd" or c.memcpyed or c.nbytes == 0        # stored, not coded
    for _, chunk in _draw_many(bst.chunks(format="blosc1"), 40):
        assert blosckit.parse_chunk(chunk).version <= 2


@pytest.mark.parametrize("kw", [{"codecs": ["nope"]}, {"format": "blosc3"},
                                {"max_nbytes": -1}, {"compatible_with": "c-blosc"},
                                {"kinds": ["weird"]}, {"codecs": []}])
def test_bad_constraints_are_refused_at_once(kw):
    with pytest.raises(InvalidArgument):
        bst.chunks(**kw)


def test_c_blosc2_decodes_every_compatible_chunk_to_data():
    pairs = _draw_many(bst.chunks(compatible_with="c-blosc2"), 300)
    verdicts = oracle_verdicts([c for _, c in pairs])
    wrong = [(blosckit.parse_chunk(c), v.b2_ok) for (d, c), v in zip(pairs, verdicts)
             if v.digest != hashlib.sha256(d).digest()
             and blosckit.parse_chunk(c).special != "uninit"]
    assert wrong == []


@pytest.mark.long
def test_frames_open_in_python_blosc2_with_their_data():
    pairs = _draw_many(bst.frames(max_chunks=5, compatible_with="c-blosc2"), 150)
    counts = collections.Counter()
    for datas, frame in pairs:
        f = blosckit.open_frame(frame)
        assert [f.decompress_chunk(i) for i in range(f.nchunks)] == datas
        assert blosckit.validate(frame) == []
        assert f.layout == 14                      # the only layout C-Blosc2 reads
        counts["specials"] += sum(isinstance(o, str) for o in f.offsets)
        counts["vlmeta"] += bool(f.vlmetalayers)
        counts["meta"] += bool(f.metalayers)
        if f.b2nd is not None:
            # valid input: python-blosc2 may run in process here
            arr = blosc2.ndarray_from_cframe(frame)
            assert arr.shape == f.b2nd.shape
            assert arr[...].tobytes() == f.b2nd.read()
            counts["b2nd"] += 1
            counts[f"b2nd-{'empty' if 0 in arr.shape else f'{arr.ndim}-d'}"] += 1
    verdicts = oracle_verdicts([fr for _, fr in pairs], kind="frame")
    assert [v.b2_ok for v in verdicts] == [True] * len(pairs)
    assert [v.digest for v in verdicts] == [frame_digest(blosckit.open_frame(fr))
                                            for _, fr in pairs]
    # the arrays too, as python-blosc2's NDArray assembles them in its child
    arrays = [(v, blosckit.open_frame(fr).b2nd) for v, (_, fr) in zip(verdicts, pairs)]
    assert [(v.array_ok, v.array_digest) for v, b in arrays if b is not None] == \
        [(True, hashlib.sha256(b.read()).digest()) for v, b in arrays if b is not None]
    assert min(counts.values()) > 0
    assert {"b2nd-0-d", "b2nd-1-d", "b2nd-2-d", "b2nd-3-d", "b2nd-empty"} <= set(counts)


def test_sframes_open_in_python_blosc2_with_their_data(tmp_path):
    counts = collections.Counter()
    for k, (datas, files) in enumerate(_draw_many(bst.sframes(max_chunks=4), 40)):
        d = tmp_path / f"s{k}.b2frame"
        d.mkdir()
        for name, data in files.items():
            (d / name).write_bytes(data)
        with blosckit.open_frame(d) as f:
            assert [f.decompress_chunk(i) for i in range(f.nchunks)] == datas
            is_array, uninit = f.b2nd is not None, "uninit" in f.offsets
        counts["b2nd" if is_array else "schunk"] += 1
        assert [p for p in blosckit.validate(d) if p.severity == "error"] == []
        if not uninit:          # C-Blosc2 leaves uninit chunks' bytes undefined
            opened = blosc2.open(str(d))
            got = opened.schunk[:] if is_array else opened[:]
            assert got == b"".join(datas), (k, is_array)
    assert counts["b2nd"] > 5 and counts["schunk"] > 5


def _fields(blob) -> set[str]:
    return {re.sub(r"\[\d+\]", "[]", re.sub(r"\['[^']*'\]", "['']", t[0]))
            for t in bst.targets(blob)}


@pytest.mark.long
def test_corrupt_reaches_every_declared_field_of_a_chunk_and_a_frame():
    chunk = blosc2.compress2(bytes(range(256)) * 64, typesize=4, codec=blosc2.Codec.ZSTD)
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4), meta={"m": 1})
    sc.append_data(bytes(range(200)) * 20)
    sc.vlmeta["v"] = [1, 2]
    frame = bytes(sc.to_cframe())
    array = bytes(blosc2.asarray(np.arange(60.).reshape(6, 10), chunks=(4, 5),
                                 blocks=(2, 5)).to_cframe())
    hit: set[str] = set()

    def observe(path):
        hit.add(re.sub(r"\[\d+\]", "[]", re.sub(r"\['[^']*'\]", "['']", path)))
    declared = _fields(chunk) | _fields(frame) | _fields(array)
    assert len(declared) > 60
    assert {"frame.metalayers[''].shape[].value", "frame.metalayers[''].dtype.dtype_len",
            "frame.metalayers[''].ndim"} <= declared
    # each seed blob corrupted alone, in draws of 100 (seeds 0, 1, ...) until
    # every field it declares was hit, at most 3,000 each: about 2,000 in all
    blobs: list[bytes] = []
    for seed_blob in (chunk, frame, array):
        fields = _fields(seed_blob)
        for seed in range(30):
            blobs += fuzz._draw(bst.corrupt([seed_blob], observe=observe), 100, seed)
            if fields <= hit:
                break
    assert sorted(declared - hit) == []
    assert sum(b not in (chunk, frame, array) for b in blobs) > 0.7 * len(blobs)


@settings(_FAST, max_examples=300)
@given(bst.corrupt(bst.chunks(max_nbytes=512).map(lambda p: p[1])))
def test_corrupted_chunks_give_data_or_a_format_error(blob):
    try:
        blosckit.decompress(blob, max_nbytes=1 << 20)
    except blosckit.FormatError as e:
        assert e.rule and 0 <= e.offset <= len(blob)
    for p in blosckit.validate(blob):
        assert 0 <= p.offset <= len(blob)


def test_from_type_draws_blosckit_types():
    from hypothesis import find
    c = find(st.from_type(blosckit.Chunk), lambda c: c.nbytes > 10)
    assert c.nbytes > 10
    f = find(st.from_type(blosckit.Frame), lambda f: f.nchunks >= 2)
    assert f.nchunks >= 2


def test_strategies_import_first_in_a_fresh_interpreter():
    """hypothesis runs blosckit's entry point while it is imported, possibly
    by blosckit.strategies itself: that must not be a circular import."""
    import subprocess
    import sys
    code = ("import blosckit.strategies as bst\n"
            "from hypothesis import find, strategies as st\n"
            "import blosckit\n"
            "print(find(st.from_type(blosckit.Chunk), lambda c: c.nbytes > 3).nbytes > 3)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr


def test_frames_draw_every_header_layout():
    layouts = collections.Counter()
    for datas, frame in _draw_many(bst.frames(max_chunks=3), 120):
        f = blosckit.open_frame(frame)
        layouts[f.layout] += 1
        assert [f.decompress_chunk(i) for i in range(f.nchunks)] == datas
        assert [p for p in blosckit.validate(frame) if p.severity == "error"] == []
    assert set(layouts) == {11, 12, 13, 14}
