"""Native (C, via cffi) kernels for blosckit: shuffles, BloscLZ and filters.

Every function takes bytes-like objects (bytes, bytearray, memoryview, numpy
arrays...).  Output buffers (``dst``/``buf``) must be writable and contiguous.
Caller mistakes (dst too small, bad typesize, bad parameters) raise
ValueError.  The GIL is released around every C call (cffi API mode).
The format facts used here (offsets, ids, limits) are the ``_lib.BK_...``
names of the header generated from ``blosckit.formats`` (blosckit_layout.h),
which this layer may not import.
"""
import struct as _struct

from .buffers import BYTES_OFS as _BYTES_OFS, ZEROED_BELOW as _ZEROED_BELOW
from .buffers import new_bytes_at as _new_bytes_at
from ._native import ffi as _ffi, lib as _lib

__all__ = [
    "simd_level", "available_simd_levels", "_force_simd",
    "shuffle", "unshuffle", "shuffle_into", "unshuffle_into",
    "bitshuffle", "bitunshuffle", "bitshuffle_into", "bitunshuffle_into",
    "blosclz_compress_into", "blosclz_decompress_into",
    "delta_encode_into", "delta_decode_into",
    "bytedelta_encode_into", "bytedelta_decode_into", "trunc_prec_into",
    "decode_chunk", "encode_blocks", "make_codec_table", "decompress_fast",
    "decompress_fast_into", "copy_runs", "b2nd_read", "plain_chunks",
]

_LEVELS = ("scalar", "sse2", "avx2")

# format facts from the generated header (see the module docstring)
_LEN_OFFSET = _lib.BK_FRAME_LEN_OFFSET
# int64 per byte run of copy_runs and b2nd_read (chunk offset, array offset,
# length, count, chunk step, array step)
RUN_FIELDS = _lib.BK_RUN_FIELDS
_META_ITEM_MASK = _lib.BK_CHUNK_EXTENDED_FILTERS_META_ITEM_MASK
# the most a stream adds to its bytes: its csize and a run's token
_STREAM_OVERHEAD = _lib.BK_CHUNK_LEN_CSIZE + _lib.BK_CHUNK_LEN_TOKEN


def _int_field(layout: str, field: str) -> _struct.Struct:
    """A ``struct.Struct`` reading integer field ``field`` of ``layout`` (the
    names' parts in the generated header: ``"CHUNK_HEADER"``, ``"NBYTES"``)."""
    size = getattr(_lib, f"BK_{layout}_{field}_SIZE")
    code = {1: "b", 2: "h", 4: "i", 8: "q"}[size]
    order = "<" if getattr(_lib, f"BK_{layout}_LITTLE_ENDIAN") else ">"
    return _struct.Struct(order + (code if getattr(_lib, f"BK_{layout}_{field}_SIGNED")
                                   else code.upper()))

# pre-bound: the per-call kernels skip the module attribute lookups
_shuffle_at = _lib.bk_shuffle_at
_unshuffle_at = _lib.bk_unshuffle_at
_bitshuffle_at = _lib.bk_bitshuffle_at
_bitunshuffle_at = _lib.bk_bitunshuffle_at


# ------------------------------------------------------------------ helpers

def _rd(buf):
    return _ffi.from_buffer("uint8_t[]", buf)


def _wr(buf):
    try:
        return _ffi.from_buffer("uint8_t[]", buf, require_writable=True)
    except BufferError as exc:
        raise ValueError(f"output buffer must be writable and contiguous: {exc}") from None


def _addr(cdata):
    return int(_ffi.cast("uintptr_t", cdata))


def _overlap(a, alen, b, blen):
    if alen == 0 or blen == 0:
        return False
    pa, pb = _addr(a), _addr(b)
    return pa < pb + blen and pb < pa + alen


def _check_typesize(typesize):
    if not isinstance(typesize, int) or typesize < 1:
        raise ValueError(f"typesize must be an int >= 1, got {typesize!r}")


def _check_rc(rc, what):
    if rc == -2:
        raise MemoryError(f"{what}: out of memory")
    if rc < 0:
        raise ValueError(f"{what}: invalid parameters (code {rc})")


def _prep_into(src, dst, what, allow_alias=False):
    s = _rd(src)
    d = _wr(dst)
    n = len(s)
    if len(d) < n:
        raise ValueError(f"{what}: dst has {len(d)} bytes, needs {n}")
    if not allow_alias and _overlap(s, n, d, n):
        raise ValueError(f"{what}: src and dst must not overlap")
    return s, d, n


# --------------------------------------------------------------- SIMD level

def simd_level():
    """Vector path in use: "avx2", "sse2" or "scalar"."""
    return _LEVELS[_lib.bk_simd_level()]


def available_simd_levels():
    """All levels this CPU can run, slowest first."""
    return list(_LEVELS[: _lib.bk_simd_best() + 1])


