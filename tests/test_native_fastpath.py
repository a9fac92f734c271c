"""Tests for the one-call chunk decoder (native.decompress_fast) and the
allocation-failure reporting of the native block loops.

* The C header reader agrees with the construct declaration of the header.
* On chunks written by python-blosc2 the fast path returns exactly what
  blosckit.decompress returns.
* Every truncation and single-byte mutation of a few small chunks: where
  blosckit.decompress raises, the fast path returns None; where it decodes,
  the fast path returns the same bytes or None.
"""
import random

import pytest
from hypothesis import given, settings, strategies as st

import blosckit
from blosckit import native as N
from blosckit.codecs import libs
from blosckit.errors import FormatError
from blosckit.formats import chunk as fc
import native_probes
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")


TABLE = N.make_codec_table(libs.NATIVE_DECODERS)
# codec id (as in NATIVE_DECODERS) for each python-blosc2 codec tried here
CODEC_IDS = {"BLOSCLZ": 0, "LZ4": 1, "LZ4HC": 1, "ZLIB": 4, "ZSTD": 5}


def _has_native(codec: str) -> bool:
    return CODEC_IDS[codec] in libs.NATIVE_DECODERS


# ============================================================ header reader

def _flags_byte(f) -> int:
    return (f.compformat << 5 | f.dont_split << 4 | f.delta << 3 | f.bitshuffle << 2
            | f.memcpyed << 1 | f.shuffle)


def _b2flags_byte(f) -> int:
    return (f.instrumented << 7 | f.special << 4 | f.lazy << 3 | f.unimplemented << 2
            | f.big_endian << 1 | f.use_dict)


def _expected(parsed) -> dict:
    """The construct parse in the shape of native.read_header's dict."""
    out = {"version": parsed.version, "versionlz": parsed.versionlz,
           "flags": _flags_byte(parsed.flags), "typesize": parsed.typesize,
           "nbytes": parsed.nbytes, "blocksize": parsed.blocksize, "cbytes": parsed.cbytes,
           "extended": 0, "udcodec": 0, "compcode_meta": 0, "flags2": 0, "b2flags": 0,
           "filters": [0] * 6, "filters_meta": [0] * 6}
    ext = parsed.extended
    if ext is None:
        return out
    out["extended"] = 1
    out["b2flags"] = _b2flags_byte(ext.blosc2_flags)
    out["filters"] = list(ext.filters) + [0] * (6 - len(ext.filters))
    out["filters_meta"] = list(ext.filters_meta) + [0] * (6 - len(ext.filters_meta))
    if parsed.version != 3:
        out["udcodec"] = ext.udcodec
        out["compcode_meta"] = ext.compcode_meta
        f2 = ext.blosc2_flags2
        out["flags2"] = f2.reserved << 1 | f2.vl_blocks
    return out


@settings(max_examples=400, deadline=None)
@given(raw=st.binary(min_size=0, max_size=40), extended=st.booleans(),
       version=st.sampled_from([None, 3, 4, 5]))
def test_header_reader_matches_declaration(raw, extended, version):
    b = bytearray(raw)
    if len(b) > 2 and extended:
        b[2] |= 0x05            # make the extended header likely, not certain
    if len(b) > 0 and version is not None:
        b[0] = version
    got = native_probes.read_header(bytes(b))
    try:
        parsed = fc.Header.parse(bytes(b))
    except Exception:           # construct: the input is shorter than the header
        assert got is None
        return
    assert got == _expected(parsed)


# ============================================================ parity: blosc2

