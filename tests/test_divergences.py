"""blosckit.divergences: every reader divergence has a chunk on which its
predicate holds and python-blosc2 (C-Blosc2 3.3.5) indeed decodes to other
data or refuses; no predicate fires on ordinary chunks C-Blosc2 writes."""
from __future__ import annotations

import itertools
import pathlib
import struct

import pytest

import blosckit
from blosckit.tools import divergences

import cli_runner
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")

SYNTH = pathlib.Path(__file__).resolve().parent / "data" / "blosckit-synthetic"


def b2(chunk: bytes, dst: bytearray | None = None):
    """python-blosc2's result: the bytes, or "error"."""
    try:
        out = blosc2.decompress2(chunk, dst=dst) if dst is not None else blosc2.decompress2(chunk)
    except Exception:
        return "error"
    return bytes(dst) if dst is not None else bytes(out)


def ours(chunk: bytes):
    try:
        return blosckit.decompress(chunk)
    except blosckit.FormatError:
        return "error"


def ids(chunk: bytes, **kw) -> set[str]:
    return {d.id for d in divergences.reader_divergences(chunk, **kw)}


def fixture(name: str) -> bytes:
    return (SYNTH / f"{name}.bin").read_bytes()


# ---------------------------------------------------------------- the table

def test_table():
    seen = set()
    for d in divergences.DIVERGENCES:
        assert d.id not in seen
        seen.add(d.id)
        assert d.side in ("reader", "writer", "index", "frame") and d.title
        assert (d.library, d.c_blosc2) in (("C-Blosc2", "3.3.5"), ("C-Blosc 1.x", "1.21.7"),
                                           ("python-blosc2", "4.14.1"))
        assert d.anchor == f"specs/divergences.md#{d.id.lower()}"
        assert d.operation in ("decompress", "getitem")
    spec = (pathlib.Path(__file__).resolve().parents[1] / "specs" / "divergences.md").read_text()
    for d in divergences.DIVERGENCES:
        assert f'<a id="{d.id.lower()}"></a>' in spec, d.id
    assert {"V1", "V2", "V3", "V4"} <= seen


# ---------------------------------------------------------------- positives

def _v1_chunk() -> bytes:
    src = bytearray(blosckit.compress_special("value", 4096 * 4, typesize=4,
                                              value=struct.pack("<i", 7)))
    src[31] |= 0x08                                  # lazy
    struct.pack_into("<i", src, 12, 4096 + 32)       # cbytes past the input
    return bytes(src)


def test_v1_lazy_value_past_end():
    chunk = _v1_chunk()
    assert ids(chunk) == {"V1"}
    assert ours(chunk) == "error"
    # C-Blosc2 reads past the input: run it in a child process
    code = ("import sys, blosc2; c = sys.stdin.buffer.read(); "
            "sys.stdout.write(str(len(blosc2.decompress2(c))))")
    run = cli_runner.python(code, input=chunk)
    assert run.returncode != 0 or run.stdout == b"16384"    # C-Blosc2 returns data


@pytest.mark.parametrize("name,expected", [
    ("v2-bitshuffle-tail-ts4", {"V2", "V5"}),
    ("v2-ts17-legacy-nosplit", {"V5"}),
    ("v2-ts32-legacy-nosplit", {"V5"}),
    ("v2-ts255-legacy-nosplit", {"V5"}),
    ("v2-ts8-smallblock-nosplit", {"V5"}),
    ("v1-ts2-noshuffle-zlib", {"V5", "L1"}),
    ("v2-bitshuffle-ts17-blocktail", {"V2", "V5"}),
    ("v3-alpha-raw", {"V8"}),
    ("v3-alpha-runs-no-token", {"V8"}),
])
def test_fixtures(name, expected):
    chunk = fixture(name)
    assert ids(chunk) == expected
    assert b2(chunk) != ours(chunk) and ours(chunk) != "error"
    if any(i.startswith("L") for i in expected):
        assert _b1_refuses(chunk)


@pytest.mark.parametrize("name", ["v1-ts4-split", "v2-bitshuffle-tail-ts8",
                                  "v2-ts16-legacy-split-lz4", "v2-ts4-legacy-split",
                                  "v4-beta-runs-token", "v4-beta-ts2-raw"])
def test_fixtures_without_divergence(name):
    chunk = fixture(name)
    # no C-Blosc2 divergence; C-Blosc 1.21 reads only version 2 (L1)
    assert ids(chunk) == ({"L1"} if chunk[0] == 1 else set())
    assert b2(chunk) == ours(chunk)
    if chunk[0] == 1:
        assert _b1_refuses(chunk)


