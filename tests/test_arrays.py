"""Arrays as users hold them: ``B2nd.array()`` and ``B2nd[...]`` against
NumPy indexing of the data python-blosc2 stored, structured dtypes end to
end through the CLI, raw output in C order, non-contiguous inputs, and the
same bytes and status from ``decompress`` on a terminal as in a pipe."""
from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blosckit
from blosckit.formats import b2nd as fb
import cli_runner
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")

CASES = [  # shape, chunks, blocks (edge chunks and blocks, several ranks)
    ((7, 9, 5), (3, 4, 5), (2, 3, 2)),
    ((333, 517), (100, 128), (25, 32)),
    ((10,), (4,), (3,)),
    ((4, 1, 6), (2, 1, 4), (1, 1, 3)),
]


def _frame(a, chunks, blocks) -> bytes:
    return bytes(blosc2.asarray(a, chunks=chunks, blocks=blocks).to_cframe())


@pytest.mark.parametrize("shape, chunks, blocks", CASES)
def test_array_is_what_python_blosc2_stored(shape, chunks, blocks):
    a = np.arange(np.prod(shape), dtype="<f4").reshape(shape) * 0.5
    b = blosckit.open_frame(_frame(a, chunks, blocks)).b2nd
    got = b.array()
    assert got.dtype == a.dtype and got.shape == a.shape and (got == a).all()
    assert b.read() == a.tobytes()
    pieces = list(b.iter_read())        # a row of chunks at a time
    assert len(pieces) == b.grid[0] and b"".join(pieces) == a.tobytes()


def _index(shape):
    """A NumPy basic index over ``shape``: integers, slices with steps of
    either sign, an ellipsis."""
    def one(n):
        return st.one_of(st.integers(-n, n - 1) if n else st.nothing(),
                         st.builds(slice, st.integers(-n - 2, n + 2) | st.none(),
                                   st.integers(-n - 2, n + 2) | st.none(),
                                   st.sampled_from([None, 1, 2, 3, -1, -2])))
    full = st.tuples(*[one(n) for n in shape])
    return st.one_of(full, full.map(lambda k: k[:1] + (Ellipsis,)), full.map(lambda k: k[0]))


_SHAPE, _CHUNKS, _BLOCKS = CASES[0]
_DATA = np.arange(np.prod(_SHAPE), dtype="<i8").reshape(_SHAPE)
_ARRAY = blosckit.open_frame(_frame(_DATA, _CHUNKS, _BLOCKS)).b2nd


@given(_index(_SHAPE))
@settings(max_examples=200, deadline=None)
def test_indexing_is_numpy_s(key):
    want = _DATA[key]
    got = _ARRAY[key]
    assert np.shape(got) == np.shape(want) and np.all(got == want), key


def test_indexing_decodes_only_the_chunks_it_touches(monkeypatch):
    """Every way to a chunk's bytes goes through ``locate`` (one chunk) or
    ``native_batch`` (the whole section): a region takes the first only,
    for the chunks it touches."""
    f = blosckit.open_frame(_frame(_DATA, _CHUNKS, _BLOCKS))
    seen = []
    real = f.locate
    monkeypatch.setattr(f, "locate", lambda i: seen.append(i) or real(i))
    monkeypatch.setattr(f, "native_batch", lambda: pytest.fail("the whole section read"))
    assert (f.b2nd[0, 0:4, :] == _DATA[0, 0:4, :]).all()
    assert set(seen) == {0}


def test_bad_indexes_are_numpy_s_errors():
    for key in (7, -8, (0, 0, 0, 0), (Ellipsis, Ellipsis), 1.5):
        with pytest.raises(IndexError):
            _ARRAY[key]


def test_zero_dimensional_and_empty_arrays():
    b = blosckit.open_frame(bytes(blosc2.asarray(np.array(3.5)).to_cframe())).b2nd
    assert b.array() == np.array(3.5) and b[()] == 3.5
    e = blosckit.open_frame(bytes(blosc2.asarray(np.zeros((0, 4))).to_cframe())).b2nd
    assert e.array().shape == (0, 4) and e[:, 1:3].shape == (0, 2)


