"""Differential tests of the chunk reader against python-blosc2 / python-blosc.

Every chunk here is written by an oracle (C-Blosc2 3.3.5 through
python-blosc2, C-Blosc 1.21.7 through python-blosc) from data made in the
test; blosckit must give back the original data through every public entry
point, and report the header as stored.

The default grid is a covering design (every codec x pipeline x typesize,
the other dimensions cycled); ``BLOSCKIT_LONG=1`` runs the full product.
"""
from __future__ import annotations

import itertools
import math
import struct

import pytest

import blosckit
from helpers import (CODEC_FORMAT_NAME, CODECS, DATASETS, LONG, SPLITMODES, b1_compress,
                     b2_compress, b2_decompress, block_boundaries, dataset,
                     expected_filter_list, float_data, raw_header, special_chunk, vl_chunk)
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")

TYPESIZES = (1, 2, 4, 7, 8, 16, 17, 255)

# name -> filter list given to python-blosc2 (entry i in slot i)
PIPELINES = {
    "none": [],
    "shuffle": ["shuffle"],
    "bitshuffle": ["bitshuffle"],
    "delta": ["delta"],
    "delta+shuffle": ["delta", "shuffle"],
    "shuffle+bytedelta": ["shuffle", "bytedelta"],
    "shuffle2": [("shuffle", 2)],
    "six": ["shuffle", "bytedelta", "bitshuffle", ("shuffle", 2), "bytedelta", "shuffle"],
    "six-gaps": [None, "delta", None, "shuffle", None, "bitshuffle"],
    # C-Blosc2 cannot write these right (see test_blosc2_grid): decoded only
    "six-delta": ["delta", "shuffle", "bytedelta", "bitshuffle", "delta", "shuffle"],
    "trunc_prec": [("trunc_prec", 13), "shuffle"],
}
LOSSY = {"trunc_prec"}


def _blocksizes(ts: int) -> list[int]:
    """0 (automatic) and explicit multiples of typesize: about 64, 256 and
    1000 bytes, an odd number of items, and a count that is not a multiple
    of 8 items (a bitshuffle tail)."""
    def mult(n):
        return max(ts, n - n % ts)
    return sorted({0, mult(64), mult(256), mult(1000), ts * 37, ts * 8 * 5 + 3 * ts})


NBYTES = (4096, 10007, 33333)


def _filters_for(pipe: str) -> list:
    # python-blosc2 takes NOFILTER for empty slots
    return [("nofilter" if f is None else f) for f in PIPELINES[pipe]]


def _valid(pipe: str, ts: int) -> bool:
    if pipe == "trunc_prec":
        return ts in (4, 8)
    return True


def _cases():
    if LONG:
        k = 0
        for codec, pipe, ts, kind, split in itertools.product(
                CODECS, PIPELINES, TYPESIZES, DATASETS, SPLITMODES):
            if not _valid(pipe, ts):
                continue
            for bs in _blocksizes(ts):
                yield codec, pipe, ts, kind, bs, split, NBYTES[k % len(NBYTES)]
                k += 1
        return
    k = 0
    for codec, pipe, ts in itertools.product(CODECS, PIPELINES, TYPESIZES):
        if not _valid(pipe, ts):
            continue
        bss = _blocksizes(ts)
        yield (codec, pipe, ts, DATASETS[k % len(DATASETS)], bss[k % len(bss)],
               SPLITMODES[k % len(SPLITMODES)], NBYTES[k % len(NBYTES)])
        k += 1


GRID = list(_cases())


def _id(case) -> str:
    codec, pipe, ts, kind, bs, split, nb = case
    return f"{codec}-{pipe}-ts{ts}-bs{bs}-{split}-{kind}-n{nb}"


# ---------------------------------------------------------------------------
# The checks every decodable chunk goes through
# ---------------------------------------------------------------------------

