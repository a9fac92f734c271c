"""blosckit.numcodecs: Blosc against numcodecs' Blosc (C-Blosc 1.21.7 as
numcodecs bundles it), Blosc2 against python-blosc2's compress2, and zarr v2
arrays written by zarr read through blosckit once registered as "blosc"."""
from __future__ import annotations

import hashlib
import inspect
import itertools
import pathlib

import pytest

from oracles import oracle

np = oracle("numpy")
numcodecs = oracle("numcodecs")
blosc2 = oracle("blosc2")

from blosckit import numcodecs as bk_numcodecs      # noqa: E402
from helpers import raw_header                      # noqa: E402

DATA = pathlib.Path(__file__).parent / "data"
RNG = np.random.default_rng(23)
ARRAYS = {
    "f8-arange": np.arange(20_000, dtype="f8"),
    "i2-small-ints": RNG.integers(0, 50, 20_001).astype("i2"),
    "u1-random": np.frombuffer(RNG.bytes(5000), "u1"),
    "S300": np.array([b"blosc %d" % i for i in range(700)], dtype="S300"),
    "i4-2d": np.arange(30_000, dtype="i4").reshape(150, 200),
    "u2-fortran": np.arange(20_000, dtype="u2").reshape(100, 200).T,
    "f8-empty": np.zeros(0, "f8"),
}
CNAMES = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")


@pytest.fixture
def single_threaded_numcodecs():
    """numcodecs' Blosc single-threaded (as zarr sets it): with threads,
    C-Blosc 1.x writes blocks in the order its threads finish them."""
    saved = numcodecs.blosc.use_threads
    numcodecs.blosc.use_threads = False
    yield
    numcodecs.blosc.use_threads = saved


def _header_but_cbytes(chunk: bytes) -> bytes:
    return chunk[:4] + chunk[8:12]


def _encode_grid(cname: str, step: int) -> None:
    """Every ``step``-th configuration of the grid encoded by numcodecs and
    by blosckit: the same bytes, or (lz4hc, zstd: another library version
    decides the stream) the same header but cbytes and the same data."""
    identical = total = 0
    grid = itertools.product((0, 1, 5, 9), (0, 1, 2, -1), (0, 1000, 32768), (None, 3, 12),
                             ARRAYS.items())
    for clevel, shuffle, blocksize, typesize, (name, arr) in itertools.islice(
            grid, 0, None, step):
        if clevel == 9 and (typesize, blocksize) != (None, 0):
            continue        # zstd and zlib at level 9 are slow: one blocking per array
        ref = numcodecs.Blosc(cname, clevel, shuffle, blocksize, typesize=typesize).encode(arr)
        got = bk_numcodecs.Blosc(cname, clevel, shuffle, blocksize, typesize).encode(arr)
        total += 1
        if got == ref:
            identical += 1
            continue
        case = (cname, clevel, shuffle, blocksize, typesize, name)
        # where the bundled codec library (LZ4 1.10 for lz4hc, another zstd)
        # decides the stream, every header byte but cbytes must still match
        assert cname in ("lz4hc", "zstd"), case
        assert _header_but_cbytes(got) == _header_but_cbytes(ref), case
        assert numcodecs.Blosc().decode(got) == numcodecs.Blosc().decode(ref), case
    if cname in ("blosclz", "lz4", "zlib"):
        assert identical == total
    else:
        assert identical >= total // 2, (identical, total)


@pytest.mark.parametrize("cname", CNAMES)
def test_blosc_encode_is_numcodecs_blosc(cname, single_threaded_numcodecs):
    """A fixed quarter of the grid (every axis sampled)."""
    _encode_grid(cname, 4)


@pytest.mark.long
@pytest.mark.parametrize("cname", CNAMES)
def test_blosc_encode_is_numcodecs_blosc_over_the_whole_grid(cname, single_threaded_numcodecs):
    _encode_grid(cname, 1)


def test_blosc_decode_reads_numcodecs_chunks_and_out(single_threaded_numcodecs):
    codec = bk_numcodecs.Blosc()
    for cname, arr in zip(CNAMES, ARRAYS.values()):
        chunk = numcodecs.Blosc(cname, 5, -1).encode(arr)
        assert codec.decode(chunk) == arr.tobytes()
        out = np.empty_like(arr)
        assert codec.decode(chunk, out=out) is out
        np.testing.assert_array_equal(out, arr)


