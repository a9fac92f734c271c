"""The streaming writers: FrameWriter writes the bytes build_frame makes
from the same chunks and python-blosc2 writes for the same data, to paths,
seekable files and pipes, in memory that does not grow with the frame;
B2ndWriter takes an array chunk by chunk, in any order, and python-blosc2
reads the array back."""
from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
import textwrap
import threading

import msgpack
import pytest

import blosckit
from blosckit.frame.b2nd import compress_b2nd
from blosckit.frame.build import build_frame
from blosckit.frame.writer import B2ndWriter, FrameWriter, compress_frame
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")


def _pinned(typesize=4, codec=blosc2.Codec.ZSTD, **kw):
    """python-blosc2's parameters for blosckit's defaults: one thread each
    way (deterministic output), the shuffle in filter slot 0."""
    return dict(cparams=blosc2.CParams(typesize=typesize, codec=codec, clevel=5, nthreads=1,
                                       filters=[blosc2.Filter.SHUFFLE], filters_meta=[0], **kw),
                dparams=blosc2.DParams(nthreads=1))


DATA = (np.sin(np.arange(250_000) / 100) * 1000).astype("<i4")


def _written(pieces, **kw) -> bytes:
    out = io.BytesIO()
    with FrameWriter(out, **kw) as w:
        for p in pieces:
            w.write(p)
    return out.getvalue()


# ---------------------------------------------------------------------------
# The same bytes as build_frame and python-blosc2
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("cut", [1, 999, 48_000, 123_457, None])
def test_writes_of_any_size_give_python_blosc2s_frame(cut):
    """Data written in pieces of any size is cut into chunks of chunksize
    bytes as python-blosc2's ``SChunk(data=...)`` cuts it (20 chunks of
    48,000 bytes and a shorter last one of 40,000)."""
    raw = DATA.tobytes()
    pieces = [DATA] if cut is None else [raw[i:i + cut] for i in range(0, len(raw), cut)]
    if cut == 1:                     # 200 bytes in single bytes: one short chunk
        pieces, raw = pieces[:200], raw[:200]
    mine = _written(pieces, chunksize=48_000, typesize=4, codec="zstd")
    sc = blosc2.SChunk(chunksize=48_000, data=raw, **_pinned())
    assert mine == bytes(sc.to_cframe())
    f = blosckit.open_frame(mine)
    assert f.nchunks == (1 if cut == 1 else 21)
    chunks = [f.chunk(i) for i in range(f.nchunks)]
    assert build_frame(chunks, chunksize=48_000) == mine


def test_typesize_comes_from_the_first_array_written():
    mine = _written([DATA], chunksize=48_000, codec="zstd")
    assert mine == bytes(blosc2.SChunk(chunksize=48_000, data=DATA, **_pinned()).to_cframe())
    assert blosckit.open_frame(mine).typesize == 4


@pytest.mark.parametrize("sizes", [[1000, 500, 1000], [1000, 1000, 250, 1000],
                                   [500, 2000, 10, 3, 7], [1000, 1000, 500]])
def test_appended_chunks_give_python_blosc2s_variable_size_frames(sizes):
    sc = blosc2.SChunk(chunksize=4000, meta={"m": [1]}, **_pinned(codec=blosc2.Codec.LZ4))
    for i, n in enumerate(sizes):
        sc.append_data(np.arange(n, dtype="<i4") * (i + 3))
    sc.vlmeta["v"] = "x"
    ref = bytes(sc.to_cframe())
    out = io.BytesIO()
    with FrameWriter(out, chunksize=4000, typesize=4, metalayers={"m": msgpack.packb([1])}) as w:
        for i in range(sc.nchunks):
            w.append_chunk(sc.get_chunk(i))
        w.set_vlmetalayer("v", msgpack.packb("y"))
        w.set_vlmetalayer("v", msgpack.packb("x"))       # replaced
    assert out.getvalue() == ref


def test_compress_frame_pieces_of_any_size():
    """An iterable of pieces: one chunk each (python-blosc2's append_data);
    python-blosc2 decodes every chunk to its piece."""
    pieces = [np.arange(n, dtype="<f8") / 7 for n in (5000, 1200, 5000, 3, 0, 9000)]
    mine = compress_frame(pieces, codec="lz4", clevel=7)
    chunks = [blosckit.compress(p, codec="lz4", clevel=7) for p in pieces]
    assert mine == build_frame(chunks, clevel=7)
    got = blosc2.schunk_from_cframe(mine, copy=True)
    assert got.chunksize == 0 and got.typesize == 8
    assert [bytes(got.decompress_chunk(i)) for i in range(got.nchunks)] == \
        [p.tobytes() for p in pieces]