def check_reads(chunk: bytes, expected: bytes, *, getitem_ok: bool = True) -> None:
    """decompress (1 and 2 threads), decompress_into (bytearray, larger
    bytearray, numpy arrays), getitem at block boundaries, chunk_sizes."""
    nbytes = len(expected)
    got = blosckit.decompress(chunk)
    assert isinstance(got, bytes)
    assert got == expected
    assert blosckit.decompress(chunk, nthreads=2) == expected
    assert blosckit.decompress(bytearray(chunk)) == expected
    assert blosckit.decompress(memoryview(chunk)) == expected

    dst = bytearray(nbytes)
    assert blosckit.decompress_into(chunk, dst) == nbytes
    assert dst == expected
    big = bytearray(b"\xa5" * (nbytes + 7))
    assert blosckit.decompress_into(chunk, big, nthreads=2) == nbytes
    assert big[:nbytes] == expected and big[nbytes:] == b"\xa5" * 7
    arr = np.full(nbytes, 0x5A, dtype=np.uint8)
    assert blosckit.decompress_into(chunk, arr) == nbytes
    assert arr.tobytes() == expected
    if nbytes % 8 == 0 and nbytes:
        arr8 = np.zeros(nbytes // 8, dtype=np.float64)
        assert blosckit.decompress_into(chunk, arr8) == nbytes
        assert arr8.tobytes() == expected
    if nbytes:
        with pytest.raises(ValueError):
            blosckit.decompress_into(chunk, bytearray(nbytes - 1))

    h = raw_header(chunk)
    assert blosckit.chunk_sizes(chunk) == (h["nbytes"], h["cbytes"], h["blocksize"])

    if getitem_ok:
        ts = h["typesize"]
        bs = h["blocksize"] if not h["flags2"] & 1 else max(nbytes, 1)
        for start, n in block_boundaries(nbytes, bs, ts):
            assert blosckit.getitem(chunk, start, n) == expected[start * ts:(start + n) * ts], \
                (start, n)
        nitems = nbytes // ts
        with pytest.raises(ValueError):
            blosckit.getitem(chunk, nitems, 1)
        with pytest.raises(ValueError):
            blosckit.getitem(chunk, -1, 1)


def check_parse(chunk: bytes, *, codec: str | None = None, filters=None) -> blosckit.Chunk:
    """parse_chunk fields against the test's own struct reading of the header."""
    h = raw_header(chunk)
    c = blosckit.parse_chunk(chunk)
    assert c.version == h["version"]
    assert c.typesize == h["typesize"]
    assert c.nbytes == h["nbytes"]
    assert c.cbytes == h["cbytes"] == len(chunk)
    assert c.blocksize == h["blocksize"]
    special = (h["b2flags"] >> 4) & 7
    vl = bool(h["flags2"] & 1)
    assert c.vlblocks is vl
    assert c.special == {0: None, 1: "zeros", 2: "nan", 3: "value", 4: "uninit"}[special]
    assert c.lazy is False
    assert c.memcpyed is (bool(h["flags"] & 0x02) and not special)
    if vl:
        assert c.nblocks == h["blocksize"]
    elif h["nbytes"]:
        assert c.nblocks == math.ceil(h["nbytes"] / min(h["blocksize"], h["nbytes"]))
    if codec is not None and not c.memcpyed and not special:
        assert c.codec == CODEC_FORMAT_NAME[codec]
    assert c.filters == expected_filter_list(chunk)
    if filters is not None:
        assert c.filters == filters
    if not c.memcpyed and not special:
        assert len(c.bstarts) == c.nblocks
        assert all(0 < b < len(chunk) for b in c.bstarts)
        if not vl and h["version"] >= 3:
            assert c.split is not bool(h["flags"] & 0x10)
    assert (c.dict is not None) is (bool(h["b2flags"] & 1) and not c.memcpyed and not special)
    return c


def _delta_word(ts: int) -> int:
    return ts if ts in (1, 2, 4, 8) else (8 if ts % 8 == 0 else 1)


def _delta_tail_lost(pipe: str, ts: int, nbytes: int, blocksize: int) -> bool:
    """Does C-Blosc2's delta encoder leave unwritten bytes in this chunk?"""
    names = [f if isinstance(f, str) else f and f[0] for f in PIPELINES[pipe]]
    leftover = nbytes % blocksize if blocksize else 0
    return "delta" in names and leftover % _delta_word(ts) != 0


def _requested(pipe: str, ts: int) -> list[tuple[str, int]]:
    """What parse_chunk must list for a pipeline (slot order = application order)."""
    out = []
    for f in PIPELINES[pipe]:
        if f is None:
            continue
        name, meta = (f, 0) if isinstance(f, str) else f
        if name == "bytedelta":
            if ts == 1:       # python-blosc2 drops bytedelta for 1-byte items
                continue
            meta = ts
        out.append((name, meta))
    return out


# ---------------------------------------------------------------------------
# The grid
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", GRID, ids=[_id(c) for c in GRID])
def test_blosc2_grid(case):
    codec, pipe, ts, kind, bs, split, nb = case
    data = float_data(nb, ts) if pipe in LOSSY else dataset(kind, nb, ts)
    # C-Blosc2 3.3.5 writes the third filter's output into the caller's
    # source buffer (pipeline_forward cycles the source pointer into _dest),
    # so it gets a copy.
    chunk = b2_compress(bytearray(data), typesize=ts, codec=codec,
                        filters=_filters_for(pipe), blocksize=bs, splitmode=split, clevel=5)
    oracle = b2_decompress(chunk)
    real = [f if isinstance(f, str) else f[0] for f in PIPELINES[pipe] if f is not None]
    if bs > nb and nb % ts:
        # C-Blosc2 3.3.5 writer bug: an explicit blocksize above nbytes is
        # clamped to nbytes although that is not a multiple of typesize; the
        # streams hold a rounded-down block (or split streams missing the last
        # bytes).  C-Blosc2 then errors or returns bytes it never wrote; the
        # reader must refuse cleanly or decode nbytes bytes.
        try:
            assert len(blosckit.decompress(chunk)) == nb
        except blosckit.FormatError as e:
            assert e.rule in ("B3", "B7", "B4"), e
        return
    assert oracle is not None, "C-Blosc2 cannot read its own chunk"
    if len(real) >= 3:
        # C-Blosc2 3.3.5 cannot write pipelines of 3+ filters: the third
        # filter's output goes into the caller's source buffer
        # (pipeline_forward cycles the source pointer into _dest), which later
        # steps read again.  The data is lost at write time, so blosckit must
        # agree with C-Blosc2's decoder instead -- except where delta sits
        # after the first filter: then C-Blosc2's decoder XORs block 0 against
        # its not yet written output buffer, and only decoding is checked.
        # test_six_filter_pipeline_hand_built checks such pipelines against
        # the original data.
        check_parse(chunk, codec=codec, filters=_requested(pipe, ts))
        got = blosckit.decompress(chunk)
        assert len(got) == nb
        if "delta" not in real[1:]:
            assert got == oracle
            check_reads(chunk, oracle)
        return
    if pipe in LOSSY:
        assert oracle is not None
        expected = oracle
        assert len(expected) == len(data)
    elif oracle != data and _delta_tail_lost(pipe, ts, nb, raw_header(chunk)["blocksize"]):
        # C-Blosc2's delta encoder never writes the last nbytes % w bytes of a
        # leftover block (delta.c: the loops stop at nbytes / w), so the
        # chunk holds stale bytes there: the data is lost at write time.  The
        # reader must then agree with C-Blosc2, and only there.
        bad = [k for k in range(nb) if oracle[k] != data[k]]
        assert bad[0] >= nb - nb % raw_header(chunk)["blocksize"]
        expected = oracle
    else:
        assert oracle == data, "C-Blosc2 does not read back its own chunk"
        expected = data
    check_parse(chunk, codec=codec, filters=_requested(pipe, ts))
    check_reads(chunk, expected)


def test_grid_size():
    assert len(GRID) >= 300 or LONG


# ---------------------------------------------------------------------------
# Dictionary chunks
# ---------------------------------------------------------------------------

DICT_CASES = [(c, ts, bs) for c in ("zstd", "lz4", "lz4hc") for ts in (1, 4, 8)
              for bs in (0, 4096, 16384)]


@pytest.mark.parametrize("codec,ts,bs", DICT_CASES,
                         ids=[f"{c}-ts{t}-bs{b}" for c, t, b in DICT_CASES])
def test_dict_chunk(codec, ts, bs):
    data = dataset("runs", 150_000, ts, seed=ts) + dataset("arange", 50_000, ts)
    chunk = b2_compress(data, typesize=ts, codec=codec, filters=["shuffle"], blocksize=bs,
                        use_dict=True, clevel=5)
    assert b2_decompress(chunk) == data
    h = raw_header(chunk)
    c = check_parse(chunk, codec=codec)
    if h["b2flags"] & 1 and not c.memcpyed:
        dsize = struct.unpack_from("<i", chunk, 32 + 4 * c.nblocks)[0]
        assert c.dict == chunk[32 + 4 * c.nblocks + 4:32 + 4 * c.nblocks + 4 + dsize]
    check_reads(chunk, data)


def test_dict_chunk_really_has_a_dict():
    data = dataset("runs", 200_000, 4)
    chunk = b2_compress(data, typesize=4, codec="zstd", filters=["shuffle"],
                        blocksize=8192, use_dict=True)
    c = blosckit.parse_chunk(chunk)
    assert c.dict is not None and len(c.dict) > 0
    assert c.nblocks > 1
    assert blosckit.decompress(chunk) == data


# ---------------------------------------------------------------------------
# Special chunks
# ---------------------------------------------------------------------------

SPECIAL_CASES = [
    ("zero", 1, None), ("zero", 4, None), ("zero", 17, None),
    ("nan", 4, None), ("nan", 8, None),
    ("uninit", 1, None), ("uninit", 8, None),
    ("value", 1, np.uint8(7)), ("value", 4, np.float32(3.5)), ("value", 8, np.float64(-2.25)),
    ("value", 2, np.int16(-3)),
]


def _special_expected(kind, nitems, ts, value):
    n = nitems * ts
    if kind in ("zero", "uninit"):
        return bytes(n)
    if kind == "nan":
        return np.full(nitems, np.nan, dtype="<f4" if ts == 4 else "<f8").tobytes()
    return np.array([value] * nitems, dtype=np.asarray(value).dtype.newbyteorder("<")).tobytes()


@pytest.mark.parametrize("kind,ts,value", SPECIAL_CASES,
                         ids=[f"{k}-ts{t}" for k, t, _ in SPECIAL_CASES])
@pytest.mark.parametrize("nitems", [1, 1000, 100_003])
def test_special_chunk(kind, ts, value, nitems):
    chunk = special_chunk(kind, nitems, ts, value)
    expected = _special_expected(kind, nitems, ts, value)
    if kind != "uninit":
        assert b2_decompress(chunk) == expected
    c = check_parse(chunk)
    assert c.special == {"zero": "zeros"}.get(kind, kind)
    assert c.nbytes == nitems * ts
    assert c.memcpyed is False
    assert c.bstarts == []
    # blosckit zero-fills uninit chunks (C-Blosc2 leaves the output untouched)
    check_reads(chunk, expected)


def test_special_zeros_big_is_cheap():
    """A 1 GiB zeros chunk: 32 bytes in, parse says so without decoding."""
    hdr = bytearray(special_chunk("zero", 1000, 4))
    struct.pack_into("<ii", hdr, 4, 2**30, 2**20)
    c = blosckit.parse_chunk(bytes(hdr))
    assert (c.nbytes, c.special, c.cbytes) == (2**30, "zeros", 32)
    assert blosckit.chunk_sizes(bytes(hdr)) == (2**30, 32, 2**20)


def test_getitem_special_allocates_only_the_range():
    """getitem of 2 items at the end of a 1 GiB zeros chunk must not build
    the 1 GiB prefix."""
    import tracemalloc
    hdr = bytearray(special_chunk("zero", 1000, 4))
    struct.pack_into("<ii", hdr, 4, 2**30, 2**20)
    tracemalloc.start()
    try:
        assert blosckit.getitem(bytes(hdr), 2**28 - 2, 2) == bytes(8)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 24, peak


@pytest.mark.parametrize("start,n", [(0, 3), (5, 7), (999, 1), (333, 100)])
def test_getitem_value_chunk_phase(start, n):
    """A value chunk whose value is wider than typesize: items come out at
    the right phase of the repeated value."""
    value = np.float64(-2.25)
    chunk = special_chunk("value", 1000, 8, value)
    full = np.full(1000, value, dtype="<f8").tobytes()
    assert blosckit.getitem(chunk, start, n) == full[8 * start:8 * (start + n)]


# ---------------------------------------------------------------------------
# Memcpyed chunks
# ---------------------------------------------------------------------------

MEMCPY_CASES = [(n, ts, cl) for n, ts, cl in [
    (0, 1, 5), (1, 1, 5), (5, 1, 5), (20, 4, 5), (31, 1, 9), (16, 8, 5), (17, 17, 5),
    (2000, 4, 0), (33333, 8, 0), (1000, 255, 0), (5000, 7, 0)]]


@pytest.mark.parametrize("n,ts,clevel", MEMCPY_CASES,
                         ids=[f"n{n}-ts{t}-clevel{c}" for n, t, c in MEMCPY_CASES])
@pytest.mark.parametrize("codec", ["blosclz", "zstd"])
def test_memcpyed_chunk(n, ts, clevel, codec):
    data = dataset("arange", n, ts)
    chunk = b2_compress(data, typesize=ts, codec=codec, filters=["shuffle"], clevel=clevel)
    assert b2_decompress(chunk) == data
    c = check_parse(chunk)
    if n:
        assert c.memcpyed is True
        assert c.cbytes == n + 32
    check_reads(chunk, data)


def test_incompressible_fallback_is_memcpyed():
    data = dataset("random", 50_000, 1)
    chunk = b2_compress(data, typesize=1, codec="lz4", filters=["shuffle"], clevel=9)
    h = raw_header(chunk)
    c = check_parse(chunk)
    # either every stream is raw, or the whole chunk fell back to memcpy
    if h["flags"] & 0x02:
        assert c.memcpyed and c.cbytes == len(data) + 32
    check_reads(chunk, data)


# ---------------------------------------------------------------------------
# VL-block chunks (version 6)
# ---------------------------------------------------------------------------

def _vl_blocks(kind: str):
    if kind == "mixed":
        return [b"abc" * 10, b"hello world " * 30, bytes(100), dataset("random", 777, 1),
                b"x"]
    if kind == "one":
        return [dataset("arange", 5000, 4)]
    if kind == "many":
        return [dataset("arange", 40 + 8 * i, 4, seed=i) for i in range(50)]
    if kind == "typed":
        return [dataset("arange", 4 * n, 4) for n in (1, 3, 100, 2500, 7)]
    raise ValueError(kind)


VL_CASES = [(kind, codec, ts, pipe)
            for kind in ("mixed", "one", "many", "typed")
            for codec in ("blosclz", "lz4", "zlib", "zstd")
            for ts, pipe in ((1, ()), (4, ("shuffle",)), (4, ("delta",)),
                             (4, ("bitshuffle",)), (4, ("shuffle", "bytedelta")))]


@pytest.mark.parametrize("kind,codec,ts,pipe", VL_CASES,
                         ids=[f"{k}-{c}-ts{t}-{'+'.join(p) or 'none'}" for k, c, t, p in VL_CASES])
def test_vlblocks_chunk(kind, codec, ts, pipe):
    blocks = _vl_blocks(kind)
    try:
        chunk = vl_chunk(blocks, typesize=ts, codec=codec, filters=list(pipe))
    except RuntimeError as e:       # C-Blosc2 refuses some combinations
        pytest.skip(f"C-Blosc2 does not write this VL chunk: {e}")
    expected = b"".join(blocks)
    oracle = b"".join(blosc2.blosc2_ext.vldecompress(chunk))
    if "delta" in pipe:
        # Divergence: C-Blosc2 3.3.5 decodes delta VL blocks wrongly (items
        # 0,1,2,3 come back as 0,1,3,1): its decoder does not undo the
        # self-referenced delta the encoder wrote.  Also, its delta encoder
        # leaves the last size % w bytes of each block unwritten (lost at
        # write time).  blosckit must give the original data elsewhere.
        tails, pos = set(), 0
        for b in blocks:
            pos += len(b)
            tails.update(range(pos - len(b) % _delta_word(ts), pos))
        got = blosckit.decompress(chunk)
        assert len(got) == len(expected)
        assert [k for k in range(len(expected))
                if got[k] != expected[k] and k not in tails] == []
        expected = got
    else:
        assert oracle == expected
    h = raw_header(chunk)
    assert h["version"] == 6 and h["flags2"] & 1
    c = check_parse(chunk)
    assert c.vlblocks is True
    assert c.nblocks == len(blocks) == c.blocksize
    assert c.split is False
    check_reads(chunk, expected)


# ---------------------------------------------------------------------------
# Blosc1 chunks written by C-Blosc 1.21.7 (python-blosc)
# ---------------------------------------------------------------------------

B1_TYPESIZES = (1, 2, 4, 7, 8, 16, 17, 255)


def _b1_blocksizes(ts):
    # C-Blosc 1.x rounds a forced blocksize down to a multiple of typesize
    # and does not go below MIN_BUFFERSIZE (128)
    return (0, 128, 1000, 4096) if LONG else (0, 1000)


def _b1_cases():
    k = 0
    for cname, sh, ts in itertools.product(CODECS, ("noshuffle", "shuffle", "bitshuffle"),
                                           B1_TYPESIZES):
        bss = _b1_blocksizes(ts)
        kinds = DATASETS if LONG else (DATASETS[k % len(DATASETS)],)
        for bs in (bss if LONG else (bss[k % len(bss)],)):
            for kind in kinds:
                yield cname, sh, ts, bs, kind
        k += 1
    # the legacy split rule and bitshuffle tails at small blocks, every codec
    for cname in CODECS:
        for ts, bs in ((16, 2048), (16, 1024), (17, 4352), (7, 896), (4, 512), (8, 1000),
                       (255, 255 * 9)):
            yield cname, "bitshuffle", ts, bs, "arange"
            yield cname, "shuffle", ts, bs, "linspace"


B1_GRID = list(dict.fromkeys(_b1_cases()))


@pytest.mark.parametrize("case", B1_GRID,
                         ids=[f"{c}-{s}-ts{t}-bs{b}-{k}" for c, s, t, b, k in B1_GRID])
def test_blosc1_grid(case):
    blosc = oracle("blosc")
    cname, sh, ts, bs, kind = case
    data = dataset(kind, 20_000 + 3 * ts + 1, ts)
    chunk = b1_compress(data, typesize=ts, clevel=5, shuffle=sh, cname=cname, blocksize=bs)
    assert bytes(blosc.decompress(chunk)) == data, "C-Blosc 1.x does not read its own chunk"
    h = raw_header(chunk)
    assert h["version"] == 2 and not h["extended"]
    c = check_parse(chunk, codec=cname)
    # the legacy split rule (C-Blosc 1.x blosc_d)
    if not c.memcpyed:
        bsz = min(h["blocksize"], h["nbytes"])
        assert c.split == (not h["flags"] & 0x10 and ts <= 16 and bsz // ts >= 128)
    # compare with the ORIGINAL data: C-Blosc2 gets some of these wrong
    check_reads(chunk, data)


def test_blosc1_grid_size():
    assert len(B1_GRID) >= 100


# Known divergences: C-Blosc2 misreads these Blosc1 chunks, blosckit does not.

def test_c_blosc2_v2_bitshuffle_tail():
    """V2: a version-2 bitshuffle block whose item count is not a multiple of
    8 is stored unshuffled by C-Blosc 1.x; C-Blosc2 bit-unshuffles only the
    whole groups and leaves the rest of its output uninitialised."""
    blosc = oracle("blosc")
    ts, n = 4, 4 * 8 * 50 + 4 * 3 + 1    # 403 items + 1 tail byte, one block
    data = dataset("arange", n, ts)
    chunk = b1_compress(data, typesize=ts, clevel=5, shuffle="bitshuffle", cname="lz4")
    assert bytes(blosc.decompress(chunk)) == data
    assert blosckit.decompress(chunk) == data
    assert blosckit.getitem(chunk, 400, 3) == data[1600:1612]


@pytest.mark.parametrize("cname", CODECS)
def test_c_blosc2_blosc1_bitshuffle_small_blocks(cname):
    """Blosc1 bitshuffle chunks with small forced blocks (tails in every
    block): the original data, whatever C-Blosc2 says."""
    blosc = oracle("blosc")
    ts = 8
    data = dataset("linspace", 8 * 1001, ts)
    chunk = b1_compress(data, typesize=ts, clevel=5, shuffle="bitshuffle", cname=cname,
                        blocksize=1000)
    assert bytes(blosc.decompress(chunk)) == data
    assert blosckit.decompress(chunk) == data


# ---------------------------------------------------------------------------
# Pipelines C-Blosc2 cannot write, built by hand (numpy forward filters, raw
# streams): both C-Blosc2's decoder and blosckit must give the original data
# ---------------------------------------------------------------------------

HAND_PIPELINES = {
    "six": [("shuffle", 0), ("bytedelta", None), ("bitshuffle", 0), ("shuffle", 2),
            ("bytedelta", None), ("shuffle", 0)],
    "three": [("bitshuffle", 0), ("shuffle", 0), ("bytedelta", None)],
    "delta-first-six": [("delta", 0), ("shuffle", 0), ("bitshuffle", 0), ("bytedelta", None),
                        ("shuffle", 0), ("bitshuffle", 0)],
}


def _hand_chunk(data: bytes, ts: int, bs: int, pipe) -> bytes:
    from helpers import (FILTER_IDS, np_bitshuffle, np_bytedelta, np_delta, np_shuffle,
                         pack_chunk, pack_extended, pack_header, raw_stream)
    slots = [FILTER_IDS[n] for n, _ in pipe] + [0] * (6 - len(pipe))
    metas = [(ts if m is None else m) for _, m in pipe] + [0] * (6 - len(pipe))
    hdr = pack_header(version=5, flags=0x05 | 0x10, typesize=ts, nbytes=len(data),
                      blocksize=bs, cbytes=0) + pack_extended(filters=slots, filters_meta=metas)
    blocks = []
    block0 = data[:bs]
    for j in range(0, len(data), bs):
        b = data[j:j + bs]
        for name, meta in pipe:
            g = ts if meta in (None, 0) else meta
            if name == "shuffle":
                b = np_shuffle(b, g)
            elif name == "bitshuffle":
                b = np_bitshuffle(b, ts)
            elif name == "bytedelta":
                b = np_bytedelta(b, g)
            elif name == "delta":
                b = np_delta(b, b if j == 0 else block0, ts, j == 0)
        blocks.append([raw_stream(b)])
    return pack_chunk(header=hdr, blocks=blocks)


HAND_CASES = [(p, ts, bs) for p in HAND_PIPELINES for ts, bs in
              ((4, 256), (8, 8 * 8 * 7), (2, 1000), (16, 16 * 24))]


@pytest.mark.parametrize("pipe,ts,bs", HAND_CASES,
                         ids=[f"{p}-ts{t}-bs{b}" for p, t, b in HAND_CASES])
def test_six_filter_pipeline_hand_built(pipe, ts, bs):
    data = dataset("linspace", 5 * bs + 3 * ts, ts)   # a leftover block
    chunk = _hand_chunk(data, ts, bs, HAND_PIPELINES[pipe])
    assert b2_decompress(chunk) == data, "the test's forward filters disagree with C-Blosc2"
    check_parse(chunk, filters=[(n, ts if m is None else m) for n, m in HAND_PIPELINES[pipe]])
    check_reads(chunk, data)


def test_getitem_value_chunk_range_shorter_than_the_value():
    # a value chunk whose value (8 bytes) is wider than the items (3 bytes):
    # a 1-item range is shorter than one value
    value = bytes(range(1, 9))
    chunk = blosckit.compress_special("value", 24, typesize=8, value=value)
    chunk = chunk[:3] + bytes([3]) + chunk[4:]          # relabel items as 3 bytes
    assert blosckit.decompress(chunk) == value * 3
    for start in range(8):
        assert blosckit.getitem(chunk, start, 1) == (value * 3)[start * 3:start * 3 + 3]


def _plain_lz4_chunk():
    data = bytes(range(256)) * 64
    chunk = bytearray(blosc2.compress2(data, typesize=1, codec=blosc2.Codec.LZ4, clevel=5,
                                       filters=[blosc2.Filter.NOFILTER], nthreads=1))
    assert not blosckit.parse_chunk(chunk).memcpyed
    return data, chunk


@pytest.mark.parametrize("udcodec,name", [(32, "ndlz"), (33, "zfp_acc"), (38, "openzl"),
                                          (200, "codec-200")])
def test_plugin_codecs_are_named_and_unsupported(udcodec, name):
    _, chunk = _plain_lz4_chunk()
    chunk[2] = (chunk[2] & 0x1F) | (6 << 5)          # codec format 6: see udcodec
    chunk[22] = udcodec
    assert blosckit.parse_chunk(chunk).codec == name
    with pytest.raises(blosckit.UnsupportedError) as e:
        blosckit.decompress(chunk)
    assert name in str(e.value) and str(udcodec) in str(e.value)
    assert (e.value.offset, e.value.path) == (22, "chunk.header.extended.udcodec")


@pytest.mark.parametrize("fmt,name", [(5, "lizard"), (7, "schunk"), (2, "snappy")])
def test_retired_and_reserved_codec_formats(fmt, name):
    data, chunk = _plain_lz4_chunk()
    chunk[2] = (chunk[2] & 0x1F) | (fmt << 5)
    assert blosckit.parse_chunk(chunk).codec == name
    if name == "snappy":      # a registered decoder: the lz4 payload is not snappy
        with pytest.raises(blosckit.FormatError):
            blosckit.decompress(chunk)
        return
    with pytest.raises(blosckit.UnsupportedError) as e:
        blosckit.decompress(chunk)
    assert e.value.offset == 2


@pytest.mark.parametrize("fid,name", [(32, "ndcell"), (33, "ndmean"), (36, "int_trunc"),
                                      (9, "filter-9"), (200, "filter-200")])
def test_unknown_and_plugin_filters_are_named_and_unsupported(fid, name):
    _, chunk = _plain_lz4_chunk()
    chunk[16 + 3] = fid
    assert (name, 0) in blosckit.parse_chunk(chunk).filters
    with pytest.raises(blosckit.UnsupportedError) as e:
        blosckit.decompress(chunk)
    assert name in str(e.value) and (e.value.offset, e.value.path) == (
        19, "chunk.header.extended.filters[3]")


def test_filter_34_is_the_buggy_bytedelta():
    _, chunk = _plain_lz4_chunk()
    chunk[16 + 2], chunk[24 + 2] = 34, 1
    assert blosckit.parse_chunk(chunk).filters == [("bytedelta_buggy", 1)]
