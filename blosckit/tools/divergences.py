"""Known C-Blosc2 divergences, as data.

Each ``Divergence`` names a case where C-Blosc2 3.3.5 (python-blosc2 4.14),
or for chunk versions 1-2 C-Blosc 1.21.7 (python-blosc 1.11; ``library``
says which), and blosckit part ways, with the predicate that recognises it:

* ``side="reader"``: C-Blosc2 decodes a chunk to other data than blosckit,
  or refuses a chunk blosckit reads (``operation`` says whether the whole
  chunk or only ``getitem`` is affected).  The predicate is
  ``(chunk_bytes, parsed) -> bool``, ``parsed`` being ``parse_chunk(chunk)``
  or None when the chunk does not parse (a few cases are exactly such
  chunks).
* ``side="index"``: C-Blosc2 cannot read a frame whose offsets index is
  such a chunk, though the chunk itself decodes alike (``parsed`` is None).
* ``side="frame"``: C-Blosc2 (or python-blosc2, ``library`` says which)
  refuses a frame blosckit reads, for a reason outside its chunks.  The
  predicate takes the open ``Frame`` and returns where the cause sits, a
  list of ``(offset, path)`` (empty: it does not apply).
* ``side="writer"``: for the same ``compress`` parameters C-Blosc2 writes
  other bytes, or a chunk it cannot read.  The predicate takes the
  parameters as a dict (keys of ``compress``: ``codec``, ``clevel``,
  ``filters``, ``typesize``, ``blocksize``, ``splitmode``, ``dict``,
  ``format``, plus ``nbytes``, the input length).

The prose is in specs/divergences.md (anchor = the id).
"""
from __future__ import annotations

import ast
import operator
import sys
from array import array
from dataclasses import dataclass
from typing import Any, Callable

import msgpack

from ..chunk.read import parse_chunk
from ..errors import FormatError
from ..formats import b2nd as fb
from ..formats import chunk as fc
from ..formats import enums
from ..formats import frame as ff
from ..formats.rules import OFFSETS

C_BLOSC2_SEEN = "3.3.5"
C_BLOSC1_SEEN = "1.21.7"
SPEC = "specs/divergences.md"

_SPECIAL_VALUE = enums.lookup(enums.SPECIALS, "value")
_BYTEDELTAS = (enums.lookup(enums.FILTERS, "bytedelta_buggy"),
               enums.lookup(enums.FILTERS, "bytedelta"))
_DELTA = enums.lookup(enums.FILTERS, "delta")
_SNAPPY_FORMAT = enums.lookup(enums.COMPFORMATS, "snappy")


def _raw(chunk) -> fc.RawHeader | None:
    """The header's bytes as stored (None when the chunk is shorter)."""
    return fc.raw_header(chunk) if len(chunk) >= fc.LEN_HEADER else None


@dataclass(frozen=True)
class Divergence:
    id: str
    title: str
    side: str                       # "reader" | "writer" | "index" | "frame"
    predicate: Callable[..., Any]     # bool; for frames, a list of (offset, path)
    operation: str = "decompress"   # readers: "decompress" | "getitem"
    c_blosc2: str = C_BLOSC2_SEEN   # the version of ``library`` seen to diverge
    library: str = "C-Blosc2"       # "C-Blosc2" | "C-Blosc 1.x"

    @property
    def anchor(self) -> str:
        """Where the prose is: ``specs/divergences.md#<id>``."""
        return f"{SPEC}#{self.id.lower()}"


# ---------------------------------------------------------------- readers

def _filter_names(parsed) -> list[str]:
    return [name for name, _meta in parsed.filters]


def _has_body(parsed) -> bool:
    """A chunk with block streams (not raw, not special, not empty)."""
    return (parsed is not None and not parsed.memcpyed and parsed.special is None
            and parsed.nbytes > 0)


def _legacy_split(chunk: bytes, parsed) -> bool:
    # C-Blosc2 splits every full block of a chunk whose 0x10 flag is clear;
    # Blosc1 writers before 1.11 split only small items in big blocks
    return (_has_body(parsed) and parsed.version <= 2
            and not fc.raw_header(chunk).flags & fc.FLAG_DONT_SPLIT
            and parsed.typesize > 1 and not parsed.split)