def test_special_chunks_become_special_offsets_as_in_build_frame():
    """Zeros compress to a zeros chunk (as in C-Blosc2), appended special
    chunks stay special: special offsets, as build_frame makes them."""
    nan = blosckit.compress_special("nan", 40_000, typesize=4)
    uninit = blosckit.compress_special("uninit", 40_000, typesize=4)
    out = io.BytesIO()
    with FrameWriter(out, chunksize=40_000) as w:
        w.write(np.zeros(10_000, "<f4"))
        w.append_chunk(nan)
        w.write(np.arange(10_000, dtype="<f4"))
        w.append_chunk(uninit)
        w.write(np.zeros(100, "<f4"))
    mine = out.getvalue()
    f = blosckit.open_frame(mine)
    assert f.offsets[:2] == ["zeros", "nan"] and f.offsets[3:] == ["uninit", "zeros"]
    chunks = [blosckit.compress(np.zeros(10_000, "<f4")), nan,
              blosckit.compress(np.arange(10_000, dtype="<f4")), uninit,
              blosckit.compress(np.zeros(100, "<f4"))]
    assert build_frame(chunks, chunksize=40_000) == mine
    got = blosc2.schunk_from_cframe(mine, copy=True)
    assert got.nchunks == 5
    want = [np.zeros(10_000, "<f4"), np.full(10_000, np.nan, "<f4"),
            np.arange(10_000, dtype="<f4"), None, np.zeros(100, "<f4")]
    for i, a in enumerate(want):
        if a is not None:                        # uninit: any bytes
            assert bytes(got.decompress_chunk(i)) == a.tobytes()


def test_a_special_chunk_turned_into_a_stored_one_matches_build_frame():
    full = blosckit.compress(np.arange(1000, dtype="<i4"))
    short = blosckit.compress(np.arange(500, dtype="<i4"))
    zeros = blosckit.compress_special("zeros", 4000, typesize=4)
    chunks = [full, zeros, short, full, zeros]
    out = io.BytesIO()
    with FrameWriter(out, chunksize=4000, typesize=4) as w:
        for c in chunks:
            w.append_chunk(c)
    assert out.getvalue() == build_frame(chunks, chunksize=4000)
    got = blosc2.schunk_from_cframe(out.getvalue(), copy=True)
    assert [bytes(got.decompress_chunk(i)) for i in range(5)] == \
        [blosckit.decompress(c) for c in chunks]


@pytest.mark.parametrize("meta", [{}, {"m": [1, 2]}])
def test_an_empty_frame_is_python_blosc2s_empty_super_chunk(meta):
    """No chunk: typesize, codec and filters from the writer's parameters;
    the chunk size unset (-1) unless a metalayer made python-blosc2 rewrite
    the header after setting it."""
    sc = blosc2.SChunk(chunksize=4000, meta=meta, **_pinned())
    packed = {k: msgpack.packb(v) for k, v in meta.items()}
    mine = compress_frame(b"", chunksize=4000, typesize=4, codec="zstd", metalayers=packed)
    assert mine == bytes(sc.to_cframe())
    out = io.BytesIO()
    with FrameWriter(out, chunksize=4000, typesize=4, codec="zstd", metalayers=packed):
        pass
    assert out.getvalue() == mine


def test_metalayers_and_vlmetalayers_reach_python_blosc2(tmp_path):
    path = tmp_path / "m.b2frame"
    with FrameWriter(path, chunksize=8000, metalayers={"a": msgpack.packb({"k": 1}),
                                                      "bb": msgpack.packb([1, 2, 3])}) as w:
        w.set_vlmetalayer("early", msgpack.packb("one"))
        w.write(np.arange(5000, dtype="<i8"))
        w.set_vlmetalayer("late", msgpack.packb({"x": [1.5]}))
    sc = blosc2.open(str(path))
    assert list(sc.meta.keys()) == ["a", "bb"] and sc.meta["a"] == {"k": 1}
    assert sc.vlmeta["early"] == "one" and sc.vlmeta["late"] == {"x": [1.5]}
    assert sc[:] == np.arange(5000, dtype="<i8").tobytes()


# ---------------------------------------------------------------------------
# Targets: paths, file objects at an offset, pipes
# ---------------------------------------------------------------------------