def test_blosc_decodes_blosc2_chunks_numcodecs_cannot():
    arr = np.arange(10_000, dtype="f8")
    chunk = blosc2.compress2(arr, codec=blosc2.Codec.ZSTD, clevel=5,
                             filters=[blosc2.Filter.BYTEDELTA], filters_meta=[0], typesize=8)
    with pytest.raises(Exception):
        numcodecs.Blosc().decode(chunk)
    assert bk_numcodecs.Blosc().decode(chunk) == arr.tobytes()


def test_c_blosc2_v2_bitshuffle_tail_read_as_c_blosc_1_wrote_it():
    """specs/divergences.md#v2: C-Blosc2 leaves a version-2 bitshuffle tail
    unwritten; numcodecs' C-Blosc 1.x and blosckit return what was stored."""
    chunk = (DATA / "blosckit-synthetic" / "v2-bitshuffle-tail-ts4.bin").read_bytes()
    truth = numcodecs.Blosc().decode(chunk)
    got = bk_numcodecs.Blosc().decode(chunk)
    assert got == truth
    assert hashlib.sha256(got).hexdigest() == \
        "4b8d33732a66fcad7324bc6aa61bd9c05306ad2893e1892f7d900cb2a573cea7"


def test_blosc_config_round_trip_and_registry():
    codec = bk_numcodecs.Blosc("zstd", 3, bk_numcodecs.Blosc.AUTOSHUFFLE, 4096, typesize=4)
    config = codec.get_config()
    assert config == {"id": "blosckit.blosc", "cname": "zstd", "clevel": 3, "shuffle": -1,
                      "blocksize": 4096, "typesize": 4}
    again = numcodecs.get_codec(config)           # found through the entry point
    assert type(again) is bk_numcodecs.Blosc and again.get_config() == config
    plain = {k: v for k, v in numcodecs.Blosc("zstd", 3, -1, 4096).get_config().items()
             if k != "id"}
    assert {k: v for k, v in bk_numcodecs.Blosc("zstd", 3, -1, 4096).get_config().items()
            if k != "id"} == plain
    with pytest.raises(ValueError):
        bk_numcodecs.Blosc(shuffle=7)
    with pytest.raises(ValueError):
        bk_numcodecs.Blosc("nope")


# --- zarr v2 ------------------------------------------------------------------

class CountingBlosc(bk_numcodecs.Blosc):
    """blosckit's Blosc under numcodecs' id, counting the chunks it decodes."""
    codec_id = "blosc"
    decoded: list[int] = []

    def decode(self, buf, out=None):
        CountingBlosc.decoded.append(len(buf))
        return super().decode(buf, out)


@pytest.fixture
def restore_numcodecs_blosc():
    yield
    numcodecs.register_codec(numcodecs.Blosc, "blosc")


ZARR_V2_CASES = [
    ("zstd", 5, 1, "f8", (1000, 30), (128, 7)),
    ("lz4", 1, 2, "u1", (333, 77), (100, 100)),
    ("blosclz", 9, -1, "i2", (5000,), (1024,)),
    ("zlib", 3, 0, "f4", (40, 50, 6), (16, 16, 4)),
    ("lz4hc", 5, 1, "S17", (250,), (64,)),
]