def _block_sizes(parsed) -> list[int]:
    """The distinct block sizes in bytes: full blocks and the leftover one."""
    bs = min(parsed.blocksize, parsed.nbytes)
    sizes = [bs] if parsed.nbytes >= bs else []
    if parsed.nbytes % bs:
        sizes.append(parsed.nbytes % bs)
    return sizes


def _v2_bitshuffle_tail(chunk: bytes, parsed) -> bool:
    # version-2 bitshuffle: C-Blosc2 transforms whole items when their count
    # is a multiple of 8 but never writes the size % typesize tail
    if not (_has_body(parsed) and parsed.version == 2 and "bitshuffle" in _filter_names(parsed)):
        return False
    ts = parsed.typesize
    return any((b // ts) % 8 == 0 and b % ts for b in _block_sizes(parsed))


def _split_not_whole_items(chunk: bytes, parsed) -> bool:
    # blosckit refuses (rule B3); C-Blosc2 returns a block with unwritten bytes
    if parsed is not None:
        return False
    try:
        parse_chunk(chunk)
    except FormatError as exc:
        return getattr(exc, "rule", None) == "B3"
    return False


def _getitem_delta(chunk: bytes, parsed) -> bool:
    # C-Blosc2's getitem decodes each block as if it were block 0
    return _has_body(parsed) and "delta" in _filter_names(parsed) and parsed.nblocks > 1


def _vl_delta(chunk: bytes, parsed) -> bool:
    # C-Blosc2's encoder takes each VL block's delta against the block
    # itself, its decoder against block 0: every later block comes out wrong
    return (parsed is not None and parsed.vlblocks and parsed.nblocks > 1
            and "delta" in _filter_names(parsed))


def _uninit(chunk: bytes, parsed) -> bool:
    return parsed is not None and parsed.special == "uninit" and parsed.nbytes > 0


def _lazy_value_past_end(chunk: bytes, parsed) -> bool:
    # read from the raw header: blosckit's parser refuses the cbytes claim
    h = _raw(chunk)
    if h is None or not h.has_extended:
        return False
    lazy = bool(h.blosc2_flags & fc.B2_LAZY)
    return h.special == _SPECIAL_VALUE and lazy and h.cbytes > len(chunk)


def _version3(chunk: bytes, parsed) -> bool:
    # C-Blosc2 reads byte 30 of an alpha (version-3) header as blosc2_flags2,
    # whose bit 0 marks VL blocks; in version 3 the byte is reserved
    return (_has_body(parsed) and parsed.version == 3
            and bool(fc.EXTENDED.get(chunk, "blosc2_flags2.vl_blocks")))


def _runs_without_token(chunk: bytes, parsed) -> bool:
    # a negative csize in versions 1-3: C-Blosc2 takes the next byte as a token
    if not (_has_body(parsed) and parsed.version <= 3) or parsed.vlblocks:
        return False
    return any(c < 0 for c in _stream_csizes(chunk, parsed))


def _stream_csizes(chunk: bytes, parsed) -> list[int]:
    """Every stream's csize, walked as versions 1-3 lay streams out (no
    token after a run: the callers ask about those versions); stops at the
    first size field outside the chunk."""
    out: list[int] = []
    end = min(parsed.cbytes, len(chunk))
    bs = min(parsed.blocksize, parsed.nbytes)
    for j, pos in enumerate(parsed.bstarts):
        size = parsed.nbytes % bs if j == parsed.nblocks - 1 and parsed.nbytes % bs else bs
        for _ in range(fc.streams_in_block(parsed.split, parsed.typesize, size, bs)):
            if pos < 0 or pos + fc.LEN_CSIZE > end:
                return out
            csize = fc.FAST_CSIZE.unpack_from(chunk, pos)[0]
            out.append(csize)
            pos += fc.LEN_CSIZE + max(csize, 0)
    return out


def _special_partial_items(chunk: bytes, parsed) -> bool:
    # C-Blosc2 fills value/NaN chunks block by block and fails when a block
    # is not a whole number of items
    if parsed is None or parsed.special not in ("value", "nan") or parsed.nbytes == 0:
        return False
    width = parsed.typesize
    return parsed.blocksize % width != 0


def _snappy(chunk: bytes, parsed) -> bool:
    # C-Blosc2 has no snappy codec
    return _has_body(parsed) and parsed.codec == "snappy"


def _memcpyed_dict(chunk: bytes, parsed) -> bool:
    # C-Blosc2 writes this for incompressible input with use_dict, and then
    # refuses it: its reader expects a dictionary section that is not there
    return (parsed is not None and parsed.memcpyed and parsed.nbytes > 0
            and parsed.extended and bool(fc.raw_header(chunk).blosc2_flags & fc.B2_DICT))


def _bytedelta_meta0(chunk: bytes, parsed) -> bool:
    # meta 0 means "the super-chunk's typesize" to C-Blosc2, which refuses it
    # in a chunk read on its own; blosckit uses the chunk's typesize
    return _has_body(parsed) and any(
        slot in _BYTEDELTAS and meta == 0
        for slot, meta in zip(parsed.slots, parsed.filters_meta))


def _deltas_apart(chunk: bytes, parsed) -> bool:
    names = _filter_names(parsed) if parsed is not None else []
    deltas = [k for k, n in enumerate(names) if n == "delta"]
    return any(b - a > 1 for a, b in zip(deltas, deltas[1:]))


def _index_typesize(chunk: bytes, parsed) -> bool:
    # C-Blosc2 fetches each offset as one item of the index chunk's typesize
    h = _raw(chunk)
    return h is not None and h.typesize != ff.LEN_OFFSET


# C-Blosc 1.21 (the last Blosc1 library) reads a chunk of version <= 2 only
# when it looks exactly like what it writes; an empty chunk it returns at once.
def _blosc1_reads(parsed) -> bool:
    return parsed is not None and parsed.version <= 2 and parsed.nbytes > 0


def _blosc1_version1(chunk: bytes, parsed) -> bool:
    return _blosc1_reads(parsed) and parsed.version == 1


def _blosc1_versionlz(chunk: bytes, parsed) -> bool:
    return _blosc1_reads(parsed) and not parsed.memcpyed and parsed.versionlz != 1


def _blosc1_delta(chunk: bytes, parsed) -> bool:
    return _blosc1_reads(parsed) and bool(fc.raw_header(chunk).flags & fc.FLAG_DELTA)


def _blosc1_extended(chunk: bytes, parsed) -> bool:
    return _blosc1_reads(parsed) and parsed.extended


def _blosc1_big_block(chunk: bytes, parsed) -> bool:
    return _blosc1_reads(parsed) and not parsed.special and parsed.blocksize > parsed.nbytes


def _blosc1_zero_or_run_stream(chunk: bytes, parsed) -> bool:
    # C-Blosc 1.21 hands every stream to its codec: csize 0 (zeros) and
    # negative csizes (runs), which later writers use, are errors to it
    return (_blosc1_reads(parsed) and _has_body(parsed)
            and any(c <= 0 for c in _stream_csizes(chunk, parsed)))


# ---------------------------------------------------------------- writers

def _names(params: dict[str, Any]) -> list[str]:
    return [f if isinstance(f, str) else f[0] for f in params.get("filters", ()) if f]


def _delta_tail(params: dict[str, Any]) -> bool:
    # delta leaves the bytes past the last whole word unwritten in C-Blosc2
    ts = params["typesize"] if params["typesize"] <= 255 else 1
    w = ts if ts in (1, 2, 4, 8) else (8 if ts % 8 == 0 else 1)
    return "delta" in _names(params) and params["nbytes"] % w != 0


def _trunc_tail(params: dict[str, Any]) -> bool:
    return "trunc_prec" in _names(params) and params["nbytes"] % params["typesize"] != 0


def _lz4_version(params: dict[str, Any]) -> bool:
    return params.get("format") == "blosc2" and params["codec"] in ("lz4", "lz4hc")


def _header_blocksize(params: dict[str, Any]) -> bool:
    nb, bs = params["nbytes"], params.get("blocksize", 0)
    return 0 < nb < bs and nb % params["typesize"] != 0


def _three_filters(params: dict[str, Any]) -> bool:
    changing = [n for n in _names(params) if n]
    return len(changing) >= 3


def _small_dict(params: dict[str, Any]) -> bool:
    return bool(params.get("dict")) and 0 < params["nbytes"] < 32


def _raw_dict_flag(params: dict[str, Any]) -> bool:
    # "memcpyed": the chunk fell back to raw storage (known after compressing)
    return bool(params.get("dict")) and bool(params.get("memcpyed"))


def _zstd_blosc1(params: dict[str, Any]) -> bool:
    return params.get("format") == "blosc1" and params["codec"] in ("zstd", "lz4", "lz4hc")


# ---------------------------------------------------------------- frames

PYTHON_BLOSC2_SEEN = "4.14.1"
# Filter ids blosc2_create_cctx refuses: the Blosc-defined ids it lacks and
# the globally registered ones not yet assigned (user ids, 160-255, pass).
_C_UNDEFINED_FILTERS = enums.C_UNDEFINED_FILTERS


def _undefined_frame_filter(frame) -> list[tuple[int, str]]:
    v = frame.fields
    if v.layout < 13:
        return []
    at = OFFSETS["frame.header.filter_pipeline.filters"]
    return [(at + k, f"frame.header.filter_pipeline.filters[{k}]")
            for k, fid in enumerate(v.filters[:v.nfilters]) if fid in _C_UNDEFINED_FILTERS]


def _odd_names(kind: str) -> Callable[[Any], list[tuple[int, str]]]:
    def names(frame) -> list[tuple[int, str]]:
        frame.vlmetalayers_raw                       # reads the trailer's names too
        return sorted({(at, path) for at, path, k in frame.odd_names if k == kind})
    return names


def _older_layout(frame) -> list[tuple[int, str]]:
    # C-Blosc2 reads the header at the current layout's fixed offsets only
    return [] if frame.layout == 14 else [(0, "frame.header.fixarray")]


def _blosc1_chunk_in_frame(frame) -> list[tuple[int, str]]:
    # C-Blosc2 reads a Blosc1 chunk alone, never inside a frame (its frame
    # reader asks for the extended header every chunk of a frame has)
    out = []
    buf, base = frame.buffer, frame.header_len
    if frame.directory is None:
        versions = _version_bytes(frame)
        if versions is not None:
            # one pass in C over the version bytes; a Python step per hit only
            hits = versions.translate(_IS_BLOSC1)
            i = hits.find(1)
            while i >= 0:
                out.append((base + frame.entries[i], f"frame.chunks[{i}].header.version"))
                i = hits.find(1, i + 1)
            return out
    for i in range(frame.nchunks):
        entry = frame.entries[i]
        if entry < 0:
            continue
        if frame.directory is None:        # the version byte, read in place
            start = base + entry
            version = buf[start] if 0 <= start < len(buf) else None
        else:
            try:
                start, view = frame.chunk_view(i)
            except FormatError:
                continue                   # the frame's own rules report it
            version = view[0] if len(view) else None
        if version in _BLOSC1_VERSIONS:
            out.append((start, f"frame.chunks[{i}].header.version"))
    return out


_BLOSC1_VERSIONS = frozenset(v for v in enums.VERSIONS if enums.family(v) == "Blosc1")
_IS_BLOSC1 = bytes(1 if v in _BLOSC1_VERSIONS else 0 for v in range(256))


def _version_bytes(frame) -> bytes | None:
    """The version byte of every chunk of a contiguous frame, read in bulk
    (a 10,000-chunk frame: no Python step per chunk); None when an entry
    is special or lies outside the frame (the loop above handles those)."""
    n = frame.nchunks
    raw = getattr(frame.entries, "raw", None)
    if not n or not isinstance(raw, bytes) or len(raw) < ff.LEN_OFFSET * n:
        return None
    entries = array("q")
    entries.frombytes(raw[:ff.LEN_OFFSET * n])
    if (ff.FAST_OFFSET.format[0] == "<") != (sys.byteorder == "little"):
        entries.byteswap()
    # a special entry is negative: the sign bit of an entry's last stored
    # byte (the index is little-endian), all checked in one C call
    if raw[ff.LEN_OFFSET - 1:ff.LEN_OFFSET * n:ff.LEN_OFFSET].translate(None, _UNSIGNED_TOP):
        return None
    try:
        # one C call picks every byte (the first twice: a tuple even for one chunk)
        return bytes(operator.itemgetter(*entries, entries[0])(
            frame.buffer[frame.header_len:])[:n])
    except IndexError:             # an entry past the frame's end
        return None


_UNSIGNED_TOP = bytes(range(0x80))  # the top bytes of non-negative entries


def _filters_meta_int8(frame) -> list[tuple[int, str]]:
    # python-blosc2's open() applies the header's cparams again, its
    # filters_meta as int8_t: a byte of 128 or more overflows
    path = "filter_pipeline.filters_meta"
    lay = ff.FLAT_HEADERS[frame.layout]
    if path not in lay:
        return []
    at = lay.offset(path)
    return [(at + k, f"frame.header.{path}[{k}]")
            for k, m in enumerate(frame.fields.filters_meta) if m >= _INT8_LIMIT]


_INT8_LIMIT = 0x80           # the first byte value an int8_t cannot hold


def _variable_size(frame) -> list[tuple[int, str]]:
    # C-Blosc2's slice reader (schunk[:], NDArray[...]) divides by the chunk
    # size; chunk by chunk reading works
    if not frame.variable_size:
        return []
    return [(ff.FLAT_HEADERS[frame.layout].offset("chunksize"), "frame.header.chunksize")]


def _b2nd_not_msgpack(frame) -> list[tuple[int, str]]:
    # python-blosc2 msgpack-decodes metalayers; C-Blosc2 reads b2nd by
    # position and writes 0x90 + ndim as a byte (0xa0, a str marker, for 16)
    b = frame.b2nd
    if b is None:
        return []
    try:
        msgpack.unpackb(frame.metalayers[b.name], strict_map_key=False)
    except Exception:              # msgpack's errors on bytes that are not one object
        return [(b.offset, b.path)]
    return []


def _b2nd_dtype_refused(frame) -> list[tuple[int, str]]:
    # python-blosc2 makes a NumPy dtype of the stored string: only format 0,
    # the string up to its first NUL (C hands it over as a C string), through
    # numpy.dtype or, failing that, numpy.dtype(ast.literal_eval(...))
    b = frame.b2nd
    if b is None or b.dtype_format is None:
        return []
    if b.dtype_format != fb.DTYPE_FORMAT_NUMPY:
        return [(b.offset + fb.extent_offset(b.ndim, "dtype_format", 0),
                 f"{b.path}.dtype.dtype_format")]
    try:
        import numpy
    except ImportError:             # no way to tell without NumPy
        return []
    text = b.dtype.split("\0")[0]
    try:
        numpy.dtype(text)
    except Exception:               # NumPy's own parse raises SyntaxError too ("<f8,")
        try:
            numpy.dtype(ast.literal_eval(text))
        except Exception:           # whatever a hostile string makes them raise
            return [(b.offset + fb.extent_offset(b.ndim, "dtype", 0), f"{b.path}.dtype.dtype")]
    return []


def _special_not_rebuilt(frame) -> list[tuple[int, str]]:
    # C-Blosc2 rebuilds each special entry's chunk from the header's typesize
    # and blocksize and refuses partial items or a negative block size.
    if frame.chunksize <= 0 or not frame.nchunks:
        return []
    ts, n = frame.typesize, frame.nchunks
    partial = {frame.chunk_nbytes(0) % ts != 0, frame.chunk_nbytes(n - 1) % ts != 0}
    if frame.fields.blocksize >= 0 and True not in partial:
        return []
    specials = [i for i, o in enumerate(frame.entries) if o < 0]
    out = [(frame.entry_offset(i), f"frame.offsets[{i}]") for i in specials
           if frame.chunk_nbytes(i) % ts]
    if specials and frame.fields.blocksize < 0:
        out.append((OFFSETS["frame.header.blocksize"], "frame.header.blocksize"))
    return out


# ---------------------------------------------------------------- the list

DIVERGENCES: tuple[Divergence, ...] = (
    Divergence("V1", "lazy value chunk whose cbytes runs past the input", "reader",
               _lazy_value_past_end),
    Divergence("V2", "version-2 bitshuffle tail not written", "reader", _v2_bitshuffle_tail),
    Divergence("V3", "split block that is not a whole number of items", "reader",
               _split_not_whole_items),
    Divergence("V4", "getitem on a delta chunk", "reader", _getitem_delta, "getitem"),
    Divergence("V5", "legacy Blosc1 split rule ignored", "reader", _legacy_split),
    Divergence("V6", "uninit special chunk leaves the output untouched", "reader", _uninit),
    Divergence("V7", "version-3 chunk whose reserved byte 30 has bit 0 set", "reader", _version3),
    Divergence("V8", "run stream in a version 1-3 chunk read with a token", "reader",
               _runs_without_token),
    Divergence("V9", "value or NaN chunk with blocks of partial items", "reader",
               _special_partial_items),
    Divergence("V10", "snappy chunk", "reader", _snappy),
    Divergence("V11", "memcpyed chunk with use_dict (C-Blosc2 writes it, then refuses it)",
               "reader", _memcpyed_dict),
    Divergence("V12", "bytedelta with meta 0 in a chunk read on its own", "reader",
               _bytedelta_meta0),
    Divergence("V13", "frame offsets index whose typesize is not 8", "index", _index_typesize),
    Divergence("V17", "two delta filters with another filter between them", "reader",
               _deltas_apart),
    Divergence("V24", "VL-block chunk of two or more blocks with the delta filter (C-Blosc2 "
               "writes it, then decodes every block after the first to other bytes)",
               "reader", _vl_delta),
    Divergence("V14", "frame header naming a filter id C-Blosc2 does not define", "frame",
               _undefined_frame_filter),
    Divergence("V15", "metalayer or vlmetalayer name that is not UTF-8", "frame",
               _odd_names("not-utf8"), c_blosc2=PYTHON_BLOSC2_SEEN, library="python-blosc2"),
    Divergence("V16", "special entry C-Blosc2 cannot rebuild: zeros of partial items, or a "
               "negative frame block size", "frame", _special_not_rebuilt),
    Divergence("V20", "metalayer or vlmetalayer name holding a NUL byte (C-Blosc2 ends "
               "the name there)", "frame", _odd_names("nul")),
    Divergence("V19", "b2nd metalayer that is not msgpack (C-Blosc2 writes one for 16 "
               "dimensions); python-blosc2's schunk.meta['b2nd'] fails", "frame",
               _b2nd_not_msgpack, c_blosc2=PYTHON_BLOSC2_SEEN, library="python-blosc2"),
    Divergence("V21", "b2nd dtype python-blosc2 cannot make a NumPy dtype of (a format "
               "other than 0, or a string NumPy does not parse)", "frame",
               _b2nd_dtype_refused, c_blosc2=PYTHON_BLOSC2_SEEN, library="python-blosc2"),
    Divergence("V18", "frame header of an older layout (11, 12 or 13 elements)", "frame",
               _older_layout),
    Divergence("V23", "frame header filters_meta byte of 128 or more: python-blosc2's "
               "open() raises OverflowError (it reapplies the byte as an int8)", "frame",
               _filters_meta_int8, c_blosc2=PYTHON_BLOSC2_SEEN, library="python-blosc2"),
    Divergence("V25", "frame holding a Blosc1 chunk (format version 1 or 2): C-Blosc2 reads "
               "such a chunk alone, not inside a frame", "frame", _blosc1_chunk_in_frame),
    Divergence("V22", "frame of variable-size chunks (chunksize 0): C-Blosc2's slice "
               "reader (python-blosc2's schunk[:]) dies dividing by the chunk size", "frame",
               _variable_size),
    Divergence("L1", "version-1 chunk (C-Blosc 1.21 reads version 2 only)", "reader",
               _blosc1_version1, c_blosc2=C_BLOSC1_SEEN, library="C-Blosc 1.x"),
    Divergence("L2", "versionlz other than 1", "reader", _blosc1_versionlz,
               c_blosc2=C_BLOSC1_SEEN, library="C-Blosc 1.x"),
    Divergence("L3", "delta flag (C-Blosc 1.21 has no delta)", "reader", _blosc1_delta,
               c_blosc2=C_BLOSC1_SEEN, library="C-Blosc 1.x"),
    Divergence("L4", "extended header in a version 1-2 chunk", "reader", _blosc1_extended,
               c_blosc2=C_BLOSC1_SEEN, library="C-Blosc 1.x"),
    Divergence("L5", "blocksize above nbytes in a version 1-2 chunk", "reader",
               _blosc1_big_block, c_blosc2=C_BLOSC1_SEEN, library="C-Blosc 1.x"),
    Divergence("L6", "zero or run stream in a version 1-2 chunk", "reader",
               _blosc1_zero_or_run_stream, c_blosc2=C_BLOSC1_SEEN, library="C-Blosc 1.x"),
    Divergence("W1", "explicit block size above a ragged input", "writer", _header_blocksize),
    Divergence("W2", "delta tail bytes uninitialised", "writer", _delta_tail),
    Divergence("W3", "trunc_prec tail bytes uninitialised", "writer", _trunc_tail),
    Divergence("W4", "LZ4 1.9.4 vs 1.10.0 stream bytes", "writer", _lz4_version),
    Divergence("W5", "three or more filters: C-Blosc2 overwrites its source", "writer",
               _three_filters),
    Divergence("W6", "dict=True on input under 32 bytes", "writer", _small_dict),
    Divergence("W8", "dict=True on incompressible input: C-Blosc2 leaves use_dict on its "
               "raw chunk", "writer", _raw_dict_flag),
    Divergence("W7", "Blosc1 lz4/zstd streams: C-Blosc 1.21's bundled libraries", "writer",
               _zstd_blosc1),
)

BY_ID: dict[str, Divergence] = {d.id: d for d in DIVERGENCES}


def beyond_all_reader_divergences(chunk) -> bool:
    """True when no reader divergence of the table can apply to ``chunk``,
    a chunk blosckit reads (V3 is about chunks it refuses; its first 32
    bytes are enough): a version 4 or 5 chunk with the
    extended header, not special, lazy or instrumented, whose codec format is
    not snappy (V10), not memcpyed with use_dict (V11), without bytedelta of
    meta 0 (V12), without two delta filters apart (V17).  Every reader predicate above needs one of these, so a
    caller checking thousands of chunks can skip the table for the rest
    (a test checks this against the predicates)."""
    h = _raw(chunk)
    if h is None or not h.has_extended or h.version not in _PLAIN_VERSIONS:
        return False
    if h.blosc2_flags & _NOT_PLAIN or h.compformat == _SNAPPY_FORMAT \
            or (h.flags & fc.FLAG_MEMCPYED and h.blosc2_flags & fc.B2_DICT):
        return False
    if any(f in _BYTEDELTAS and m == 0 for f, m in zip(h.filters, h.filters_meta)):
        return False
    active = [f for f in h.filters if f]                     # V17: deltas apart
    deltas = [k for k, f in enumerate(active) if f == _DELTA]
    return not any(b - a > 1 for a, b in zip(deltas, deltas[1:]))


# beyond_all_reader_divergences: the chunk versions no predicate singles out,
# and the blosc2_flags bits that make a chunk special, lazy or instrumented
_PLAIN_VERSIONS = (4, 5)
_NOT_PLAIN = (fc.EXTENDED["blosc2_flags.special"].bits | fc.B2_LAZY | fc.B2_INSTR)


def reader_divergences(chunk, *, operation: str | None = None) -> list[Divergence]:
    """The reader divergences that apply to ``chunk`` (bytes-like); only
    those of ``operation`` ("decompress" / "getitem") when given."""
    data = bytes(chunk)
    try:
        parsed = parse_chunk(data)
    except FormatError:
        parsed = None
    return [d for d in DIVERGENCES if d.side == "reader"
            and (operation is None or d.operation == operation) and d.predicate(data, parsed)]


def index_divergences(chunk) -> list[Divergence]:
    """The divergences that apply to ``chunk`` (bytes-like) as a frame's
    offsets index, beyond those of any chunk (:func:`reader_divergences`)."""
    data = bytes(chunk)
    return [d for d in DIVERGENCES if d.side == "index" and d.predicate(data, None)]


def frame_divergences(frame) -> list[tuple[Divergence, int, str]]:
    """``(divergence, offset, path)`` for each place of the open ``frame``
    (a Frame whose vlmetalayers can be read) that C-Blosc2 or python-blosc2
    refuses, outside its chunks."""
    return [(d, at, path) for d in DIVERGENCES if d.side == "frame"
            for at, path in d.predicate(frame)]


def writer_divergence(params: dict[str, Any]) -> Divergence | None:
    """The first writer divergence that explains a difference for these
    ``compress`` parameters (see the module docstring for the keys)."""
    full = {"blocksize": 0, "format": "blosc2", "dict": False, "filters": ("shuffle",), **params}
    for d in DIVERGENCES:
        if d.side == "writer" and d.predicate(full):
            return d
    return None