def test_a_path_and_a_file_object_at_an_offset(tmp_path):
    ref = compress_frame(DATA, chunksize=100_000, codec="zstd")
    path = tmp_path / "a.b2frame"
    with FrameWriter(str(path), chunksize=100_000, codec="zstd") as w:
        w.write(DATA)
    assert path.read_bytes() == ref and w.frame_len == len(ref)
    with open(tmp_path / "b.bin", "wb") as fh:
        fh.write(b"prefix")
        with FrameWriter(fh, chunksize=100_000, codec="zstd") as w:
            w.write(DATA)
        fh.write(b"suffix")
    assert (tmp_path / "b.bin").read_bytes() == b"prefix" + ref + b"suffix"


def test_a_pipe_gets_the_frame_at_close():
    """A file object that cannot seek: the frame is spooled to a temporary
    file and copied out at close."""
    ref = compress_frame(DATA, chunksize=100_000, codec="zstd")
    r, w_fd = os.pipe()
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(os.fdopen(r, "rb").read()))
    reader.start()
    with os.fdopen(w_fd, "wb") as pipe:
        assert not pipe.seekable()
        with FrameWriter(pipe, chunksize=100_000, codec="zstd") as w:
            w.write(DATA)
    reader.join()
    assert got == [ref]


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

def test_closing_twice_and_using_a_closed_writer_are_errors():
    w = FrameWriter(io.BytesIO(), chunksize=800)
    w.write(b"x" * 1000)
    w.close()
    for call in (w.close, lambda: w.write(b"y"), lambda: w.append_chunk(blosckit.compress(b"z")),
                 lambda: w.set_vlmetalayer("v", b"1"), lambda: w.append_data(b"q")):
        with pytest.raises(ValueError, match="closed"):
            call()


def test_bad_parameters_are_value_errors_before_anything_is_written(tmp_path):
    for kw in (dict(chunksize=0), dict(chunksize=10, typesize=4), dict(chunksize=8, codec="nope"),
               dict(chunksize=8, clevel=12), dict(chunksize=8, metalayers={"x" * 40: b""})):
        with pytest.raises(ValueError):
            FrameWriter(tmp_path / "never.b2frame", **kw)
        assert not (tmp_path / "never.b2frame").exists()
    w = FrameWriter(io.BytesIO(), chunksize=None)
    with pytest.raises(ValueError, match="chunksize"):
        w.write(b"abc")
    with pytest.raises(ValueError, match="name"):
        w.set_vlmetalayer("", b"1")
    w = FrameWriter(io.BytesIO(), chunksize=10)
    with pytest.raises(ValueError, match="multiple"):
        w.write(np.arange(3, dtype="<i4"))              # typesize 4 does not divide 10
    with pytest.raises(ValueError):
        FrameWriter(io.BytesIO(), chunksize=8).append_chunk(b"not a chunk at all, no")


def test_an_exception_in_the_block_removes_the_file(tmp_path):
    path = tmp_path / "gone.b2frame"
    with pytest.raises(KeyError):
        with FrameWriter(path, chunksize=4000) as w:
            w.write(bytes(10_000))
            raise KeyError("stop")
    assert not path.exists()


# ---------------------------------------------------------------------------
# B2ndWriter
# ---------------------------------------------------------------------------

ARRAY = np.arange(333 * 517, dtype="<i8").reshape(333, 517) % 1000
GRID_ARGS = dict(chunkshape=(100, 128), blockshape=(25, 32))


def _chunk(a, coords, chunkshape):
    return a[tuple(slice(c * n, (c + 1) * n) for c, n in zip(coords, chunkshape))]


def _coords(grid):
    return [tuple(int(x) for x in c) for c in np.ndindex(*grid)]