STRUCT = np.dtype([("x", "<i4"), ("y", "<f8"), ("tag", "S3")])


def _records(n: int):
    r = np.zeros(n, STRUCT)
    r["x"], r["y"], r["tag"] = np.arange(n), np.arange(n) / 4, [b"ab%d" % (i % 10) for i in range(n)]
    return r


def test_structured_dtype_from_python_blosc2():
    r = _records(50).reshape(10, 5)
    b = blosckit.open_frame(_frame(r, (4, 2), (2, 2))).b2nd
    assert b.numpy_dtype() == STRUCT
    assert (b.array() == r).all() and (b[3:7, 1] == r[3:7, 1]).all()


def test_structured_npy_round_trips_through_the_cli(tmp_path):
    r = _records(101).reshape(101, 1)
    np.save(tmp_path / "r.npy", r)
    for argv in (["compress", tmp_path / "r.npy", tmp_path / "r.b2nd"],
                 ["decompress", tmp_path / "r.b2nd", tmp_path / "back.npy"]):
        res = cli_runner.blosckit(*argv)
        assert res.returncode == 0, res.stderr
    theirs = blosc2.open(str(tmp_path / "r.b2nd"))
    assert theirs.dtype == STRUCT and (theirs[...] == r).all()
    back = np.load(tmp_path / "back.npy")
    assert back.dtype == STRUCT and (back == r).all()


