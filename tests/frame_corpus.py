"""A corpus of REAL Blosc2 frames written by the reference writers
(python-blosc2 / C-Blosc2 and hdf5plugin's Blosc2 HDF5 filter), each with what
a correct frame reader must get out of it.

Used by the frame reader's tests; ``tests/test_frame_corpus.py`` proves every
expectation against the oracles themselves (python-blosc2 re-opening the
source, h5py reading the datasets) before blosckit is tested against them.

Where the expectations come from:

* chunk bytes, data, metalayer and vlmetalayer bytes are computed from the
  data and values this module made (split by chunksize; msgpack of the values
  exactly as python-blosc2 packs them; the b2nd block layout with its
  padding; trunc_prec as a mantissa mask; the special values' meaning);
  HDF5 edge chunks padded with the dataset's fill value (what HDF5 hands the
  filter: the full chunk shape);
* only what the writer decides itself comes from the writer's own object:
  the ``b2nd`` metalayer bytes (fixed-width msgpack ints, not what
  msgpack.packb makes of its value), the blockshape and "|V<n>" dtype the
  HDF5 filter picks, and which HDF5 chunks it stores as special offsets.

For "hdf5-chunk" cases ``data``/``chunks`` are the frame's decompressed chunk
(the b2nd block layout when the filter chose blocks smaller than the chunk);
the chunk's values in C order are ``hdf5["values"]`` (== ``b2nd["array"]``).

Special chunks: ``special`` maps a chunk index to "zeros", "nan" or
"uninit" for chunks the frame stores as a special *offset* (no chunk bytes in
the frame). An "uninit" chunk has no defined content: C-Blosc2 leaves the
destination untouched, so a reader may return any bytes of the right length;
the case holds zeros there (what the oracle leaves in a zeroed buffer) and
``FrameCase.defined(i)`` is False.

API::

    FrameCase                    the dataclass below
    frame_cases(tmp_dir, long)   SChunk / NDArray frames: cframes (bytes and
                                 files), sframes (directories), b2nd
    hdf5_cases(tmp_dir, long)    raw chunks of HDF5 datasets (hdf5plugin)
    all_cases(tmp_dir, long)     both lists
    frame_offsets(frame, sframe) the raw int64 chunk offsets of a frame (or of
                                 an sframe's chunks.b2frame index)
    SPECIAL_OFFSET               "zeros"/"nan"/"uninit" -> top byte of an offset
    b2nd_chunk_bytes(...)        one b2nd chunk's decompressed bytes (blocks)
"""
from __future__ import annotations

import math
import pathlib
import struct
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

import msgpack

from oracles import available, oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")

Kind = Literal["cframe", "sframe", "b2nd-cframe", "b2nd-sframe", "hdf5-chunk"]

CodecName = Literal["blosclz", "lz4", "lz4hc", "zlib", "zstd"]
CODECS: tuple[CodecName, ...] = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")

# Top byte of a special chunk offset in the frame's index chunk (bit 7 =
# special, low bits = BLOSC2_SPECIAL_*); seen in frames C-Blosc2 3.x writes.
SPECIAL_OFFSET = {"zeros": 0x81, "nan": 0x82, "uninit": 0x84}

_SPECIAL_VALUE = {
    "zeros": blosc2.SpecialValue.ZERO,
    "nan": blosc2.SpecialValue.NAN,
    "uninit": blosc2.SpecialValue.UNINIT,
}