def test_b2nd_chunks_in_c_order_give_compress_b2nds_bytes(tmp_path):
    path = tmp_path / "c.b2nd"
    with B2ndWriter(path, shape=ARRAY.shape, dtype=ARRAY.dtype, **GRID_ARGS) as w:
        assert w.grid == (4, 5)
        for c in _coords(w.grid):
            w.write_chunk(c, _chunk(ARRAY, c, GRID_ARGS["chunkshape"]))
    assert path.read_bytes() == compress_b2nd(ARRAY, **GRID_ARGS)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("array,chunkshape,blockshape", [
    (ARRAY, (100, 128), (25, 32)),
    (np.linspace(0, 1, 7 * 45 * 33).reshape(7, 45, 33).astype("<f4"), (3, 20, 16), (2, 7, 5)),
    (np.arange(1001, dtype="<u2"), (64,), (16,)),
])
def test_b2nd_chunks_in_any_order_read_back_in_python_blosc2(tmp_path, seed, array, chunkshape,
                                                             blockshape):
    path = tmp_path / "s.b2nd"
    w = B2ndWriter(path, shape=array.shape, dtype=array.dtype, chunkshape=chunkshape,
                   blockshape=blockshape, codec="lz4", clevel=5)
    order = _coords(w.grid)
    random.Random(seed).shuffle(order)
    for c in order:
        part = _chunk(array, c, chunkshape)
        # a Fortran-order chunk or raw bytes: items in C order either way
        w.write_chunk(c, np.asfortranarray(part) if seed else part.tobytes())
    w.close()
    got = blosc2.open(str(path))
    assert got.shape == array.shape and got.dtype == array.dtype
    assert got.chunks == chunkshape and got.blocks == blockshape
    np.testing.assert_array_equal(got[...], array)
    assert blosckit.open_frame(path).b2nd.read() == array.tobytes()


def test_b2nd_missing_chunks_are_an_error_or_the_fill_kind(tmp_path):
    a = np.linspace(0, 1, 40 * 30).reshape(40, 30).astype("<f8")
    args = dict(shape=a.shape, dtype="<f8", chunkshape=(16, 16), blockshape=(8, 8))
    w = B2ndWriter(tmp_path / "e.b2nd", **args)
    w.write_chunk((1, 1), _chunk(a, (1, 1), (16, 16)))
    with pytest.raises(ValueError, match=r"5 chunk\(s\) never written, the first at \(0, 0\)"):
        w.close()
    assert w.missing() == [(0, 0), (0, 1), (1, 0), (2, 0), (2, 1)]
    for c in w.missing():
        w.write_chunk(c, _chunk(a, c, (16, 16)))
    w.close()                                   # the writer stayed open
    np.testing.assert_array_equal(blosc2.open(str(tmp_path / "e.b2nd"))[...], a)
    for kind, value in (("zeros", 0.0), ("nan", np.nan)):
        path = tmp_path / f"{kind}.b2nd"
        with B2ndWriter(path, fill=kind, **args) as w:
            w.write_chunk((2, 1), _chunk(a, (2, 1), (16, 16)))
        want = np.full(a.shape, value)
        want[32:, 16:] = a[32:, 16:]
        np.testing.assert_array_equal(blosc2.open(str(path))[...], want)
        assert blosckit.open_frame(path).offsets.count(kind) == 5


def test_b2nd_wrong_coordinates_and_data_are_value_errors(tmp_path):
    w = B2ndWriter(tmp_path / "x.b2nd", shape=ARRAY.shape, dtype=ARRAY.dtype, **GRID_ARGS)
    good = _chunk(ARRAY, (0, 0), (100, 128))
    for coords in [(4, 0), (0, 5), (-1, 0), (0,), (0, 0, 0), (0.0, 1)]:
        with pytest.raises(ValueError, match="not in the chunk grid"):
            w.write_chunk(coords, good)
    with pytest.raises(ValueError, match="shape"):
        w.write_chunk((3, 4), good)                    # the edge chunk is (33, 5)
    with pytest.raises(ValueError, match="bytes"):
        w.write_chunk((0, 0), good.tobytes()[:-8])
    w.write_chunk((0, 0), good)
    with pytest.raises(ValueError, match="already written"):
        w.write_chunk((0, 0), good)
    w.abort()
    assert not (tmp_path / "x.b2nd").exists()
    with pytest.raises(ValueError, match="closed"):
        w.write_chunk((0, 1), good)
    with pytest.raises(ValueError, match="nan"):
        B2ndWriter(io.BytesIO(), shape=(4,), dtype="<i2", chunkshape=(2,), blockshape=(2,),
                   fill="nan")