def test_structured_arrays_keep_their_fields_through_the_api():
    """compress_b2nd and B2ndWriter given a record array store its fields
    as python-blosc2 does (they stored ``|V..``, losing them)."""
    r = _records(60).reshape(12, 5)
    whole = blosckit.compress_b2nd(r, chunkshape=(5, 5), blockshape=(2, 5))
    w = io.BytesIO()
    with blosckit.B2ndWriter(w, shape=r.shape, dtype=r.dtype, chunkshape=(5, 5),
                             blockshape=(2, 5)) as out:
        for i in range(0, 12, 5):          # chunk by chunk, the last one short
            out.write_chunk((i // 5, 0), r[i:i + 5])
    for frame in (whole, w.getvalue()):
        theirs = blosc2.ndarray_from_cframe(frame)
        assert theirs.dtype == STRUCT and (theirs[...] == r).all()
        assert blosckit.open_frame(frame).b2nd.numpy_dtype() == STRUCT


def test_raw_decompress_of_an_array_is_c_order_unless_stored(tmp_path):
    a = np.arange(333 * 517, dtype="i8").reshape(333, 517) % 1000
    path = tmp_path / "a.b2nd"
    blosc2.asarray(a, chunks=(100, 128), blocks=(25, 32), urlpath=str(path), mode="w")
    assert cli_runner.blosckit("decompress", path, tmp_path / "a.raw").returncode == 0
    assert (tmp_path / "a.raw").read_bytes() == a.tobytes()
    assert cli_runner.blosckit("decompress", "--stored", path,
                               tmp_path / "s.raw").returncode == 0
    arr = blosc2.open(str(path))       # the schunk lives as long as the array
    sc = arr.schunk
    assert (tmp_path / "s.raw").read_bytes() == b"".join(
        bytes(sc.decompress_chunk(i)) for i in range(sc.nchunks))


@pytest.mark.parametrize("make", [
    lambda: np.asfortranarray(np.arange(60.0).reshape(6, 10)),
    lambda: np.arange(200.0).reshape(10, 20)[::2, 3::4],
], ids=["fortran", "strided"])
def test_non_contiguous_arrays_are_compressed_in_c_order(make):
    a = make()
    assert not a.flags.c_contiguous
    frame = blosckit.compress_b2nd(a, chunkshape=(2, 2), blockshape=(1, 2))
    assert (blosc2.ndarray_from_cframe(frame)[...] == a).all()
    framed = blosckit.compress_frame(a, chunksize=16)
    assert blosc2.schunk_from_cframe(framed)[:] == a.tobytes()


def test_a_dtype_wider_than_the_typesize_is_an_error():
    """python-blosc2's frame with its dtype string changed from <f4 to <f8
    (same length): C-Blosc2 keeps the string, NumPy readers cut the items
    wrong; blosckit reports F-b2nd-dtype at the dtype string."""
    a = np.arange(20, dtype="<f4")
    frame = bytearray(_frame(a, (8,), (4,)))
    f = blosckit.open_frame(bytes(frame))
    raw = f.metalayers["b2nd"]
    at = f.b2nd.offset + fb.extent_offset(1, "dtype", 0)
    assert bytes(frame[at:at + 3]) == b"<f4" and raw.endswith(b"<f4")
    frame[at + 2:at + 3] = b"8"
    blob = bytes(frame)
    problems = [p for p in blosckit.validate(blob) if p.severity == "error"]
    assert [(p.rule, p.offset) for p in problems] == [("F-b2nd-dtype", at)], problems
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(blob).b2nd.array()
    assert e.value.rule == "F-b2nd-dtype"


def _on_a_terminal(argv: list[str]) -> int:
    """Exit status of the CLI run with stdin, stdout and stderr on a
    pseudo-terminal (progress lines on)."""
    pid, fd = pty.fork()
    if pid == 0:                                        # the child
        os.execv(sys.executable, [sys.executable, "-m", "blosckit", *argv])
    while True:
        try:
            if not os.read(fd, 1 << 16):
                break
        except OSError:                                 # the child closed the terminal
            break
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize("name", ["array", "damaged",
                                  pytest.param("frame", marks=pytest.mark.long),
                                  pytest.param("npy", marks=pytest.mark.long)])
def test_terminal_and_pipe_give_the_same_bytes_and_status(tmp_path, name):
    # above 64 MiB the progress line shows on the terminal (the frame and
    # array cases); the others are small
    n = 9_000_000 if name in ("frame", "array") else 3_000_000
    a = np.arange(n, dtype="<i8")
    src = tmp_path / "in.b2"
    if name == "frame":
        blosc2.SChunk(chunksize=1 << 20, data=a, urlpath=str(src), mode="w",
                      cparams=blosc2.CParams(typesize=8))
    else:
        blosc2.asarray(a.reshape(-1, 1000), chunks=(500, 1000), blocks=(50, 1000),
                       urlpath=str(src), mode="w")
    if name == "damaged":                          # the last chunk cut short
        src.write_bytes(src.read_bytes()[:-400])
    out = "out.npy" if name == "npy" else "out.raw"
    tty = _on_a_terminal(["decompress", str(src), str(tmp_path / ("tty-" + out))])
    pipe = subprocess.run([sys.executable, "-m", "blosckit", "decompress", str(src),
                           str(tmp_path / ("pipe-" + out))], capture_output=True)
    assert tty == pipe.returncode == (1 if name == "damaged" else 0), pipe.stderr
    made = sorted(p.name for p in tmp_path.iterdir() if p.name != "in.b2")
    if name == "damaged":
        assert made == []                           # no partial output, ever
    else:
        assert (tmp_path / ("tty-" + out)).read_bytes() == \
            (tmp_path / ("pipe-" + out)).read_bytes()


def test_a_hostile_shape_is_refused_before_anything_is_allocated():
    """An array claiming 10**18 items over one 64-byte chunk: array() and
    indexing allocated their output first (MemoryError); now the checks and
    the first chunk come first, and every read says F-b2nd."""
    chunk = blosckit.compress(bytes(64), typesize=8)
    frame = blosckit.build_frame([chunk], metalayers={"b2nd": fb.build_meta(
        (10**9, 10**9), (10**9, 10**9), (1, 1), "<f8")})
    b = blosckit.open_frame(frame).b2nd
    for read in (lambda: b.array(max_nbytes=None), lambda: b[5:7, 9],
                 lambda: b.read(max_nbytes=None)):
        with pytest.raises(blosckit.FormatError) as e:
            read()
        assert e.value.rule == "F-b2nd" and e.value.offset == b.offset
    # with the default cap (2**31 - 1 bytes), the size is refused first
    for read in (b.array, b.read):
        with pytest.raises(blosckit.FormatError) as e:
            read()
        assert (e.value.rule, e.value.offset, e.value.path) == (
            "T-max-nbytes", b.offset, "frame.metalayers['b2nd'].shape")


# ---------------------------------------------------------------------------
# Whole outputs are capped by default (2**31 - 1 bytes); streams are not
# ---------------------------------------------------------------------------

_ROW, _ROWS, _NCHUNKS = 1024, 256, 2049      # a chunk: 256 rows of 1024 float32, 1 MiB


def _zeros_array_frame() -> bytes:
    """A b2nd frame of 2049 zeros chunks of 1 MiB, stored as special
    offsets (a few bytes each): it claims 2049 MiB of float32, above the
    cap, as python-blosc2 reads it."""
    zeros = blosckit.compress_special("zeros", 1 << 20, typesize=4)
    meta = fb.build_meta((_NCHUNKS * _ROWS, _ROW), (_ROWS, _ROW), (16, _ROW), "<f4")
    frame = blosckit.build_frame([zeros] * _NCHUNKS, metalayers={"b2nd": meta})
    arr = blosc2.ndarray_from_cframe(frame)
    assert arr.shape == (_NCHUNKS * _ROWS, _ROW) and arr.dtype == np.float32
    assert arr.schunk.nbytes == _NCHUNKS << 20 > 2**31 - 1
    return frame


def test_whole_outputs_are_capped_by_default_and_streams_are_not():
    """Frame.decompress, B2nd.read and B2nd.array default to max_nbytes
    2**31 - 1 (API.md): a frame claiming more raises T-max-nbytes at the
    size field before anything is allocated.  iter_decompress and
    iter_read, which hold one piece at a time, take no cap by default."""
    frame = _zeros_array_frame()
    f = blosckit.open_frame(frame)
    b = f.b2nd
    shape_path = "frame.metalayers['b2nd'].shape"
    for read, path, at in ((f.decompress, "frame.header.nbytes",
                            blosckit.formats.frame.HEADER.offset("nbytes")),
                           (b.read, shape_path, b.offset), (b.array, shape_path, b.offset)):
        with pytest.raises(blosckit.FormatError) as e:
            read()
        assert (e.value.rule, e.value.path, e.value.offset) == ("T-max-nbytes", path, at)
    first = next(f.iter_decompress())               # a run of whole chunks
    assert len(first) % (1 << 20) == 0 and first == bytes(len(first))
    assert next(b.iter_read()) == bytes(1 << 20)     # a row of chunks


# Runs the command line with its output cut to the first two pieces: the
# whole would be 2049 MiB.  One child for the three runs.
_FIRST_PIECES = """
import json, sys
import blosckit.cli.decompress as command
from blosckit.cli import main

def first_pieces(name, parts):
    parts = iter(parts)
    return sum(len(next(parts)) for _ in range(2))

command.write_output = first_pieces
src, out = sys.argv[1:]
print(json.dumps([main(["decompress", src, out + ".raw"]),
                  main(["decompress", "--stored", src, out + ".raw"]),
                  main(["decompress", src, out + ".npy"])]))
"""


def test_the_command_line_streams_frames_above_the_cap(tmp_path):
    """``blosckit decompress`` writes as it decodes, so a frame above the
    cap of the in-memory calls decodes as any other: raw (C order), raw as
    stored, and .npy (NumPy's header for the shape, then the rows)."""
    src = tmp_path / "big.b2nd"
    src.write_bytes(_zeros_array_frame())
    r = subprocess.run([sys.executable, "-c", _FIRST_PIECES, str(src), str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and json.loads(r.stdout) == [0, 0, 0], r.stderr
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False,
                                                  "shape": (_NCHUNKS * _ROWS, _ROW)})
    said = [int(line.split(" -> ")[1].split()[0]) for line in r.stderr.splitlines()]
    first = blosckit.open_frame(src)
    run = len(next(first.iter_decompress()))       # a stored piece: a run of chunks
    assert said == [2 << 20, 2 * run, len(header.getvalue()) + (1 << 20)], r.stderr
