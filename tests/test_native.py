"""Tests for blosckit.native (C kernels).

* Plain Python / numpy references of every routine live in this file; the
  parity tests run them against the C code on every SIMD level the CPU has.
* Byte identity with the real libraries: BloscLZ streams (C-Blosc2 via
  python-blosc2, C-Blosc 1.x via python-blosc) and the filter outputs as
  stored inside real chunks.
* Hostile input for the decoder never crashes and matches the reference.
"""
import random
import struct

import pytest
from hypothesis import given, settings, strategies as st

from blosckit import native
from oracles import ORACLES, available, oracle

np = oracle("numpy")


N = native
LEVELS = N.available_simd_levels()

# the kernels are tested without them; the byte-identity tests need them
# (under BLOSCKIT_REQUIRE_ORACLES=1 a missing one fails the module)
blosc2, blosc = available("blosc2"), available("blosc")
need_blosc2 = pytest.mark.skipif(blosc2 is None,
                                 reason=f"oracle {ORACLES['blosc2']} is not importable")
need_blosc = pytest.mark.skipif(blosc is None, reason=f"oracle {ORACLES['blosc']} is not importable")


@pytest.fixture(params=LEVELS)
def level(request):
    prev = N._force_simd(request.param)
    yield request.param
    N._force_simd(prev)


def each_level(fn):
    """Run fn once per SIMD level (for hypothesis tests, which dislike fixtures)."""
    prev = N.simd_level()
    try:
        for lv in LEVELS:
            N._force_simd(lv)
            fn(lv)
    finally:
        N._force_simd(prev)


# ======================================================= Python references

def ref_shuffle(b, ts):
    b = bytes(b)
    n = len(b) // ts
    a = np.frombuffer(b, np.uint8)
    return a[: n * ts].reshape(n, ts).T.tobytes() + b[n * ts:]


def ref_unshuffle(b, ts):
    b = bytes(b)
    n = len(b) // ts
    a = np.frombuffer(b, np.uint8)
    return a[: n * ts].reshape(ts, n).T.tobytes() + b[n * ts:]


def _bit_count(length, ts, legacy):
    n = length // ts
    if legacy:
        return n if (n % 8 == 0 and length >= ts) else 0
    return n - n % 8


def ref_bitshuffle(b, ts, legacy=False):
    """Row 8j+k, byte g, bit m = bit k of byte j of element 8g+m."""
    b = bytes(b)
    n = _bit_count(len(b), ts, legacy)
    if n == 0:
        return b
    a = np.frombuffer(b, np.uint8)[: n * ts].reshape(n, ts)
    bits = np.unpackbits(a, axis=1, bitorder="little").reshape(n, ts, 8)
    rows = bits.transpose(1, 2, 0).reshape(ts * 8, n)
    return np.packbits(rows, axis=1, bitorder="little").tobytes() + b[n * ts:]


