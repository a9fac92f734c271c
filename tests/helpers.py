"""Shared helpers of the reader tests: data generators, oracle wrappers
(python-blosc2 / python-blosc), a tiny independent chunk packer (plain
``struct``, no blosckit code) and the checks every FormatError must pass.

Imported as ``from helpers import ...`` (pytest puts ``tests/`` on sys.path
because the directory has no ``__init__.py``).
"""
from __future__ import annotations

import contextlib
import functools
import os
import struct
import zlib
from typing import Iterable, Sequence

import blosckit
from oracles import available, oracle

np = oracle("numpy")

LONG = os.environ.get("BLOSCKIT_LONG") == "1"

# ---------------------------------------------------------------------------
# Data sets
# ---------------------------------------------------------------------------

DATASETS = ("random", "zeros", "runs", "arange", "linspace")


def dataset(kind: str, nbytes: int, typesize: int = 4, seed: int = 0) -> bytes:
    """``nbytes`` bytes of data of the given kind (deterministic in ``seed``).

    random: incompressible bytes; zeros; runs: byte runs of random lengths;
    arange: item i holds the little-endian integer i (``typesize`` bytes);
    linspace: float64 values of a linspace.
    """
    rng = np.random.default_rng(seed)
    if kind == "random":
        return rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes()
    if kind == "zeros":
        return bytes(nbytes)
    if kind == "runs":
        out = bytearray()
        while len(out) < nbytes:
            out += bytes([int(rng.integers(0, 256))]) * int(rng.integers(1, 300))
        return bytes(out[:nbytes])
    if kind == "arange":
        ts = max(typesize, 1)
        nitems = nbytes // ts + 1
        items = np.arange(nitems, dtype="<u8").view(np.uint8).reshape(nitems, 8)
        if ts <= 8:
            mat = items[:, :ts]
        else:
            mat = np.zeros((nitems, ts), dtype=np.uint8)
            mat[:, :8] = items
        return mat.tobytes()[:nbytes]
    if kind == "linspace":
        n = nbytes // 8 + 1
        return np.linspace(-1000.0, 1000.0, n).astype("<f8").tobytes()[:nbytes]
    raise ValueError(kind)


def float_data(nbytes: int, typesize: int, seed: int = 0) -> bytes:
    """Floats of ``typesize`` 4 or 8 (for trunc_prec)."""
    dt = "<f4" if typesize == 4 else "<f8"
    n = nbytes // typesize
    rng = np.random.default_rng(seed)
    return (np.linspace(0, 100, n) + rng.normal(0, 1, n)).astype(dt).tobytes()


# ---------------------------------------------------------------------------
# Oracles
# ---------------------------------------------------------------------------

CODECS = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")
# The name parse_chunk reports for the stored stream format.
CODEC_FORMAT_NAME = {"blosclz": "blosclz", "lz4": "lz4", "lz4hc": "lz4",
                     "zlib": "zlib", "zstd": "zstd"}
SPLITMODES = ("always", "never", "auto", "forward_compat")


def _b2():
    return oracle("blosc2")


def b2_codec(name: str):
    return getattr(_b2().Codec, name.upper())


def b2_filter(name: str):
    return getattr(_b2().Filter, name.upper())


def b2_splitmode(name: str):
    return getattr(_b2().SplitMode, f"{name.upper()}_SPLIT")


def b2_compress(data, *, typesize: int, codec: str = "blosclz", clevel: int = 5,
                filters: Sequence = (), blocksize: int = 0, splitmode: str = "auto",
                use_dict: bool = False) -> bytes:
    """``blosc2.compress2`` with explicit parameters.  ``filters`` entries
    are a name or ``(name, meta)``; entry i goes to slot i (as python-blosc2
    places a list)."""
    blosc2 = _b2()
    names = [f if isinstance(f, str) else f[0] for f in filters]
    metas = [0 if isinstance(f, str) else f[1] for f in filters]
    kw = dict(typesize=typesize, codec=b2_codec(codec), clevel=clevel,
              blocksize=blocksize, splitmode=b2_splitmode(splitmode),
              use_dict=use_dict, nthreads=1)
    if names:
        kw["filters"] = [b2_filter(n) for n in names]
        kw["filters_meta"] = metas
    else:
        kw["filters"] = [blosc2.Filter.NOFILTER]
        kw["filters_meta"] = [0]
    return bytes(blosc2.compress2(data, **kw))


