"""blosckit.zarr.FrameStore: Blosc2 frames written by python-blosc2 (the
oracle) read through zarr (and dask) as python-blosc2 reads them; regions
ask the store for the chunks they touch only; writes are refused."""
from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest

import blosckit
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")
zarr = oracle("zarr")

from blosckit.zarr import B2ndCodec, FrameStore  # noqa: E402  (after the oracles)
from blosckit.zarr.store import frame_metadata  # noqa: E402
from zarr.core.sync import sync  # noqa: E402
from zarr.storage import MemoryStore  # noqa: E402

# (shape, chunks, blocks): 1 to 4 dimensions, edge chunks and edge blocks
SHAPES = [
    ((10,), (4,), (3,)),
    ((37,), (37,), (8,)),
    ((7, 9), (3, 4), (2, 3)),
    ((8, 8), (4, 4), (4, 4)),
    ((5, 7, 6), (2, 3, 4), (1, 2, 3)),
    ((3, 4, 5, 6), (2, 3, 2, 4), (1, 2, 2, 3)),
]

DTYPES = ["<f8", "<i4", ">i4", "|u1", "?", "<c16", "<f2", "<M8[s]", "|S5", "<U3",
          [("a", "<i4"), ("b", "<f8")], [("x", ">u2"), ("y", ">f4")]]