def ref_bitunshuffle(b, ts, legacy=False):
    b = bytes(b)
    n = _bit_count(len(b), ts, legacy)
    if n == 0:
        return b
    rows = np.frombuffer(b, np.uint8)[: n * ts].reshape(ts * 8, n // 8)
    bits = np.unpackbits(rows, axis=1, bitorder="little").reshape(ts, 8, n)
    a = np.packbits(bits.transpose(2, 0, 1).reshape(n, ts * 8), axis=1, bitorder="little")
    return a.tobytes() + b[n * ts:]


def ref_lz_decode(src, dstlen):
    """Reference BloscLZ decoder (C-Blosc2 HEAD rules). Returns (count, bytes)."""
    src = bytes(src)
    n = len(src)
    if n == 0:
        return 0, b""
    out = bytearray()
    ctrl = src[0] & 31
    ip = 1
    while True:
        if ctrl < 32:
            run = ctrl + 1
            if len(out) + run > dstlen or ip + run > n:
                return 0, None
            out += src[ip:ip + run]
            ip += run
            if ip >= n:
                break
            ctrl = src[ip]
            ip += 1
            continue
        kind = ctrl >> 5
        mlen = kind + 2
        hi = (ctrl & 31) << 8
        if kind == 7:
            while True:
                if n - ip < 2:
                    return 0, None
                e = src[ip]
                ip += 1
                mlen += e
                if e != 255:
                    break
        elif n - ip < 2:
            return 0, None
        lo = src[ip]
        ip += 1
        dist = hi + lo + 1
        if lo == 255 and hi == 31 << 8:
            if n - ip < 2:
                return 0, None
            dist = (src[ip] << 8 | src[ip + 1]) + 8192
            ip += 2
        if mlen > dstlen - len(out) or dist > len(out):
            return 0, None
        if ip >= n:
            break
        ctrl = src[ip]
        ip += 1
        for _ in range(mlen):
            out.append(out[-dist])
    return len(out), bytes(out)


def _delta_word(ts):
    if ts in (1, 2, 4, 8):
        return ts
    return 8 if ts % 8 == 0 else 1


def ref_delta_encode(dref, src, ts, first):
    src = bytes(src)
    w = _delta_word(ts)
    body = len(src) - len(src) % w
    out = bytearray(src)
    for i in range(body):
        if first:
            if i >= w:
                out[i] = src[i] ^ src[i - w]
        else:
            out[i] = src[i] ^ dref[i]
    return bytes(out)


def ref_delta_decode(dref, buf, ts, first):
    out = bytearray(buf)
    w = _delta_word(ts)
    body = len(out) - len(out) % w
    for i in range(body):
        if first:
            if i >= w:
                out[i] ^= out[i - w]
        else:
            out[i] ^= dref[i]
    return bytes(out)


def ref_bytedelta(src, ts, decode, buggy=False):
    src = bytes(src)
    n = len(src) // ts
    cut = n - n % 16 if (buggy and n >= 16) else -1
    out = bytearray(src)
    for j in range(ts):
        acc = 0
        for i in range(n):
            if i == cut:
                acc = 0
            v = src[j * n + i]
            if decode:
                acc = (acc + v) & 255
                out[j * n + i] = acc
            else:
                out[j * n + i] = (v - acc) & 255
                acc = v
    return bytes(out)


def ref_trunc_prec(src, ts, prec):
    width = 23 if ts == 4 else 52
    if abs(prec) > width:
        return None
    cleared = width - prec if prec >= 0 else -prec
    if cleared >= width:
        return None
    src = bytes(src)
    n = len(src) // ts
    dt = np.uint32 if ts == 4 else np.uint64
    a = np.frombuffer(src[: n * ts], dtype="<u%d" % ts).astype(dt)
    mask = dt(((1 << (8 * ts)) - 1) ^ ((1 << cleared) - 1))
    return (a & mask).astype("<u%d" % ts).tobytes() + src[n * ts:]


# =========================================================== shuffles

TYPESIZES = [1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 32, 255]


@pytest.mark.parametrize("ts", TYPESIZES)
def test_shuffle_matches_numpy(level, ts):
    rng = np.random.default_rng(ts)
    for length in (0, 1, ts - 1, ts, 15, 16, 63, 64, 100, 1023, 4096, 4099, 70001):
        if length < 0:
            continue
        b = rng.integers(0, 256, length, dtype=np.uint8).tobytes()
        s = N.shuffle(b, ts)
        assert s == ref_shuffle(b, ts)
        assert N.unshuffle(s, ts) == b
        assert N.unshuffle(b, ts) == ref_unshuffle(b, ts)


@pytest.mark.parametrize("ts", [2, 4, 8, 16])
def test_shuffle_large_paths(level, ts):
    # >= 8 MiB takes the streaming-store paths; odd sizes exercise the edges.
    rng = np.random.default_rng(99)
    base = rng.integers(0, 256, (8 << 20) + 32 * ts + 5, dtype=np.uint8).tobytes()
    for cut in (8 << 20, (8 << 20) + ts * 33, len(base)):
        b = base[:cut]
        s = N.shuffle(b, ts)
        assert s == ref_shuffle(b, ts)
        assert N.unshuffle(s, ts) == b
    # misaligned destination
    dst = bytearray(len(base) + 7)
    N.shuffle_into(base, memoryview(dst)[3:3 + len(base)], ts)
    assert bytes(dst[3:3 + len(base)]) == ref_shuffle(base, ts)


@pytest.mark.parametrize("ts", TYPESIZES)
def test_bitshuffle_matches_layout(level, ts):
    rng = np.random.default_rng(1000 + ts)
    for length in (0, 1, ts, 8 * ts, 8 * ts + 1, 9 * ts, 100, 1024, 4096 + 3, 3000 * ts + 5,
                   5000 * ts):
        b = rng.integers(0, 256, length, dtype=np.uint8).tobytes()
        for legacy in (False, True):
            s = N.bitshuffle(b, ts, legacy)
            assert s == ref_bitshuffle(b, ts, legacy), (length, legacy)
            assert N.bitunshuffle(s, ts, legacy) == b
            assert N.bitunshuffle(b, ts, legacy) == ref_bitunshuffle(b, ts, legacy)


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=3000), ts=st.integers(1, 40), legacy=st.booleans())
def test_shuffles_parity_hypothesis(data, ts, legacy):
    def check(lv):
        assert N.shuffle(data, ts) == ref_shuffle(data, ts)
        assert N.unshuffle(data, ts) == ref_unshuffle(data, ts)
        assert N.bitshuffle(data, ts, legacy) == ref_bitshuffle(data, ts, legacy)
        assert N.bitunshuffle(data, ts, legacy) == ref_bitunshuffle(data, ts, legacy)
        dst = bytearray(len(data) + 3)
        N.bitshuffle_into(data, dst, ts, legacy=legacy)
        assert bytes(dst[:len(data)]) == ref_bitshuffle(data, ts, legacy)
    each_level(check)