def b2_decompress(chunk) -> bytes | None:
    """C-Blosc2's decoding, or None when it reports an error."""
    try:
        return bytes(_b2().decompress2(bytes(chunk), nthreads=1))
    except Exception:
        return None


def b1_compress(data, *, typesize: int, clevel: int = 5, shuffle: str = "shuffle",
                cname: str = "blosclz", blocksize: int = 0) -> bytes:
    """``blosc.compress`` (C-Blosc 1.21) with a forced blocksize (0 = auto)."""
    blosc = oracle("blosc")
    sh = {"noshuffle": blosc.NOSHUFFLE, "shuffle": blosc.SHUFFLE,
          "bitshuffle": blosc.BITSHUFFLE}[shuffle]
    blosc.set_blocksize(blocksize)
    try:
        return bytes(blosc.compress(data, typesize=typesize, clevel=clevel, shuffle=sh,
                                    cname=cname))
    finally:
        blosc.set_blocksize(0)


def special_chunk(kind: str, nitems: int, typesize: int, value=None) -> bytes:
    """A special chunk written by C-Blosc2 (``SChunk.fill_special``)."""
    blosc2 = _b2()
    s = blosc2.SChunk(chunksize=nitems * typesize, cparams={"typesize": typesize})
    sv = getattr(blosc2.SpecialValue, kind.upper())
    if value is None:
        s.fill_special(nitems, sv)
    else:
        s.fill_special(nitems, sv, value=value)
    return bytes(s.get_chunk(0))


def vl_chunk(blocks: Sequence[bytes], *, typesize: int = 1, codec: str = "zstd",
             clevel: int = 5, filters: Sequence = ()) -> bytes:
    """A VL-block (version 6) chunk written by C-Blosc2 (``blosc2_vlcompress_ctx``)."""
    blosc2 = _b2()
    names = [f if isinstance(f, str) else f[0] for f in filters]
    metas = [0 if isinstance(f, str) else f[1] for f in filters]
    kw = dict(typesize=typesize, codec=b2_codec(codec), clevel=clevel, nthreads=1)
    kw["filters"] = [b2_filter(n) for n in names] or [blosc2.Filter.NOFILTER]
    kw["filters_meta"] = metas or [0]
    return bytes(blosc2.blosc2_ext.vlcompress(list(blocks), **kw))


# ---------------------------------------------------------------------------
# Independent header reading / packing (struct only)
# ---------------------------------------------------------------------------

FILTER_IDS = {"nofilter": 0, "shuffle": 1, "bitshuffle": 2, "delta": 3, "trunc_prec": 4,
              "bytedelta_buggy": 34, "bytedelta": 35}
FILTER_NAMES = {v: k for k, v in FILTER_IDS.items()}


def raw_header(chunk: bytes) -> dict:
    """The header fields read with plain struct (the test's own reading)."""
    version, versionlz, flags, typesize, nbytes, blocksize, cbytes = \
        struct.unpack_from("<BBBBiii", chunk, 0)
    h = dict(version=version, versionlz=versionlz, flags=flags, typesize=typesize,
             nbytes=nbytes, blocksize=blocksize, cbytes=cbytes)
    h["extended"] = (flags & 0x05) == 0x05
    if h["extended"]:
        ext = struct.unpack_from("<6BBB6BBB", chunk, 16)
        h["filters"] = list(ext[0:6])
        h["udcodec"], h["compcode_meta"] = ext[6], ext[7]
        h["filters_meta"] = list(ext[8:14])
        h["flags2"], h["b2flags"] = ext[14], ext[15]
    else:
        slots = [0] * 6
        if flags & 0x01:
            slots[5] = 1
        if flags & 0x04:
            slots[5] = 2
        if flags & 0x08:
            slots[4] = 3
        h["filters"], h["filters_meta"] = slots, [0] * 6
        h["flags2"] = h["b2flags"] = 0
    return h


