"""Codec paths: what ``native_info`` reports, byte identity of the native
encoders with C-Blosc2, the Python fallbacks (forced by clearing the ``libs``
handles) and the decoders' verdicts on damaged streams, which must be the
same on both paths and the same as C-Blosc2's."""
from __future__ import annotations

import importlib.metadata as md
import zlib as czlib

import pytest

import blosckit
from blosckit.codecs import buildinfo
from blosckit import native
from blosckit.codecs import libs, registry
from blosckit.codecs import lz4 as lz4mod
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")


NATIVE_CODECS = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")
HANDLES = {"lz4": ("lz4lib",), "lz4hc": ("lz4lib",), "zstd": ("zstdlib", "zstdffi"),
           "zlib": ("zngzlib",)}
CODE = {"lz4": 1, "lz4hc": 2, "zlib": 4, "zstd": 5}


def force_python(monkeypatch, name: str) -> None:
    """Make codec ``name`` run its Python fallback, for both the per-stream
    calls and the whole-chunk decoder."""
    for handle in HANDLES[name]:
        monkeypatch.setattr(libs, handle, None)
    drop = {1, 2} if name in ("lz4", "lz4hc") else {CODE[name]}
    monkeypatch.setattr(libs, "NATIVE_DECODERS",
                        {k: v for k, v in libs.NATIVE_DECODERS.items() if k not in drop})


