"""The frame corpus (tests/frame_corpus.py) checked against the oracles
themselves: python-blosc2 re-opens every case's source and must return exactly
the case's chunks, data, metalayers, vlmetalayers and b2nd values; the frame
index proves which chunks are special offsets; h5py returns the dataset values
of the HDF5 cases. This is the proof that the expectations are right before
blosckit's frame reader is tested against them.
"""
from __future__ import annotations

import os
import pathlib
import struct
from typing import Any, Callable

import msgpack
import pytest

from frame_corpus import (CODECS, SPECIAL_OFFSET, FrameCase, all_cases,
                          frame_offsets)
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")

# Same switch as tests/helpers.py (not imported: it imports blosckit, and the
# corpus must not depend on blosckit's frame modules being importable).
LONG = os.environ.get("BLOSCKIT_LONG") == "1"


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> list[FrameCase]:
    return all_cases(tmp_path_factory.mktemp("frame-corpus"), long=LONG)


def check_all(cases: list[FrameCase], check: Callable[[FrameCase], None]) -> None:
    """Run ``check`` on every case, report every failing case at once."""
    failures = []
    for case in cases:
        try:
            check(case)
        except AssertionError as exc:
            failures.append(f"{case.name}: {exc}")
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------------------
# Opening a case with the oracle
# ---------------------------------------------------------------------------


def is_b2nd(case: FrameCase) -> bool:
    return case.b2nd is not None


class Opened:
    """The oracle's SChunk of a case, with the NDArray owning it (if any)
    kept alive: an NDArray's schunk dangles once the NDArray is freed."""

    def __init__(self, case: FrameCase) -> None:
        if isinstance(case.source, bytes):
            self.owner: Any = (blosc2.ndarray_from_cframe(case.source, copy=True)
                               if is_b2nd(case) else
                               blosc2.schunk_from_cframe(case.source, copy=True))
        else:
            self.owner = blosc2.open(str(case.source), mode="r")
        self.schunk: blosc2.SChunk = (self.owner.schunk if isinstance(self.owner, blosc2.NDArray)
                                      else self.owner)


def open_ndarray(case: FrameCase) -> blosc2.NDArray:
    if isinstance(case.source, bytes):
        return blosc2.ndarray_from_cframe(case.source, copy=True)
    opened = blosc2.open(str(case.source), mode="r")
    assert isinstance(opened, blosc2.NDArray), type(opened)
    return opened


def header_frame(case: FrameCase) -> bytes:
    """The bytes holding the frame header: the cframe, or an sframe's index."""
    if isinstance(case.source, bytes):
        return case.source
    if case.source.is_dir():
        return (case.source / "chunks.b2frame").read_bytes()
    return case.source.read_bytes()


def all_defined(case: FrameCase) -> bool:
    return all(case.defined(i) for i in range(case.nchunks))


# ---------------------------------------------------------------------------
# Chunks and data
# ---------------------------------------------------------------------------


def check_chunks(case: FrameCase) -> None:
    opened = Opened(case)
    schunk = opened.schunk
    assert schunk.nchunks == case.nchunks == len(case.chunks), schunk.nchunks
    for i, expected in enumerate(case.chunks):
        if case.defined(i):
            assert schunk.decompress_chunk(i) == expected, f"chunk {i}"
        else:
            check_uninit_chunk(schunk, i, expected)
    assert case.data == b"".join(case.chunks)
    assert schunk.nbytes == len(case.data)
    if all_defined(case):
        assert schunk[:] == case.data


def check_uninit_chunk(schunk: blosc2.SChunk, nchunk: int, expected: bytes) -> None:
    """The oracle writes nothing for an uninit chunk: what a zeroed buffer
    keeps is the case's bytes, and a 0xff buffer stays 0xff (so any content of
    the right length is correct)."""
    for fill in (0x00, 0xFF):
        buf = bytearray([fill]) * len(expected)
        schunk.decompress_chunk(nchunk, buf)  # raises on failure
        if fill == 0:
            assert bytes(buf) == expected, f"uninit chunk {nchunk}"
        else:
            assert buf == bytearray([fill]) * len(expected), f"uninit chunk {nchunk}"