def _items(shape, dtype, seed: int = 0):
    """Random items of ``dtype`` (every byte drawn, strings printable)."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype.kind == "U":
        words = np.array(["", "a", "bc", "xyz", "é€", "q"], dtype)
        return words[rng.integers(0, len(words), n)].reshape(shape)
    if dtype.kind == "b":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype.kind in "fc":
        return rng.normal(size=n * (2 if dtype.kind == "c" else 1)).view(
            "<f8" if dtype.kind == "f" else "<c16")[:n].astype(dtype).reshape(shape)
    return rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype).reshape(shape)


# zarr warns, as it reads them, that |S, <U, |V and record types have no
# zarr v3 specification yet: its own dtypes, nothing of the frames
pytestmark = pytest.mark.filterwarnings("ignore:The data type .* does not have a Zarr V3")


def _open(store):
    return zarr.open_array(store)


def _same(got, want) -> None:
    """Equal items of the same dtype (NaNs in place, record types compared
    by field; zarr hands numbers back in the machine's byte order)."""
    assert got.shape == want.shape
    assert got.dtype == want.dtype.newbyteorder("=") or got.dtype == want.dtype
    if want.dtype.names:
        for name in want.dtype.names:
            _same(got[name], want[name])
    elif want.dtype.kind in "fc":
        np.testing.assert_array_equal(got, want)      # NaN equal to NaN
    else:
        assert np.array_equal(got, want)


@pytest.mark.parametrize("shape,chunks,blocks", SHAPES, ids=str)
def test_b2nd_frames_read_as_python_blosc2_reads_them(tmp_path, shape, chunks, blocks):
    a = _items(shape, "<f8", seed=len(shape))
    path = tmp_path / "a.b2nd"
    b = blosc2.asarray(a, chunks=chunks, blocks=blocks, urlpath=str(path), mode="w")
    z = _open(FrameStore(path))
    assert z.shape == b.shape and z.chunks == b.chunks
    _same(z[...], b[...])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dtypes(tmp_path, dtype):
    a = _items((7, 9), dtype, seed=3)
    path = tmp_path / "a.b2nd"
    b = blosc2.asarray(a, chunks=(3, 4), blocks=(2, 3), urlpath=str(path), mode="w")
    z = _open(FrameStore(path))
    _same(z[...], b[...])
    _same(z[1:6, 2:7], b[1:6, 2:7])


def test_void_items_as_python_blosc2_stores_them(tmp_path):
    # python-blosc2 keeps |V3 as the record type [('f0', 'V3')]
    a = _items((5, 7), "|V3")
    b = blosc2.asarray(a, chunks=(2, 3), blocks=(1, 2), urlpath=str(tmp_path / "v.b2nd"))
    z = _open(FrameStore(tmp_path / "v.b2nd"))
    assert z.dtype == b.dtype
    assert z[...].tobytes() == b[...].tobytes()


@pytest.mark.parametrize("make", [
    lambda p: blosc2.zeros((9, 10), dtype="<f8", chunks=(4, 4), blocks=(2, 2), urlpath=p),
    lambda p: blosc2.full((9, 10), np.nan, dtype="<f8", chunks=(4, 4), blocks=(2, 2),
                          urlpath=p),
    lambda p: blosc2.full((9, 10), 7, dtype="<i2", chunks=(4, 4), blocks=(2, 2), urlpath=p),
], ids=["zeros", "nan", "value"])
def test_special_chunks(tmp_path, make):
    path = str(tmp_path / "s.b2nd")
    b = make(path)
    _same(_open(FrameStore(path))[...], b[...])


def test_zero_and_empty_arrays(tmp_path):
    for shape, chunks, blocks in [((), (), ()), ((0, 3), (2, 2), (1, 1)),
                                  ((5, 0), (2, 3), (2, 2))]:
        a = np.arange(int(np.prod(shape)), dtype="<i8").reshape(shape)
        path = tmp_path / f"e{len(shape)}{shape[0] if shape else ''}.b2nd"
        b = blosc2.asarray(a, chunks=chunks, blocks=blocks, urlpath=str(path))
        _same(_open(FrameStore(path))[...], b[...])


def test_blocks_wider_than_chunks():
    # python-blosc2 no longer writes them but reads them: one padded block
    fr = blosckit.compress_b2nd(np.arange(6, dtype="<i8"), chunkshape=(4,), blockshape=(8,))
    b = blosc2.ndarray_from_cframe(fr)
    _same(_open(FrameStore(fr))[...], b[...])


def test_sparse_frame(tmp_path):
    a = _items((11, 6), "<i4")
    path = tmp_path / "s.b2nd"
    b = blosc2.asarray(a, chunks=(4, 4), blocks=(2, 2), urlpath=str(path), contiguous=False)
    assert path.is_dir()
    _same(_open(FrameStore(path))[...], b[...])


@pytest.mark.parametrize("typesize,dtype", [(1, "|u1"), (2, "<u2"), (4, "<u4"), (8, "<u8"),
                                            (3, "|V3"), (16, "|V16")])
def test_plain_frames_as_1d_arrays_of_their_items(tmp_path, typesize, dtype):
    # 1003 items in chunks of 64: the last chunk short
    data = np.random.default_rng(typesize).integers(0, 256, 1003 * typesize,
                                                    dtype=np.uint8).tobytes()
    path = tmp_path / "p.b2frame"
    sc = blosc2.SChunk(chunksize=64 * typesize, data=data, urlpath=str(path),
                       cparams={"typesize": typesize})
    z = _open(FrameStore(path))
    assert (z.shape, z.chunks, z.dtype) == ((1003,), (64,), np.dtype(dtype))
    assert z[...].tobytes() == sc[:]
    assert z[100:200].tobytes() == sc[100:200]        # python-blosc2 slices items


def test_plain_frame_of_partial_items_shows_bytes(tmp_path):
    sc = blosc2.SChunk(chunksize=40, urlpath=str(tmp_path / "p.b2frame"),
                       cparams={"typesize": 4})
    sc.append_data(b"\1" * 40)
    sc.append_data(b"\2" * 38)          # a short last chunk of half an item
    z = _open(FrameStore(tmp_path / "p.b2frame"))
    assert z.dtype == np.uint8 and z.shape == (78,)
    # sc[:] slices whole items (76 bytes): its chunks hold all 78
    assert z[...].tobytes() == b"".join(sc.decompress_chunk(i) for i in range(sc.nchunks))


class CountingStore(FrameStore):
    """A FrameStore that records the keys zarr asks for."""

    def __init__(self, path):
        super().__init__(path)
        self.asked: list[str] = []

    async def get(self, key, prototype=None, byte_range=None):
        self.asked.append(key)
        return await super().get(key, prototype, byte_range)


def test_a_region_asks_for_the_chunks_it_touches_only(tmp_path):
    a = _items((20, 30, 8), "<i4")
    path = tmp_path / "a.b2nd"
    b = blosc2.asarray(a, chunks=(6, 7, 8), blocks=(3, 3, 4), urlpath=str(path))
    store = CountingStore(path)
    z = _open(store)
    # opening asks for metadata only (zarr tries the v2 keys too)
    assert "zarr.json" in store.asked and not any(k.startswith("c/") for k in store.asked)
    store.asked.clear()
    region = (slice(5, 13), slice(6, 15), 3)
    _same(z[region], b[region])
    # rows 5..12 lie in chunks 0..2, columns 6..14 in chunks 0..2
    want = {f"c/{i}/{j}/0" for i in range(3) for j in range(3)}
    assert sorted(store.asked) == sorted(want)
    store.asked.clear()
    _same(z[19, 29], b[19, 29])
    assert store.asked == ["c/3/4/0"]


def test_dask_from_zarr(tmp_path):
    da = oracle("dask.array")
    a = _items((13, 17), "<f4")
    path = tmp_path / "a.b2nd"
    b = blosc2.asarray(a, chunks=(5, 6), blocks=(2, 3), urlpath=str(path))
    d = da.from_zarr(_open(FrameStore(path)))
    assert d.chunks == ((5, 5, 3), (6, 6, 5))
    _same(d.compute(scheduler="threads"), b[...])
    _same(d[3:11, 4:9].compute(scheduler="synchronous"), b[3:11, 4:9])
    assert float(d.sum().compute()) == pytest.approx(float(b[...].sum(dtype="<f8")), rel=1e-5)


def test_the_store_pickles_by_path(tmp_path):
    a = _items((9, 4), "<u2")
    path = tmp_path / "a.b2nd"
    b = blosc2.asarray(a, chunks=(4, 4), blocks=(2, 2), urlpath=str(path))
    store = pickle.loads(pickle.dumps(FrameStore(path)))
    assert store == FrameStore(path)
    _same(_open(store)[...], b[...])
    frame_bytes = path.read_bytes()
    _same(_open(pickle.loads(pickle.dumps(FrameStore(frame_bytes))))[...], b[...])


def test_metadata_as_zarr_writes_it(tmp_path):
    """zarr.json names the dtype and fill value as zarr itself names them
    for an array of the same dtype."""
    for dtype in ["<f8", ">i4", "|S5", [("a", "<i4"), ("b", "<f8")]]:
        path = tmp_path / "m.b2nd"
        blosc2.asarray(_items((7, 9), dtype), chunks=(3, 4), blocks=(2, 3), urlpath=str(path),
                       mode="w")
        mine = frame_metadata(blosckit.open_frame(path))
        own = MemoryStore()
        zarr.create_array(own, shape=(7, 9), chunks=(3, 4), dtype=np.dtype(dtype),
                          fill_value=np.zeros((), dtype)[()])
        theirs = json.loads(own._store_dict["zarr.json"].to_bytes())
        for key in ["zarr_format", "node_type", "shape", "data_type", "chunk_grid",
                    "chunk_key_encoding", "fill_value"]:
            assert mine[key] == theirs[key], (dtype, key)
        assert mine["codecs"] == [{"name": "blosckit.b2nd", "configuration": {
            "chunk_shape": [3, 4], "block_shape": [2, 3],
            **({"endian": "big" if dtype == ">i4" else "little"}
               if np.dtype(dtype).kind != "S" else {})}}]
        codec = B2ndCodec.from_dict(mine["codecs"][0])
        assert codec.to_dict() == mine["codecs"][0]


def test_writes_are_refused(tmp_path):
    path = tmp_path / "a.b2nd"
    blosc2.asarray(np.arange(10.0), chunks=(4,), blocks=(2,), urlpath=str(path))
    before = path.read_bytes()
    store = FrameStore(path)
    z = _open(store)
    with pytest.raises(PermissionError, match="read-only"):  # the codec encodes first
        z[0] = 5
    with pytest.raises(PermissionError, match="read-only"):
        sync(store.set("c/0", zarr.core.buffer.default_buffer_prototype().buffer.from_bytes(b"")))
    with pytest.raises(PermissionError, match="read-only"):
        sync(store.delete("c/0"))
    with pytest.raises(PermissionError, match="read-only"):
        sync(store.clear())
    with pytest.raises(ValueError, match="read-only"):
        zarr.open_array(store, mode="a")
    with pytest.raises(PermissionError, match="read-only"):
        FrameStore(path, read_only=False)
    assert store.read_only and not store.supports_writes
    assert path.read_bytes() == before


def test_keys_and_listing(tmp_path):
    path = tmp_path / "a.b2nd"
    blosc2.asarray(np.zeros((5, 3)), chunks=(2, 2), blocks=(1, 1), urlpath=str(path))
    store = FrameStore(path)

    async def listed(it):
        return [k async for k in it]

    keys = sync(listed(store.list()))
    assert keys == ["zarr.json"] + [f"c/{i}/{j}" for i in range(3) for j in range(2)]
    assert sync(listed(store.list_dir(""))) == ["zarr.json", "c"]
    assert sync(listed(store.list_dir("c/2"))) == ["0", "1"]
    assert sync(store.exists("c/2/1")) and not sync(store.exists("c/3/0"))
    assert not sync(store.exists("c/01/0")) and not sync(store.exists("c/0"))
    proto = zarr.core.buffer.default_buffer_prototype()
    assert sync(store.get(".zarray", proto)) is None
    raw = sync(store.get("c/1/1", proto)).to_bytes()
    frame = blosckit.open_frame(path)
    assert raw == frame.chunk(3)
    from zarr.abc.store import RangeByteRequest, SuffixByteRequest
    assert sync(store.get("c/1/1", proto, RangeByteRequest(2, 9))).to_bytes() == raw[2:9]
    assert sync(store.get("c/1/1", proto, SuffixByteRequest(4))).to_bytes() == raw[-4:]


def test_a_chunk_at_fault_is_named_at_its_place_in_the_frame(tmp_path):
    path = tmp_path / "a.b2nd"
    blosc2.asarray(_items((8, 8), "<i4"), chunks=(4, 4), blocks=(2, 2), urlpath=str(path))
    frame = blosckit.open_frame(path)
    start, _ = frame.chunk_view(1)
    nbytes_at = start + blosckit.formats.chunk.HEADER.offset("nbytes")
    frame.close()
    data = bytearray(path.read_bytes())
    data[nbytes_at:nbytes_at + 4] = (4 * 4 * 4 + 4).to_bytes(4, "little")
    z = _open(FrameStore(bytes(data)))
    _same(z[:4, :4], _open(FrameStore(path))[:4, :4])     # chunk 0 untouched
    with pytest.raises(blosckit.FormatError) as e:
        z[:4, 4:]
    assert (e.value.rule, e.value.offset) == ("F-chunk", nbytes_at), str(e.value)
    assert e.value.path == "frame.chunks[1].header.nbytes"


def test_a_frame_that_is_not_one_gives_a_format_error(tmp_path):
    bad = tmp_path / "bad.b2nd"
    bad.write_bytes(b"not a frame at all, just some bytes" * 4)
    with pytest.raises(blosckit.FormatError) as e:
        FrameStore(bad)
    assert e.value.path.startswith("frame")


def test_importing_blosckit_imports_no_zarr():
    code = "import sys, blosckit; print('zarr' in sys.modules, 'numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_the_codec_refuses_a_chunk_of_another_size():
    codec = B2ndCodec(chunk_shape=(4, 4), block_shape=(2, 2), endian="little")
    right = blosc2.compress2(np.arange(16, dtype="<i4").tobytes(), typesize=4)
    got = codec.decode_chunk(right, (4, 4), np.dtype("<i4"))
    # the blocks of 2x2 put back: python-blosc2 does not undo a layout of a bare chunk
    assert got.tolist() == [[0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15]]
    short = blosc2.compress2(bytes(60), typesize=4)
    with pytest.raises(blosckit.FormatError) as e:
        codec.decode_chunk(short, (4, 4), np.dtype("<i4"))
    assert (e.value.rule, e.value.path, e.value.offset) == ("F-b2nd", "chunk.header.nbytes", 4)
    with pytest.raises(ValueError, match="endian"):
        B2ndCodec(chunk_shape=(4,), endian="middle")