def expected_filter_list(chunk: bytes) -> list[tuple[str, int]]:
    """(name, meta) per non-empty slot, slot order, from the raw bytes."""
    h = raw_header(chunk)
    return [(FILTER_NAMES.get(f, f"filter-{f}"), m)
            for f, m in zip(h["filters"], h["filters_meta"]) if f]


def pack_header(*, version: int, flags: int, typesize: int, nbytes: int, blocksize: int,
                cbytes: int, versionlz: int = 1) -> bytes:
    return struct.pack("<BBBBiii", version, versionlz, flags, typesize, nbytes, blocksize,
                       cbytes)


def pack_extended(*, filters: Sequence[int] = (0,) * 6, udcodec: int = 0,
                  compcode_meta: int = 0, filters_meta: Sequence[int] = (0,) * 6,
                  flags2: int = 0, b2flags: int = 0) -> bytes:
    return struct.pack("<6BBB6BBB", *filters, udcodec, compcode_meta, *filters_meta,
                       flags2, b2flags)


def split_streams(block: bytes, nstreams: int) -> list[bytes]:
    n = len(block) // nstreams
    return [block[k * n:(k + 1) * n] for k in range(nstreams)]


def pack_chunk(*, header: bytes, blocks: Sequence[Sequence[bytes]],
               dictionary: bytes | None = None, header_len: int | None = None) -> bytes:
    """Header (16 or 32 bytes, cbytes patched) + bstarts + optional dict +
    streams.  ``blocks[j]`` is the list of already-encoded streams of block j
    (each a full ``csize + payload`` record)."""
    hl = header_len or len(header)
    body_start = hl + 4 * len(blocks)
    pre = b""
    if dictionary is not None:
        pre = struct.pack("<i", len(dictionary)) + dictionary
    pos = body_start + len(pre)
    bstarts, body = [], bytearray()
    for streams in blocks:
        bstarts.append(pos + len(body))
        for s in streams:
            body += s
    out = bytearray(header) + struct.pack(f"<{len(blocks)}i", *bstarts) + pre + body
    struct.pack_into("<i", out, 12, len(out))
    return bytes(out)


def raw_stream(payload: bytes) -> bytes:
    """A stream stored raw (csize == neblock)."""
    return struct.pack("<i", len(payload)) + payload


def zlib_stream(payload: bytes) -> bytes:
    return struct.pack("<i", len(c := zlib.compress(payload, 6))) + c


def run_stream(byte: int, version: int) -> bytes:
    """A run of one byte value (csize = -byte), with the token from version 4."""
    return struct.pack("<i", -byte) + (b"\x01" if version >= 4 else b"")