def _raw_chunk(version: int, flags: int, typesize: int, blocksize: int, streams: list[bytes],
               nbytes: int | None = None, byte30: int = 0) -> bytes:
    """One block of raw streams (csize == stream length) under a 32-byte
    header written byte by byte, filter slots empty."""
    body = struct.pack("<i", 36) + b"".join(struct.pack("<i", len(s)) + s for s in streams)
    ext = bytes(14) + bytes([byte30, 0])
    nb = blocksize if nbytes is None else nbytes
    return bytes([version, 1, flags, typesize]) + struct.pack("<iii", nb, blocksize,
                                                              32 + len(body)) + ext + body


def test_v3_split_not_whole_items():
    # 4094 bytes split into 4 streams of 1023: the last 2 bytes have no stream
    streams = [bytes([k]) * 1023 for k in range(4)]
    chunk = _raw_chunk(5, 0x05, 4, 4094, streams)
    assert ids(chunk) == {"V3"}
    theirs = b2(chunk)
    assert ours(chunk) == "error" and theirs != "error"
    assert theirs[:4092] == b"".join(streams)


def test_v7_version3_byte30():
    data = np.arange(1024, dtype="<i4").tobytes()
    plain = _raw_chunk(3, 0x15, 4, 4096, [data])
    assert ids(plain) == set() and b2(plain) == ours(plain) == data
    chunk = _raw_chunk(3, 0x15, 4, 4096, [data], byte30=0x01)
    assert ids(chunk) == {"V7"}
    assert ours(chunk) == data and b2(chunk) != data


def test_v4_getitem_delta():
    data = np.arange(50_000, dtype="<i4").tobytes()
    chunk = blosckit.compress(data, typesize=4, filters=("delta",), blocksize=16384)
    assert ids(chunk) == {"V4"} and ids(chunk, operation="decompress") == set()
    assert b2(chunk) == ours(chunk) == data
    sc = blosc2.SChunk(chunksize=len(data), cparams=blosc2.CParams(typesize=4))
    sc.append_data(np.zeros(50_000, dtype="<i4"))
    sc.update_chunk(0, chunk)
    want = data[40_000:40_040]
    assert blosckit.getitem(chunk, 10_000, 10) == want
    assert bytes(sc.get_slice(10_000, 10_010)) != want


def test_v6_uninit():
    chunk = blosckit.compress_special("uninit", 4000, typesize=4)
    assert ids(chunk) == {"V6"}
    assert b2(chunk, bytearray(b"\xff" * 4000)) == b"\xff" * 4000    # left untouched
    assert ours(chunk) == bytes(4000)


def test_v9_value_partial_items():
    chunk = bytearray(blosckit.compress_special("value", 4000, typesize=8,
                                                value=struct.pack("<d", 1.5)))
    struct.pack_into("<i", chunk, 8, 1004)
    chunk = bytes(chunk)
    assert ids(chunk) == {"V9"}
    assert b2(chunk) == "error" and ours(chunk) == struct.pack("<d", 1.5) * 500


def test_v10_snappy():
    data = np.arange(50_000, dtype="<i4").tobytes()
    chunk = blosckit.compress(data, typesize=4, codec="snappy", format="blosc1")
    assert ids(chunk) == {"V10"}
    assert b2(chunk) == "error" and ours(chunk) == data


# ---------------------------------------------------------------- negatives

GRID_FILTERS = ([], [blosc2.Filter.SHUFFLE], [blosc2.Filter.BITSHUFFLE],
                [blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE])