def _force_simd(level=None):
    """Select the vector path ("scalar", "sse2", "avx2"; None = best).

    Process-wide; meant for tests and benchmarks.  Returns the previous level.
    Raises ValueError if the CPU cannot run the requested level.
    """
    prev = simd_level()
    idx = _lib.bk_simd_best() if level is None else (
        _LEVELS.index(level) if level in _LEVELS else -1)
    if idx < 0 or _lib.bk_set_simd_level(idx) != 0:
        raise ValueError(f"SIMD level {level!r} not available (have {available_simd_levels()})")
    return prev


# ------------------------------------------------------------------ shuffles

def shuffle_into(src, dst, typesize):
    """Byte-shuffle src into dst[:len(src)] (C-Blosc2 layout, one block).

    n = len // typesize; dst[j*n + i] = src[i*typesize + j]; the trailing
    len % typesize bytes are copied unchanged.  src and dst must not overlap.
    """
    _check_typesize(typesize)
    s, d, n = _prep_into(src, dst, "shuffle_into")
    _check_rc(_lib.bk_shuffle(s, d, n, typesize), "shuffle")


def unshuffle_into(src, dst, typesize):
    """Inverse of shuffle_into."""
    _check_typesize(typesize)
    s, d, n = _prep_into(src, dst, "unshuffle_into")
    _check_rc(_lib.bk_unshuffle(s, d, n, typesize), "unshuffle")


def _small_copy(s) -> bytes:
    """The result for inputs under 2 bytes, where every kernel copies."""
    return s if s.__class__ is bytes else bytes(_ffi.buffer(s))  # type: ignore[return-value]


def _into_new_bytes(kernel, src, typesize, *extra) -> bytes:
    """Run ``kernel(src, address, len, typesize, *extra)`` into a new bytes
    object written in place (n >= 2, so never one CPython shares)."""
    if not isinstance(typesize, int) or typesize < 1:
        _check_typesize(typesize)
    # bytes pass to C as they are (zero-copy); the rest through a buffer
    s = src if src.__class__ is bytes else _ffi.from_buffer("uint8_t[]", src)
    n = len(s)
    if n < 2:
        return _small_copy(s)
    # a zeroed allocation is cheaper than the uninitialised one below 16 KiB
    obj = bytes(n) if n < _ZEROED_BELOW else _new_bytes_at(n)[0]
    _check_rc(kernel(s, id(obj) + _BYTES_OFS, n, typesize, *extra), "shuffle kernel")
    return obj  # type: ignore[return-value]  # a bytearray only off CPython


def shuffle(src, typesize: int) -> bytes:
    """shuffle_into's result as a new bytes object."""
    return _into_new_bytes(_shuffle_at, src, typesize)


def unshuffle(src, typesize: int) -> bytes:
    """unshuffle_into's result as a new bytes object."""
    return _into_new_bytes(_unshuffle_at, src, typesize)


def bitshuffle(src, typesize: int, legacy: bool = False) -> bytes:
    """bitshuffle_into's result as a new bytes object."""
    return _into_new_bytes(_bitshuffle_at, src, typesize, 1 if legacy else 0)


def bitunshuffle(src, typesize: int, legacy: bool = False) -> bytes:
    """bitunshuffle_into's result as a new bytes object."""
    return _into_new_bytes(_bitunshuffle_at, src, typesize, 1 if legacy else 0)


def bitshuffle_into(src, dst, typesize, legacy=False):
    """Bit-shuffle src into dst[:len(src)].

    legacy=False (C-Blosc2, chunk version >= 3): n = (len // typesize) rounded
    down to a multiple of 8 elements are transposed, the rest is copied.
    legacy=True (C-Blosc 1.x, chunk version 2): transposed only when
    (len // typesize) % 8 == 0 and len >= typesize (then the len % typesize
    tail is copied), otherwise the whole block is copied unchanged.
    """
    _check_typesize(typesize)
    s, d, n = _prep_into(src, dst, "bitshuffle_into")
    _check_rc(_lib.bk_bitshuffle(s, d, n, typesize, 1 if legacy else 0), "bitshuffle")


def bitunshuffle_into(src, dst, typesize, legacy=False):
    """Inverse of bitshuffle_into (same legacy rule on the decode side)."""
    _check_typesize(typesize)
    s, d, n = _prep_into(src, dst, "bitunshuffle_into")
    _check_rc(_lib.bk_bitunshuffle(s, d, n, typesize, 1 if legacy else 0), "bitunshuffle")


# ------------------------------------------------------------------- BloscLZ

def blosclz_decompress_into(src, dst):
    """Decode one BloscLZ stream into dst; returns the number of bytes produced.

    Never reads past src or writes past dst.  Returns 0 for malformed input
    (or empty src).  Follows C-Blosc2 HEAD: a long/far match that ends the
    input is not executed, and a match longer than the space left is an
    error.  The caller checks the result against the expected size.
    """
    s = _rd(src)
    d = _wr(dst)
    if _overlap(s, len(s), d, len(d)):
        raise ValueError("blosclz_decompress_into: src and dst must not overlap")
    return int(_lib.bk_blosclz_decompress(s, len(s), d, len(d)))