# The four kernels return a new bytes object written in place (allocated
# without zeroing from 16 KiB on, zeroed below): every input type, both
# allocation sizes around the switch, tails, typesize 1 and large typesizes.
NEW_BYTES_LENGTHS = [0, 1, 2, 3, 7, 8, 9, 31, 255, 4097, 16383, 16384, 16385, 70001]


def _as_inputs(b):
    """The same bytes as bytes, bytearray, memoryview slice and numpy arrays."""
    padded = b"??" + b + b"!"
    yield b
    yield bytearray(b)
    yield memoryview(padded)[2:2 + len(b)]
    yield np.frombuffer(b, np.uint8)
    if len(b) % 4 == 0:
        yield np.frombuffer(b, np.uint32)      # itemsize 4: still len(b) bytes


@pytest.mark.parametrize("ts", [1, 2, 3, 4, 8, 16, 17, 255])
def test_new_bytes_kernels_every_input(level, ts):
    rng = np.random.default_rng(500 + ts)
    for length in NEW_BYTES_LENGTHS:
        b = rng.integers(0, 256, length, dtype=np.uint8).tobytes()
        want = {"shuffle": ref_shuffle(b, ts), "unshuffle": ref_unshuffle(b, ts),
                "bitshuffle": ref_bitshuffle(b, ts), "bitunshuffle": ref_bitunshuffle(b, ts),
                "bitshuffle_legacy": ref_bitshuffle(b, ts, True),
                "bitunshuffle_legacy": ref_bitunshuffle(b, ts, True)}
        for src in _as_inputs(b):
            got = {"shuffle": N.shuffle(src, ts), "unshuffle": N.unshuffle(src, ts),
                   "bitshuffle": N.bitshuffle(src, ts),
                   "bitunshuffle": N.bitunshuffle(src, ts),
                   "bitshuffle_legacy": N.bitshuffle(src, ts, True),
                   "bitunshuffle_legacy": N.bitunshuffle(src, ts, True)}
            for name, out in got.items():
                assert type(out) is bytes, (name, type(src))
                assert out == want[name], (name, length, type(src))


