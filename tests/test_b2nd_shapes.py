"""Default b2nd chunk and block shapes (blosckit/frame/shapes.py) against
python-blosc2's own choice for the same array: the same caches read from
the same places, the same shapes, and the same compressed size."""
from __future__ import annotations

import json
import math
import platform
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

import blosckit
import cli_runner
from blosckit.frame import shapes
from blosckit.frame.shapes import CacheSizes, default_shapes
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")

RECORD = np.dtype([("t", "<i4"), ("v", "<f8")])      # 12-byte items
DTYPES = ["|i1", "<i4", "<f4", "<f8", RECORD]
# 1-D to 4-D; tiny, under one block, a few chunks' worth of items, a few MB;
# extents with and without handy divisors (101 x 9901, primes, powers of 2)
GRID_SHAPES = [(7,), (5000,), (1_000_001,), (20, 30), (333, 517), (1024, 1024),
               (3, 4, 5), (64, 65, 66), (10, 10, 10, 10), (2, 17, 31, 257)]


def blosc2_caches() -> CacheSizes:
    info = blosc2.cpu_info
    return CacheSizes(info["l1_data_cache_size"], info["l2_cache_size"],
                      info["l3_cache_size"])


def sample(shape, dtype, seed=0):
    """Compressible data of ``shape`` and ``dtype``: a noisy ramp."""
    dtype = np.dtype(dtype)
    n = math.prod(shape)
    rng = np.random.default_rng(seed)
    ramp = np.arange(n) % 1000 + rng.integers(0, 3, n)
    if dtype.names:
        out = np.empty(n, dtype)
        out["t"], out["v"] = ramp, ramp / 7
        return out.reshape(shape)
    return ramp.astype(dtype).reshape(shape)


def theirs(a, **kw):
    """python-blosc2's NDArray of ``a`` with its default shapes."""
    return blosc2.asarray(a, **kw)


def cparams(codec, clevel):
    return {"cparams": {"codec": getattr(blosc2.Codec, codec.upper()), "clevel": clevel}}


# ---------------------------------------------------------------------------
# The caches
# ---------------------------------------------------------------------------

def test_host_caches_are_the_ones_python_blosc2_reads():
    assert shapes.host_caches() == blosc2_caches()


SYS_TEXTS = ["32K\n", "48K\n", "2048K\n", "1M\n", "32M\n", "2G\n", "512\n", "32K",
             "32 K\n", "K\n", "huge\n"]


@pytest.mark.parametrize("text", SYS_TEXTS)
def test_sysfs_sizes_read_as_python_blosc2_reads_them(tmp_path, monkeypatch, text):
    (tmp_path / "index2").mkdir()
    (tmp_path / "index2" / "size").write_text(text)
    sysfs = "/sys/devices/system/cpu/cpu0/cache/"
    real_open = open

    def redirected(path, *args, **kw):
        return real_open(str(path).replace(sysfs, f"{tmp_path}/"), *args, **kw)

    monkeypatch.setattr(blosc2.core, "open", redirected, raising=False)
    try:
        want = blosc2.core.linux_cache_size(2)
    except ValueError:
        want = None             # python-blosc2 raises at import; blosckit says "unknown"
    assert shapes.linux_cache(2, root=tmp_path) == want


LSCPU = {"lscpu": [{"field": "Model name:", "data": "Some CPU"},
                   {"field": "L1d cache:", "data": "96 KiB (2 instances)"},
                   {"field": "L1i cache:", "data": "64 KiB (2 instances)"},
                   {"field": "L2 cache:", "data": "2 MiB (2 instances)"},
                   {"field": "L3 cache:", "data": "105 MiB (1 instance)"}]}
LSCPU_ODD = {"lscpu": [{"field": "L1d cache:", "data": "32K"},
                       {"field": "L2 cache:", "data": "1 GiB (4 instances)"},
                       {"field": "L3 cache:", "data": "8 MB (1 instance)"}]}


@pytest.mark.parametrize("text", [json.dumps(LSCPU), json.dumps(LSCPU_ODD), "{}", "not json"])
def test_without_sysfs_lscpu_is_read_as_python_blosc2_reads_it(tmp_path, monkeypatch, text):
    monkeypatch.setattr(blosc2.core.subprocess, "run",
                        lambda *a, **kw: SimpleNamespace(stdout=text, returncode=0))
    monkeypatch.setattr(blosc2.core, "open", lambda *a, **kw: open(tmp_path / "absent"),
                        raising=False)
    monkeypatch.setattr(shapes, "_lscpu_json", lambda: text)
    for index in (0, 2, 3):
        try:
            want = blosc2.core.linux_cache_size(index)
        except (KeyError, TypeError):
            want = None         # python-blosc2 raises at import; blosckit says "unknown"
        assert shapes.linux_cache(index, root=tmp_path) == want, index