FLAVORS = {"blosc2": 2, "blosc1": 1}


def blosclz_compress_into(src, dst, clevel, flavor="blosc2", split=True):
    """Encode src as one BloscLZ stream into dst; returns its size or 0.

    0 means "store raw": the entropy probe rejected the data, the input is
    under 16 bytes, len(dst) < 66, or the stream would not fit in len(dst).
    len(dst) plays the role of the reference encoders' ``maxout``.

    flavor="blosc2": byte-identical to C-Blosc2 3.3.x's blosclz_compress.
    flavor="blosc1": byte-identical to C-Blosc 1.21.x's blosclz_compress;
    ``split`` is the flag that library passes (``!dont_split``: True unless
    the chunk has the DONT_SPLIT flag 0x10 set); it is ignored for "blosc2".

    maxout used by the libraries (pass it as len(dst)):
      * C-Blosc2 blosc_c: maxout = neblock, but if ntbytes + neblock > destsize
        it is destsize - ntbytes, where ntbytes already counts the header,
        bstarts and this stream's 4-byte csize.  E.g. blosc2.compress2
        (destsize = nbytes + 32) of one block with one stream gives
        maxout = neblock - 8 (32 header + 4 bstart + 4 csize - 32).
      * C-Blosc 1.21 blosc_c: same rule with maxbytes (destsize clamped to
        nbytes + 16); one block, one stream: 16 + 4 + 4 - 16 -> neblock - 8.
      A result >= neblock is stored raw by both libraries.
    """
    if not isinstance(clevel, int) or not 1 <= clevel <= 9:
        raise ValueError(f"clevel must be 1..9, got {clevel!r}")
    if flavor not in FLAVORS:
        raise ValueError(f"flavor must be 'blosc2' or 'blosc1', got {flavor!r}")
    s = _rd(src)
    d = _wr(dst)
    if len(s) > 0x7FFFFFFF:
        raise ValueError("blosclz_compress_into: src larger than 2 GiB - 1")
    if _overlap(s, len(s), d, len(d)):
        raise ValueError("blosclz_compress_into: src and dst must not overlap")
    rc = _lib.bk_blosclz_compress(clevel, s, len(s), d, len(d), FLAVORS[flavor],
                                  1 if split else 0)
    _check_rc(rc, "blosclz_compress")
    return int(rc)


# ------------------------------------------------------------------- filters

def delta_encode_into(dref, src, dst, typesize, is_first_block=None):
    """C-Blosc2 DELTA encoder for one block.

    Word size w = typesize if in {1,2,4,8}, else 8 if typesize % 8 == 0, else 1.
    Block 0 (``dref`` is this same block): out = in XOR (in shifted by one word),
    first word kept.  Other blocks: out = in XOR dref (block 0's *unfiltered*
    bytes, as C-Blosc2 passes the chunk source).  The len % w tail is copied
    unchanged (C-Blosc2 leaves it unwritten).  is_first_block=None means
    "first block iff dref and src are the same buffer".  dst may be src.
    """
    _check_typesize(typesize)
    s, d, n = _prep_into(src, dst, "delta_encode_into", allow_alias=True)
    r = _rd(dref)
    if is_first_block is None:
        is_first_block = dref is src or (len(r) == n and _addr(r) == _addr(s))
    if not is_first_block and len(r) < n:
        raise ValueError(f"delta_encode_into: dref has {len(r)} bytes, needs {n}")
    _lib.bk_delta_encode(r, s, d, n, typesize, 1 if is_first_block else 0)


def delta_decode_into(dref, buf, typesize, is_first_block):
    """Undo DELTA in place on buf.  For block 0 dref is ignored (running XOR);
    other blocks XOR with dref = the already *decoded* block 0.  The
    len % w tail is left untouched."""
    _check_typesize(typesize)
    b = _wr(buf)
    n = len(b)
    r = _rd(dref)
    if not is_first_block and len(r) < n:
        raise ValueError(f"delta_decode_into: dref has {len(r)} bytes, needs {n}")
    _lib.bk_delta_decode(r, b, n, typesize, 1 if is_first_block else 0)


def bytedelta_encode_into(src, dst, typesize, buggy=False):
    """BYTEDELTA (id 35) encoder: per byte stream (typesize streams of
    len // typesize bytes) store the difference to the previous byte mod 256;
    tail copied.  buggy=True produces what filter id 34 writes (see decode)."""
    _check_typesize(typesize)
    s, d, n = _prep_into(src, dst, "bytedelta_encode_into", allow_alias=True)
    _lib.bk_bytedelta_encode(s, d, n, typesize, 1 if buggy else 0)