def make_data(kind: str, nbytes: int) -> bytes:
    rng = np.random.default_rng(nbytes)
    if kind == "arange32":
        return np.arange(nbytes // 4, dtype="<i4").tobytes()
    if kind == "linspace":
        return np.linspace(0, 1, nbytes // 8).astype("<f8").tobytes()
    if kind == "runs":
        return np.repeat(rng.integers(0, 8, nbytes // 64, dtype=np.uint8), 64).tobytes()
    raise ValueError(kind)


def oracle(data: bytes, codec: str, clevel: int, typesize: int = 4) -> bytes:
    return bytes(blosc2.compress2(
        data, typesize=typesize, codec=getattr(blosc2.Codec, codec.upper()), clevel=clevel,
        filters=[blosc2.Filter.SHUFFLE], filters_meta=[0], nthreads=1,
        splitmode=blosc2.SplitMode.FORWARD_COMPAT_SPLIT))


# ---------------------------------------------------------------------------
# native_info
# ---------------------------------------------------------------------------

def test_native_info_shape():
    info = buildinfo.native_info()
    assert info["c_blosc2"] == "3.3.5"
    assert info["simd"] == {"level": native.simd_level(),
                            "available": native.available_simd_levels()}
    assert info["simd"]["level"] in info["simd"]["available"]
    assert list(info["codecs"]) == ["blosclz", "lz4", "lz4hc", "zlib", "zstd", "snappy"]
    for name, c in info["codecs"].items():
        assert c["available"] is True, name
        assert set(c) == {"available", "encode", "decode", "chunk_decoder", "packages",
                          "byte_identical", "caveat"}, name
        for side in ("encode", "decode"):
            assert set(c[side]) == {"path", "via", "library", "version"}
            assert c[side]["path"] in ("native", "python")
        assert c["chunk_decoder"] in ("native", "python")
        # identity is claimed for native encoders only
        assert not c["byte_identical"] or c["encode"]["path"] == "native"


def test_native_info_on_this_install():
    codecs = buildinfo.native_info()["codecs"]
    for name in NATIVE_CODECS:
        c = codecs[name]
        assert c["encode"]["path"] == c["decode"]["path"] == "native", name
        assert c["chunk_decoder"] == "native", name
    assert buildinfo.fallbacks() == []
    import lz4
    import zstandard
    from zlib_ng import zlib_ng
    assert codecs["lz4"]["encode"]["version"] == lz4.library_version_string()
    assert codecs["lz4"]["packages"] == {"lz4": md.version("lz4")}
    assert codecs["zstd"]["encode"]["version"] == ".".join(map(str, zstandard.ZSTD_VERSION))
    assert codecs["zstd"]["packages"] == {"zstandard": md.version("zstandard")}
    assert codecs["zlib"]["decode"]["version"] == zlib_ng.ZLIBNG_RUNTIME_VERSION
    assert codecs["zlib"]["packages"] == {"zlib-ng": md.version("zlib-ng")}
    for name in ("blosclz", "zlib", "zstd"):
        assert codecs[name]["byte_identical"] is True and codecs[name]["caveat"] is None
    same_lz4 = lz4.library_version_string() == lz4mod.C_BLOSC2_LZ4
    for name in ("lz4", "lz4hc"):
        assert codecs[name]["byte_identical"] is same_lz4
        assert same_lz4 or "1.10.0" in codecs[name]["caveat"]
    snappy = codecs["snappy"]
    assert snappy["encode"]["path"] == "python" and snappy["byte_identical"] is False


# ---------------------------------------------------------------------------
# Byte identity of the native encoders with C-Blosc2
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("codec", NATIVE_CODECS)
@pytest.mark.parametrize("kind", ("arange32", "linspace", "runs"))
@pytest.mark.parametrize("clevel", (1, 5, 9))
def test_native_encoder_matches_c_blosc2(codec, kind, clevel):
    data = make_data(kind, 200_000)
    mine = blosckit.compress(data, typesize=4, codec=codec, clevel=clevel)
    ref = oracle(data, codec, clevel)
    assert blosc2.decompress2(mine) == data
    if buildinfo.native_info()["codecs"][codec]["byte_identical"]:
        assert mine == ref
    else:
        # LZ4 1.9.4 here, 1.10.0 in C-Blosc2: every header byte but cbytes
        assert mine[:12] == ref[:12] and mine[16:32] == ref[16:32]


# ---------------------------------------------------------------------------
# Python fallbacks, forced
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("codec", ("lz4", "lz4hc", "zlib", "zstd"))
def test_fallback_reported_and_round_trips(monkeypatch, codec):
    data = make_data("linspace", 150_000)
    force_python(monkeypatch, codec)
    info = buildinfo.native_info()["codecs"][codec]
    assert info["encode"]["path"] == info["decode"]["path"] == "python"
    assert info["chunk_decoder"] == "python"
    assert info["byte_identical"] is False and info["caveat"]
    assert f"{codec}.encode" in buildinfo.fallbacks()
    for clevel in (1, 5, 9):
        chunk = blosckit.compress(data, typesize=8, codec=codec, clevel=clevel)
        assert blosckit.decompress(chunk) == data
        assert blosc2.decompress2(chunk) == data


@pytest.mark.parametrize("clevel", range(1, 10))
def test_zstd_at_every_level_writes_the_c_libraries_bytes(clevel):
    """Data whose zstd stream changes with the level: every Blosc level asks
    for the zstd level C-Blosc2 asks for (Blosc 8 is zstd 15: C-Blosc's
    "8 -> max - 2" line tests the level after mapping and never applies)."""
    data = bytes((x * 7919 >> 5) % 4 for x in range(40_960))
    mine = blosckit.compress(data, typesize=1, codec="zstd", clevel=clevel, filters=())
    theirs = blosc2.compress2(data, typesize=1, codec=blosc2.Codec.ZSTD, clevel=clevel,
                              filters=[blosc2.Filter.NOFILTER], filters_meta=[0])
    assert mine == theirs


@pytest.mark.parametrize("clevel", (1, 5, 8, 9))
def test_zstd_fallback_uses_c_blosc2_levels(monkeypatch, clevel):
    # both paths ask zstd for the same level (9 at clevel 5), so they write
    # the same frames
    data = make_data("linspace", 150_000)
    native_chunk = blosckit.compress(data, typesize=8, codec="zstd", clevel=clevel)
    force_python(monkeypatch, "zstd")
    assert blosckit.compress(data, typesize=8, codec="zstd", clevel=clevel) == native_chunk


@pytest.mark.parametrize("codec", ("lz4", "lz4hc"))
def test_lz4_fallback_uses_c_blosc2_levels(monkeypatch, codec):
    seen = []
    real = lz4mod._block.compress

    def spy(src, **kw):
        seen.append(kw)
        return real(src, **kw)
    force_python(monkeypatch, codec)
    monkeypatch.setattr(lz4mod._block, "compress", spy)
    data = make_data("linspace", 100_000)
    for clevel in (1, 5, 9):
        seen.clear()
        chunk = blosckit.compress(data, typesize=8, codec=codec, clevel=clevel)
        assert seen and blosckit.decompress(chunk) == data
        if codec == "lz4":
            assert {(k["mode"], k["acceleration"]) for k in seen} == {("fast", 10 - clevel)}
        else:
            assert {(k["mode"], k["compression"]) for k in seen} == \
                {("high_compression", clevel)}


@pytest.mark.parametrize("clevel", (1, 5, 9))
def test_zlib_fallback_uses_the_level(monkeypatch, clevel):
    # the zlib header's FLEVEL bits record the level class the stream was written at
    force_python(monkeypatch, "zlib")
    block = blosckit.shuffle(make_data("linspace", 16_000), 8)
    out = bytearray(len(block))
    n = registry.CODECS_BY_NAME["zlib"].compress_into(memoryview(block), memoryview(out), clevel)
    assert 0 < n < len(block)
    flevel = 0 if clevel < 2 else 1 if clevel < 6 else 2 if clevel == 6 else 3
    assert out[1] >> 6 == flevel
    assert czlib.decompress(bytes(out[:n])) == block


# ---------------------------------------------------------------------------
# Decoder verdicts on damaged streams
# ---------------------------------------------------------------------------

BLOCK = blosckit.shuffle(np.linspace(0, 1, 512).astype("<f8").tobytes(), 8)


def stream_for(codec: str) -> bytes:
    if codec == "snappy":
        import snappy
        return snappy.compress(BLOCK)
    out = registry.CODECS_BY_NAME[codec].compress(memoryview(BLOCK), 5)
    assert out is not None and len(out) < len(BLOCK)
    return out


def damaged(s: bytes) -> dict[str, bytes]:
    """Streams every decoder must refuse for a block of len(BLOCK) bytes."""
    return {
        "truncated": s[:-1],
        "half": s[:len(s) // 2],
        "garbage": bytes(range(7, 47)),
        # the first bytes hold the stream's structure (tokens / frame header)
        "corrupt-head": bytes([s[0] ^ 0xFF]) + bytes([s[1] ^ 0x5A]) + s[2:],
    }


def verdict(codec: str, stream: bytes, size: int) -> tuple[bool, int]:
    dst = bytearray(size)
    c = registry.CODECS_BY_NAME[codec]
    got = c.decompress_into(memoryview(stream), memoryview(dst))
    ok = got == size
    if ok:
        assert bytes(dst) == BLOCK[:size] or size != len(BLOCK)
    else:
        text = c.describe_failure(got, size)
        assert isinstance(text, str) and c.name in text
        assert str(got) not in text or got >= 0 or c.name == "zstd"
    return ok, got


@pytest.mark.parametrize("codec", ("blosclz", "lz4", "zlib", "zstd", "snappy"))
def test_stream_verdicts_native_and_python_agree(monkeypatch, codec):
    s = stream_for(codec)
    cases = {name: (v, len(BLOCK)) for name, v in damaged(s).items()}
    cases["whole"] = (s, len(BLOCK))
    cases["block-larger"] = (s, len(BLOCK) + 8)     # decodes to fewer bytes
    cases["block-smaller"] = (s, len(BLOCK) - 8)    # decodes to more bytes
    cases["padded"] = (s + b"\x55" * 5, len(BLOCK))
    native_v = {k: verdict(codec, v, n)[0] for k, (v, n) in cases.items()}
    if codec in HANDLES:
        force_python(monkeypatch, codec)
        python_v = {k: verdict(codec, v, n)[0] for k, (v, n) in cases.items()}
        assert python_v == native_v
    assert native_v["whole"] is True
    for name in ("truncated", "half", "garbage", "corrupt-head", "block-larger",
                 "block-smaller"):
        assert native_v[name] is False, name
    # bytes after the end: zlib's one-shot inflate stops at the end marker
    # (so does C-Blosc2's uncompress); the other formats have no end marker
    assert native_v["padded"] is (codec == "zlib")


def test_lz4_failure_names_the_input_position():
    s = stream_for("lz4")
    ok, got = verdict("lz4", s[:-3], len(BLOCK))
    assert not ok and got < 0
    assert f"byte {-got - 1}" in registry.CODECS_BY_NAME["lz4"].describe_failure(got, len(BLOCK))


def test_zstd_failure_is_named():
    c = registry.CODECS_BY_NAME["zstd"]
    got = c.decompress_into(memoryview(bytes(range(1, 41))), memoryview(bytearray(64)))
    assert got < 0
    assert "Unknown frame descriptor" in c.describe_failure(got, 64)


def test_short_count_is_described():
    c = registry.CODECS_BY_NAME["lz4"]
    assert c.describe_failure(100, 200) == "the lz4 stream decodes to 100 bytes, expected 200"


def one_block_chunk(codec: str, stream: bytes) -> bytes:
    """A one-block, one-stream chunk (no filter) holding ``stream``."""
    base = blosckit.compress(BLOCK, typesize=1, codec=codec, clevel=5, filters=())
    info = blosckit.parse_chunk(base)
    assert len(info.bstarts) == 1 and not info.memcpyed
    header = dict(info.header)
    header["cbytes"] = None             # set from the new stream's length
    return blosckit.build_chunk(header, [[{"csize": len(stream), "token": None,
                                                "cdata": stream}]], dict=info.dict)


def outcome(fn, chunk: bytes):
    try:
        return fn(chunk) == BLOCK
    except Exception:
        return "error"


@pytest.mark.parametrize("codec", ("blosclz", "lz4", "zlib", "zstd"))
def test_chunk_verdicts_match_c_blosc2(monkeypatch, codec):
    s = stream_for(codec)
    streams = {**damaged(s), "whole": s, "padded": s + b"\x55" * 5}
    chunks = {k: one_block_chunk(codec, v) for k, v in streams.items()}
    theirs = {k: outcome(blosc2.decompress2, c) for k, c in chunks.items()}
    assert theirs["whole"] is True
    ours = {k: outcome(blosckit.decompress, c) for k, c in chunks.items()}
    assert ours == theirs
    if codec in HANDLES:
        force_python(monkeypatch, codec)
        assert {k: outcome(blosckit.decompress, c) for k, c in chunks.items()} == theirs
