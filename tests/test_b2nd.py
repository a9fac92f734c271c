"""The b2nd metalayer declaration (formats/b2nd.py), the array reader and
writer (blosckit/b2nd.py), against python-blosc2 and a NumPy oracle."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import blosckit
import helpers
from blosckit.frame.b2nd import compress_b2nd
from blosckit.formats import b2nd as fb
from frame_corpus import b2nd_chunks
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")


# (shape, chunks, blocks): edge chunks, edge blocks, blocks wider than
# chunks (C-Blosc2 pads a chunk to one block), 0-d, empty, 16 dimensions
SHAPES = [
    ((7, 5), (4, 4), (2, 3)),
    ((10,), (4,), (3,)),
    ((3, 4, 5), (2, 3, 2), (1, 2, 2)),
    ((6,), (4,), (8,)),
    ((), (), ()),
    ((0, 3), (2, 2), (1, 1)),
    ((5, 0), (2, 3), (2, 2)),
    ((1,) * 15 + (3,), (1,) * 15 + (2,), (1,) * 16),
    ((1,) * 12 + (2, 3, 2, 3), (1,) * 12 + (1, 2, 2, 2), (1,) * 12 + (1, 1, 2, 1)),
]


def _c_meta(arr) -> bytes:
    return bytes(blosc2.blosc2_ext.meta__getitem__(arr.schunk, "b2nd"))


@pytest.mark.parametrize("shape,chunks,blocks", SHAPES)
def test_declaration_builds_what_c_blosc2_writes(shape, chunks, blocks):
    a = np.arange(math.prod(shape), dtype="<i2").reshape(shape)
    if 0 in chunks or any(b > c for b, c in zip(blocks, chunks)):
        pytest.skip("python-blosc2 refuses zero chunk extents and blocks wider than chunks")
    arr = blosc2.asarray(a, chunks=chunks, blocks=blocks)
    c = _c_meta(arr)
    assert fb.build_meta(shape, chunks, blocks, "<i2") == c
    m = fb.B2ndMeta.parse(c)
    assert [e.value for e in m.shape] == list(shape) and m.dtype.dtype == b"<i2"


def test_sixteen_dimensions_written_by_c_blosc2_read(tmp_path):
    """C-Blosc2 writes 0xa0 (a msgpack string marker) as the "array of 16"
    marker: the reader follows the layout, not msgpack (divergence V19)."""
    a = np.arange(2 ** 6, dtype="<u2").reshape((1,) * 10 + (2,) * 6)
    arr = blosc2.asarray(a, chunks=(1,) * 14 + (2, 2), blocks=(1,) * 15 + (2,),
                         urlpath=str(tmp_path / "d16.b2nd"), mode="w")
    meta = _c_meta(arr)
    assert meta[3] == 0xA0
    with blosckit.open_frame(tmp_path / "d16.b2nd") as f:
        assert f.b2nd.shape == a.shape and f.b2nd.dtype == "<u2"
        assert f.b2nd.read() == a.tobytes()
    # python-blosc2 msgpack-decodes the value for schunk.meta and fails
    with pytest.raises(Exception):
        arr.schunk.meta["b2nd"]
    assert [(p.severity, p.rule, p.offset) for p in blosckit.validate(tmp_path / "d16.b2nd")] \
        == [("warning", "V19", f.metalayer_at["b2nd"])]


@pytest.mark.parametrize("shape,chunks,blocks", SHAPES)
@pytest.mark.parametrize("dtype", ["<f8", "|u1", "<i4"])
def test_compress_b2nd_is_what_python_blosc2_reads(shape, chunks, blocks, dtype):
    a = (np.arange(math.prod(shape)) * 3 + 1).astype(dtype).reshape(shape)
    frame = compress_b2nd(a, chunkshape=chunks, blockshape=blocks)
    # 16 dimensions: the value C-Blosc2 writes, which is not msgpack (V19)
    assert [p.rule for p in blosckit.validate(frame)] == (["V19"] if len(shape) == 16 else [])
    with blosckit.open_frame(frame) as f:
        assert f.b2nd.read() == a.tobytes()
        assert (f.b2nd.shape, f.b2nd.dtype) == (shape, np.dtype(dtype).str)
        # the chunks are the oracle's: blocks in C order, zero padding
        want = b2nd_chunks(a, chunks, blocks) if a.size else []
        assert [f.decompress_chunk(i) for i in range(f.nchunks)] == want
    got = blosc2.ndarray_from_cframe(frame)
    assert got.shape == shape and got.dtype == a.dtype
    assert np.array_equal(got[...], a)


def test_compress_b2nd_from_bytes_needs_shape_and_dtype():
    raw = np.arange(12, dtype="<f4").tobytes()
    frame = compress_b2nd(raw, shape=(3, 4), dtype="<f4", chunkshape=(2, 2), blockshape=(1, 2))
    assert np.array_equal(blosc2.ndarray_from_cframe(frame)[...],
                          np.arange(12, dtype="<f4").reshape(3, 4))
    with pytest.raises(ValueError, match="dtype"):
        compress_b2nd(raw, shape=(3, 4), chunkshape=(2, 2), blockshape=(1, 2))
    with pytest.raises(ValueError, match="bytes of data"):
        compress_b2nd(raw, shape=(3, 5), dtype="<f4", chunkshape=(2, 2), blockshape=(1, 2))
    with pytest.raises(blosckit.FormatError, match="block extent 0") as e:
        compress_b2nd(raw, shape=(3, 4), dtype="<f4", chunkshape=(2, 2), blockshape=(0, 2))
    assert e.value.rule == "F-b2nd-shape"


@given(ndim=st.integers(0, 16), data=st.data(), dtype=st.sampled_from(["<f8", "|V3", None]))
def test_declaration_round_trip(ndim, data, dtype):
    shape = data.draw(st.lists(st.integers(0, 2 ** 63 - 1), min_size=ndim, max_size=ndim))
    cs_ = data.draw(st.lists(st.integers(0, 2 ** 31 - 1), min_size=ndim, max_size=ndim))
    bs = data.draw(st.lists(st.integers(0, 2 ** 31 - 1), min_size=ndim, max_size=ndim))
    raw = fb.build_meta(shape, cs_, bs, dtype)
    assert len(raw) == 6 + 19 * ndim + (0 if dtype is None else 6 + len(dtype))
    m = fb.B2ndMeta.parse(raw)
    assert [e.value for e in m.shape] == shape
    assert [e.value for e in m.chunkshape] == cs_ and [e.value for e in m.blockshape] == bs
    assert (m.dtype is None) == (dtype is None)
    for k, name in enumerate(("shape", "chunkshape", "blockshape")):
        for d in range(ndim):
            at = fb.extent_offset(ndim, name, d)
            width = 8 if name == "shape" else 4
            assert raw[at - 1] == (0xD3 if width == 8 else 0xD2)
            assert int.from_bytes(raw[at:at + width], "big") == [shape, cs_, bs][k][d]


# -- bad metalayers: FormatError at the field, relocated into the frame

def _frame_with_meta(meta: bytes, name: str = "b2nd") -> tuple[bytes, int]:
    a = np.arange(35, dtype="<i4").reshape(7, 5)
    good = compress_b2nd(a, chunkshape=(4, 4), blockshape=(2, 3))
    with blosckit.open_frame(good) as f:
        chunks = [f.chunk(i) for i in range(f.nchunks)]
    frame = blosckit.build_frame(chunks, metalayers={name: meta})
    with blosckit.open_frame(frame) as f:
        return frame, f.metalayer_at[name]


GOOD = fb.build_meta((7, 5), (4, 4), (2, 3), "<i4")


def test_every_truncation_is_refused_at_the_end_of_the_value():
    for n in range(len(GOOD)):
        if n == 6 + 19 * 2:
            continue            # the dtype pair is optional: a caterva value
        frame, at = _frame_with_meta(GOOD[:n])
        with blosckit.open_frame(frame) as f, pytest.raises(blosckit.FormatError) as e:
            f.b2nd
        assert e.value.rule == "F-b2nd"
        assert e.value.path.startswith("frame.metalayers['b2nd']")
        assert at <= e.value.offset <= at + n, (n, e.value)
    assert [p.rule for p in blosckit.validate(frame)] == ["F-b2nd"]


@pytest.mark.parametrize("field,d,value,rule,path", [
    ("shape", 1, -1, "F-b2nd-shape", "shape[1]"),
    ("chunkshape", 0, -4, "F-b2nd-shape", "shape[0]"),
    ("blockshape", 1, 0, "F-b2nd-shape", "blockshape[1]"),
    ("chunkshape", 1, 0, "F-b2nd-shape", "chunkshape[1]"),
])
def test_extent_rules_name_the_extent(field, d, value, rule, path):
    ext = {"shape": [7, 5], "chunkshape": [4, 4], "blockshape": [2, 3]}
    ext[field][d] = value
    frame, at = _frame_with_meta(fb.build_meta(ext["shape"], ext["chunkshape"],
                                               ext["blockshape"], "<i4"))
    with blosckit.open_frame(frame) as f, pytest.raises(blosckit.FormatError) as e:
        f.b2nd
    assert (e.value.rule, e.value.path) == (rule, f"frame.metalayers['b2nd'].{path}")
    field_of_path = path.split("[")[0]
    assert e.value.offset == at + fb.extent_offset(2, field_of_path, int(path[-2]))
    problems = blosckit.validate(frame)
    assert [(p.rule, p.offset) for p in problems] == [(rule, e.value.offset)]


def test_ndim_above_16_is_refused_at_ndim():
    bad = bytearray(GOOD)
    bad[2] = 17
    frame, at = _frame_with_meta(bytes(bad))
    with blosckit.open_frame(frame) as f, pytest.raises(blosckit.FormatError) as e:
        f.b2nd
    assert (e.value.offset, e.value.path) == (at + 2, "frame.metalayers['b2nd'].ndim")


def test_negative_dtype_length_and_bad_dtype_marker():
    for pos, byte in ((len(GOOD) - 7, 0xFF), (len(GOOD) - 8, 0xD9)):
        bad = bytearray(GOOD)
        bad[pos] = byte
        frame, at = _frame_with_meta(bytes(bad))
        with blosckit.open_frame(frame) as f, pytest.raises(blosckit.FormatError) as e:
            f.b2nd
        assert e.value.rule == "F-b2nd" and ".dtype." in e.value.path
        assert e.value.offset >= at + pos


def test_dtype_that_is_not_utf8_is_refused_at_its_byte():
    bad = GOOD[:-2] + b"\xff4"
    frame, at = _frame_with_meta(bad)
    with blosckit.open_frame(frame) as f, pytest.raises(blosckit.FormatError) as e:
        f.b2nd
    assert (e.value.offset, e.value.path) == (at + len(GOOD) - 2,
                                              "frame.metalayers['b2nd'].dtype.dtype")


def test_caterva_metalayer_without_dtype_is_read():
    """C-Blosc2 falls back to a "caterva" metalayer, whose value may lack the
    dtype pair."""
    frame, _ = _frame_with_meta(fb.build_meta((7, 5), (4, 4), (2, 3), None), "caterva")
    with blosckit.open_frame(frame) as f:
        # no dtype stored: python-blosc2's reading, byte strings of typesize
        assert f.b2nd.name == "caterva" and f.b2nd.dtype_format is None
        assert f.b2nd.dtype == "|S4"
        assert f.b2nd.read() == np.arange(35, dtype="<i4").tobytes()
    arr = blosc2.ndarray_from_cframe(frame)
    assert arr.shape == (7, 5) and arr.dtype.str == f.b2nd.dtype


def test_array_frame_without_chunks_is_refused():
    """Found by atheris: a frame with no data whose b2nd shape holds items
    made read() ask for chunk 0 (IndexError); the grid must match."""
    frame = blosckit.build_frame([], metalayers={"b2nd": fb.build_meta((3, 5), (4, 4), (2, 3),
                                                                       "<f8")})
    with blosckit.open_frame(frame) as f, pytest.raises(blosckit.FormatError) as e:
        f.b2nd.read()
    assert e.value.rule == "F-b2nd" and "holds 2 chunks, the frame 0" in e.value.message
    # and a frame without chunks says typesize 1, which no <f8 item fits
    assert [p.rule for p in blosckit.validate(frame)] == ["F-b2nd", "F-b2nd-dtype"]


def test_grid_mismatch_is_reported_at_the_metalayer():
    frame, at = _frame_with_meta(fb.build_meta((9, 5), (4, 4), (2, 3), "<i4"))
    problems = blosckit.validate(frame)
    assert [(p.rule, p.offset, p.path) for p in problems] == [
        ("F-b2nd", at, "frame.metalayers['b2nd']")]


# -- the native run kernel against its Python reference

@given(data=st.data())
def test_native_runs_match_python(data):
    from blosckit.frame import b2nd
    ndim = data.draw(st.integers(0, 4))
    shape = data.draw(st.lists(st.integers(1, 7), min_size=ndim, max_size=ndim))
    cshape = [data.draw(st.integers(1, s + 1)) for s in shape]
    bshape = [data.draw(st.integers(1, c + 1)) for c in cshape]
    ts = data.draw(st.sampled_from([1, 2, 3, 8]))
    arr = bytes(range(256)) * (math.prod(shape) * ts // 256 + 1)
    arr = arr[:math.prod(shape) * ts]
    padded = fb.padded_items(cshape, bshape) * ts
    # the production path: inner chunks reuse the origin chunk's runs, moved
    layout = b2nd._Layout(shape, cshape, bshape, ts)
    for corner in b2nd._grid(fb.chunk_grid(shape, cshape)):
        origin = [k * c for k, c in zip(corner, cshape)]
        runs = list(b2nd._runs(shape, cshape, bshape, origin, ts))
        got, want = bytearray(padded), bytearray(padded)
        layout.copy(corner, got, arr, to_chunk=True)
        helpers.copy_runs_python(want, memoryview(arr), runs, to_chunk=True)
        assert got == want
        back, back_py = bytearray(len(arr)), bytearray(len(arr))
        layout.copy(corner, bytes(got), back, to_chunk=False)
        helpers.copy_runs_python(memoryview(bytes(got)), back_py, runs, to_chunk=False)
        assert back == back_py


def test_native_runs_refuse_runs_outside_the_buffers():
    from array import array

    from blosckit import native
    chunk, arr = bytearray(64), bytearray(b"x" * 64)
    for run in ([0, 0, 65, 1, 0, 0], [0, 60, 8, 1, 0, 0], [0, 0, 8, 2, 60, 0],
                [-1, 0, 1, 1, 0, 0], [0, 0, 1, 2 ** 62, 2 ** 62, 0], [0, 0, 8, 9, 8, 8]):
        with pytest.raises(ValueError, match="leaves its buffer"):
            native.copy_runs(chunk, arr, array("q", [0, 0, 4, 1, 0, 0] + run), True)
        assert chunk == bytearray(64)          # checked before any byte moved
    native.copy_runs(chunk, arr, array("q", [0, 0, 8, 8, 8, 8]), True)
    assert chunk == arr
    assert blosckit.native_info()["b2nd"]["path"] == "native"


@pytest.mark.parametrize("dtype,fmt,warned", [
    ("<f4", 0, False), ("[('a', '<i2'), ('b', '<i2')]", 0, False),
    ("{'names': ['a'], 'formats': ['<i4']}", 0, False),
    ("foo", 0, True), ("<f4", 1, True), ("\x00<f4", 0, True),
])
def test_dtypes_python_blosc2_cannot_read_are_v21(dtype, fmt, warned):
    """python-blosc2 turns the dtype string into a NumPy dtype and fails on
    some; C-Blosc2 and blosckit read the items whatever the string (V21)."""
    raw = bytes(range(16))
    meta = fb.build_meta((4,), (2,), (2,), dtype, dtype_format=fmt)
    frame = blosckit.compress_b2nd(raw, shape=(4,), dtype="<f4", chunkshape=(2,),
                                   blockshape=(2,))
    with blosckit.open_frame(frame) as f:
        chunks = [f.chunk(i) for i in range(f.nchunks)]
    frame = blosckit.build_frame(chunks, metalayers={"b2nd": meta})
    with blosckit.open_frame(frame) as f:
        assert f.b2nd.read() == raw and f.b2nd.dtype == dtype
        at = f.metalayer_at["b2nd"] + fb.extent_offset(1, "dtype", 0)
    problems = [(p.rule, p.offset) for p in blosckit.validate(frame)]
    assert problems == ([("V21", at if fmt == 0 else at - 6)] if warned else [])
    if warned:      # python-blosc2 raises what NumPy or literal_eval raise
        with pytest.raises(Exception):
            blosc2.ndarray_from_cframe(frame, copy=True)[...]
    else:
        assert blosc2.ndarray_from_cframe(frame, copy=True)[...].tobytes() == raw


def test_fuzz_found_dtype_is_v21():
    from blosckit.testing import fuzz
    blob = (Path(__file__).parent / "data" / "fuzz-found" /
            "b2nd-dtype-numpy-cannot-parse.b2frame").read_bytes()
    ours = fuzz.blosckit_outcome(blob, "frame")
    theirs, = fuzz.c_blosc2_verdicts([blob], kind="frame")
    assert theirs.b2_ok and theirs.array_ok is False and isinstance(ours.array, bytes)
    assert fuzz.classify(blob, "frame", ours, theirs) == (
        "c-rejects", "known divergence V21 (the n-d array)")


def test_caps_bound_frame_and_array_outputs():
    """Zeros chunks stand for data of any size: a frame of 4 such chunks of
    2**30 bytes each opens; decompress and read refuse beyond max_nbytes
    before allocating anything."""
    zeros = blosckit.compress_special("zeros", 1 << 30, typesize=4)
    side = 1 << 14          # 2**14 x 2**14 items of 4 bytes: 2**30 bytes per chunk
    meta = fb.build_meta((2 * side, 2 * side), (side, side), (side, 64), "<f4")
    frame = blosckit.build_frame([zeros] * 4, metalayers={"b2nd": meta})
    with blosckit.open_frame(frame) as f:
        assert f.nbytes == 1 << 32
        with pytest.raises(blosckit.FormatError) as e:
            f.decompress(max_nbytes=1 << 20)
        assert (e.value.rule, e.value.path) == ("T-max-nbytes", "frame.header.nbytes")
        with pytest.raises(blosckit.FormatError) as e:
            f.b2nd.read(max_nbytes=1 << 20)
        assert (e.value.rule, e.value.path) == ("T-max-nbytes",
                                                "frame.metalayers['b2nd'].shape")
        assert e.value.offset == f.metalayer_at["b2nd"]