def bytedelta_decode_into(src, dst, typesize, buggy=False):
    """BYTEDELTA decoder: prefix sum mod 256 per stream; tail copied.

    buggy=True reproduces id 34 (BYTEDELTA_BUGGY) as C-Blosc2's SIMD x86_64
    / arm64 builds decode it: the running sum restarts from 0 at stream
    offset 16 * (stream_len // 16) when the stream is at least 16 bytes long.
    """
    _check_typesize(typesize)
    s, d, n = _prep_into(src, dst, "bytedelta_decode_into", allow_alias=True)
    _lib.bk_bytedelta_decode(s, d, n, typesize, 1 if buggy else 0)


def copy_runs(chunk, array, runs, to_chunk: bool, array_base: int = 0) -> None:
    """Copy strided byte runs between a b2nd chunk buffer and the array
    buffer (``runs``: a flat ``array('q')`` of six values per run, see
    ``blosckit.frame.b2nd``'s byte runs; ``array_base`` is added to every array offset),
    into the chunk or into the array.  ValueError, before any byte moves,
    when a run leaves either buffer."""
    c = _wr(chunk) if to_chunk else _rd(chunk)       # the side written must be writable
    a = _rd(array) if to_chunk else _wr(array)
    r = _ffi.from_buffer("int64_t[]", runs)
    if _lib.bk_copy_runs(c, len(c), a, len(a), r,
                         len(runs) // RUN_FIELDS, array_base, 1 if to_chunk else 0) != 0:
        raise ValueError("copy_runs: a run leaves its buffer")


def trunc_prec_into(src, dst, typesize, prec_bits):
    """TRUNC_PREC (lossy, encode only): typesize 4 or 8 (little-endian IEEE).

    prec_bits (int8) >= 0 keeps that many mantissa bits, < 0 zeroes -prec_bits
    bits.  As in C-Blosc2, ValueError when |prec_bits| exceeds the mantissa
    (23 / 52) or the request would zero the whole mantissa (prec_bits == 0 or
    prec_bits == -23 / -52).  Tail bytes copied.
    """
    if typesize not in (4, 8):
        raise ValueError(f"trunc_prec: typesize must be 4 or 8, got {typesize!r}")
    if not isinstance(prec_bits, int) or not -128 <= prec_bits <= 127:
        raise ValueError(f"trunc_prec: prec_bits must be an int8, got {prec_bits!r}")
    s, d, n = _prep_into(src, dst, "trunc_prec_into", allow_alias=True)
    rc = _lib.bk_trunc_prec(s, d, n, typesize, prec_bits)
    if rc < 0:
        raise ValueError(f"trunc_prec: precision {prec_bits} not allowed for typesize {typesize}")


# ------------------------------------------------------ whole-chunk decoding

_new_uncleared = _ffi.new_allocator(should_clear_after_alloc=False)


def decode_chunk(src, dst, *, cbytes, bstarts, nbytes, blocksize, typesize, version,
                 split, token_follows, pipeline, codec_kind, codec_fns=None, dict=None,
                 nthreads=1, first=0, count=0):
    """Decode every block of a regular chunk whose header, bstarts and
    dictionary the caller has already checked.

    ``pipeline``: ``(filter_id, meta)`` pairs in decode order (at most 6).
    ``codec_fns``: addresses (ints) of the codec package's C functions, keys
    ``fn``, ``fn_dict``, ``fn_error``, ``fn_new``, ``fn_free``.  Returns -1
    when every block decoded, else the lowest index of a failing block (the
    caller explains the failure with its Python path).  MemoryError when no
    worker thread could allocate its scratch buffers or codec context.  ``first``/``count``
    select a run of blocks (``count`` 0: all), written from the start of
    ``dst``; not with delta unless ``first`` is 0.
    """
    c = _ffi.new("bk_chunk *")
    s = _rd(src)
    d = _wr(dst)
    need = min(count * blocksize, nbytes) if count else nbytes
    if len(d) < need or len(s) < cbytes:
        raise ValueError("decode_chunk: buffers shorter than the chunk claims")
    starts = _ffi.new("int32_t[]", list(bstarts))
    c.src, c.cbytes, c.bstarts = s, cbytes, starts
    c.nblocks, c.nbytes, c.blocksize, c.typesize = len(bstarts), nbytes, blocksize, typesize
    c.version, c.split, c.token_follows = version, int(split), int(token_follows)
    c.uses_delta = int(any(fid == _lib.BK_FILTER_DELTA for fid, _ in pipeline))
    c.nfilters = len(pipeline)
    for k, (fid, meta) in enumerate(pipeline):
        c.filter_ids[k] = fid
        c.filter_metas[k] = meta
    c.codec_kind = codec_kind
    for name, addr in (codec_fns or {}).items():
        setattr(c, name, _ffi.cast("void *", addr))
    dbuf = None
    if dict:
        dbuf = _rd(dict)
        c.dict, c.dictlen = dbuf, len(dict)
    c.dst = d
    c.first, c.count = first, count
    rc = _lib.bk_decode_chunk(c, int(nthreads))
    del s, d, starts, dbuf      # kept alive until the call returned
    if rc == _lib.BK_DECODE_NOMEM:
        raise MemoryError("decode_chunk: no worker could allocate its buffers")
    return rc


def encode_blocks(src, *, nbytes, blocksize, typesize, version, split, detect_runs,
                  pipeline, codec_kind, clevel, codec_param, codec_fns=None, nthreads=1):
    """Filter and encode every block of ``src`` (the builder's bulk work).

    ``pipeline``: ``(filter_id, meta)`` in slot order.  Returns
    ``(out, cap, sizes, needs)``: block j's bytes are
    ``out[j * cap : j * cap + sizes[j]]``; ``needs[j]`` is the highest output
    position (relative to the block's start) the reference encoder compares
    with its budget.  Raises ValueError when a block cannot be encoded,
    MemoryError when no worker could allocate its buffers.
    """
    nblocks = -(-nbytes // blocksize) if nbytes else 0
    nstreams = typesize if split else 1
    cap = blocksize + _STREAM_OVERHEAD * nstreams
    # uninitialised: only the pages the encoder writes get touched, and most
    # of each block's slot stays unused when the data compresses
    out_c = _new_uncleared("uint8_t[]", max(cap * nblocks, 1))
    out = memoryview(_ffi.buffer(out_c))
    sizes = _ffi.new("int32_t[]", nblocks)
    needs = _ffi.new("int32_t[]", nblocks)
    e = _ffi.new("bk_encoder *")
    s = _rd(src)
    o = out_c
    e.src, e.nbytes, e.blocksize, e.typesize, e.nblocks = s, nbytes, blocksize, typesize, nblocks
    e.version, e.split, e.detect_runs = version, int(split), int(detect_runs)
    e.nfilters = len(pipeline)
    for k, (fid, meta) in enumerate(pipeline):
        e.filter_ids[k] = fid
        e.filter_metas[k] = meta & _META_ITEM_MASK     # an int8 meta as its stored byte
    e.codec_kind, e.clevel, e.codec_param = codec_kind, clevel, codec_param
    for name, addr in (codec_fns or {}).items():
        setattr(e, name, _ffi.cast("void *", addr))
    e.out, e.block_cap, e.sizes, e.needs = o, cap, sizes, needs
    rc = _lib.bk_encode_blocks(e, int(nthreads))
    del s, o
    if rc == -2:
        raise MemoryError("encode_blocks: no worker could allocate its buffers")
    if rc != 0:
        raise ValueError("encode_blocks: a block could not be encoded")
    return out, cap, list(sizes), list(needs)


def encode_array_chunks(array, *, shape, chunkshape, blockshape, first, count, headers,
                        overhead, destsize, raw_only, nbytes, blocksize, typesize, version,
                        split, detect_runs, pipeline, codec_kind, clevel, codec_param,
                        codec_fns=None, nthreads=1):
    """Encode chunks ``first`` .. ``first + count - 1`` (chunk grid in C
    order) of a b2nd array, each whole (``nbytes``: its padded size),
    straight from ``array`` (bytes-like, the items in C order; shapes in
    items, at most 16 dimensions).

    A chunk inside the array whose blocks span all but the first dimension
    whole is a slice of it, read in place.  ``headers``: the regular, the
    raw and the zeros special chunk header, ``overhead`` bytes each (the
    first two get their cbytes); ``destsize``: the budget a chunk may not
    pass; ``raw_only``: every chunk stored raw.  The other parameters as
    :func:`encode_blocks`.  Returns ``(out, cap, sizes)``: chunk
    ``first + j`` is ``out[j * cap : j * cap + sizes[j]]``.  ValueError when
    a chunk cannot be encoded or the shapes do not fit the buffers,
    MemoryError when no worker could allocate its buffers."""
    nblocks = -(-nbytes // blocksize)
    cap = max(destsize, overhead + nbytes)
    if len(headers) != 3 * overhead or len(shape) > _lib.BK_ARRAY_MAX_DIM:
        raise ValueError("encode_array_chunks: three headers of overhead bytes, at most "
                         f"{_lib.BK_ARRAY_MAX_DIM} dimensions")
    # uninitialised: a slot's pages past its chunk are never touched
    out_c = _new_uncleared("uint8_t[]", max(cap * count, 1))
    sizes = _ffi.new("int32_t[]", max(count, 1))
    a = _ffi.new("bk_array_encoder *")
    e = a.enc
    e.nbytes, e.blocksize, e.typesize, e.nblocks = nbytes, blocksize, typesize, nblocks
    e.version, e.split, e.detect_runs = version, int(split), int(detect_runs)
    e.nfilters = len(pipeline)
    for k, (fid, meta) in enumerate(pipeline):
        e.filter_ids[k] = fid
        e.filter_metas[k] = meta & _META_ITEM_MASK
    e.codec_kind, e.clevel, e.codec_param = codec_kind, clevel, codec_param
    for name, addr in (codec_fns or {}).items():
        setattr(e, name, _ffi.cast("void *", addr))
    a.ndim = len(shape)
    a.shape[0:len(shape)] = shape
    a.chunkshape[0:len(shape)] = chunkshape
    a.blockshape[0:len(shape)] = blockshape
    a.first = first
    h, src = _rd(headers), _rd(array)
    a.overhead, a.destsize, a.raw_only = overhead, destsize, int(raw_only)
    a.headers, a.array, a.array_len = h, src, len(src)
    a.out, a.chunk_cap, a.sizes = out_c, cap, sizes
    rc = _lib.bk_encode_array_chunks(a, count, int(nthreads))
    del h, src                  # kept alive until the call returned
    if rc == -2:
        raise MemoryError("encode_array_chunks: no worker could allocate its buffers")
    if rc != 0:
        raise ValueError("encode_array_chunks: a chunk could not be encoded, or the shapes "
                         "do not fit the buffers")
    return memoryview(_ffi.buffer(out_c)), cap, list(sizes)[:count]


# ------------------------------------------------- one-call chunk decoding

# the codec format of each codec the fast path decodes -> the codec id
# keying its entry (lz4hc's streams are stored and decoded as lz4's)
_FORMAT_TO_CODEC = {_lib.BK_CODEC_BLOSCLZ_COMPFORMAT: _lib.BK_CODEC_BLOSCLZ,
                    _lib.BK_CODEC_LZ4_COMPFORMAT: _lib.BK_CODEC_LZ4,
                    _lib.BK_CODEC_ZLIB_COMPFORMAT: _lib.BK_CODEC_ZLIB,
                    _lib.BK_CODEC_ZSTD_COMPFORMAT: _lib.BK_CODEC_ZSTD}
CHECK_OK = _lib.BK_CHECK_OK      # check_chunks: the chunk passed every check in C
_MAX_NBYTES = _lib.BK_CHUNK_MAX_NBYTES
BK_MAX_THREADS = 64        # the block loop's thread cap (blosckit_native.h)
_CHECK_FIRST = 1 << 20     # above this nbytes, check the chunk before allocating
_LEN_HEADER = _lib.BK_CHUNK_HEADER_SIZE
_NBYTES_OFS = _lib.BK_CHUNK_HEADER_NBYTES_OFS
_nbytes_at = _int_field("CHUNK_HEADER", "NBYTES").unpack_from
_fast_at = _lib.bk_fast_decompress_at
_fast = _lib.bk_fast_decompress
_DONE, _NOMEM = _lib.BK_FAST_DONE, _lib.BK_FAST_NOMEM
_NULL = _ffi.NULL


def make_codec_table(entries: dict) -> object:
    """The codec table ``decompress_fast`` takes, built once per process.

    ``entries``: codec id -> (native codec kind, {C entry point name: address})
    as in ``blosckit.codecs.libs.NATIVE_DECODERS`` (the caller passes it: the
    codec layer imports this module, not the reverse).  Codecs without an
    entry make the fast path decline their chunks.
    """
    t = _ffi.new("bk_codec_table *")
    for slot in t.by_format:
        slot.kind = _lib.BK_KIND_NONE
    for fmt, code in _FORMAT_TO_CODEC.items():
        entry = entries.get(code)
        if entry is None:
            continue
        kind, fns = entry
        slot = t.by_format[fmt]
        slot.kind = kind
        for name, addr in fns.items():
            setattr(slot, name, _ffi.cast("void *", addr))
    return t


def _clamp_limit(max_nbytes: int) -> int:
    """max_nbytes as the int32 the C side compares with (same outcome)."""
    return -1 if max_nbytes < 0 else min(max_nbytes, _MAX_NBYTES)


def fast_decompressor(tables: list, fallback):
    """A ``decompress(src, *, nthreads=1, max_nbytes=...)`` function whose good
    path is one native call: header, checks and every block in C.  Chunks
    the fast path does not handle, or rejects, go to
    ``fallback(src, nthreads, max_nbytes)`` (the Python reader, which reads
    them and explains a rejection).  Built once by the reader: on small
    chunks the Python frames around the C call are a fair part of the cost.
    ``tables[0]`` is the codec table (see :func:`make_codec_table`); None
    switches the fast path off.  MemoryError when the output or the workers'
    buffers cannot be allocated.
    """
    len_header, nbytes_ofs = _LEN_HEADER, _NBYTES_OFS    # per call: cells beat globals

    def decompress(src, *, nthreads: int = 1, max_nbytes: int = _MAX_NBYTES):
        table = tables[0]
        if table is None:
            return fallback(src, nthreads, max_nbytes)
        if src.__class__ is bytes:
            s = src
        else:
            try:
                s = _ffi.from_buffer("uint8_t[]", src)
            except (TypeError, ValueError, BufferError):
                return fallback(src, nthreads, max_nbytes)   # the reader decides
        n = len(s)
        if n < len_header or nthreads.__class__ is not int or not 1 <= nthreads <= BK_MAX_THREADS:
            del s          # see below: no buffer export may outlive this frame's work
            return fallback(src, nthreads, max_nbytes)
        nbytes = _nbytes_at(src, nbytes_ofs)[0]
        limit = max_nbytes if max_nbytes == _MAX_NBYTES else _clamp_limit(max_nbytes)
        if nbytes < 2 or nbytes > limit:
            done = _fast_tiny(s, n, nbytes, limit, nthreads, table)
        elif nbytes > _CHECK_FIRST and _fast_at(s, n, 0, 0, limit, nthreads, table,
                                                _NULL) != _DONE:
            done = None
        else:
            # a new bytes object (n >= 2, so never a shared one) written in
            # place; a zeroed allocation is cheaper below 16 KiB
            obj = bytes(nbytes) if nbytes < _ZEROED_BELOW else _new_bytes_at(nbytes)[0]
            rc = _fast_at(s, n, id(obj) + _BYTES_OFS, nbytes, limit, nthreads, table, _NULL)
            if rc == _NOMEM:
                raise MemoryError("decompress: no worker could allocate its buffers")
            done = obj if rc == _DONE else None
        if done is not None:
            return done
        # Release our export of src before the reader runs: its FormatError's
        # traceback keeps this frame alive, and a buffer export held in a
        # reference cycle crashes CPython when the cycle is collected.
        del s
        return fallback(src, nthreads, max_nbytes)
    return decompress


def _declined(src, nthreads, max_nbytes):
    return None


def check_fast(src, table) -> bool:
    """Whether the fast path accepts the chunk in ``src`` (header, bstarts,
    dictionary: the reader's rules for the chunks it handles) without
    decoding anything.  False also when it merely declines the chunk."""
    s = src if src.__class__ is bytes else _ffi.from_buffer("uint8_t[]", src)
    return _fast(s, len(s), _NULL, 0, _MAX_NBYTES, 1, table, _NULL) == _DONE


def check_chunks(section, offsets: bytes, n: int, chunksize: int, last_nbytes: int,
                 table, deep: bool = False) -> bytes:
    """One status byte per chunk of a contiguous frame (``section``: its
    chunks section; ``offsets``: the decoded index, n little-endian int64):
    BK_CHECK_OK, BK_CHECK_SPECIAL or BK_CHECK_PYTHON (see framecheck.c).
    ``deep`` decodes every block (into one chunksize scratch buffer)."""
    if len(offsets) < _LEN_OFFSET * n:
        raise ValueError("check_chunks: fewer offsets than chunks")
    status = bytearray(n)
    scratch = _ffi.new("uint8_t[]", chunksize) if deep else _ffi.NULL
    _lib.bk_check_chunks(_ffi.from_buffer("uint8_t[]", section), len(section),
                         _ffi.cast("int64_t *", _ffi.from_buffer("uint8_t[]", offsets)), n,
                         chunksize, last_nbytes, table, scratch, chunksize if deep else 0,
                         _ffi.from_buffer("uint8_t[]", status))
    return bytes(status)


def plain_chunks(heads, lens, start: int, nbytes: int, vl_blocks: bool, odd_versions: bytes,
                 cbytes: int, offsets) -> int:
    """How many chunks from chunk ``start`` on a fixed-size frame of chunks
    of ``nbytes`` stores as they are (see framebuild.c): ``heads`` holds
    each chunk's first BK_CHUNK_EXTENDED_END bytes end to end, ``lens``
    (an array of int64) their lengths, ``odd_versions`` 256 bytes, nonzero
    for the chunk versions of another extended layout.  ``offsets`` (an
    array of int64, as long as ``lens``) receives from ``start`` on each
    chunk's place: ``cbytes`` plus the lengths before it (bytes)."""
    n = len(lens) - start
    if start < 0 or n < 0 or len(offsets) != len(lens) or len(odd_versions) != 256:
        raise ValueError("plain_chunks: start, lens, offsets or odd_versions do not match")
    head = _lib.BK_CHUNK_EXTENDED_END * start
    return _lib.bk_plain_chunks(_ffi.from_buffer("uint8_t[]", heads) + head,
                                len(heads) - head,
                                _ffi.cast("int64_t *", _ffi.from_buffer(lens)) + start, n,
                                nbytes, vl_blocks, _ffi.from_buffer("uint8_t[]", odd_versions),
                                cbytes, _ffi.cast("int64_t *", _ffi.from_buffer(offsets)) + start)


def decode_chunks(section, offsets: bytes, n: int, chunksize: int, last_nbytes: int, table,
                  nthreads: int, dst: bytearray) -> bytes:
    """Decode n chunks of a contiguous frame into ``dst`` (chunk i at
    ``i * chunksize``; ``dst`` holds ``chunksize * (n - 1) + last_nbytes``
    bytes): one status byte per chunk, as :func:`check_chunks`."""
    if len(offsets) < _LEN_OFFSET * n or len(dst) != chunksize * (n - 1) + last_nbytes:
        raise ValueError("decode_chunks: offsets or dst do not match n")
    status = bytearray(n)
    _lib.bk_decode_chunks(_ffi.from_buffer("uint8_t[]", section), len(section),
                          _ffi.cast("int64_t *", _ffi.from_buffer("uint8_t[]", offsets)), n,
                          chunksize, last_nbytes, table, nthreads,
                          _ffi.from_buffer("uint8_t[]", dst), _ffi.from_buffer("uint8_t[]", status))
    return bytes(status)


def decompress_fast(src, table, nthreads: int = 1, max_nbytes: int = _MAX_NBYTES):
    """The fast path alone: bytes, or None when it declines or rejects the
    chunk (see :func:`fast_decompressor`)."""
    return fast_decompressor([table], _declined)(src, nthreads=nthreads, max_nbytes=max_nbytes)


def _fast_tiny(s, n: int, nbytes: int, max_nbytes: int, nthreads: int, table):
    """decompress_fast for chunks claiming under 2 bytes or out of range."""
    if nbytes < 0 or nbytes > max_nbytes:
        return None                   # the reader rejects it (T-nbytes, T-max-nbytes)
    buf = bytearray(max(nbytes, 1))
    rc = _fast(s, n, _ffi.from_buffer("uint8_t[]", buf), nbytes, max_nbytes, nthreads,
               table, _NULL)
    if rc == _DONE:
        return bytes(buf[:nbytes])
    if rc == _NOMEM:
        raise MemoryError("decompress_fast: no worker could allocate its buffers")
    return None


def decompress_fast_into(src, dst, table, nthreads: int = 1):
    """decompress_fast into the writable buffer ``dst``: nbytes written, or
    None (declined, rejected, or dst shorter than nbytes: the reader then
    reads the chunk and explains)."""
    try:
        s = src if src.__class__ is bytes else _ffi.from_buffer("uint8_t[]", src)
        d = _ffi.from_buffer("uint8_t[]", dst, require_writable=True)
    except (TypeError, ValueError, BufferError):
        return None
    out = _ffi.new("int32_t *")
    rc = _fast(s, len(s), d, len(d), _MAX_NBYTES, nthreads, table, out)
    if rc == _DONE:
        return out[0]
    if rc == _NOMEM:
        raise MemoryError("decompress_fast_into: no worker could allocate its buffers")
    return None


# ------------------------------------------------ b2nd arrays, block by block

_b2nd_read = _lib.bk_b2nd_read
_NEW_JOB = "bk_b2nd_job *"


def b2nd_read(section, offsets, bases, plans, block_runs, runs, out, table, *,
              nblocks: int, block_bytes: int, base_shift: int = 0,
              nthreads: int = 1, decode_all: bool = False) -> tuple[bytearray, int]:
    """Decode b2nd chunks block by block into ``out`` (see b2ndread.c).

    Chunk ``i`` starts at ``section[offsets[i]:]`` (``offsets``: int64, as a
    frame's index stores them) and holds ``nblocks`` blocks of
    ``block_bytes`` bytes; its plan ``plans[i]`` (int32) names which
    ``runs`` (``array('q')``, six per run as :func:`copy_runs`, chunk
    offsets in the chunk) block ``j`` sends where: ``block_runs[p * (nblocks
    + 1) + j]`` to the next entry; output offsets move by ``bases[i] +
    base_shift``; ``decode_all``: the blocks without runs are decoded too
    (into scratch: a whole read checks every block); ``out`` None: the chunks are checked, nothing decoded.
    Returns one status byte per chunk (``CHECK_OK``; any
    other: the caller reads that chunk itself) and the number of blocks
    read.  ValueError when a run leaves its block or ``out`` (nothing
    written); MemoryError."""
    n = len(plans)
    if len(bases) != n or len(offsets) < 8 * n:
        raise ValueError("b2nd_read: one offset, base and plan per chunk")
    status = bytearray(n)
    j = _ffi.new(_NEW_JOB)
    s = _rd(section)
    o = _NULL if out is None else _wr(out)
    keep = (_ffi.from_buffer("int64_t[]", offsets), _ffi.from_buffer("int64_t[]", bases),
            _ffi.from_buffer("int32_t[]", plans), _ffi.from_buffer("int32_t[]", block_runs),
            _ffi.from_buffer("int64_t[]", runs), _ffi.from_buffer("uint8_t[]", status))
    j.section, j.section_len = s, len(s)
    j.offsets, j.bases, j.chunk_plan, j.block_runs, j.runs, j.status = keep
    j.nchunks, j.nblocks, j.block_bytes, j.base_shift = n, nblocks, block_bytes, base_shift
    j.nplans = len(block_runs) // (nblocks + 1)
    j.nruns = len(runs) // RUN_FIELDS
    j.out, j.out_len, j.table = o, 0 if out is None else len(o), table
    j.decode_all = int(decode_all)
    rc = _b2nd_read(j, int(nthreads))
    del s, o, keep
    if rc == -2:
        raise MemoryError("b2nd_read: no worker could allocate its buffers")
    if rc != 0:
        raise ValueError("b2nd_read: a run leaves its block or the output")
    return status, int(j.blocks_read)