@pytest.mark.parametrize("array,chunkshape,blockshape", [
    (ARRAY, (100, 128), (25, 32)),
    (np.linspace(0, 1, 7 * 45 * 33).reshape(7, 45, 33).astype("<f4"), (3, 20, 16), (2, 7, 5)),
    (np.arange(1001, dtype="<u2"), (64,), (16,)),
    (np.array(2.5), (), ()),
    (np.zeros((0, 4), "<i4"), (2, 2), (1, 2)),
])
@pytest.mark.parametrize("cut", [999, 7777, None])
def test_b2nd_items_in_c_order_read_back_in_python_blosc2(tmp_path, array, chunkshape,
                                                          blockshape, cut):
    """B2ndWriter.write takes the array's items in pieces of any size; the
    frame is compress_b2nd's and python-blosc2 reads the array."""
    path = tmp_path / "w.b2nd"
    raw = array.tobytes()
    cut = cut or max(len(raw), 1)           # odd sizes split items
    with B2ndWriter(path, shape=array.shape, dtype=array.dtype, chunkshape=chunkshape,
                    blockshape=blockshape) as w:
        for i in range(0, len(raw), cut):
            w.write(raw[i:i + cut])
    if array.size:                  # python-blosc2 refuses a zero extent's chunk shape
        got = blosc2.open(str(path))
        assert got.shape == array.shape and got.dtype == array.dtype
        np.testing.assert_array_equal(got[...], array)
    assert path.read_bytes() == compress_b2nd(array, chunkshape=chunkshape,
                                              blockshape=blockshape)


def test_b2nd_write_refuses_more_items_short_rows_and_rows_already_written(tmp_path):
    a = np.arange(40 * 30, dtype="<f8").reshape(40, 30)
    args = dict(shape=a.shape, dtype="<f8", chunkshape=(16, 16), blockshape=(8, 8))
    w = B2ndWriter(tmp_path / "m.b2nd", **args)
    with pytest.raises(ValueError, match="9608 bytes written to an array of 9600"):
        w.write(np.zeros(1201))
    w.write(a[:20])                                 # a row of chunks and 4 rows held
    with pytest.raises(ValueError, match=r"holds 960 bytes of an unfinished row of chunks "
                                         r"of shape \(16, 30\)"):
        w.close()
    w.write_chunk((2, 1), a[32:, 16:])
    with pytest.raises(ValueError, match="row 2 of the chunk grid holds chunks already"):
        w.write(a[20:])
    w.abort()
    with B2ndWriter(tmp_path / "n.b2nd", fill="zeros", **args) as w:
        w.write(a[:16])                             # the first row; the rest stays zeros
        w.write_chunk((2, 0), a[32:, :16])
    want = np.zeros(a.shape)
    want[:16], want[32:, :16] = a[:16], a[32:, :16]
    np.testing.assert_array_equal(blosc2.open(str(tmp_path / "n.b2nd"))[...], want)


# ---------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------

MEMORY_CHILD = textwrap.dedent("""
    import io, json, re, sys
    import numpy as np
    from blosckit.frame.writer import FrameWriter

    def status(field):          # KiB; ru_maxrss would carry the parent's peak over exec
        return int(re.search(field + r":\\s+(\\d+)", open("/proc/self/status").read())[1])

    piece = np.random.default_rng(0).integers(0, 2**16, 1 << 18, dtype="<u4")   # 1 MiB
    target, total = sys.argv[1], int(sys.argv[2])
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")           # the peak (VmHWM) starts again from the RSS now
    before = status("VmRSS")
    with FrameWriter(io.BytesIO() if target == "-" else target, chunksize=4 << 20,
                     codec="lz4") as w:
        for i in range(total >> 20):
            piece[0] = i
            w.write(piece)
    print(json.dumps(dict(growth_kib=status("VmHWM") - before, nchunks=w.nchunks,
                          nbytes=w.nbytes, frame_len=w.frame_len)))
""")


def _peak_growth(target: str, total: int) -> dict:
    run = subprocess.run([sys.executable, "-c", MEMORY_CHILD, target, str(total)],
                         capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


@pytest.mark.long
def test_writing_a_256_mib_frame_keeps_memory_flat(tmp_path):
    """Peak RSS (VmHWM, KiB) grows by far less than the frame
    while 256 MiB of half-compressible data go through FrameWriter to a
    file: about two 4 MiB chunks, not the 128 MiB frame.  The same writes
    into memory (a BytesIO) show the measure sees a frame held whole."""
    total = 256 << 20
    path = tmp_path / "big.b2frame"
    got = _peak_growth(str(path), total)
    assert got["nbytes"] == total and got["nchunks"] == 64
    assert got["frame_len"] == path.stat().st_size > total // 3
    assert got["growth_kib"] < 64 * 1024, got
    held = _peak_growth("-", total)
    assert held["frame_len"] == got["frame_len"]
    assert held["growth_kib"] > got["frame_len"] // 1024, held     # the measure sees it
    f = blosckit.open_frame(path)
    first = np.random.default_rng(0).integers(0, 2**16, 1 << 18, dtype="<u4")
    assert f.nchunks == 64 and f.decompress_chunk(63)[4:8] == first[1:2].tobytes()