@pytest.mark.parametrize("codec", ("BLOSCLZ", "LZ4", "LZ4HC", "ZLIB", "ZSTD"))
def test_no_divergence_on_c_blosc2_chunks(codec):
    for filters in GRID_FILTERS:
        for ts in (1, 2, 4, 8, 16, 17):
            for nbytes in (100, 40_000 + ts + 3, 300_000):
                data = np.linspace(0, 50, nbytes // 8 + 1).astype("<f8").tobytes()[:nbytes]
                chunk = bytes(blosc2.compress2(
                    data, typesize=ts, codec=getattr(blosc2.Codec, codec), clevel=5,
                    filters=filters, filters_meta=[0] * len(filters), nthreads=1))
                assert b2(chunk) == ours(chunk)
                params = dict(codec=codec.lower(), typesize=ts, nbytes=nbytes,
                              filters=[f.name.lower() for f in filters])
                if divergences.writer_divergence(params) is None:
                    assert ours(chunk) == data
                found = ids(chunk)
                parsed = blosckit.parse_chunk(chunk)
                if blosc2.Filter.DELTA in filters and parsed.nblocks > 1 \
                        and not parsed.memcpyed:
                    assert found == {"V4"}
                else:
                    assert found == set(), (codec, filters, ts, nbytes)


def test_no_divergence_on_c_blosc1_chunks():
    blosc = oracle("blosc")
    for cname in ("blosclz", "lz4", "zlib", "zstd"):
        for shuffle in (blosc.NOSHUFFLE, blosc.SHUFFLE, blosc.BITSHUFFLE):
            for ts in (1, 2, 4, 8):
                data = np.arange(30_000, dtype="<i4").tobytes()[:100_000 - ts]
                chunk = blosc.compress(data, ts, 5, shuffle, cname)
                assert b2(chunk) == ours(chunk) == data
                assert ids(chunk) == set(), (cname, shuffle, ts)


def test_special_chunks_written_by_c_blosc2():
    for kind in ("zeros", "nan", "value"):
        chunk = blosckit.compress_special(kind, 8000, typesize=8,
                                          value=struct.pack("<d", 2.5) if kind == "value" else None)
        assert ids(chunk) == set()
        assert b2(chunk) == ours(chunk)


# ---------------------------------------------------------------- writers

def test_writer_lookup():
    base = dict(codec="zstd", clevel=5, filters=("shuffle",), typesize=4, nbytes=1000)
    assert divergences.writer_divergence(base) is None
    assert divergences.writer_divergence({**base, "codec": "lz4"}).id == "W4"
    assert divergences.writer_divergence({**base, "filters": ("delta",), "nbytes": 1001}).id == "W2"
    assert divergences.writer_divergence({**base, "blocksize": 4096, "nbytes": 1001}).id == "W1"
    assert divergences.writer_divergence({**base, "dict": True, "nbytes": 20}).id == "W6"
    assert divergences.writer_divergence(
        {**base, "filters": ("delta", "shuffle", "bitshuffle")}).id == "W5"
    assert divergences.writer_divergence({**base, "format": "blosc1"}).id == "W7"


# ---------------------------------------------------------------------------
# Divergences found by the hostile corpus (tests/test_validate.py)
# ---------------------------------------------------------------------------

def _b2_refuses(chunk) -> bool:
    try:
        blosc2.decompress(bytes(chunk))
    except Exception:
        return True
    return False


def _b1_refuses(chunk) -> bool:
    blosc = oracle("blosc")
    try:
        blosc.decompress(bytes(chunk))
    except Exception:
        return True
    return False


def _ids(chunk):
    return {d.id for d in divergences.reader_divergences(chunk)}


def test_v11_c_blosc2_refuses_its_own_raw_dict_chunk():
    data = np.random.default_rng(3).integers(0, 256, 100_000, dtype=np.uint8).tobytes()
    chunk = blosc2.compress2(data, typesize=1, codec=blosc2.Codec.ZSTD, use_dict=True)
    assert blosckit.parse_chunk(chunk).memcpyed and chunk[31] & 1
    assert _b2_refuses(chunk)
    assert blosckit.decompress(chunk) == data
    assert "V11" in _ids(chunk)
    assert [p.rule for p in blosckit.validate(chunk)] == ["V11"]


def test_v12_bytedelta_meta_0():
    data = np.arange(1000, dtype=np.int32).tobytes()
    chunk = bytearray(blosc2.compress2(data, typesize=4, codec=blosc2.Codec.ZSTD,
                                       filters=[blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA],
                                       filters_meta=[0, 4]))
    assert "V12" not in _ids(chunk)
    chunk[24 + 1] = 0
    assert _b2_refuses(chunk)
    assert blosckit.decompress(chunk) == data
    assert "V12" in _ids(chunk)


@pytest.mark.parametrize("case", ["L1", "L2", "L3", "L4", "L5", "L6"])
def test_c_blosc_1_21_refusals(case):
    blosc = oracle("blosc")
    data = np.arange(2000, dtype=np.int32).tobytes()
    chunk = bytearray(blosc.compress(data, typesize=4, cname="lz4", shuffle=blosc.SHUFFLE))
    assert not _b1_refuses(chunk) and not _ids(chunk)
    if case == "L1":
        chunk[0] = 1
    elif case == "L2":
        chunk[1] = 3
    elif case == "L3":
        chunk = bytearray(blosckit.compress(data, typesize=4, codec="lz4",
                                            filters=("delta", "shuffle"), format="blosc1-compat"))
    elif case == "L4":
        chunk = bytearray(blosckit.compress(data, typesize=4, codec="lz4"))
        chunk[0] = 2
    elif case == "L5":
        chunk[8:12] = struct.pack("<i", len(data) * 2)
    elif case == "L6":
        zeros = bytes(4000)
        chunk = bytearray(blosckit.build_chunk(
            {**blosckit.parse_chunk(chunk).header, "nbytes": 4000, "blocksize": 4000,
             "cbytes": None, "flags": {**blosckit.parse_chunk(chunk).header.flags,
                                       "dont_split": True}},
            [[{"csize": 0}]]))
        data = zeros
    assert _b1_refuses(chunk)
    assert blosckit.decompress(chunk) == data
    assert case in _ids(chunk)
    assert case in {p.rule for p in blosckit.validate(bytes(chunk))}


@pytest.mark.parametrize("name", ["lz4-shuffle", "zstd-dict", "zstd-bytedelta", "memcpyed",
                                  "special-zeros", "blosc1-lz4", "raw-v4-runs", "vlblocks"])
def test_the_prefilter_never_hides_a_divergence(name):
    """beyond_all_reader_divergences() is True only where no predicate of the
    table holds, for chunks blosckit reads: over header byte values of chunks
    of many kinds."""
    from helpers import BLOSC1_SMALL_CHUNKS, small_chunks
    if name in BLOSC1_SMALL_CHUNKS:
        oracle("blosc")
    base = small_chunks()[name]
    seen_true = 0
    for pos in range(min(32, len(base))):
        for value in range(0, 256, 3):
            c = bytearray(base)
            c[pos] = value
            try:
                blosckit.parse_chunk(bytes(c))
            except blosckit.FormatError:
                continue                 # refused by blosckit: not the prefilter's case
            if divergences.beyond_all_reader_divergences(c):
                seen_true += 1
                assert divergences.reader_divergences(bytes(c), operation="decompress") == [], \
                    (name, pos, value)
    assert seen_true or name in ("special-zeros", "blosc1-lz4", "memcpyed", "vlblocks")


def test_v17_two_deltas_with_a_filter_between():
    """Found by the strategies against C-Blosc2: delta, X, delta decodes to
    other bytes there; adjacent deltas do not (checked in a subprocess)."""
    from helpers import oracle_verdicts
    import hashlib
    data = (np.arange(3000, dtype="<u4") * 7 % 1000).astype("<u4").tobytes()
    apart = [blosckit.compress(data, typesize=4, filters=p, codec="lz4")
             for p in (("delta", "bitshuffle", "delta"), ("delta", "shuffle", "delta"),
                       ("delta", "bytedelta", "delta"))]
    near = [blosckit.compress(data, typesize=4, filters=p, codec="lz4")
            for p in (("delta", "delta"), ("delta", "bitshuffle"), ("shuffle", "delta"))]
    want = hashlib.sha256(data).digest()
    for chunk, v in zip(apart + near, oracle_verdicts(apart + near)):
        assert blosckit.decompress(chunk) == data
        found = [d.id for d in divergences.reader_divergences(chunk)]
        assert found == (["V17"] if chunk in apart else []), found
        assert (v.digest == want) == (chunk in near)
        assert divergences.beyond_all_reader_divergences(chunk) == (chunk in near)


_VL_READ = """
import sys, blosc2
chunk = bytes.fromhex(sys.stdin.read())
for n in sys.argv[1:]:
    blosc2.set_nthreads(int(n))
    print(" ".join(bytes(b).hex() for b in blosc2.blosc2_ext.vldecompress(chunk)))
    print(bytes(blosc2.decompress(chunk)).hex())
"""


def _vl_chunk(blocks: list[bytes], filters: list) -> bytes:
    """A VL-block chunk C-Blosc2 writes (python-blosc2's vlcompress)."""
    return bytes(blosc2.blosc2_ext.vlcompress(
        blocks, typesize=4, codec=blosc2.Codec.ZSTD, clevel=5, filters=filters,
        filters_meta=[0] * len(filters), nthreads=1))


def _c_blosc2_reads_vl(chunk: bytes, *nthreads: int) -> list[tuple[list[bytes], bytes]]:
    """C-Blosc2's readings of a VL-block chunk, one per thread count in
    ``nthreads`` (default: one thread), in a fresh process (its decompression
    context keeps state from earlier chunks): each block (vldecompress), then
    the whole chunk (decompress)."""
    lines = cli_runner.python(_VL_READ, *map(str, nthreads or (1,)), input=chunk.hex(), text=True,
                      timeout=60, check=True).stdout.splitlines()
    return [([bytes.fromhex(b) for b in blocks.split()], bytes.fromhex(whole))
            for blocks, whole in zip(lines[::2], lines[1::2])]


def _split(data: bytes, like: list[bytes]) -> list[bytes]:
    """`data` cut into pieces as long as those of `like`."""
    ends = list(itertools.accumulate(len(b) for b in like))
    return [data[end - len(b):end] for b, end in zip(like, ends)]


@pytest.mark.parametrize("sizes,shuffle", [((1000, 1000), False), ((3, 1000), True),
                                           ((250, 4096, 7), False), ((1000,), True)])
def test_v24_vl_blocks_with_delta(sizes, shuffle):
    """Held-out finding: a VL-block chunk with the delta filter validated
    [] while C-Blosc2 decodes it to other bytes.  blosckit reads back what
    C-Blosc2 was given.  C-Blosc2's whole-chunk decompress gets every block
    after the first wrong; its block-by-block read is right with one thread
    and, with more, delta-decodes exactly one block (a race decides which:
    usually the first, now and then another).  One block decodes alike."""
    blocks = [(np.arange(n, dtype="<i4") * 7 + 1).tobytes() for n in sizes]
    flt = [blosc2.Filter.SHUFFLE] * shuffle + [blosc2.Filter.DELTA]
    chunk = _vl_chunk(blocks, flt)
    assert blosckit.decompress(chunk) == b"".join(blocks)
    (one_thread, whole1), (threaded, whole4) = _c_blosc2_reads_vl(chunk, 1, 4)
    assert one_thread == blocks
    assert sum(a == b for a, b in zip(threaded, blocks)) == 1
    for whole in (whole1, whole4):
        assert [a == b for a, b in zip(_split(whole, blocks), blocks)] == \
            [True] + [False] * (len(blocks) - 1)
    diverges = len(sizes) > 1
    assert ids(chunk, operation="decompress") == ({"V24"} if diverges else set())
    warnings = [(p.severity, p.rule) for p in blosckit.validate(chunk)]
    assert warnings == ([("warning", "V24")] if diverges else [])


def test_v24_delta_set_by_hand_in_a_vl_block_chunk():
    """A VL-block chunk written without delta, its first filter slot set to
    delta afterwards: neither reader can give the data back (it was never
    delta-encoded) and the two disagree; validate warns (V24)."""
    blocks = [(np.arange(n, dtype="<i4") * 7 + 1).tobytes() for n in (1000, 250)]
    chunk = bytearray(_vl_chunk(blocks, [blosc2.Filter.NOFILTER]))
    chunk[blosckit.formats.chunk.EXTENDED.offset("filters")] = 3     # delta
    chunk = bytes(chunk)
    assert _c_blosc2_reads_vl(chunk)[0][1] != blosckit.decompress(chunk) != b"".join(blocks)
    assert [(p.severity, p.rule) for p in blosckit.validate(chunk)] == [("warning", "V24")]


def _blosc1_versions_one_by_one(f) -> list[tuple[int, str]]:
    """V25's hits read entry by entry (what the bulk read must agree with)."""
    out = []
    for i in range(f.nchunks):
        start = f.header_len + f.entries[i]
        if f.entries[i] >= 0 and start < len(f.buffer) and f.buffer[start] in (1, 2):
            out.append((start, f"frame.chunks[{i}].header.version"))
    return out


@pytest.mark.parametrize("special", [False, True])
def test_blosc1_chunk_in_frame_read_in_bulk(special):
    """V25 over many chunks reads the version bytes in one pass: the same
    hits as entry by entry, with special entries among them or not."""
    import blosc2
    data = bytes(range(256)) * 64
    if special:
        data = data[:4096] + bytes(8192) + data[12288:]
    sc = blosc2.SChunk(chunksize=1024, data=data, cparams=blosc2.CParams(typesize=4))
    fr = bytearray(sc.to_cframe())
    f = blosckit.open_frame(bytes(fr))
    assert any(f.entries[i] < 0 for i in range(f.nchunks)) == special
    for i in (0, 3, f.nchunks - 1):        # version bytes of a Blosc1 chunk
        fr[f.header_len + f.entries[i]] = 2 if i % 2 else 1
    f = blosckit.open_frame(bytes(fr))
    got = divergences._blosc1_chunk_in_frame(f)
    assert got == _blosc1_versions_one_by_one(f)
    assert [p for _, p in got] == [f"frame.chunks[{i}].header.version"
                                   for i in (0, 3, f.nchunks - 1)]