def test_new_bytes_results_are_independent():
    # each call returns its own object, and later calls never write into it
    b = bytes(range(256)) * 80
    first = N.shuffle(b, 4)
    keep = bytes(bytearray(first))
    second = N.shuffle(b[::-1], 4)
    third = N.bitunshuffle(b, 8)
    assert first is not second and first == keep
    assert second == ref_shuffle(b[::-1], 4) and third == ref_bitunshuffle(b, 8)
    small = N.unshuffle(b[:100], 4)
    assert small is not N.unshuffle(b[:100], 4)


def test_new_bytes_kernels_reject_bad_input():
    for fn in (N.shuffle, N.unshuffle, N.bitshuffle, N.bitunshuffle):
        for ts in (0, -1, 2.0, None):
            with pytest.raises(ValueError):
                fn(b"abcdefgh", ts)
        with pytest.raises(TypeError):
            fn("not bytes", 4)
        with pytest.raises((ValueError, BufferError)):
            fn(memoryview(bytes(64))[::2], 4)      # not contiguous


def test_api_errors():
    with pytest.raises(ValueError):
        N.shuffle(b"abcd", 0)
    with pytest.raises(ValueError):
        N.shuffle_into(b"abcdefgh", bytearray(4), 2)
    with pytest.raises(ValueError):
        N.bitunshuffle_into(b"abcdefgh", bytearray(7), 1)
    buf = bytearray(64)
    with pytest.raises(ValueError):
        N.shuffle_into(buf, buf, 4)  # overlapping
    with pytest.raises(ValueError):
        N.blosclz_compress_into(b"x" * 100, bytearray(100), 0)
    with pytest.raises(ValueError):
        N.blosclz_compress_into(b"x" * 100, bytearray(100), 5, flavor="lz4")
    with pytest.raises(ValueError):
        N._force_simd("neon")
    with pytest.raises(ValueError):
        N.shuffle_into(b"abcd", b"abcd", 2)  # read-only dst
    assert N.simd_level() in ("scalar", "sse2", "avx2")


# ============================================================ BloscLZ