def test_chunks_and_data(cases: list[FrameCase]) -> None:
    check_all(cases, check_chunks)


# ---------------------------------------------------------------------------
# Header fields: typesize, chunk_size, codec, filters
# ---------------------------------------------------------------------------


def check_header(case: FrameCase) -> None:
    frame = header_frame(case)
    assert frame[2:10] == b"b2frame\x00"
    # Fixed msgpack fields: d2 typesize at 47, d2 chunk_size at 57, flags str
    # at 24 whose 4th byte (27) holds the codec in its low nibble.
    assert frame[47] == 0xD2 and struct.unpack(">i", frame[48:52])[0] == case.typesize
    assert frame[57] == 0xD2 and struct.unpack(">i", frame[58:62])[0] == case.chunksize
    assert frame[27] & 0x0F == blosc2.Codec[case.codec.upper()].value, hex(frame[27])
    opened = Opened(case)
    schunk = opened.schunk
    assert schunk.typesize == case.typesize
    assert schunk.chunksize == case.chunksize
    cparams = schunk.cparams
    assert cparams.codec.name.lower() == case.codec
    used = [(f.name.lower(), m) for f, m in zip(cparams.filters, cparams.filters_meta)
            if f != blosc2.Filter.NOFILTER]
    assert used == case.filters, used


def test_header_fields(cases: list[FrameCase]) -> None:
    check_all(cases, check_header)


def test_dict_frame_uses_a_dictionary(cases: list[FrameCase]) -> None:
    dict_cases = [c for c in cases if c.name.startswith("zstd-dict")]
    assert dict_cases
    for case in dict_cases:
        schunk = Opened(case).schunk
        assert schunk.cparams.use_dict and case.codec == "zstd"
        # Every full-size chunk sets use_dict: bit 0 of blosc2_flags (byte
        # 31). (C-Blosc2 writes the short last chunk without a dictionary.)
        full = [i for i in range(case.nchunks) if len(case.chunks[i]) == case.chunksize]
        assert len(full) >= 2
        assert all(schunk.get_chunk(i)[31] & 0x01 for i in full)


# ---------------------------------------------------------------------------
# Metalayers and vlmetalayers: the raw bytes stored
# ---------------------------------------------------------------------------


def check_metalayers(case: FrameCase) -> None:
    opened = Opened(case)
    schunk = opened.schunk
    assert list(schunk.meta.keys()) == list(case.metalayers)
    for name, raw in case.metalayers.items():
        # meta__getitem__ is C-Blosc2's blosc2_meta_get: the bytes stored.
        assert blosc2.blosc2_ext.meta__getitem__(schunk, name) == raw, name
        assert msgpack.unpackb(raw) == schunk.meta[name], name


def check_vlmetalayers(case: FrameCase) -> None:
    opened = Opened(case)
    schunk = opened.schunk
    assert list(schunk.vlmeta) == list(case.vlmetalayers)
    for name, raw in case.vlmetalayers.items():
        # The base class's get_vlmeta returns the decompressed stored bytes
        # (vlmeta.__getitem__ would msgpack-decode them).
        assert blosc2.blosc2_ext.vlmeta.get_vlmeta(schunk.vlmeta, name) == raw, name
        assert msgpack.unpackb(raw) == schunk.vlmeta[name], name


def test_metalayers(cases: list[FrameCase]) -> None:
    check_all(cases, check_metalayers)


def test_vlmetalayers(cases: list[FrameCase]) -> None:
    check_all(cases, check_vlmetalayers)


# ---------------------------------------------------------------------------
# Special chunks are special offsets in the frame's index
# ---------------------------------------------------------------------------


def check_special(case: FrameCase) -> None:
    if case.nchunks == 0:
        assert not case.special
        return
    sframe = not isinstance(case.source, bytes) and case.source.is_dir()
    offsets = frame_offsets(header_frame(case), sframe=sframe)
    assert len(offsets) == case.nchunks
    for i, offset in enumerate(offsets):
        top = offset >> 56
        if i in case.special:
            assert top == SPECIAL_OFFSET[case.special[i]], f"chunk {i}: {offset:#x}"
        else:
            assert not top & 0x80, f"chunk {i}: {offset:#x}"
    opened = Opened(case)
    oracle = {i.nchunk: i.special for i in opened.schunk.iterchunks_info()}
    for i in range(case.nchunks):
        kind = case.special.get(i)
        assert (oracle[i] != blosc2.SpecialValue.NOT_SPECIAL) == (kind is not None), i
    if sframe:
        check_sframe_files(case, offsets)