def simple_chunk(data: bytes, *, typesize: int = 4, blocksize: int = 64,
                 version: int = 5, split: bool = False) -> bytes:
    """A valid chunk of raw streams, no filters (extended header from
    version 3, Blosc1 header otherwise)."""
    nblocks = -(-len(data) // blocksize)
    if version >= 3:
        flags = 0x05 | (0 if split else 0x10)
        hdr = pack_header(version=version, flags=flags, typesize=typesize, nbytes=len(data),
                          blocksize=blocksize, cbytes=0) + pack_extended()
    else:
        hdr = pack_header(version=version, flags=0 if split else 0x10, typesize=typesize,
                          nbytes=len(data), blocksize=blocksize, cbytes=0)
    blocks = []
    for j in range(nblocks):
        b = data[j * blocksize:(j + 1) * blocksize]
        ns = typesize if split and len(b) == blocksize else 1
        blocks.append([raw_stream(s) for s in split_streams(b, ns)])
    return pack_chunk(header=hdr, blocks=blocks)


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

def check_format_error(err: BaseException, src, *, offset: int | None = None,
                       rule: str | None = None, path_prefix: str = "chunk") -> None:
    """Assert the contract of a FormatError raised for ``src``."""
    assert isinstance(err, blosckit.FormatError), repr(err)
    assert isinstance(err.offset, int), err.offset
    assert 0 <= err.offset <= len(src), (err.offset, len(src), str(err))
    assert isinstance(err.path, str) and err.path.startswith(path_prefix), err.path
    text = str(err)
    assert str(err.offset) in text and err.path in text, text
    if offset is not None:
        assert err.offset == offset, (err.offset, offset, text)
    if rule is not None:
        assert err.rule == rule, (err.rule, rule, text)


def decode_outcome(fn, src, *args, **kw):
    """Run ``fn(src, ...)``; return its result or the FormatError.  Any other
    exception fails the test (with the input in the message)."""
    try:
        return fn(src, *args, **kw)
    except blosckit.FormatError as e:
        check_format_error(e, src)
        return e
    except Exception as e:   # pragma: no cover - this is the failure
        raise AssertionError(f"{fn.__name__} raised {type(e).__name__}: {e} "
                             f"on {bytes(src[:64]).hex()}... ({len(src)} bytes)") from e


def block_boundaries(nbytes: int, blocksize: int, typesize: int) -> Iterable[tuple[int, int]]:
    """(start, nitems) getitem ranges around block boundaries and the ends."""
    nitems = nbytes // typesize
    if nitems == 0:
        return [(0, 0)]
    per_block = max(blocksize // typesize, 1)
    cand = {(0, nitems), (0, 1), (nitems - 1, 1), (nitems // 2, nitems - nitems // 2),
            (0, 0)}
    for b in (per_block, 2 * per_block):
        for s in (b - 1, b, b + 1):
            for n in (1, 2, per_block + 1):
                if 0 <= s and s + n <= nitems:
                    cand.add((s, n))
    return sorted(cand)


# ---------------------------------------------------------------------------
# Forward filters in numpy (the test's own reference, C-Blosc2 semantics of
# chunk versions >= 3)
# ---------------------------------------------------------------------------

def np_shuffle(block: bytes, ts: int) -> bytes:
    n = len(block) // ts * ts
    if ts <= 1 or n == 0:
        return bytes(block)
    a = np.frombuffer(block[:n], np.uint8).reshape(-1, ts)
    return a.T.tobytes() + bytes(block[n:])


def np_bitshuffle(block: bytes, ts: int) -> bytes:
    nitems = len(block) // ts // 8 * 8
    n = nitems * ts
    if nitems == 0:
        return bytes(block)
    a = np.frombuffer(block[:n], np.uint8).reshape(nitems, ts)
    bits = np.unpackbits(a, axis=1, bitorder="little")        # (nitems, 8*ts)
    return np.packbits(bits.T, axis=1, bitorder="little").tobytes() + bytes(block[n:])


def np_bytedelta(block: bytes, ts: int) -> bytes:
    """Each of the ts byte streams (len // ts bytes) as differences mod 256."""
    q = len(block) // ts
    if q == 0:
        return bytes(block)
    a = np.frombuffer(block[:q * ts], np.uint8).reshape(ts, q).astype(np.int16)
    d = np.diff(a, axis=1, prepend=0) % 256
    return d.astype(np.uint8).tobytes() + bytes(block[q * ts:])


def np_delta(block: bytes, ref: bytes, ts: int, first: bool) -> bytes:
    w = ts if ts in (1, 2, 4, 8) else (8 if ts % 8 == 0 else 1)
    n = len(block) // w * w
    x = np.frombuffer(block[:n], np.uint8).reshape(-1, w)
    r = np.frombuffer(ref[:n], np.uint8).reshape(-1, w)
    if first:
        out = x.copy()
        out[1:] ^= r[:-1]
    else:
        out = x ^ r[:len(x)]
    return out.tobytes() + bytes(block[n:])


# ---------------------------------------------------------------------------
# A corpus of small chunks and their mutations
# ---------------------------------------------------------------------------

BLOSC1_SMALL_CHUNKS = ("blosc1-lz4", "blosc1-bitshuffle")


def small_chunks() -> dict[str, bytes]:
    """One small chunk of every kind the hostile tests mutate: each codec,
    filters, dictionaries, special, memcpyed, VL-block, Blosc1 and runs.
    The Blosc1 ones are written by python-blosc: without it they are left
    out (a module that mutates them says so with
    :func:`check_blosc1_chunks_are_in`)."""
    return dict(_small_chunks())


@functools.cache
def _small_chunks() -> dict[str, bytes]:
    d = dataset("arange", 600, 4)
    out = {}
    for codec in ("blosclz", "lz4", "zlib", "zstd"):
        out[f"{codec}-shuffle"] = b2_compress(d, typesize=4, codec=codec, filters=["shuffle"],
                                              blocksize=256, splitmode="always")
    out["lz4-bitshuffle-delta"] = b2_compress(d, typesize=4, codec="lz4",
                                              filters=["delta", "bitshuffle"], blocksize=128)
    out["zstd-bytedelta"] = b2_compress(d, typesize=4, codec="zstd",
                                        filters=["shuffle", "bytedelta"], blocksize=256)
    out["zstd-dict"] = b2_compress(dataset("arange", 6000, 4), typesize=4, codec="zstd",
                                   filters=["shuffle"], blocksize=1024, use_dict=True)
    out["lz4-dict"] = b2_compress(dataset("arange", 6000, 4), typesize=4, codec="lz4",
                                  filters=["shuffle"], blocksize=1024, use_dict=True)
    out["special-zeros"] = special_chunk("zero", 100, 4)
    out["special-value"] = special_chunk("value", 100, 8, np.float64(1.5))
    out["special-nan"] = special_chunk("nan", 100, 4)
    out["memcpyed"] = b2_compress(d[:100], typesize=4, codec="lz4", clevel=0)
    out["vlblocks"] = vl_chunk([b"abc" * 20, d[:200], b"z"], typesize=1, codec="lz4")
    if available("blosc"):      # C-Blosc 1.x's own (BLOSC1_SMALL_CHUNKS)
        out["blosc1-lz4"] = b1_compress(d, typesize=4, shuffle="shuffle", cname="lz4",
                                        blocksize=256)
        out["blosc1-bitshuffle"] = b1_compress(d, typesize=4, shuffle="bitshuffle",
                                               cname="blosclz", blocksize=256)
    out["raw-v4-runs"] = simple_chunk(bytes(64) + b"\x07" * 64 + d[:70], typesize=2,
                                      blocksize=64, version=4)
    return out


def check_blosc1_chunks_are_in(chunks: dict[str, bytes]) -> None:
    """Skip (or, under BLOSCKIT_REQUIRE_ORACLES=1, fail) when python-blosc
    is missing, so that a corpus without C-Blosc 1.x's chunks shows."""
    oracle("blosc")
    assert set(BLOSC1_SMALL_CHUNKS) <= set(chunks)
    assert all(chunks[n][0] == 2 for n in BLOSC1_SMALL_CHUNKS)


def mutations(chunk: bytes, *, every_truncation: bool = True):
    """``(label, blob)`` for hostile variants of ``chunk``: truncations, each
    header byte set to boundary values, and single-bit flips of the header,
    the bstarts and the first bytes of every block."""
    if every_truncation:
        for n in range(len(chunk)):
            yield f"cut{n}", chunk[:n]
    ext = len(chunk) >= 32 and (chunk[2] & 5) == 5
    hl = 32 if ext else 16
    for pos in range(min(hl, len(chunk))):
        for v in (0, 1, 0x7F, 0x80, 0xFF, (chunk[pos] + 1) & 0xFF):
            src = bytearray(chunk)
            src[pos] = v
            yield f"set{pos}={v}", bytes(src)
    try:
        c = blosckit.parse_chunk(chunk)
        spots = list(range(hl, hl + 4 * len(c.bstarts)))
        for b in c.bstarts:
            spots += range(b, min(b + 12, len(chunk)))
    except blosckit.FormatError:
        spots = []
    for pos in sorted(set(range(hl)) | set(spots)):
        for bit in range(8):
            src = bytearray(chunk)
            src[pos] ^= 1 << bit
            yield f"flip{pos}.{bit}", bytes(src)



# ---------------------------------------------------------------------------
# The C libraries' verdicts, from a subprocess (hostile blobs may crash them)
# ---------------------------------------------------------------------------

def oracle_verdicts(blobs: Sequence[bytes], timeout: float = 600, *,
                    kind: str = "chunk") -> list:
    """What the C libraries make of each blob (see
    :func:`blosckit.testing.fuzz.c_blosc2_verdicts`, which imports
    python-blosc2 and so is imported here only once it is there); a crash or
    hang counts as refused."""
    oracle("blosc2")
    from blosckit.testing.fuzz import c_blosc2_verdicts
    return c_blosc2_verdicts(blobs, kind=kind, timeout=timeout)


def strip(obj):
    """A parsed construct Container as plain dicts and lists, without
    construct's private entries (``_io``)."""
    if isinstance(obj, dict):
        return {k: strip(v) for k, v in obj.items() if not k.startswith("_")}
    if isinstance(obj, list):
        return [strip(v) for v in obj]
    return obj


def header_dict(nbytes: int, blocksize: int, *, cbytes=None, typesize: int = 1,
                compformat: int = 0, udcodec: int = 0, use_dict: bool = False,
                memcpyed: bool = False, dont_split: bool = True) -> dict:
    """A version-5 header (extended, no filters) as ``build_chunk`` takes it."""
    return {
        "version": 5, "versionlz": 1,
        "flags": {"compformat": compformat, "dont_split": dont_split, "delta": False,
                  "bitshuffle": True, "memcpyed": memcpyed, "shuffle": True},
        "typesize": typesize, "nbytes": nbytes, "blocksize": blocksize, "cbytes": cbytes,
        "extended": {"filters": [0] * 6, "udcodec": udcodec, "compcode_meta": 0,
                     "filters_meta": [0] * 6,
                     "blosc2_flags2": {"reserved": 0, "vl_blocks": False},
                     "blosc2_flags": {"instrumented": False, "special": 0, "lazy": False,
                                      "unimplemented": False, "big_endian": False,
                                      "use_dict": use_dict}},
    }


def stored_blocks(chunk: bytes) -> list:
    """Each block's streams as stored, read through the ``Stream``
    declaration up to the next block's start (split or not alike)."""
    from blosckit.formats import chunk as fc
    from blosckit.formats import parse
    info = blosckit.parse_chunk(chunk)
    order = sorted(range(len(info.bstarts)), key=info.bstarts.__getitem__)
    ends = {j: (info.bstarts[order[k + 1]] if k + 1 < len(order) else len(chunk))
            for k, j in enumerate(order)}
    out = []
    for j, start in enumerate(info.bstarts):
        pos, streams = start, []
        while pos < ends[j]:
            s = parse(fc.Stream, chunk, pos, f"chunk.blocks[{j}]", rule="B4",
                      version=info.version)
            streams.append({"csize": s.csize, "token": s.token, "cdata": s.cdata})
            pos += fc.LEN_CSIZE + (fc.LEN_TOKEN if s.token is not None else 0) + \
                max(s.csize, 0)
        out.append(streams)
    return out


@contextlib.contextmanager
def python_reader():
    """Within the block, decode with the Python chunk reader only: the
    one-call fast path and the native block decoders are off (parity tests
    compare the two paths)."""
    from blosckit.chunk import read
    from blosckit.codecs import libs
    saved = read._FAST[0], libs.NATIVE_DECODERS
    read._FAST[0], libs.NATIVE_DECODERS = None, {}
    try:
        yield
    finally:
        read._FAST[0], libs.NATIVE_DECODERS = saved


def copy_runs_python(chunk, array, runs, to_chunk: bool) -> None:
    """What the b2nd reader's native run copier does, in Python: the
    reference the kernel is tested against (runs as frame.b2nd._runs
    yields them: chunk start, array start, bytes, count, steps)."""
    for c, a, n, count, cstep, astep in runs:
        for _ in range(count):
            if to_chunk:
                chunk[c:c + n] = array[a:a + n]
            else:
                array[a:a + n] = chunk[c:c + n]
            c += cstep
            a += astep