@pytest.mark.parametrize("case", ZARR_V2_CASES, ids=[c[0] for c in ZARR_V2_CASES])
def test_zarr_v2_arrays_read_through_blosckit(case, tmp_path, restore_numcodecs_blosc):
    zarr = oracle("zarr")
    cname, clevel, shuffle, dtype, shape, chunks = case
    n = int(np.prod(shape))
    if dtype.startswith("S"):
        data = np.array([b"item %d" % i for i in range(n)], dtype=dtype).reshape(shape)
    else:
        data = (np.arange(n) % 251).astype(dtype).reshape(shape)
    # written by zarr with numcodecs' own Blosc
    z = zarr.create_array(str(tmp_path), shape=shape, chunks=chunks, dtype=dtype, zarr_format=2,
                          compressors=numcodecs.Blosc(cname, clevel, shuffle))
    z[...] = data
    numcodecs.register_codec(CountingBlosc, "blosc")
    CountingBlosc.decoded.clear()
    back = zarr.open_array(str(tmp_path), mode="r")
    assert isinstance(back.metadata.compressor, CountingBlosc)
    np.testing.assert_array_equal(back[...], data)
    assert len(CountingBlosc.decoded) == int(np.prod([-(-s // c) for s, c in zip(shape, chunks)]))


def test_zarr_v2_written_through_blosckit_is_numcodecs_bytes(tmp_path, single_threaded_numcodecs):
    zarr = oracle("zarr")
    data = np.linspace(0, 1, 6000).reshape(60, 100)
    stores = {}
    for name, codec in (("ref", numcodecs.Blosc("zstd", 5, 1)),
                        ("bk", bk_numcodecs.Blosc("zstd", 5, 1))):
        stores[name] = tmp_path / name
        z = zarr.create_array(str(stores[name]), shape=data.shape, chunks=(25, 40),
                              dtype=data.dtype, zarr_format=2, compressors=codec)
        z[...] = data
    for ref in sorted(p for p in stores["ref"].iterdir() if not p.name.startswith(".")):
        assert (stores["bk"] / ref.name).read_bytes() == ref.read_bytes()


# --- Blosc2 -------------------------------------------------------------------

BLOSC2_CASES = [
    dict(codec="zstd", clevel=5),
    dict(codec="lz4", clevel=9, filters=["bitshuffle"], filters_meta=[0],
         splitmode="always"),
    dict(codec=blosc2.Codec.BLOSCLZ, clevel=3, filters=[blosc2.Filter.SHUFFLE,
                                                        blosc2.Filter.BYTEDELTA],
         filters_meta=[0, 0], splitmode=blosc2.SplitMode.NEVER_SPLIT),
    dict(codec="zlib", clevel=1, filters=["trunc_prec", "shuffle"], filters_meta=[20, 0],
         blocksize=16384),
    dict(codec="zstd", clevel=9, filters=["delta", "shuffle"], filters_meta=[0, 0],
         typesize=4, splitmode="forward_compat"),
]


def _b2_kwargs(params: dict, itemsize: int) -> dict:
    """The same parameters as python-blosc2 keywords."""
    def member(enum, value):
        if isinstance(value, str):
            return enum[value.upper() + ("_SPLIT" if enum is blosc2.SplitMode else "")]
        return value
    out = dict(codec=member(blosc2.Codec, params.get("codec", "zstd")),
               clevel=params.get("clevel", 5), typesize=params.get("typesize", itemsize),
               blocksize=params.get("blocksize", 0), nthreads=1,
               splitmode=member(blosc2.SplitMode, params.get("splitmode", "auto")))
    if "filters" in params:
        out["filters"] = [member(blosc2.Filter, f) for f in params["filters"]]
        out["filters_meta"] = params["filters_meta"]
    return out


@pytest.mark.parametrize("params", BLOSC2_CASES, ids=range(len(BLOSC2_CASES)))
def test_blosc2_encode_is_python_blosc2(params):
    for arr in (np.linspace(0, 1, 50_000), np.arange(70_001, dtype="i4") % 999):
        codec = bk_numcodecs.Blosc2(**params)
        got = codec.encode(arr)
        ref = blosc2.compress2(arr, **_b2_kwargs(params, arr.dtype.itemsize))
        assert got == ref
        assert raw_header(got)["version"] == 5
        again = numcodecs.get_codec(codec.get_config())
        assert type(again) is bk_numcodecs.Blosc2 and again.encode(arr) == got
        assert codec.decode(got) == blosc2.decompress2(got)


def test_blosc2_reads_blosc1_chunks_and_config_names(single_threaded_numcodecs):
    arr = np.arange(1000, dtype="f8")
    codec = bk_numcodecs.Blosc2()
    assert codec.decode(numcodecs.Blosc("zstd").encode(arr)) == arr.tobytes()
    config = codec.get_config()
    # python-blosc2's CParams defaults, and imagecodecs' names where they fit
    assert config["codec"] == "zstd" and config["clevel"] == blosc2.CParams().clevel
    assert config["filters"][-1] == "shuffle"
    oracle("imagecodecs")
    import imagecodecs.numcodecs
    theirs = set(inspect.signature(imagecodecs.numcodecs.Blosc2.__init__).parameters)
    assert {"typesize", "blocksize", "splitmode"} <= theirs & set(config)