def _datasets(size, seed=5):
    rng = np.random.default_rng(seed)
    text = (b"The quick brown fox jumps over the lazy dog. Lorem ipsum dolor sit amet.\n"
            * (size // 70 + 2))[:size]
    ar = np.arange(size // 4 + 1, dtype=np.uint32).tobytes()[:size]
    rnd = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
    vals = rng.integers(0, 256, size // 40 + 2, dtype=np.uint8)
    runs = np.repeat(vals, rng.integers(1, 120, len(vals)))
    runs = np.resize(runs, size).tobytes()
    mixed = bytearray(rnd)
    mixed[::3] = bytes(len(mixed[::3]))
    lowent = rng.integers(0, 4, size, dtype=np.uint8).tobytes()
    far = bytearray(rng.integers(0, 256, size, dtype=np.uint8).tobytes())
    for k in range(20000, size - 400, 7000):   # matches 8-60 KiB back: far tokens
        far[k:k + 300] = far[k - 20000:k - 19700]
    floats = (np.linspace(0, 1000, size // 8 + 1) ** 1.5).tobytes()[:size]
    return {"text": text, "arange": ar, "random": rnd, "runs": runs, "mixed": bytes(mixed),
            "lowent": lowent, "far": bytes(far), "floats": floats}


SIZES = [16 * 1024, 100 * 1024 + 7, 256 * 1024]


def _blosc2_stream(chunk, block=0):
    """The single BloscLZ stream of a block of a C-Blosc2 chunk, None if stored raw."""
    if chunk[2] & 0x02:
        return None
    bstart = struct.unpack_from("<i", chunk, 32 + 4 * block)[0]
    csize = struct.unpack_from("<i", chunk, bstart)[0]
    return csize, chunk[bstart + 4:bstart + 4 + max(csize, 0)]


@need_blosc2
@pytest.mark.parametrize("size", SIZES)
def test_blosclz_blosc2_identical(size):
    for name, d in _datasets(size).items():
        for clevel in range(1, 10):
            chunk = blosc2.compress2(
                d, codec=blosc2.Codec.BLOSCLZ, clevel=clevel, filters=[blosc2.Filter.NOFILTER],
                splitmode=blosc2.SplitMode.NEVER_SPLIT, typesize=1, blocksize=len(d))
            got = _blosc2_stream(chunk)
            expect = None if got is None or got[0] == len(d) else got[1]
            # compress2 allocates nbytes + 32; 40 bytes are used before the stream
            out = bytearray(len(d) - 8)
            r = N.blosclz_compress_into(d, out, clevel)
            mine = bytes(out[:r]) if r else None
            assert mine == expect, (name, clevel, r)
            if expect is not None:
                back = bytearray(len(d))
                assert N.blosclz_decompress_into(expect, back) == len(d)
                assert back == d


@need_blosc
@pytest.mark.parametrize("size", SIZES)
def test_blosclz_blosc1_identical(size):
    try:
        for name, d in _datasets(size).items():
            for clevel in range(1, 10):
                blosc.set_blocksize(len(d))
                chunk = blosc.compress(d, typesize=1, clevel=clevel, shuffle=blosc.NOSHUFFLE,
                                       cname="blosclz")
                expect = None
                if not chunk[2] & 0x02:
                    bstart = struct.unpack_from("<i", chunk, 16)[0]
                    csize = struct.unpack_from("<i", chunk, bstart)[0]
                    if csize != len(d):
                        expect = chunk[bstart + 4:bstart + 4 + csize]
                split = not (chunk[2] & 0x10)
                out = bytearray(len(d) - 8)   # destsize nbytes + 16, 24 bytes used first
                r = N.blosclz_compress_into(d, out, clevel, flavor="blosc1", split=split)
                mine = bytes(out[:r]) if r else None
                assert mine == expect, (name, clevel, r)
                if expect is not None:
                    back = bytearray(len(d))
                    assert N.blosclz_decompress_into(expect, back) == len(d)
                    assert back == d
    finally:
        blosc.set_blocksize(0)


def test_blosclz_roundtrip_and_limits(level):
    rng = np.random.default_rng(3)
    for d in _datasets(50000, seed=9).values():
        for clevel in (1, 5, 9):
            for flavor in ("blosc2", "blosc1"):
                out = bytearray(len(d))
                r = N.blosclz_compress_into(d, out, clevel, flavor=flavor)
                if r:
                    back = bytearray(len(d))
                    assert N.blosclz_decompress_into(out[:r], back) == len(d)
                    assert back == d
                    # any smaller maxout either fits exactly or refuses
                    small = bytearray(r - 1)
                    assert N.blosclz_compress_into(d, small, clevel, flavor=flavor) == 0
    assert N.blosclz_compress_into(b"a" * 15, bytearray(100), 5) == 0
    assert N.blosclz_compress_into(b"a" * 1000, bytearray(65), 5) == 0
    assert N.blosclz_decompress_into(b"", bytearray(10)) == 0
    del rng


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=600), dstlen=st.integers(0, 2000))
def test_blosclz_decoder_parity_hypothesis(data, dstlen):
    dst = bytearray(dstlen)
    r = N.blosclz_decompress_into(data, dst)
    cnt, out = ref_lz_decode(data, dstlen)
    assert r == cnt
    if cnt:
        assert bytes(dst[:cnt]) == out


@settings(max_examples=60, deadline=None)
@given(parts=st.lists(st.tuples(st.integers(0, 255), st.integers(1, 300)), min_size=1,
                      max_size=40),
       clevel=st.integers(1, 9), flavor=st.sampled_from(["blosc2", "blosc1"]))
def test_blosclz_encoder_roundtrip_hypothesis(parts, clevel, flavor):
    data = b"".join(bytes([v]) * k + bytes([(v * 7 + k) & 255]) for v, k in parts)
    out = bytearray(len(data) + 64)
    r = N.blosclz_compress_into(data, out, clevel, flavor=flavor)
    if r:
        back = bytearray(len(data))
        assert N.blosclz_decompress_into(out[:r], back) == len(data)
        assert back == data
        assert ref_lz_decode(out[:r], len(data)) == (len(data), data)


def test_blosclz_hostile_inputs():
    rng = random.Random(1234)
    valid = []
    for d in _datasets(20000, seed=2).values():
        out = bytearray(len(d))
        r = N.blosclz_compress_into(d, out, 9)
        if r:
            valid.append((bytes(out[:r]), d))
    assert valid
    for _ in range(3000):
        stream, d = rng.choice(valid)
        mode = rng.randrange(4)
        if mode == 0:
            s = stream[:rng.randrange(len(stream))]
        elif mode == 1:
            s = bytearray(stream)
            for _ in range(rng.randrange(1, 8)):
                s[rng.randrange(len(s))] = rng.randrange(256)
            s = bytes(s)
        elif mode == 2:
            s = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        else:
            s = stream
        dstlen = rng.choice([len(d), len(d) - 1, len(d) // 2, rng.randrange(0, 64)])
        dst = bytearray(dstlen + 16)
        guard = bytes(dst[dstlen:])
        view = memoryview(dst)[:dstlen]
        r = N.blosclz_decompress_into(s, view)
        assert 0 <= r <= dstlen
        assert bytes(dst[dstlen:]) == guard
        if len(s) < 3000:
            assert r == ref_lz_decode(s, dstlen)[0]
    # a long match whose length bytes would overflow 32 bits
    evil = bytes([0x00, 0x41, 0xE0]) + b"\xff" * 20000 + b"\x01\x00\x00"
    assert N.blosclz_decompress_into(evil, bytearray(1 << 20)) == 0
    # trailing long/far match is not executed
    tail = bytes([0x01, 0x61, 0x62, 0xE0, 0x05, 0x01])
    assert N.blosclz_decompress_into(tail, bytearray(100)) == 2


# ============================================================ filters

@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=700), ts=st.integers(1, 40), seed=st.integers(0, 1 << 30))
def test_filters_parity_hypothesis(data, ts, seed):
    dref = np.random.default_rng(seed).integers(0, 256, len(data), dtype=np.uint8).tobytes()

    def check(lv):
        for first in (True, False):
            dst = bytearray(len(data))
            N.delta_encode_into(data if first else dref, data, dst, ts, is_first_block=first)
            assert bytes(dst) == ref_delta_encode(dref, data, ts, first)
            buf = bytearray(dst)
            N.delta_decode_into(dref, buf, ts, first)
            assert bytes(buf) == ref_delta_decode(dref, bytes(dst), ts, first)
            assert bytes(buf) == data
            inplace = bytearray(data)
            N.delta_encode_into(inplace if first else dref, inplace, inplace, ts)
            assert bytes(inplace) == ref_delta_encode(dref, data, ts, first)
        for buggy in (False, True):
            enc = bytearray(len(data))
            N.bytedelta_encode_into(data, enc, ts, buggy=buggy)
            assert bytes(enc) == ref_bytedelta(data, ts, False, buggy)
            dec = bytearray(len(data))
            N.bytedelta_decode_into(enc, dec, ts, buggy=buggy)
            assert bytes(dec) == ref_bytedelta(bytes(enc), ts, True, buggy) == data
        for tsz in (4, 8):
            for prec in (-60, -52, -23, -22, -5, -1, 0, 1, 7, 23, 24, 52, 53):
                want = ref_trunc_prec(data, tsz, prec)
                dst = bytearray(len(data))
                if want is None:
                    with pytest.raises(ValueError):
                        N.trunc_prec_into(data, dst, tsz, prec)
                else:
                    N.trunc_prec_into(data, dst, tsz, prec)
                    assert bytes(dst) == want
    each_level(check)


def test_trunc_prec_typesize():
    with pytest.raises(ValueError):
        N.trunc_prec_into(b"\0" * 12, bytearray(12), 2, 5)
    with pytest.raises(ValueError):
        N.trunc_prec_into(b"\0" * 12, bytearray(12), 4, 200)


# ---- identity with the filters as C-Blosc2 / C-Blosc write them in chunks

def _filtered_blocks(chunk, nblocks, bsize):
    """Decode each block's single BloscLZ stream: the filtered block bytes."""
    if chunk[2] & 0x02:
        return None
    res = []
    for b in range(nblocks):
        csize, payload = _blosc2_stream(chunk, b)
        if csize == bsize:
            res.append(payload)
        elif csize <= 0:
            return None
        else:
            back = bytearray(bsize)
            assert N.blosclz_decompress_into(payload, back) == bsize
            res.append(bytes(back))
    return res


def _compressible(n, seed):
    """n uint64 words that BloscLZ compresses well both raw and filtered."""
    rng = np.random.default_rng(seed)
    a = (np.arange(n, dtype=np.uint64) // 16) * np.uint64(40503) + rng.integers(0, 2, n).astype(
        np.uint64)
    return a.tobytes()


@need_blosc2
@pytest.mark.parametrize("ts", [1, 2, 3, 4, 8, 12, 16, 24])
def test_filters_identical_to_blosc2(ts):
    checked = 0
    # blocksize must be a multiple of typesize (the libraries round it down)
    for length in (8 * ts * 100, 8 * ts * 100 + 3 * ts, ts * (4096 // ts + 5)):
        d = _compressible(length // 8 + 1, ts)[:length]
        common = dict(codec=blosc2.Codec.BLOSCLZ, clevel=5, typesize=ts,
                      splitmode=blosc2.SplitMode.NEVER_SPLIT, blocksize=len(d))
        for filt, fn in ((blosc2.Filter.SHUFFLE, lambda x: N.shuffle(x, ts)),
                         (blosc2.Filter.BITSHUFFLE, lambda x: N.bitshuffle(x, ts)),
                         (blosc2.Filter.DELTA, lambda x: (lambda o: (N.delta_encode_into(
                             x, x, o, ts, is_first_block=True), bytes(o))[1])(bytearray(len(x))))):
            got = _filtered_blocks(blosc2.compress2(d, filters=[filt], **common), 1, len(d))
            if got is None:
                continue
            w = _delta_word(ts)
            n_cmp = len(d) - len(d) % w if filt == blosc2.Filter.DELTA else len(d)
            assert got[0][:n_cmp] == fn(d)[:n_cmp], filt
            checked += 1
        if len(d) % ts == 0:
            enc = bytearray(len(d))
            # BYTEDELTA (35) and BYTEDELTA_BUGGY (34) follow a shuffle
            for fid, buggy in ((35, False), (34, True)):
                chunk = blosc2.compress2(d, filters=[blosc2.Filter.SHUFFLE, fid],
                                         filters_meta=[0, ts], **common)
                if chunk[17] != fid:
                    # python-blosc2 drops BYTEDELTA (35) for typesize 1
                    continue
                got = _filtered_blocks(chunk, 1, len(d))
                if got is None:
                    continue
                N.bytedelta_encode_into(N.shuffle(d, ts), enc, ts, buggy=buggy)
                assert got[0] == bytes(enc), fid
                checked += 1
    assert checked >= 6


@need_blosc2
def test_delta_two_blocks_identical_to_blosc2():
    for ts in (1, 2, 4, 8, 16, 3):
        bsize = 512 * ts
        d = _compressible(2 * bsize // 8, ts)
        chunk = blosc2.compress2(d, filters=[blosc2.Filter.DELTA], codec=blosc2.Codec.BLOSCLZ,
                                 clevel=5, typesize=ts, splitmode=blosc2.SplitMode.NEVER_SPLIT,
                                 blocksize=bsize)
        got = _filtered_blocks(chunk, 2, bsize)
        assert got is not None
        b0, b1 = d[:bsize], d[bsize:]
        e0, e1 = bytearray(bsize), bytearray(bsize)
        N.delta_encode_into(b0, b0, e0, ts)
        N.delta_encode_into(b0, b1, e1, ts, is_first_block=False)
        assert got[0] == bytes(e0) and got[1] == bytes(e1)
        # decode: block 0 first, then block 1 against decoded block 0
        N.delta_decode_into(e0, e0, ts, True)
        N.delta_decode_into(e0, e1, ts, False)
        assert bytes(e0) + bytes(e1) == d


@need_blosc2
@pytest.mark.parametrize("ts,prec", [(4, 10), (4, -5), (8, 20), (8, -30)])
def test_trunc_prec_identical_to_blosc2(ts, prec):
    x = np.repeat(np.linspace(-5, 5, 250) ** 3, 16)
    d = x.astype(np.float32 if ts == 4 else np.float64).tobytes()
    chunk = blosc2.compress2(d, filters=[blosc2.Filter.TRUNC_PREC], filters_meta=[prec],
                             codec=blosc2.Codec.BLOSCLZ, clevel=5, typesize=ts,
                             splitmode=blosc2.SplitMode.NEVER_SPLIT, blocksize=len(d))
    got = _filtered_blocks(chunk, 1, len(d))
    # (if the chunk were stored memcpyed, C-Blosc2 would silently skip the filter)
    assert got is not None
    mine = bytearray(len(d))
    N.trunc_prec_into(d, mine, ts, prec)
    assert got[0] == bytes(mine)
    assert blosc2.decompress2(chunk) == bytes(mine)


@need_blosc
@pytest.mark.parametrize("ts,length", [(4, 4 * 8 * 300), (8, 8 * 8 * 200), (3, 3 * 8 * 200),
                                       (24, 24 * 8 * 50), (24, 24 * (8 * 50 + 3)),
                                       (4, 4 * 8 * 300 + 4)])
def test_bitshuffle_legacy_identical_to_blosc1(ts, length):
    d = _compressible(length // 8 + 1, ts)[:length]
    try:
        blosc.set_blocksize(len(d))
        chunk = blosc.compress(d, typesize=ts, clevel=5, shuffle=blosc.BITSHUFFLE, cname="blosclz")
    finally:
        blosc.set_blocksize(0)
    assert not chunk[2] & 0x02
    split = not (chunk[2] & 0x10) and ts <= 16 and len(d) // ts >= 128
    nstreams = ts if split else 1
    neblock = len(d) // nstreams
    pos = struct.unpack_from("<i", chunk, 16)[0]
    filtered = b""
    for _ in range(nstreams):
        csize = struct.unpack_from("<i", chunk, pos)[0]
        payload = chunk[pos + 4:pos + 4 + csize]
        pos += 4 + csize
        if csize == neblock:
            filtered += payload
        else:
            back = bytearray(neblock)
            assert N.blosclz_decompress_into(payload, back) == neblock
            filtered += bytes(back)
    mine = N.bitshuffle(d, ts, legacy=True)
    assert filtered == mine[:len(filtered)]
    assert N.bitunshuffle(mine, ts, legacy=True) == d
    assert blosc.decompress(chunk) == d


def _match_stream(pattern: bytes, length: int, tail: bytes = b"z") -> bytes:
    """A BloscLZ stream: literal `pattern`, one match of `length` bytes at
    distance len(pattern), then a literal `tail` (a stream must end in one)."""
    dist = len(pattern) - 1              # stored as distance - 1
    out = bytearray([len(pattern) - 1]) + pattern
    if length - 2 < 7:
        out += bytes([((length - 2) << 5) | (dist >> 8), dist & 255])
    else:
        rest = length - 9
        out.append((7 << 5) | (dist >> 8))
        while rest >= 255:
            out.append(255)
            rest -= 255
        out += bytes([rest, dist & 255])
    out += bytes([len(tail) - 1]) + tail
    return bytes(out)


@pytest.mark.parametrize("dist", list(range(1, 33)))
def test_blosclz_overlapping_matches(dist):
    # Every short period, with lengths around the decoder's copy widths and
    # with and without room after the match (slack only when dst is bigger).
    pattern = bytes((7 * k + 3) & 255 for k in range(dist))
    for length in (3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 300, 1000):
        stream = _match_stream(pattern, length)
        expected = pattern + (pattern * (length // dist + 2))[:length] + b"z"
        for slack in (0, 1, 40):
            dst = bytearray(len(expected) + slack)
            n = native.blosclz_decompress_into(stream, dst)
            assert n == len(expected)
            assert bytes(dst[:n]) == expected, (dist, length, slack)