def _data(size: int, typesize: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    n = size // typesize
    base = (np.arange(n, dtype=np.int64) * 7 + rng.integers(0, 40, n)).astype(np.int64)
    body = base.astype(np.uint64).view(np.uint8).reshape(n, 8)[:, :typesize].tobytes()
    return body + rng.integers(0, 256, size - len(body), dtype=np.uint8).tobytes()


def _chunk(data: bytes, typesize: int, codec: str, filt: str, **kw) -> bytes:
    return blosc2.compress2(data, typesize=typesize, clevel=kw.pop("clevel", 5),
                            codec=getattr(blosc2.Codec, codec),
                            filters=[getattr(blosc2.Filter, filt)], nthreads=1, **kw)


def _same(chunk: bytes, nthreads: int = 1) -> bytes:
    want = blosckit.decompress(chunk)
    got = N.decompress_fast(chunk, TABLE, nthreads)
    assert got is not None, "the fast path declined a common chunk"
    assert got == want
    assert type(got) is bytes
    return want


@pytest.mark.parametrize("codec", list(CODEC_IDS))
@pytest.mark.parametrize("filt", ["SHUFFLE", "BITSHUFFLE", "DELTA", "BYTEDELTA", "NOFILTER"])
def test_parity_codecs_filters(codec, filt):
    if not _has_native(codec):
        pytest.skip(f"no native entry for {codec}")
    for size, ts in ((0, 4), (1, 1), (7, 4), (4096, 4), (4099, 8), (33333, 3),
                     (65536, 8), (300_000, 4), (200_001, 16)):
        data = _data(size, ts, size + ts)
        chunk = _chunk(data, ts, codec, filt)
        got = _same(chunk)
        if filt != "DELTA":
            # C-Blosc2's delta encoder leaves the len % typesize tail of a
            # block unwritten, so those chunks do not round-trip
            assert got == data


@pytest.mark.parametrize("codec", ["LZ4", "ZSTD"])
def test_parity_dictionary(codec):
    if not _has_native(codec):
        pytest.skip(f"no native entry for {codec}")
    for size in (4096, 70_000, 300_000):
        data = _data(size, 4, size)
        chunk = _chunk(data, 4, codec, "SHUFFLE", use_dict=True, blocksize=16384)
        assert chunk[31] & 0x01 or size <= 16384, "python-blosc2 wrote no dictionary"
        assert _same(chunk) == data


@pytest.mark.parametrize("split", ["ALWAYS_SPLIT", "NEVER_SPLIT"])
def test_parity_split_and_threads(split):
    mode = getattr(blosc2.SplitMode, split)
    for size, ts in ((4096, 4), (100_003, 8), (300_000, 2)):
        data = _data(size, ts, 3 * size)
        chunk = _chunk(data, ts, "LZ4", "SHUFFLE", splitmode=mode, blocksize=8192)
        assert bool(chunk[2] & 0x10) == (split == "NEVER_SPLIT")
        for nthreads in (1, 2, 3):
            assert _same(chunk, nthreads) == data


def test_parity_memcpyed_and_runs():
    rng = np.random.default_rng(11)
    noise = rng.integers(0, 256, 50_000, dtype=np.uint8).tobytes()
    chunk = _chunk(noise, 1, "LZ4", "NOFILTER")
    assert chunk[2] & 0x02, "expected a memcpyed chunk"
    assert _same(chunk) == noise
    stored = _chunk(noise[:777], 4, "BLOSCLZ", "SHUFFLE", clevel=0)
    assert _same(stored) == noise[:777]
    runs = bytes(40_000) + b"\x07" * 40_000   # zero and byte-run streams
    assert _same(_chunk(runs, 4, "ZSTD", "SHUFFLE", blocksize=8192)) == runs


def test_input_types_and_into():
    data = _data(20_000, 4, 5)
    chunk = _chunk(data, 4, "LZ4", "SHUFFLE")
    padded = b"xyz" + chunk + b"tail"
    arr = np.frombuffer(chunk + bytes(-len(chunk) % 4), np.uint8)
    for src in (chunk, bytearray(chunk), memoryview(padded)[3:3 + len(chunk)], arr):
        assert N.decompress_fast(src, TABLE) == data
    dst = bytearray(len(data) + 5)
    assert N.decompress_fast_into(chunk, dst, TABLE) == len(data)
    assert bytes(dst[:len(data)]) == data
    assert N.decompress_fast_into(chunk, bytearray(len(data) - 1), TABLE) is None
    assert N.decompress_fast_into(chunk, bytes(len(data)), TABLE) is None   # read-only
    assert N.decompress_fast(memoryview(padded)[::2], TABLE) is None       # strided
    assert N.decompress_fast(chunk, TABLE, 1, len(data) - 1) is None        # over the limit
    assert N.decompress_fast(chunk, TABLE, 1, len(data)) == data


def test_declines_what_it_does_not_handle():
    data = _data(4096, 4, 9)
    chunk = _chunk(data, 4, "LZ4", "SHUFFLE")
    empty_table = N.make_codec_table({})
    assert N.decompress_fast(chunk, empty_table) is None
    blosc1 = bytearray(chunk[:16])     # a Blosc1-style 16-byte header
    blosc1[2] = 0x01
    assert N.decompress_fast(bytes(blosc1) + bytes(64), TABLE) is None
    for pos, value in ((0, 3), (0, 6), (30, 1), (31, 0x08), (31, 0x10), (31, 0x80),
                       (16, 5), (2, chunk[2] & 0x1F | 0x40)):
        m = bytearray(chunk)
        m[pos] = value
        assert N.decompress_fast(bytes(m), TABLE) is None, (pos, value)


# ============================================================ hostile inputs

def _small_chunks() -> list[bytes]:
    d4 = _data(4096, 4, 1)
    out = [_chunk(d4, 4, "LZ4", "SHUFFLE"),
           _chunk(_data(3000, 2, 2), 2, "BLOSCLZ", "DELTA", blocksize=1024),
           _chunk(bytes(600) + d4[:600], 4, "ZSTD", "BITSHUFFLE", blocksize=512),
           _chunk(random.Random(3).randbytes(200), 1, "LZ4", "NOFILTER"),
           _chunk(b"", 4, "LZ4", "SHUFFLE")]
    if _has_native("ZSTD"):
        with_dict = _chunk(_data(8000, 4, 4), 4, "ZSTD", "SHUFFLE", use_dict=True,
                           blocksize=2048)
        assert with_dict[31] & 0x01
        out.append(with_dict)
    return out


def _agrees(m: bytes) -> None:
    got = N.decompress_fast(m, TABLE)
    try:
        want = blosckit.decompress(m)
    except FormatError:
        assert got is None
        return
    assert got is None or got == want


@pytest.mark.parametrize("which", range(6))
def test_truncations_and_mutations(which):
    chunks = _small_chunks()
    if which >= len(chunks):
        pytest.skip("no native zstd")
    chunk = chunks[which]
    assert N.decompress_fast(chunk, TABLE) == blosckit.decompress(chunk)
    for cut in range(len(chunk)):
        _agrees(chunk[:cut])
    rng = random.Random(which)
    for pos in range(len(chunk)):
        for value in {chunk[pos] ^ 0x01, chunk[pos] ^ 0x80, 0x00, 0xFF, rng.randrange(256)}:
            m = bytearray(chunk)
            m[pos] = value
            _agrees(bytes(m))


# ============================================================ out of memory

def _failing_setups(count: int):
    class _Hook:
        def __enter__(self):
            N._lib.bk_test_fail_worker_setups(count)

        def __exit__(self, *exc):
            N._lib.bk_test_fail_worker_setups(0)
    return _Hook()


def test_fast_path_reports_out_of_memory():
    data = _data(100_000, 4, 8)
    chunk = _chunk(data, 4, "LZ4", "SHUFFLE", blocksize=8192)
    with _failing_setups(1), pytest.raises(MemoryError):
        N.decompress_fast(chunk, TABLE, 1)
    # with two workers one failing set-up is absorbed: the other does every block
    with _failing_setups(1):
        assert N.decompress_fast(chunk, TABLE, 2) == data
    with _failing_setups(2), pytest.raises(MemoryError):
        N.decompress_fast(chunk, TABLE, 2)
    assert N.decompress_fast(chunk, TABLE, 1) == data     # the hook is off again


def test_decode_chunk_and_encode_blocks_report_out_of_memory():
    entry = libs.NATIVE_DECODERS[1]
    data = _data(20_000, 4, 12)
    chunk = _chunk(data, 4, "LZ4", "SHUFFLE", blocksize=4096)
    nblocks = 5
    bstarts = [int.from_bytes(chunk[32 + 4 * j:36 + 4 * j], "little") for j in range(nblocks)]
    kw = dict(cbytes=len(chunk), bstarts=bstarts, nbytes=len(data), blocksize=4096,
              typesize=4, version=chunk[0], split=not chunk[2] & 0x10, token_follows=True,
              pipeline=[(1, 0)], codec_kind=entry[0], codec_fns=entry[1])
    out = bytearray(len(data))
    with _failing_setups(1), pytest.raises(MemoryError):
        N.decode_chunk(chunk, out, **kw)
    assert N.decode_chunk(chunk, out, **kw) == -1 and bytes(out) == data
    enc = dict(nbytes=len(data), blocksize=4096, typesize=4, version=5, split=True,
               detect_runs=True, pipeline=[(1, 0)], codec_kind=0, clevel=5, codec_param=2)
    with _failing_setups(1), pytest.raises(MemoryError):
        N.encode_blocks(data, **enc)
    _out, _cap, sizes, _needs = N.encode_blocks(data, **enc)
    assert len(sizes) == nblocks and all(s > 0 for s in sizes)