@dataclass
class FrameCase:
    """One real frame and what a correct reader must get from it."""

    name: str
    kind: Kind
    source: bytes | pathlib.Path  # cframe bytes, a cframe file or an sframe dir
    chunks: list[bytes]  # each chunk decompressed, in chunk order
    data: bytes  # b"".join(chunks): what schunk[:] returns
    nchunks: int
    typesize: int
    chunksize: int  # the frame header's chunk_size
    codec: str  # one of CODECS
    filters: list[tuple[str, int]]  # (name, meta), slot order, no empty slot
    metalayers: dict[str, bytes] = field(default_factory=dict)  # raw, index order
    vlmetalayers: dict[str, bytes] = field(default_factory=dict)  # raw, decompressed
    special: dict[int, str] = field(default_factory=dict)
    b2nd: dict[str, Any] | None = None
    hdf5: dict[str, Any] | None = None

    def defined(self, nchunk: int) -> bool:
        """False for an "uninit" chunk, whose content is unspecified."""
        return self.special.get(nchunk) != "uninit"


# ---------------------------------------------------------------------------
# What the writers store, computed from the values we give them
# ---------------------------------------------------------------------------


def packed(value: Any) -> bytes:
    """A metalayer / vlmetalayer value as python-blosc2 stores it
    (``msgpack_packb``: bin type for bytes, no ext types for plain values)."""
    return msgpack.packb(value, use_bin_type=True, strict_types=True)