def test_levels_not_read_take_python_blosc2s_fallback():
    sizes = {0: 48 << 10, 2: None, 3: None}
    assert shapes.read_caches(sizes.get, (0, 2, 3)) == CacheSizes(48 << 10, 256 << 10, 1 << 20)
    assert shapes.FALLBACK_CACHES == CacheSizes(32 << 10, 256 << 10, 1 << 20)


# ---------------------------------------------------------------------------
# The shapes
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", GRID_SHAPES, ids=str)
def test_default_shapes_are_python_blosc2s(shape, dtype):
    a = sample(shape, dtype)
    nd = theirs(a)
    assert default_shapes(shape, a.dtype.itemsize, caches=blosc2_caches()) == \
        (nd.chunks, nd.blocks)


SIZE_ARRAYS = {
    "linspace": lambda: np.linspace(0, 1, 100_001),
    "rounded sine": lambda: np.round(np.sin(np.linspace(0, 1000, 250_000)), 3),
    "ramp 2-D i4": lambda: sample((333, 517), "<i4"),
    "ramp 3-D f4": lambda: sample((64, 65, 66), "<f4"),
    "ramp 4-D i1": lambda: sample((2, 17, 31, 257), "|i1"),
    "records": lambda: sample((1024, 100), RECORD),
}


@pytest.mark.parametrize("codec,clevel", [("zstd", 1), ("zstd", 5), ("lz4", 5)])
@pytest.mark.parametrize("name", SIZE_ARRAYS)
def test_compressed_size_is_python_blosc2s(name, codec, clevel):
    a = SIZE_ARRAYS[name]()
    frame = blosckit.compress_b2nd(a, codec=codec, clevel=clevel)
    nd = theirs(a, **cparams(codec, clevel))
    with blosckit.open_frame(frame) as f:
        assert (f.b2nd.chunkshape, f.b2nd.blockshape) == (nd.chunks, nd.blocks)
    assert abs(len(frame) - len(nd.to_cframe())) <= 0.05 * len(nd.to_cframe())
    # the items (a record dtype's fields are another matter: test_arrays.py)
    assert blosc2.ndarray_from_cframe(frame)[...].tobytes() == a.tobytes()


def test_full_size_linspace_compresses_as_python_blosc2():
    """The issue's case: 943,817 bytes against python-blosc2's 509,508."""
    a = np.linspace(0, 1, 1_000_001)
    frame = blosckit.compress_b2nd(a, codec="zstd", clevel=5)
    want = len(theirs(a, **cparams("zstd", 5)).to_cframe())
    assert abs(len(frame) - want) <= 0.05 * want


CACHES = [CacheSizes(32 << 10, 256 << 10, 1 << 20),      # python-blosc2's fallback
          CacheSizes(48 << 10, 2 << 20, 30 << 20),        # a big L2: blocks follow L1
          CacheSizes(32 << 10, 1 << 20, 32 << 20),
          CacheSizes(64 << 10, 4 << 20, 4 << 20),         # L3 not above L2: ignored
          CacheSizes(128 << 10, 16 << 20, 0)]
MACHINES = [("Linux", "x86_64"), ("Linux", "aarch64"), ("Darwin", "arm64"),
            ("Windows", "AMD64")]


@pytest.mark.parametrize("system,machine", MACHINES)
@pytest.mark.parametrize("caches", CACHES, ids=str)
@pytest.mark.parametrize("dtype", ["|u1", "<f8", RECORD], ids=str)
def test_other_caches_and_machines_as_python_blosc2(monkeypatch, caches, system, machine,
                                                     dtype):
    """python-blosc2 reads its caches and platform at each choice: given
    other ones, both tools still agree."""
    monkeypatch.setattr(blosc2, "cpu_info", dict(
        blosc2.cpu_info, l1_data_cache_size=caches.l1_data, l2_cache_size=caches.l2,
        l3_cache_size=caches.l3))
    monkeypatch.setattr(platform, "system", lambda: system)
    monkeypatch.setattr(platform, "machine", lambda: machine)
    dtype = np.dtype(dtype)
    for shape in GRID_SHAPES + [(100_003,), (3, 1_000_003), (4099, 4099)]:
        want = blosc2.compute_chunks_blocks(shape, dtype=dtype)
        assert default_shapes(shape, dtype.itemsize, caches=caches) == want, shape