def check_sframe_files(case: FrameCase, offsets: list[int]) -> None:
    """An sframe stores a file per regular chunk (named by the chunk id the
    index holds, 8 hex digits) and none for special chunks."""
    assert isinstance(case.source, pathlib.Path)
    files = {int(p.stem, 16) for p in case.source.glob("*.chunk")}
    assert files == {offsets[i] for i in range(case.nchunks) if i not in case.special}


def test_special_chunks(cases: list[FrameCase]) -> None:
    check_all(cases, check_special)


# ---------------------------------------------------------------------------
# b2nd
# ---------------------------------------------------------------------------


def check_b2nd(case: FrameCase) -> None:
    assert case.b2nd is not None
    nd = open_ndarray(case)
    b = case.b2nd
    assert nd.shape == b["shape"] and nd.chunks == b["chunkshape"]
    assert nd.blocks == b["blockshape"] and nd.dtype.str == b["dtype"]
    assert len(b["array"]) == nd.dtype.itemsize * int(np.prod(b["shape"]))
    if all_defined(case):
        assert nd[...].tobytes() == b["array"]
    # The b2nd metalayer: [version, ndim, shape, chunkshape, blockshape,
    # dtype format, dtype] (C-Blosc2's b2nd_deserialize_meta order).
    meta = msgpack.unpackb(case.metalayers["b2nd"])
    assert meta[1] == len(b["shape"])
    assert tuple(meta[2]) == b["shape"] and tuple(meta[3]) == b["chunkshape"]
    assert tuple(meta[4]) == b["blockshape"] and meta[6] == b["dtype"]


def test_b2nd(cases: list[FrameCase]) -> None:
    check_all([c for c in cases if is_b2nd(c)], check_b2nd)


# ---------------------------------------------------------------------------
# HDF5 chunks: h5py agrees with the expected values
# ---------------------------------------------------------------------------


def check_hdf5(case: FrameCase, files: dict[pathlib.Path, Any]) -> None:
    assert case.hdf5 is not None
    h = case.hdf5
    dset = files[h["file"]][h["dataset"]]
    info = dset.id.get_chunk_info(h["chunk_index"])
    assert tuple(info.chunk_offset) == h["chunk_offset"] and info.filter_mask == 0
    assert dset.id.read_direct_chunk(info.chunk_offset)[1] == case.source
    assert dset.chunks == h["chunk_shape"] and dset.dtype.str == h["dtype"]
    values = np.frombuffer(h["values"], dtype=h["dtype"]).reshape(h["chunk_shape"])
    region = tuple(slice(o, min(o + c, n))
                   for o, c, n in zip(h["chunk_offset"], h["chunk_shape"], dset.shape))
    valid = tuple(slice(0, s.stop - s.start) for s in region)
    assert np.array_equal(values[valid], dset[region])
    # Edge chunks: the padding HDF5 passes the filter holds the fill value.
    padding = np.ones(values.shape, bool)
    padding[valid] = False
    assert np.all(values[padding] == np.asarray(h["fillvalue"], dtype=h["dtype"]))
    if case.b2nd is not None:
        assert case.b2nd["array"] == h["values"]
    else:
        assert case.data == h["values"]


def test_hdf5_chunks(cases: list[FrameCase]) -> None:
    h5py = oracle("h5py")

    hcases = [c for c in cases if c.kind == "hdf5-chunk"]
    paths = {c.hdf5["file"] for c in hcases if c.hdf5}
    files = {p: h5py.File(p, "r") for p in paths}
    try:
        check_all(hcases, lambda c: check_hdf5(c, files))
    finally:
        for f in files.values():
            f.close()


