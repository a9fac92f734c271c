"""Chunks and frames written by old Blosc versions.

1. C-Blosc2's compat files (C-Blosc 1.3.0 .. 2.0.0 and C-Blosc2 2.20.0 /
   3.0.0 writers), vendored in tests/data/c-blosc2-compat/ from the hdf5plugin
   7.1.0 sdist, and the C-Blosc 1.x compat files that add to them (Snappy,
   1.18.0) in tests/data/c-blosc-compat/: see the README there.
   ``BLOSCKIT_COMPAT_DIR`` may point at another copy of C-Blosc2's compat/
   folder (a newer checkout).  Their data is what C-Blosc2's generators write
   (compat/filegen.c: int32 0..999999; tests/test_bitshuffle_leftovers.c:
   uint32 items + leftover bytes; compat/filegen-vl.c: 50-byte text units),
   rebuilt here by the test's own code; the frames' block contents are also
   read by python-blosc2.
2. Our own synthetic old-writer fixtures in tests/data/blosckit-synthetic/
   (made by tests/data/make_fixtures.py), checked against their sidecars.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import lzma
import os
import pathlib
import struct

import pytest

import blosckit
from helpers import b2_decompress, raw_header
from oracles import oracle

np = oracle("numpy")

HERE = pathlib.Path(__file__).resolve().parent
SYNTH = HERE / "data" / "blosckit-synthetic"
VENDORED = HERE / "data" / "c-blosc2-compat"
C_BLOSC = HERE / "data" / "c-blosc-compat"
COMPAT = pathlib.Path(os.environ.get("BLOSCKIT_COMPAT_DIR") or VENDORED)
NOT_DATA = {"README.md", "SHA256SUMS", "LICENSE.txt"}

FILEGEN = [f"blosc-{v}-{c}.cdata" for v, cs in (
    ("1.3.0", ("blosclz", "lz4", "lz4hc", "zlib")),
    ("1.7.0", ("blosclz", "lz4", "lz4hc", "zlib")),
    ("1.11.1", ("blosclz", "lz4", "lz4hc", "zlib", "zstd")),
    ("1.14.0", ("blosclz", "lz4", "lz4hc", "zlib", "zstd"))) for c in cs] + [
    f"blosc-{c}-3.0.0.cdata" for c in ("blosclz", "lz4", "zstd")]
# C-Blosc 1.x's own folder: what C-Blosc2's lacks (the rest is byte-identical)
C_BLOSC_FILEGEN = [f"blosc-{v}-snappy.cdata" for v in ("1.3.0", "1.11.1", "1.14.0")] + [
    f"blosc-1.18.0-{c}.cdata" for c in ("blosclz-bitshuffle", "lz4-bitshuffle", "zstd")]
LEFTOVERS = [f"blosc-{v}-lz4-bitshuffle{t}.cdata" for v in ("1.17.1", "1.18.0", "2.0.0")
             for t in ("4-memcpy", "8-nomemcpy")]
RAW_FILTERED = ["shuffle-2.20.0.cdata", "bitshuffle-2.20.0.cdata"]
# compat/filegen-vl.c: chunk sizes of the regular frame, blocks per VL-block chunk
VARCHUNK_SIZES = [1000, 500, 2000, 520, 301]
VL_FRAMES = {"vlblocks-lz4-fixed-3.0.0.b2frame": [4, 4, 4, 4, 4],
             "vlblocks-lz4-variable-3.0.0.b2frame": [2, 3, 4, 5, 6]}
FRAMES = ["varchunks-lz4-3.0.0.b2frame", *VL_FRAMES]


def _load(folder: pathlib.Path, name: str) -> bytes:
    """The file as upstream ships it (the two 4 MB buffers are stored xz'ed)."""
    p = folder / name
    if not p.exists() and (folder / f"{name}.xz").exists():
        return lzma.decompress((folder / f"{name}.xz").read_bytes())
    assert p.exists(), f"{name} not in {folder}"
    return p.read_bytes()


def _stored_names(folder: pathlib.Path) -> set[str]:
    return {p.name.removesuffix(".xz") for p in folder.iterdir()} - NOT_DATA


@pytest.mark.parametrize("folder", [VENDORED, C_BLOSC], ids=lambda p: p.name)
def test_vendored_files_are_the_upstream_bytes(folder):
    """Each file has the digest it has in the hdf5plugin 7.1.0 sdist, and the
    license is beside them."""
    sums = dict(reversed(line.split("  ")) for line in
                (folder / "SHA256SUMS").read_text().splitlines())
    assert set(sums) == _stored_names(folder) | {"LICENSE.txt"}
    for name, digest in sums.items():
        assert hashlib.sha256(_load(folder, name)).hexdigest() == digest, name
    assert "BSD" in (folder / "LICENSE.txt").read_text()


def test_every_compat_file_is_exercised():
    assert _stored_names(VENDORED) == set(FILEGEN + LEFTOVERS + RAW_FILTERED + FRAMES)
    assert _stored_names(C_BLOSC) == set(C_BLOSC_FILEGEN)


FILEGEN_DATA = np.arange(1000 * 1000, dtype="<i4").tobytes()


def _leftover_data(nbytes: int) -> bytes:
    """tests/test_bitshuffle_leftovers.c: uint32 item i = i, then the
    leftover bytes b[i] = (uint8) i."""
    n = nbytes // 4
    head = np.arange(n, dtype="<u4").tobytes()
    return head + bytes(i & 0xFF for i in range(n * 4, nbytes))


@pytest.mark.parametrize("folder,name", [(COMPAT, n) for n in FILEGEN] +
                         [(C_BLOSC, n) for n in C_BLOSC_FILEGEN],
                         ids=lambda x: x if isinstance(x, str) else x.name)
def test_filegen_cdata(folder, name):
    """compat/filegen.c: the int32 items 0..999999, typesize 4, byte
    shuffle (bit shuffle where the name says so)."""
    chunk = _load(folder, name)
    c = blosckit.parse_chunk(chunk)
    assert c.nbytes == len(FILEGEN_DATA) and c.typesize == 4
    assert c.version == (5 if "3.0.0" in name else 2)
    codec = name.split("-")[2 if name.startswith("blosc-1") else 1].split(".")[0]
    assert c.codec == {"lz4hc": "lz4"}.get(codec, codec)
    assert c.filters == [("bitshuffle" if "bitshuffle" in name else "shuffle", 0)]
    assert blosckit.decompress(chunk) == FILEGEN_DATA
    assert blosckit.decompress(chunk, nthreads=2) == FILEGEN_DATA
    bs = c.blocksize // 4
    for start, n in ((0, 10), (bs - 3, 7), (999_990, 10), (123_457, bs + 5)):
        assert blosckit.getitem(chunk, start, n) == FILEGEN_DATA[4 * start:4 * (start + n)]


def _bitshuffle_garbage(c: blosckit.Chunk) -> set[int]:
    """Byte positions C-Blosc < 1.18 never wrote: the bsize % typesize tail
    of bit-shuffled blocks (it copied the tail to the wrong place)."""
    out = set()
    for j in range(c.nblocks):
        bsize = min(c.blocksize, c.nbytes - j * c.blocksize)
        if (bsize // c.typesize) % 8 == 0 and bsize >= c.typesize:
            out.update(range(j * c.blocksize + bsize - bsize % c.typesize,
                             j * c.blocksize + bsize))
    return out


@pytest.mark.parametrize("name", LEFTOVERS)
def test_bitshuffle_leftovers_cdata(name):
    """Bitshuffle with blocks that are not whole 8-item groups: C-Blosc2
    leaves the tail bytes of the last block unwritten (V2; its output there
    is uninitialised memory, so its divergence is not asserted), blosckit
    must give every byte the writer stored."""
    chunk = _load(COMPAT, name)
    c = blosckit.parse_chunk(chunk)
    data = _leftover_data(c.nbytes)
    got = blosckit.decompress(chunk)
    assert len(got) == len(data)
    bad = [k for k in range(len(data)) if got[k] != data[k]] if got != data else []
    if name.startswith("blosc-1.17.1"):
        # the writer lost these bytes; everything else must be right
        assert set(bad) <= _bitshuffle_garbage(c), bad[:10]
    else:
        assert bad == []
    assert blosckit.decompress(chunk, nthreads=2) == got
    assert blosckit.getitem(chunk, c.nbytes // c.typesize - 5, 5) == \
        got[c.nbytes // c.typesize * c.typesize - 5 * c.typesize:
            c.nbytes // c.typesize * c.typesize]


@pytest.mark.parametrize("name", RAW_FILTERED)
def test_raw_filtered_cdata(name):
    """Not chunks: the whole buffer shuffled / bitshuffled with typesize 4."""
    buf = _load(COMPAT, name)
    fn = blosckit.unshuffle if name.startswith("shuffle") else blosckit.bitunshuffle
    assert fn(buf, 4) == FILEGEN_DATA


def _units_of_50(data: bytes) -> bytes:
    """compat/filegen-vl.c fills everything with 50-byte units, each 49
    printable characters and the string's NUL: the unit ``data`` repeats
    (the last copy may be cut)."""
    unit = data[:50]
    assert unit[49] == 0 and unit[:49].isascii() and unit[:49].decode().isprintable(), unit
    return (unit * (len(data) // 50 + 1))[:len(data)]


def test_varchunks_frame():
    """A regular frame of chunks of different sizes (chunksize 0, version
    3): each chunk a 50-byte unit tiled to its size."""
    blosc2 = oracle("blosc2")
    blob = _load(COMPAT, "varchunks-lz4-3.0.0.b2frame")
    # valid; the one warning is C-Blosc2's slice reader on variable sizes
    assert [(p.severity, p.rule) for p in blosckit.validate(blob)] == [("warning", "V22")]
    f = blosckit.open_frame(blob)
    theirs = blosc2.schunk_from_cframe(blob, copy=True)
    assert (f.nchunks, f.chunksize, theirs.chunksize) == (5, 0, 0)
    for i, size in enumerate(VARCHUNK_SIZES):
        data = f.decompress_chunk(i)
        assert len(data) == size and data == _units_of_50(data)
        assert data == theirs.decompress_chunk(i)
        assert not blosckit.parse_chunk(f.chunk(i)).vlblocks


@pytest.mark.parametrize("name", sorted(VL_FRAMES))
def test_vlblocks_frames(name):
    """Frames of VL-block chunks: every block a 50-byte unit repeated 10
    times, the blocks as python-blosc2 splits them."""
    blosc2 = oracle("blosc2")
    blob = _load(COMPAT, name)
    variable = blosckit.open_frame(blob).chunksize == 0
    assert [(p.severity, p.rule) for p in blosckit.validate(blob)] == \
        ([("warning", "V22")] if variable else [])
    f = blosckit.open_frame(blob)
    theirs = blosc2.schunk_from_cframe(blob, copy=True)
    assert f.nchunks == theirs.nchunks == len(VL_FRAMES[name])
    for i, nblocks in enumerate(VL_FRAMES[name]):
        chunk = f.chunk(i)
        c = blosckit.parse_chunk(chunk)
        assert c.vlblocks and len(c.bstarts) == nblocks
        blocks = [bytes(b) for b in blosc2.blosc2_ext.vldecompress(chunk)]
        assert [len(b) for b in blocks] == [500] * nblocks
        assert all(b == _units_of_50(b)[:50] * 10 for b in blocks)
        data = f.decompress_chunk(i)
        assert data == b"".join(blocks) == theirs.decompress_chunk(i)
        for j in range(nblocks):
            assert blosckit.getitem(chunk, 500 * j, 500) == blocks[j]


# ---------------------------------------------------------------------------
# Synthetic old-writer fixtures
# ---------------------------------------------------------------------------

SIDECARS = sorted(SYNTH.glob("*.json"))


def test_synthetic_fixtures_exist():
    assert len(SIDECARS) >= 10
    for s in SIDECARS:
        assert s.with_suffix(".bin").exists()


@pytest.mark.parametrize("sidecar", SIDECARS, ids=[s.stem for s in SIDECARS])
def test_synthetic_fixture(sidecar):
    meta = json.loads(sidecar.read_text())
    chunk = sidecar.with_suffix(".bin").read_bytes()
    assert meta["producer"] == "blosckit-synthetic"
    assert meta["why"]
    c = blosckit.parse_chunk(chunk)
    assert c.version == meta["version"] == raw_header(chunk)["version"]
    assert c.codec == meta["codec"]
    assert c.filters == [tuple(f) for f in meta["filters"]]
    assert c.typesize == meta["typesize"]
    assert c.blocksize == meta["blocksize"]
    assert c.nbytes == meta["nbytes"]
    assert c.cbytes == meta["cbytes"] == len(chunk)
    if c.version <= 2:
        # the legacy split rule (C-Blosc 1.x): 0x10 is clear in all of these
        assert not raw_header(chunk)["flags"] & 0x10
        assert c.split == (c.typesize <= 16 and c.blocksize // c.typesize >= 128)
    got = blosckit.decompress(chunk)
    assert hashlib.sha256(got).hexdigest() == meta["sha256"]
    assert blosckit.decompress(chunk, nthreads=2) == got
    dst = bytearray(len(got))
    assert blosckit.decompress_into(chunk, dst) == len(got) and dst == got
    ts = c.typesize
    nitems = c.nbytes // ts
    per = c.blocksize // ts
    for start, n in ((0, nitems), (per - 1, 2), (per, per), (nitems - 1, 1)):
        if 0 <= start and start + n <= nitems:
            assert blosckit.getitem(chunk, start, n) == got[start * ts:(start + n) * ts]


# Known C-Blosc2 3.3.5 outcomes on these fixtures (None: it reports an error).
# Not a blosckit property: documents where C-Blosc2 diverges.
C_BLOSC2_WRONG = {
    "v2-ts17-legacy-nosplit", "v2-ts32-legacy-nosplit", "v2-ts255-legacy-nosplit",
    "v2-ts8-smallblock-nosplit", "v2-bitshuffle-tail-ts4", "v2-bitshuffle-ts17-blocktail",
}


@pytest.mark.parametrize("case", sorted(C_BLOSC2_WRONG))
def test_c_blosc2_legacy_split_divergence(case):
    """C-Blosc2 ignores the legacy split rule of Blosc < 1.11 chunks and
    bitshuffle's version-2 block handling; blosckit decodes them."""
    meta = json.loads((SYNTH / f"{case}.json").read_text())
    chunk = (SYNTH / f"{case}.bin").read_bytes()
    oracle = b2_decompress(chunk)
    assert oracle is None or hashlib.sha256(oracle).hexdigest() != meta["sha256"]
    assert hashlib.sha256(blosckit.decompress(chunk)).hexdigest() == meta["sha256"]


def test_make_fixtures_is_deterministic(tmp_path):
    spec = importlib.util.spec_from_file_location("make_fixtures",
                                                  HERE / "data" / "make_fixtures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    names = mod.main(tmp_path)
    assert sorted(names) == sorted(s.stem for s in SIDECARS)
    for name in names:
        assert (tmp_path / f"{name}.json").read_text() == (SYNTH / f"{name}.json").read_text()
        meta = json.loads((SYNTH / f"{name}.json").read_text())
        if meta["codec"] != "lz4":      # lz4 bytes may change with the lz4 library
            assert (tmp_path / f"{name}.bin").read_bytes() == \
                (SYNTH / f"{name}.bin").read_bytes()


def test_blosc1_header_has_no_extended_part():
    """Sanity of the fixtures' own layout: bstarts right after 16 bytes."""
    chunk = (SYNTH / "v2-ts4-legacy-split.bin").read_bytes()
    c = blosckit.parse_chunk(chunk)
    assert c.bstarts[0] == 16 + 4 * c.nblocks
    assert struct.unpack_from("<i", chunk, 16)[0] == c.bstarts[0]