@given(st.lists(st.integers(1, 5000), min_size=0, max_size=4),
       st.sampled_from([1, 2, 4, 8, 12, 16, 100]))
def test_random_shapes_as_python_blosc2(shape, itemsize):
    want = blosc2.compute_chunks_blocks(tuple(shape), dtype=np.dtype(f"V{itemsize}"))
    assert default_shapes(shape, itemsize, caches=blosc2_caches()) == want


@given(st.integers(1, 10**7), st.integers(1, 10**7))
def test_divisor_snap_is_python_blosc2s(n, limit):
    assert shapes._divisor_at_most(n, limit) == \
        blosc2.blosc2_ext.nearest_divisor(n, limit, strict=True)


@pytest.mark.parametrize("shape,chunks", [((1000, 1000), (100, 300)), ((7,), (3,)),
                                          ((50, 60, 70), (50, 60, 70)),
                                          ((2_000_000,), (1_000_000,))])
def test_given_chunks_get_python_blosc2s_blocks(shape, chunks):
    a = sample(shape, "<f8")
    nd = theirs(a, chunks=chunks)
    assert default_shapes(shape, 8, chunkshape=chunks) == (nd.chunks, nd.blocks)
    with blosckit.open_frame(blosckit.compress_b2nd(a, chunkshape=chunks)) as f:
        assert (f.b2nd.chunkshape, f.b2nd.blockshape) == (nd.chunks, nd.blocks)


def test_given_blocks_are_kept():
    """python-blosc2 lays a given block out again (here (10, 10) becomes
    (1, 100)); blosckit keeps it and picks the chunk around it, as python-blosc2
    does for the blocks it picked itself."""
    a = sample((100, 1000), "<f8")
    assert theirs(a, blocks=(10, 10)).blocks == (1, 100)
    chunks, blocks = default_shapes(a.shape, 8, blockshape=(10, 10))
    assert blocks == (10, 10) and all(c % b == 0 or c == s
                                      for c, b, s in zip(chunks, blocks, a.shape))
    frame = blosckit.compress_b2nd(a, blockshape=(10, 10))
    nd = blosc2.ndarray_from_cframe(frame)
    assert (nd.chunks, nd.blocks) == (chunks, blocks) and np.array_equal(nd[...], a)
    own = theirs(a)
    assert default_shapes(a.shape, 8, blockshape=own.blocks) == (own.chunks, own.blocks)


@pytest.mark.parametrize("shape", [(), (0,), (0, 5), (3, 0, 4)])
def test_arrays_without_layout_as_python_blosc2(shape):
    a = np.zeros(shape, "<i4")
    nd = theirs(a)
    frame = blosckit.compress_b2nd(a)
    assert blosckit.validate(frame) == []
    got = blosc2.ndarray_from_cframe(frame)
    assert (got.shape, got.chunks, got.blocks) == (nd.shape, nd.chunks, nd.blocks)


def test_writer_defaults_are_compress_b2nds(tmp_path):
    """B2ndWriter without shapes picks the same ones, and with the chunks
    in C order writes compress_b2nd's bytes."""
    a = sample((300, 2000), "<f4")
    out = tmp_path / "w.b2nd"
    with blosckit.B2ndWriter(out, shape=a.shape, dtype=a.dtype) as w:
        cs = w.chunkshape
        for i in range(-(-a.shape[0] // cs[0])):
            for j in range(-(-a.shape[1] // cs[1])):
                w.write_chunk((i, j), a[i * cs[0]:(i + 1) * cs[0], j * cs[1]:(j + 1) * cs[1]])
    nd = theirs(a)
    assert (w.chunkshape, w.blockshape) == (nd.chunks, nd.blocks)
    assert out.read_bytes() == blosckit.compress_b2nd(a)


def test_cli_picks_python_blosc2s_shapes(tmp_path):
    a = sample((3, 700, 800), "<i8")
    np.save(tmp_path / "a.npy", a)
    r = cli_runner.blosckit("compress", tmp_path / "a.npy", tmp_path / "a.b2nd",
                            "--codec", "zstd", "--clevel", "5")
    assert r.returncode == 0, r.stderr
    nd = theirs(a, **cparams("zstd", 5))
    got = blosc2.open(str(tmp_path / "a.b2nd"))
    assert (got.chunks, got.blocks) == (nd.chunks, nd.blocks)
    assert f"chunks {nd.chunks}, blocks {nd.blocks}" in r.stderr
    assert Path(tmp_path / "a.b2nd").stat().st_size <= 1.05 * len(nd.to_cframe())