def test_hdf5_frame_layout(cases: list[FrameCase]) -> None:
    """hdf5plugin writes one Blosc2 chunk per HDF5 chunk: an SChunk frame for
    1-D datasets, a b2nd frame (dtype |V<itemsize>) of the chunk's shape
    otherwise."""
    oracle("hdf5plugin")
    for case in (c for c in cases if c.kind == "hdf5-chunk"):
        assert case.hdf5 is not None and case.nchunks == 1
        ndim = len(case.hdf5["chunk_shape"])
        assert (case.b2nd is not None) == (ndim > 1), case.name
        assert list(case.metalayers) == (["b2nd"] if ndim > 1 else []), case.name
        if case.b2nd is not None:
            assert case.b2nd["dtype"] == f"|V{case.typesize}", case.name


# ---------------------------------------------------------------------------
# Coverage: the corpus holds what the frame reader's tests rely on
# ---------------------------------------------------------------------------


def test_coverage(cases: list[FrameCase]) -> None:
    oracle("h5py"), oracle("hdf5plugin")          # the hdf5-chunk cases
    kinds = {c.kind for c in cases}
    assert kinds == {"cframe", "sframe", "b2nd-cframe", "b2nd-sframe", "hdf5-chunk"}
    cframes = [c for c in cases if c.kind == "cframe"]
    assert {c.codec for c in cframes} == set(CODECS)
    filters = {tuple(n for n, _ in c.filters) for c in cases}
    for wanted in [(), ("shuffle",), ("bitshuffle",), ("delta", "shuffle"),
                   ("shuffle", "bytedelta"), ("trunc_prec", "shuffle")]:
        assert wanted in filters, wanted
    assert any(n == "trunc_prec" and m > 0 for c in cases for n, m in c.filters)
    assert set(range(1, 17)) <= {c.typesize for c in cframes}
    assert {k for c in cases for k in c.special.values()} == set(SPECIAL_OFFSET)
    assert any(c.special and len(c.special) < c.nchunks for c in cases)  # mixed
    counts = {c.nchunks for c in cases}
    assert {0, 1} <= counts and max(counts) == (10_000 if LONG else 1_000)
    assert any(c.nchunks > 1 and len(c.chunks[-1]) < c.chunksize for c in cframes)
    assert any(not isinstance(c.source, bytes) and c.kind == "cframe" for c in cases)
    meta_values = [msgpack.unpackb(v) for c in cases for v in c.metalayers.values()]
    assert any(isinstance(v, bytes) for v in meta_values)
    assert any(isinstance(v, list) for v in meta_values)
    assert max(len(c.vlmetalayers) for c in cases) >= 3
    assert any(c.name.startswith("zstd-dict") for c in cases)
    for kind in ("b2nd-cframe", "b2nd-sframe", "hdf5-chunk"):
        ndims = {len(c.b2nd["shape"]) if c.b2nd else 1 for c in cases if c.kind == kind}
        assert ndims == {1, 2, 3}, (kind, ndims)


def test_corpus_has_edge_chunks_and_blocks(cases: list[FrameCase]) -> None:
    """b2nd arrays with edge chunks and blocks not dividing the chunk, HDF5
    datasets with edge chunks and a b2nd block smaller than the chunk."""
    h5py = oracle("h5py")
    def ragged(b: dict[str, Any]) -> bool:
        return any(n % c for n, c in zip(b["shape"], b["chunkshape"])) and \
            any(c % k for c, k in zip(b["chunkshape"], b["blockshape"]))
    assert any(c.b2nd and ragged(c.b2nd) for c in cases if c.kind.startswith("b2nd"))
    hcases = [c for c in cases if c.kind == "hdf5-chunk"]
    assert any(c.b2nd and c.b2nd["blockshape"] != c.b2nd["chunkshape"] for c in hcases)
    hinfo = [c.hdf5 for c in hcases if c.hdf5 is not None]
    edges = 0
    for path in {h["file"] for h in hinfo}:
        with h5py.File(path, "r") as f:
            for h in (h for h in hinfo if h["file"] == path):
                shape = f[h["dataset"]].shape
                edges += any(o + k > n for o, k, n in zip(h["chunk_offset"], h["chunk_shape"], shape))
    assert edges >= 5