def special_chunk(kind: str, nbytes: int, typesize: int) -> bytes:
    """The decompressed bytes of a special chunk of ``nbytes``: NaNs are the
    float of ``typesize`` (C-Blosc2 supports 4 and 8); uninit -> zeros (see
    the module docstring)."""
    if kind == "nan":
        dtype = {4: "<f4", 8: "<f8"}[typesize]
        return np.full(nbytes // typesize, np.nan, dtype=dtype).tobytes()
    return bytes(nbytes)


def split(data: bytes, chunksize: int) -> list[bytes]:
    """``data`` cut into chunks of ``chunksize`` (the last may be shorter)."""
    return [data[i:i + chunksize] for i in range(0, len(data), chunksize)]


def truncated(values: np.ndarray, prec_bits: int) -> np.ndarray:
    """What the trunc_prec filter keeps of float64 ``values``: the mantissa's
    ``prec_bits`` high bits, the others zeroed (it truncates, no rounding)."""
    mask = ~np.uint64((1 << (52 - prec_bits)) - 1)
    return (values.astype("<f8").view("<u8") & mask).view("<f8")


def b2nd_chunk_bytes(array: np.ndarray, chunkshape: Sequence[int],
                     blockshape: Sequence[int], chunk_coords: Sequence[int],
                     pad: Any = 0) -> bytes:
    """One b2nd chunk's decompressed bytes: the chunk, padded with ``pad`` to
    a whole number of blocks per dimension, stored block after block in C
    order, each block's items in C order."""
    nblocks = [math.ceil(c / b) for c, b in zip(chunkshape, blockshape)]
    ext = [n * b for n, b in zip(nblocks, blockshape)]
    chunk = np.full(ext, pad, dtype=array.dtype)
    region = tuple(slice(i * c, min((i + 1) * c, n))
                   for i, c, n in zip(chunk_coords, chunkshape, array.shape))
    part = array[region]
    chunk[tuple(slice(0, k) for k in part.shape)] = part
    out = []
    for coords in np.ndindex(*nblocks):
        block = tuple(slice(i * b, (i + 1) * b) for i, b in zip(coords, blockshape))
        out.append(np.ascontiguousarray(chunk[block]).tobytes())
    return b"".join(out)


def b2nd_chunks(array: np.ndarray, chunkshape: Sequence[int],
                blockshape: Sequence[int], pad: Any = 0) -> list[bytes]:
    """All chunks of a b2nd array, chunk grid in C order."""
    grid = [math.ceil(n / c) for n, c in zip(array.shape, chunkshape)]
    return [b2nd_chunk_bytes(array, chunkshape, blockshape, coords, pad)
            for coords in np.ndindex(*grid)]


# ---------------------------------------------------------------------------
# Reading a frame's index (to prove which chunks are special offsets)
# ---------------------------------------------------------------------------


def frame_offsets(frame: bytes, sframe: bool = False) -> list[int]:
    """The raw chunk offsets (as unsigned 64-bit) in a frame's index chunk.

    Fixed header fields: header_size (int32, bytes 11..14) and
    compressed_size (int64, bytes 39..46), both big-endian msgpack. The index
    chunk follows the chunks in a cframe; an sframe's chunks.b2frame holds no
    chunks, so it follows the header. It is an ordinary Blosc2 chunk, which
    the oracle decompresses.
    """
    if frame[2:10] != b"b2frame\x00":
        raise ValueError("not a Blosc2 frame")
    header_size = struct.unpack(">i", frame[11:15])[0]
    cbytes = struct.unpack(">q", frame[39:47])[0]
    pos = header_size if sframe else header_size + cbytes
    _, index_cbytes, _ = blosc2.get_cbuffer_sizes(frame[pos:pos + 32])
    index = blosc2.decompress2(frame[pos:pos + index_cbytes])
    return np.frombuffer(index, dtype="<u8").tolist()


# ---------------------------------------------------------------------------
# SChunk frames
# ---------------------------------------------------------------------------


def _cparams(typesize: int, codec: str, filters: Sequence[tuple[str, int]],
             clevel: int = 5, use_dict: bool = False, blocksize: int = 0) -> blosc2.CParams:
    """CParams asking for exactly ``filters`` (no implicit shuffle slot)."""
    return blosc2.CParams(
        typesize=typesize, codec=blosc2.Codec[codec.upper()], clevel=clevel,
        filters=[blosc2.Filter[n.upper()] for n, _ in filters] or [blosc2.Filter.NOFILTER],
        filters_meta=[m for _, m in filters] or [0], use_dict=use_dict,
        blocksize=blocksize, nthreads=1)


@dataclass
class _Spec:
    """What to ask python-blosc2 for; the case's expectations follow from it."""

    name: str
    data: bytes
    typesize: int
    chunksize: int
    codec: str = "zstd"
    filters: list[tuple[str, int]] = field(default_factory=lambda: [("shuffle", 0)])
    clevel: int = 5
    use_dict: bool = False
    blocksize: int = 0  # 0: the writer picks
    meta: dict[str, Any] = field(default_factory=dict)
    vlmeta: dict[str, Any] = field(default_factory=dict)
    special: dict[int, str] = field(default_factory=dict)  # set after writing
    expected: bytes | None = None  # the data as decoded, if not ``data`` (lossy)


def _write_schunk(spec: _Spec, urlpath: pathlib.Path | None,
                  contiguous: bool) -> blosc2.SChunk:
    """Write ``spec`` with python-blosc2 (in memory when ``urlpath`` is None)."""
    schunk = blosc2.SChunk(
        chunksize=spec.chunksize, data=spec.data or None,
        cparams=_cparams(spec.typesize, spec.codec, spec.filters, spec.clevel, spec.use_dict,
                         spec.blocksize),
        dparams=blosc2.DParams(nthreads=1), meta=spec.meta or None,
        urlpath=None if urlpath is None else str(urlpath), contiguous=contiguous, mode="w")
    for nchunk, kind in spec.special.items():
        schunk.update_special(nchunk, _SPECIAL_VALUE[kind])
    for name, value in spec.vlmeta.items():
        schunk.vlmeta[name] = value
    return schunk


def _expected_chunks(spec: _Spec) -> list[bytes]:
    chunks = split(spec.expected if spec.expected is not None else spec.data, spec.chunksize)
    for nchunk, kind in spec.special.items():
        chunks[nchunk] = special_chunk(kind, len(chunks[nchunk]), spec.typesize)
    return chunks


def _schunk_case(spec: _Spec, kind: Kind, source: bytes | pathlib.Path) -> FrameCase:
    chunks = _expected_chunks(spec)
    return FrameCase(
        name=spec.name, kind=kind, source=source, chunks=chunks, data=b"".join(chunks),
        nchunks=len(chunks), typesize=spec.typesize, chunksize=spec.chunksize,
        codec=spec.codec, filters=list(spec.filters),
        metalayers={k: packed(v) for k, v in spec.meta.items()},
        vlmetalayers={k: packed(v) for k, v in spec.vlmeta.items()},
        special=dict(spec.special))


def _as_cframe(spec: _Spec) -> FrameCase:
    return _schunk_case(spec, "cframe", _write_schunk(spec, None, True).to_cframe())


def _as_file(spec: _Spec, tmp_dir: pathlib.Path) -> FrameCase:
    path = tmp_dir / f"{spec.name}.b2frame"
    _write_schunk(spec, path, True)
    return _schunk_case(spec, "cframe", path)


def _as_sframe(spec: _Spec, tmp_dir: pathlib.Path) -> FrameCase:
    path = tmp_dir / f"{spec.name}.sframe"
    _write_schunk(spec, path, False)
    return _schunk_case(spec, "sframe", path)


def _arange(nitems: int, typesize: int, seed: int = 0) -> bytes:
    """Compressible but not trivial bytes: item i holds i (little-endian,
    truncated/zero-extended to ``typesize``) plus a little noise."""
    rng = np.random.default_rng(seed)
    items = np.arange(nitems, dtype="<u8") + rng.integers(0, 4, nitems, dtype="<u8")
    mat = np.zeros((nitems, typesize), dtype=np.uint8)
    width = min(typesize, 8)
    mat[:, :width] = items.view(np.uint8).reshape(nitems, 8)[:, :width]
    return mat.tobytes()


def _floats(nitems: int) -> np.ndarray:
    return np.linspace(-123.25, 4567.5, nitems) + np.sin(np.arange(nitems))


# Metalayers: several, one bytes-valued, one a list (fixed-length, in the header).
_META = {"bytes-layer": b"\x00\x01\x02raw\xff", "list-layer": [1, 2, "three", 4.5],
         "int-layer": 42}
_VLMETA = {"info": {"author": "blosckit", "n": 3}, "blob": b"\x00" * 5 + b"\xff",
           "text": "vlmeta text", "list": [1.5, None, True]}


def _featured_specs() -> list[_Spec]:
    """Meta/vlmeta, a short last chunk, specials: written as bytes, file, sframe."""
    data = np.arange(2500, dtype="<i4").tobytes()  # 2.5 chunks of 4000 bytes
    mixed = _floats(8 * 128).astype("<f8").tobytes()  # 8 chunks of 1024 bytes
    return [
        _Spec("meta-vlmeta", data, 4, 4000, meta=dict(_META), vlmeta=dict(_VLMETA)),
        _Spec("special-mixed", mixed, 8, 1024, codec="lz4", meta={"m": b"x"},
              special={1: "zeros", 3: "nan", 4: "uninit", 6: "zeros"}),
        _Spec("one-chunk", data[:4000], 4, 4000, codec="blosclz"),
        _Spec("empty", b"", 4, 4000, meta={"e": [0]}, vlmeta={"v": "empty frame"}),
    ]


def _fill_special_case(kind: str, typesize: int) -> FrameCase:
    """A frame made only of special offsets (``SChunk.fill_special``); the
    last chunk is shorter."""
    nitems, chunksize = 1000, 256 * typesize
    schunk = blosc2.SChunk(chunksize=chunksize, cparams=_cparams(typesize, "zstd", [("shuffle", 0)]))
    schunk.fill_special(nitems, _SPECIAL_VALUE[kind])
    sizes = [len(c) for c in split(bytes(nitems * typesize), chunksize)]
    chunks = [special_chunk(kind, n, typesize) for n in sizes]
    return FrameCase(
        name=f"fill-{kind}-ts{typesize}", kind="cframe", source=schunk.to_cframe(),
        chunks=chunks, data=b"".join(chunks), nchunks=len(chunks), typesize=typesize,
        chunksize=chunksize, codec="zstd", filters=[("shuffle", 0)],
        special={i: kind for i in range(len(chunks))})


def _codec_specs() -> list[_Spec]:
    data = _floats(1300).astype("<f8").tobytes()  # 2 chunks + a short one
    return [_Spec(f"codec-{c}", data, 8, 4096, codec=c, clevel=1 + 2 * i)
            for i, c in enumerate(CODECS)]


def _filter_specs() -> list[_Spec]:
    values = _floats(1500)
    data = values.astype("<f8").tobytes()
    ints = np.cumsum(np.arange(3000, dtype="<i4") % 7, dtype="<i4").tobytes()
    return [
        _Spec("filter-none", data, 8, 4000, filters=[]),
        _Spec("filter-shuffle", data, 8, 4000, filters=[("shuffle", 0)]),
        _Spec("filter-bitshuffle", data, 8, 4000, codec="lz4", filters=[("bitshuffle", 0)]),
        _Spec("filter-delta-shuffle", ints, 4, 4000, filters=[("delta", 0), ("shuffle", 0)]),
        _Spec("filter-shuffle-bytedelta", ints, 4, 4000,
              filters=[("shuffle", 0), ("bytedelta", 4)]),
        _Spec("filter-truncprec-shuffle", data, 8, 4000, codec="zlib",
              filters=[("trunc_prec", 20), ("shuffle", 0)],
              expected=truncated(values, 20).tobytes()),
    ]


def _typesize_specs() -> list[_Spec]:
    """Typesizes 1..16, chunksize a multiple of the typesize, last chunk short."""
    return [_Spec(f"typesize-{t}", _arange(700, t, seed=t), t, 256 * t,
                  filters=[("shuffle", 0)] if t % 2 else [("bitshuffle", 0)])
            for t in range(1, 17)]


def _dict_spec() -> _Spec:
    """zstd with a dictionary (use_dict): chunks with a shared vocabulary.
    C-Blosc2 only trains a dictionary for chunks of several blocks (a 4 KiB
    single-block chunk is written without one), hence the explicit blocksize."""
    rng = np.random.default_rng(7)
    words = [bytes(rng.integers(97, 123, 6, dtype=np.uint8)) for _ in range(40)]
    text = b" ".join(words[int(i)] for i in rng.integers(0, 40, 12000))
    return _Spec("zstd-dict", text, 1, 16384, codec="zstd", clevel=5, use_dict=True,
                 blocksize=2048, filters=[])


def _many_chunks_spec(long: bool) -> _Spec:
    n = 10_000 if long else 1_000
    return _Spec(f"chunks-{n}", _arange(8 * n, 8), 8, 64, codec="lz4", clevel=1)


def _schunk_cases(tmp_dir: pathlib.Path, long: bool) -> list[FrameCase]:
    cases = []
    for spec in _featured_specs():
        cases += [_as_cframe(spec), _as_file(spec, tmp_dir), _as_sframe(spec, tmp_dir)]
    for spec in _codec_specs() + _filter_specs() + _typesize_specs() + [_dict_spec()]:
        cases.append(_as_cframe(spec))
    cases.append(_as_sframe(_codec_specs()[2], tmp_dir))  # lz4hc as an sframe too
    many = _many_chunks_spec(long)
    cases.append(_as_cframe(many))
    if long:
        cases.append(_as_sframe(many, tmp_dir))
    cases += [_fill_special_case(k, t) for k, t in
              (("zeros", 4), ("nan", 4), ("nan", 8), ("uninit", 8))]
    return cases


# ---------------------------------------------------------------------------
# b2nd (NDArray) frames
# ---------------------------------------------------------------------------


@dataclass
class _ArraySpec:
    name: str
    array: np.ndarray
    chunks: tuple[int, ...]
    blocks: tuple[int, ...]
    codec: str = "zstd"
    filters: list[tuple[str, int]] = field(default_factory=lambda: [("shuffle", 0)])
    maker: str = "asarray"  # or zeros / uninit: all chunks special
    vlmeta: dict[str, Any] = field(default_factory=dict)


def _write_ndarray(spec: _ArraySpec, urlpath: pathlib.Path | None,
                   contiguous: bool) -> blosc2.NDArray:
    kwargs: dict[str, Any] = dict(
        chunks=spec.chunks, blocks=spec.blocks,
        cparams=_cparams(spec.array.dtype.itemsize, spec.codec, spec.filters),
        dparams=blosc2.DParams(nthreads=1), contiguous=contiguous, mode="w")
    if urlpath is not None:
        kwargs["urlpath"] = str(urlpath)
    if spec.maker == "asarray":
        arr = blosc2.asarray(spec.array, **kwargs)
    else:
        arr = getattr(blosc2, spec.maker)(spec.array.shape, dtype=spec.array.dtype, **kwargs)
    for name, value in spec.vlmeta.items():
        arr.schunk.vlmeta[name] = value
    return arr


def _b2nd_case(spec: _ArraySpec, arr: blosc2.NDArray, kind: Kind,
               source: bytes | pathlib.Path) -> FrameCase:
    chunks = b2nd_chunks(spec.array, spec.chunks, spec.blocks)
    # blosc2.zeros / blosc2.uninit write every chunk as a special offset.
    special = {i: spec.maker for i in range(len(chunks))} if spec.maker != "asarray" else {}
    # The b2nd metalayer's bytes are the writer's own encoding (fixed-width
    # msgpack ints), not msgpack.packb of its value: take them from the
    # writer (C-Blosc2's blosc2_meta_get); the test decodes and checks them.
    b2nd_meta = blosc2.blosc2_ext.meta__getitem__(arr.schunk, "b2nd")
    return FrameCase(
        name=spec.name, kind=kind, source=source, chunks=chunks, data=b"".join(chunks),
        nchunks=len(chunks), typesize=spec.array.dtype.itemsize,
        chunksize=len(chunks[0]), codec=spec.codec, filters=list(spec.filters),
        metalayers={"b2nd": b2nd_meta},
        vlmetalayers={k: packed(v) for k, v in spec.vlmeta.items()}, special=special,
        b2nd={"shape": spec.array.shape, "chunkshape": spec.chunks,
              "blockshape": spec.blocks, "dtype": spec.array.dtype.str,
              "array": spec.array.tobytes()})


def _array_specs() -> list[_ArraySpec]:
    """1-D, 2-D, 3-D with edge chunks, and blocks that do not divide chunks."""
    rng = np.random.default_rng(3)
    return [
        _ArraySpec("nd1-f8", _floats(1000), (300,), (64,), vlmeta={"unit": "m/s"}),
        _ArraySpec("nd2-i2", rng.integers(-500, 500, (37, 23)).astype("<i2"), (10, 8), (4, 3),
                   codec="lz4", filters=[("bitshuffle", 0)]),
        _ArraySpec("nd3-u4", np.arange(9 * 10 * 11, dtype="<u4").reshape(9, 10, 11),
                   (4, 5, 6), (2, 3, 4), codec="zlib", filters=[("delta", 0), ("shuffle", 0)]),
        _ArraySpec("nd2-c16", (_floats(150) + 1j * _floats(150)[::-1]).reshape(10, 15),
                   (4, 6), (2, 6), codec="blosclz"),
        _ArraySpec("nd2-zeros", np.zeros((13, 7), dtype="<f4"), (5, 4), (5, 2), maker="zeros"),
        _ArraySpec("nd3-uninit", np.zeros((5, 6, 7), dtype="<f8"), (2, 4, 4), (2, 2, 2),
                   maker="uninit"),
    ]


def _ndarray_cases(tmp_dir: pathlib.Path) -> list[FrameCase]:
    cases = []
    for spec in _array_specs():
        arr = _write_ndarray(spec, None, True)
        cases.append(_b2nd_case(spec, arr, "b2nd-cframe", arr.schunk.to_cframe()))
        path = tmp_dir / f"{spec.name}.b2nd"
        cases.append(_b2nd_case(spec, _write_ndarray(spec, path, True), "b2nd-cframe", path))
        sdir = tmp_dir / f"{spec.name}-sframe.b2nd"
        cases.append(_b2nd_case(spec, _write_ndarray(spec, sdir, False), "b2nd-sframe", sdir))
    return cases


def frame_cases(tmp_dir: pathlib.Path, long: bool = False) -> list[FrameCase]:
    """SChunk and NDArray frames written by python-blosc2 under ``tmp_dir``."""
    tmp_dir.mkdir(parents=True, exist_ok=True)
    cases = _schunk_cases(tmp_dir, long) + _ndarray_cases(tmp_dir)
    for case in cases:  # unique names: the same frame is written several ways
        case.name += "-" + _where(case)
    return cases


def _where(case: FrameCase) -> str:
    if isinstance(case.source, bytes):
        return "bytes"
    return "dir" if case.kind.endswith("sframe") else "file"


# ---------------------------------------------------------------------------
# HDF5 chunks (hdf5plugin's Blosc2 filter, id 32026)
# ---------------------------------------------------------------------------


@dataclass
class _Hdf5Spec:
    name: str
    array: np.ndarray
    chunks: tuple[int, ...]
    cname: CodecName
    filters: int  # hdf5plugin.Blosc2.NOFILTER / SHUFFLE / BITSHUFFLE / DELTA
    clevel: int = 5
    fillvalue: Any = 0


# hdf5plugin's filters option -> the filter pipeline it writes (last slot).
_HDF5_FILTERS = {0: [], 1: [("shuffle", 0)], 2: [("bitshuffle", 0)], 3: [("delta", 0)]}


def _hdf5_specs(long: bool) -> list[_Hdf5Spec]:
    rng = np.random.default_rng(11)
    specs = [
        _Hdf5Spec("d1-i4-zstd", np.arange(1000, dtype="<i4") * 3, (300,), "zstd", 1, fillvalue=7),
        _Hdf5Spec("d1-f8-lz4", _floats(250), (64,), "lz4", 2, fillvalue=-1.5),
        _Hdf5Spec("d1-zeros-blosclz", np.zeros(600, dtype="<i4"), (256,), "blosclz", 1),
        _Hdf5Spec("d2-f8-blosclz", _floats(70).reshape(7, 10), (4, 4), "blosclz", 1, fillvalue=2.5),
        _Hdf5Spec("d2-u2-lz4hc", rng.integers(0, 9000, (33, 17)).astype("<u2"), (8, 8),
                  "lz4hc", 3, fillvalue=9),
        _Hdf5Spec("d2-f8-zlib-blocks", _floats(300 * 260).reshape(300, 260), (256, 256),
                  "zlib", 0, clevel=1),
        _Hdf5Spec("d3-u2-zstd", np.arange(5 * 6 * 7, dtype="<u2").reshape(5, 6, 7), (2, 4, 3),
                  "zstd", 2, fillvalue=9),
        _Hdf5Spec("d3-i1-lz4", rng.integers(-100, 100, (6, 9, 5)).astype("i1"), (4, 4, 4),
                  "lz4", 1, fillvalue=-3),
    ]
    if long:
        specs.append(_Hdf5Spec("d2-i4-zstd-big", np.arange(2000 * 1000, dtype="<i4")
                               .reshape(2000, 1000), (1500, 1000), "zstd", 1))
    return specs


def _write_hdf5(path: pathlib.Path, specs: Sequence[_Hdf5Spec]) -> None:
    h5py, hdf5plugin = oracle("h5py"), oracle("hdf5plugin")

    with h5py.File(path, "w") as f:
        for s in specs:
            f.create_dataset(s.name, data=s.array, chunks=s.chunks, fillvalue=s.fillvalue,
                             **hdf5plugin.Blosc2(cname=s.cname, clevel=s.clevel, filters=s.filters))


def _chunk_values(spec: _Hdf5Spec, offset: Sequence[int]) -> np.ndarray:
    """The HDF5 chunk at ``offset`` as the filter receives it: the full chunk
    shape, edge padding holding the dataset's fill value."""
    chunk = np.full(spec.chunks, spec.fillvalue, dtype=spec.array.dtype)
    region = tuple(slice(o, min(o + c, n)) for o, c, n in zip(offset, spec.chunks, spec.array.shape))
    part = spec.array[region]
    chunk[tuple(slice(0, k) for k in part.shape)] = part
    return chunk


def _hdf5_chunk_case(spec: _Hdf5Spec, path: pathlib.Path, index: int,
                     offset: tuple[int, ...], raw: bytes) -> FrameCase:
    values = _chunk_values(spec, offset)
    schunk = blosc2.schunk_from_cframe(raw)
    b2nd = None
    metalayers: dict[str, bytes] = {}
    if values.ndim > 1:
        # The filter writes a b2nd frame (dtype "|V<itemsize>"): one chunk of
        # the HDF5 chunk's shape, blocks of the filter's choosing.
        nd = blosc2.ndarray_from_cframe(raw)
        blocks = tuple(nd.blocks)
        b2nd = {"shape": spec.chunks, "chunkshape": spec.chunks, "blockshape": blocks,
                "dtype": nd.dtype.str, "array": values.tobytes()}
        metalayers["b2nd"] = blosc2.blosc2_ext.meta__getitem__(schunk, "b2nd")
        data = b2nd_chunk_bytes(values, spec.chunks, blocks, [0] * values.ndim)
    else:
        data = values.tobytes()
    special = {i: "zeros" for i, info in enumerate(schunk.iterchunks_info())
               if info.special == blosc2.SpecialValue.ZERO}
    return FrameCase(
        name=f"hdf5-{spec.name}-chunk{index}", kind="hdf5-chunk", source=raw, chunks=[data],
        data=data, nchunks=1, typesize=spec.array.dtype.itemsize, chunksize=len(data),
        codec=spec.cname, filters=list(_HDF5_FILTERS[spec.filters]), metalayers=metalayers,
        special=special, b2nd=b2nd,
        hdf5={"file": path, "dataset": spec.name, "chunk_index": index,
              "chunk_offset": offset, "chunk_shape": spec.chunks,
              "dtype": spec.array.dtype.str, "fillvalue": spec.fillvalue,
              "values": values.tobytes()})


def hdf5_cases(tmp_dir: pathlib.Path, long: bool = False) -> list[FrameCase]:
    """One case per raw chunk of Blosc2-filtered HDF5 datasets."""
    h5py = oracle("h5py")

    tmp_dir.mkdir(parents=True, exist_ok=True)
    path = tmp_dir / "blosc2-filter.h5"
    specs = _hdf5_specs(long)
    _write_hdf5(path, specs)
    cases = []
    with h5py.File(path, "r") as f:
        for spec in specs:
            dsid = f[spec.name].id
            for index in range(dsid.get_num_chunks()):
                info = dsid.get_chunk_info(index)
                if info.filter_mask != 0:  # the filter was skipped: not a frame
                    raise RuntimeError(f"{spec.name}: chunk {index} stored unfiltered")
                _, raw = dsid.read_direct_chunk(info.chunk_offset)
                cases.append(_hdf5_chunk_case(spec, path, index, tuple(info.chunk_offset), raw))
    return cases


def all_cases(tmp_dir: pathlib.Path, long: bool = False) -> list[FrameCase]:
    """Every frame case, and the HDF5 ones where h5py and hdf5plugin are
    installed (the tests about those ask for them themselves)."""
    hdf5 = available("h5py") and available("hdf5plugin")
    return frame_cases(tmp_dir / "frames", long) + \
        (hdf5_cases(tmp_dir / "hdf5", long) if hdf5 else [])
