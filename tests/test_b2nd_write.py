"""compress_b2nd's native path (whole chunks gathered and encoded in C,
blosckit/native/src/chunkenc.c): the same frame as compressing each padded
chunk on its own and building the frame from those chunks, the chunks those
of the NumPy oracle (frame_corpus.b2nd_chunks), and python-blosc2 reading
the array back."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blosckit
from blosckit import native
from blosckit.chunk.encode import compress
from blosckit.formats import b2nd as fb
from blosckit.formats import chunk as fc
from blosckit.frame import b2nd as b2nd_mod
from blosckit.frame.b2nd import b2nd_meta, chunk_data, compress_b2nd
from blosckit.frame.build import build_frame
from frame_corpus import b2nd_chunks
from helpers import LONG
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")


def chunk_by_chunk(a, chunkshape, blockshape, *, codec="zstd", clevel=1,
                   filters=("shuffle",)) -> bytes:
    """The frame as compress() of each padded chunk and build_frame make it
    (what compress_b2nd wrote before its native path)."""
    ts = a.dtype.itemsize
    bsize = math.prod(blockshape) * ts
    chunks = [compress(c, typesize=ts, codec=codec, clevel=clevel, filters=filters,
                       blocksize=bsize)
              for c in chunk_data(np.ascontiguousarray(a).tobytes(), a.shape, chunkshape,
                                  blockshape, ts)]
    return build_frame(chunks, metalayers={"b2nd": b2nd_meta(a.shape, chunkshape, blockshape,
                                                             a.dtype.str)},
                       chunksize=fb.padded_items(chunkshape, blockshape) * ts, clevel=clevel)


def check_frame(frame: bytes, a, chunkshape, blockshape) -> None:
    """The chunks decode to the oracle's padded chunks; python-blosc2 reads
    the array."""
    with blosckit.open_frame(frame) as f:
        assert [f.decompress_chunk(i) for i in range(f.nchunks)] == \
            b2nd_chunks(a, chunkshape, blockshape)
    assert blosc2.ndarray_from_cframe(frame)[...].tobytes() == np.ascontiguousarray(a).tobytes()


def _arrays(kind: str, shape, dtype):
    rng = np.random.default_rng(7)
    n = math.prod(shape)
    if kind == "random":       # incompressible: chunks stored raw past their budget
        return rng.integers(0, 256, n * np.dtype(dtype).itemsize, dtype=np.uint8) \
            .view(dtype).reshape(shape)
    if kind == "zeros":        # zeros special chunks
        return np.zeros(shape, dtype)
    if kind == "mixed":        # some chunks zeros, some raw, some compressed
        a = np.arange(n, dtype=dtype).reshape(shape)
        flat = a.reshape(-1)
        flat[: n // 3] = 0
        part = flat[n // 3: n // 2]
        part.view(np.uint8)[:] = rng.integers(0, 256, part.nbytes, dtype=np.uint8)
        return a
    return (np.arange(n) % 251).astype(dtype).reshape(shape)


# (shape, chunks, blocks): the benchmark's shapes, edge chunks and blocks,
# chunks read in place (blocks span the trailing dimensions), blocks wider
# than chunks, 1-d, 3-d
GRIDS = [
    ((64, 64), (16, 16), (8, 8)),
    ((200, 4), (50, 4), (5, 4)),
    ((30, 20, 10), (10, 10, 10), (5, 5, 5)),
    ((37, 41), (10, 12), (3, 5)),
    ((100, 30), (40, 30), (8, 30)),
    ((103,), (20,), (7,)),
    ((6,), (4,), (8,)),
    ((9, 7, 5), (4, 7, 5), (2, 7, 5)),
]
CODECS = [("zstd", 1, ("shuffle",)), ("blosclz", 5, ("shuffle",)),
          ("lz4", 9, ("bitshuffle",)), ("lz4hc", 4, ("delta", "shuffle")), ("zlib", 3, ()),
          ("zstd", 0, ("shuffle",))]


@pytest.mark.parametrize("shape,chunks,blocks", GRIDS)
@pytest.mark.parametrize("kind", ["random", "zeros", "mixed", "ramp"])
def test_native_path_writes_the_chunk_by_chunk_frame(shape, chunks, blocks, kind):
    a = _arrays(kind, shape, "<i4")
    for codec, clevel, filters in CODECS:
        want = chunk_by_chunk(a, chunks, blocks, codec=codec, clevel=clevel, filters=filters)
        for nthreads in (1, 2, 3):
            assert compress_b2nd(a, chunkshape=chunks, blockshape=blocks, codec=codec,
                                 clevel=clevel, filters=filters, nthreads=nthreads) == want
    check_frame(want, a, chunks, blocks)


def test_raw_zeros_and_regular_chunks_all_come_out():
    """The budget fallback (raw chunk), the zeros special chunk and regular
    chunks in one array: each kind of chunk the native path writes."""
    a = _arrays("mixed", (120, 50), "<f8")
    frame = compress_b2nd(a, chunkshape=(20, 50), blockshape=(5, 50), codec="zstd", clevel=1)
    with blosckit.open_frame(frame) as f:
        views = [f.locate(i)[1] for i in range(f.nchunks)]
    kinds = {"special" if v is None else
             "raw" if fc.raw_header(v).flags & fc.FLAG_MEMCPYED else "regular" for v in views}
    assert kinds == {"special", "raw", "regular"}
    assert frame == chunk_by_chunk(a, (20, 50), (5, 50))
    check_frame(frame, a, (20, 50), (5, 50))


@settings(max_examples=300 if LONG else 30, deadline=None)
@given(data=st.data())
def test_any_grid_writes_the_chunk_by_chunk_frame(data):
    ndim = data.draw(st.integers(1, 4), label="ndim")
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    chunks = tuple(data.draw(st.integers(1, n + 2)) for n in shape)
    blocks = tuple(data.draw(st.integers(1, c + 1)) for c in chunks)
    dtype = data.draw(st.sampled_from(["|u1", "<i2", "<f4", "<f8"]))
    kind = data.draw(st.sampled_from(["random", "zeros", "mixed", "ramp"]))
    codec, clevel, filters = data.draw(st.sampled_from(CODECS))
    nthreads = data.draw(st.integers(1, 3))
    a = _arrays(kind, shape, dtype)
    frame = compress_b2nd(a, chunkshape=chunks, blockshape=blocks, codec=codec, clevel=clevel,
                          filters=filters, nthreads=nthreads)
    assert frame == chunk_by_chunk(a, chunks, blocks, codec=codec, clevel=clevel,
                                   filters=filters)
    with blosckit.open_frame(frame) as f:
        assert f.b2nd.read() == a.tobytes()


def test_batches_of_chunks_write_the_same_frame(monkeypatch):
    """Chunks encoded a few per native call (small batches) or all in one."""
    a = _arrays("mixed", (90, 40), "<i4")
    want = compress_b2nd(a, chunkshape=(10, 10), blockshape=(5, 5), nthreads=2)
    monkeypatch.setattr(b2nd_mod, "_BATCH_BYTES", 1)
    for nthreads in (1, 2):
        assert compress_b2nd(a, chunkshape=(10, 10), blockshape=(5, 5),
                             nthreads=nthreads) == want


def test_fortran_order_and_0d_and_16d_arrays():
    f = np.asfortranarray(_arrays("ramp", (30, 17), "<f4"))
    frame = compress_b2nd(f, chunkshape=(8, 8), blockshape=(4, 3))
    assert frame == chunk_by_chunk(f, (8, 8), (4, 3))
    check_frame(frame, np.ascontiguousarray(f), (8, 8), (4, 3))
    zero_d = np.array(3.5, "<f8")
    assert compress_b2nd(zero_d, chunkshape=(), blockshape=()) == \
        chunk_by_chunk(zero_d, (), ())
    shape16 = (1,) * 12 + (2, 3, 2, 3)
    a16 = _arrays("ramp", shape16, "<u2")
    chunks16, blocks16 = (1,) * 12 + (1, 2, 2, 2), (1,) * 12 + (1, 1, 2, 1)
    assert compress_b2nd(a16, chunkshape=chunks16, blockshape=blocks16) == \
        chunk_by_chunk(a16, chunks16, blocks16)


def _native_args(a, chunks, blocks, **change):
    ts = a.dtype.itemsize
    padded = fb.padded_items(chunks, blocks) * ts
    return dict(dict(shape=a.shape, chunkshape=chunks, blockshape=blocks, first=0,
                     count=math.prod(fb.chunk_grid(a.shape, chunks)),
                     headers=bytes(96), overhead=32, destsize=padded + 32,
                     raw_only=False, nbytes=padded, blocksize=math.prod(blocks) * ts,
                     typesize=ts, version=5, split=False, detect_runs=True, pipeline=[],
                     codec_kind=0, clevel=5, codec_param=2), **change)


@pytest.mark.parametrize("change", [
    dict(shape=(9, 8)),                 # more items than the buffer holds
    dict(shape=(7, 8)),                 # fewer
    dict(nbytes=4 * 16 - 4),            # not the padded chunk
    dict(first=3, count=2),             # past the chunk grid (4 chunks)
    dict(first=-1),
    dict(chunkshape=(0, 4)),
    dict(overhead=8, headers=bytes(24)),  # cbytes would leave the header
    dict(blocksize=16),                 # not the block shape's bytes
])
def test_native_refuses_shapes_that_do_not_fit_the_buffers(change):
    a = np.arange(64, dtype="<i4").reshape(8, 8)
    native.encode_array_chunks(memoryview(a).cast("B"), **_native_args(a, (4, 4), (2, 4)))
    with pytest.raises(ValueError):
        native.encode_array_chunks(memoryview(a).cast("B"),
                                   **_native_args(a, (4, 4), (2, 4), **change))


def test_b2nd_writer_writes_compress_b2nds_frame_in_small_batches(tmp_path, monkeypatch):
    """B2ndWriter encodes a row of chunks (write) or one chunk (write_chunk)
    through the same native path, a batch at a time."""
    from blosckit.frame import writer as writer_mod
    monkeypatch.setattr(writer_mod, "_WRITE_BATCH", 1)
    a = _arrays("mixed", (45, 33), "<f4")
    grid = dict(chunkshape=(10, 10), blockshape=(4, 5))
    want = compress_b2nd(a, nthreads=2, **grid)
    for nthreads in (1, 2):
        path = tmp_path / f"w{nthreads}.b2nd"
        with blosckit.B2ndWriter(path, shape=a.shape, dtype=a.dtype, nthreads=nthreads,
                                 **grid) as w:
            w.write(a[:17])
            w.write(a[17:])
        assert path.read_bytes() == want
    path = tmp_path / "c.b2nd"
    with blosckit.B2ndWriter(path, shape=a.shape, dtype=a.dtype, **grid) as w:
        for i in range(5):
            for j in range(4):
                w.write_chunk((i, j), a[i * 10:(i + 1) * 10, j * 10:(j + 1) * 10])
    assert path.read_bytes() == want


@pytest.mark.parametrize("shape,chunks,blocks", [
    ((300, 300), (50, 60), (10, 30)),      # 30 chunks: shared among the threads
    ((300, 300), (100, 300), (20, 300)),   # 3 chunks read in place: their blocks shared
    ((250, 300), (100, 120), (25, 40)),    # 9 edge and inner chunks
])
@pytest.mark.parametrize("kind", ["random", "mixed"])
def test_threads_write_the_one_thread_frame(shape, chunks, blocks, kind):
    """Arrays large enough for the threads to share the work (chunks, or a
    chunk's blocks when there are too few chunks) write the same frame."""
    a = _arrays(kind, shape, "<f4")
    assert a.nbytes >= 4 * b2nd_mod._MIN_SHARED_BYTES
    want = chunk_by_chunk(a, chunks, blocks)
    for nthreads in (1, 2, 3, 4):
        assert compress_b2nd(a, chunkshape=chunks, blockshape=blocks,
                             nthreads=nthreads) == want
    check_frame(want, a, chunks, blocks)


def test_codec_without_native_encoder_goes_chunk_by_chunk(monkeypatch):
    """A codec the native encoder cannot call (its library has no C entry
    point here) compresses each chunk through compress()."""
    from blosckit.codecs.zstd import Zstd
    monkeypatch.setattr(Zstd, "native_encoder", lambda self, clevel, flavor: None)
    a = _arrays("mixed", (60, 45), "<i4")
    for nthreads in (1, 2):
        frame = compress_b2nd(a, chunkshape=(20, 20), blockshape=(10, 20), nthreads=nthreads)
        assert frame == chunk_by_chunk(a, (20, 20), (10, 20))
    check_frame(frame, a, (20, 20), (10, 20))
