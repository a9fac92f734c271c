"""Building frames: python-blosc2 opens what blosckit builds with the same
data and metadata, and python-blosc2's own frames are rebuilt byte for byte
from their chunks and metadata."""
from __future__ import annotations

import functools
import re
import struct
from pathlib import Path

import msgpack
import pytest

import blosckit
from blosckit.frame.build import build_frame
from blosckit.frame.writer import compress_frame
from blosckit.frame.sframe import to_sframe
import cli_runner
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")


def _schunk(n, *, codec=blosc2.Codec.LZ4, meta=None, vlmeta=None, zeros_at=(), last=1000):
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4, codec=codec, clevel=5),
                       meta=meta or {})
    for i in range(n):
        items = last if i == n - 1 else 1000
        a = np.zeros(items, "<i4") if i in zeros_at else np.arange(i * 1000, i * 1000 + items,
                                                                   dtype="<i4")
        sc.append_data(a)
    for k, v in (vlmeta or {}).items():
        sc.vlmeta[k] = v
    return sc


def _same_as_oracle(frame: bytes, sc) -> None:
    got = blosc2.schunk_from_cframe(frame)
    assert got.nchunks == sc.nchunks and got[:] == sc[:]
    assert list(got.meta.keys()) == list(sc.meta.keys())
    assert all(got.meta[k] == sc.meta[k] for k in sc.meta.keys())
    assert got.vlmeta[:] == sc.vlmeta[:]


CASES = {
    "plain": dict(n=3),
    "meta+vlmeta+zeros": dict(n=4, meta={"m1": b"\x01\x02", "other": [1, 2, 3]},
                              vlmeta={"v": {"a": 1}, "w": "x" * 300}, zeros_at=(3,)),
    "short-last": dict(n=5, last=10, codec=blosc2.Codec.ZSTD),
    "one": dict(n=1, codec=blosc2.Codec.BLOSCLZ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rebuilds_python_blosc2_frames_byte_for_byte(name):
    sc = _schunk(**CASES[name])
    ref = bytes(sc.to_cframe())
    f = blosckit.open_frame(ref)
    mine = build_frame([f.chunk(i) for i in range(f.nchunks)], metalayers=f.metalayers,
                       vlmetalayers=f.vlmetalayers, clevel=5)
    _same_as_oracle(mine, sc)
    assert mine == ref


def test_an_empty_frame_opens_in_python_blosc2():
    fr = build_frame([], metalayers={"m": msgpack.packb(3)})
    sc = blosc2.schunk_from_cframe(fr)
    assert sc.nchunks == 0 and sc[:] == b"" and sc.meta["m"] == 3
    f = blosckit.open_frame(fr)
    assert f.nchunks == 0 and f.decompress() == b"" and f.offsets == []


def test_build_frame_from_blosckit_chunks_opens_in_python_blosc2():
    data = [np.arange(i * 500, (i + 1) * 500, dtype="<f8") for i in range(6)]
    chunks = [blosckit.compress(a, codec="zstd", filters=("bitshuffle",)) for a in data]
    chunks.append(blosckit.compress_special("zeros", 4000, typesize=8))
    meta = {"m": msgpack.packb({"k": [1, 2]})}
    fr = build_frame(chunks, metalayers=meta, vlmetalayers={"v": msgpack.packb("hello")})
    sc = blosc2.schunk_from_cframe(fr)
    assert sc[:] == b"".join(a.tobytes() for a in data) + bytes(4000)
    assert sc.meta["m"] == {"k": [1, 2]} and sc.vlmeta["v"] == "hello"
    f = blosckit.open_frame(fr)
    assert f.offsets[-1] == "zeros" and f.codec == "zstd" and f.filters == [("bitshuffle", 0)]


def test_lz4hc_is_named_in_the_frame_header():
    chunks = [blosckit.compress(np.arange(1000, dtype="<i4"), codec="lz4hc")]
    assert blosckit.open_frame(build_frame(chunks)).codec == "lz4hc"


def test_compress_frame_and_sframe(tmp_path):
    a = np.linspace(0, 1, 100_000)
    fr = compress_frame(a, chunksize=80_000, codec="zstd",
                        metalayers={"m": msgpack.packb(1)},
                        vlmetalayers={"v": msgpack.packb([1])})
    assert blosckit.open_frame(fr).decompress() == a.tobytes()
    sc = blosc2.schunk_from_cframe(fr)
    assert sc[:] == a.tobytes() and sc.nchunks == 10
    to_sframe(fr, tmp_path / "s.b2frame")
    s = blosc2.open(str(tmp_path / "s.b2frame"))
    assert s[:] == a.tobytes() and s.meta["m"] == 1 and s.vlmeta["v"] == [1]
    g = blosckit.open_frame(tmp_path / "s.b2frame")
    assert g.offsets == list(range(10)) and g.decompress() == a.tobytes()


def test_bad_inputs_are_value_errors():
    c = blosckit.compress(bytes(1000))
    with pytest.raises(ValueError, match="more than the chunk size"):
        build_frame([blosckit.compress(bytes(2000))], chunksize=1000)   # C-Blosc2 refuses it
    with pytest.raises(ValueError, match="VL-block"):
        build_frame([c, blosckit.compress_vlblocks([b"ab", b"cde"])])   # C-Blosc2 refuses the mix
    with pytest.raises(ValueError):
        build_frame([c], metalayers={"x" * 40: b""})
    with pytest.raises(ValueError):
        compress_frame(bytes(100), chunksize=0)


def test_a_bad_chunk_is_the_readers_format_error_under_its_index():
    """A chunk cut short, or whose header no reader takes, gets the chunk
    reader's rule and offset, its path under ``chunks[k]``; bytes after a
    chunk's cbytes are not part of it (T-trailing) and are not stored."""
    c = blosckit.compress(bytes(range(250)) * 4, typesize=4)
    for bad, rule, offset, path in [
            (c[:-1], "T-truncated", len(c) - 1, "chunks[1]"),
            (c[:10], "T-truncated", 10, "chunks[1].header"),
            (c[:12] + (-5).to_bytes(4, "little", signed=True) + c[16:], None, None, None)]:
        with pytest.raises(blosckit.FormatError) as e:
            build_frame([c, bad])
        try:
            blosckit.parse_chunk(bad)
        except blosckit.FormatError as want:
            assert (e.value.rule, e.value.offset) == (want.rule, want.offset)
            assert e.value.path == want.path.replace("chunk", "chunks[1]", 1)
        if rule is not None:
            assert (e.value.rule, e.value.offset, e.value.path) == (rule, offset, path)
    fr = build_frame([c, c + b"junk"])
    assert fr == build_frame([c, c])
    assert blosc2.schunk_from_cframe(fr)[:] == bytes(range(250)) * 8
    assert [p for p in blosckit.validate(fr) if p.severity == "error"] == []


@pytest.mark.parametrize("layout", [14, 13, 12, 11])
def test_older_header_layouts_read_back(layout):
    data = [np.arange(i * 500, (i + 1) * 500, dtype="<i4") for i in range(4)]
    chunks = [blosckit.compress(a, codec="lz4", filters=("bitshuffle",)) for a in data]
    chunks.append(blosckit.compress_special("zeros", 2000, typesize=4))
    meta = {} if layout == 11 else {"m": msgpack.packb("old")}
    fr = build_frame(chunks, metalayers=meta, vlmetalayers={"v": b"x"}, layout=layout)
    assert fr[0] == 0x90 | layout
    f = blosckit.open_frame(fr)
    assert f.layout == layout and f.nchunks == 5
    assert f.decompress() == b"".join(a.tobytes() for a in data) + bytes(2000)
    assert f.metalayers == meta and f.vlmetalayers == {"v": b"x"}
    # 2.0.0-beta.1 (12 and 11 elements) wrote "shuffle" whatever the filters
    assert f.filters == [("bitshuffle" if layout >= 13 else "shuffle", 0)] and f.codec == "lz4"
    assert f.offsets[-1] == "zeros"
    if layout == 14:
        assert blosc2.schunk_from_cframe(fr)[:] == f.decompress()
    # a marker of the layout's own fields: the reader names it
    bad = bytearray(fr)
    bad[0x2F] ^= 0xFF                      # the typesize marker in every layout
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(bytes(bad))
    assert (e.value.rule, e.value.offset) == ("F-marker", 0x2F)
    assert e.value.path == "frame.header.typesize_marker"


SPEC = Path(__file__).resolve().parent.parent / "specs" / "frame.md"


def _worked_example() -> bytes:
    """The bytes of the frame dump in specs/frame.md, "Worked example"."""
    text = SPEC.read_text()
    section = text[text.index("## Worked example"):text.index("For comparison")]
    return bytes.fromhex("".join(
        " ".join(m.group(1).split()) for m in re.finditer(
            r"^[0-9a-f]{4}  ((?:[0-9a-f]{2} ){0,15}[0-9a-f]{2})", section, re.M)))


def test_the_spec_worked_example_is_what_blosckit_builds():
    built = compress_frame(np.arange(8, dtype="<i4"), chunksize=16, codec="blosclz",
                           metalayers={"m": msgpack.packb(7)}, vlmetalayers={"v": b"hi"})
    assert _worked_example() == built


@pytest.mark.parametrize("nthreads", [1, 3])
def test_the_spec_worked_example_is_what_python_blosc2_writes(nthreads):
    """The golden frame is not only blosckit's: python-blosc2 opens it with
    the same contents, and writes the same 335 bytes for the same input.
    Choices that make the bytes meet: the shuffle goes to filter slot 0
    (python-blosc2's own default puts it in slot 5), the vlmetalayer is
    stored raw (``vlmeta[...] =`` would msgpack it).  The thread-count
    fields (0x3E, 0x41) do not follow the nthreads given (0 and 1 both
    times), so no byte differs."""
    dump = _worked_example()
    theirs = blosc2.schunk_from_cframe(dump, copy=True)
    assert theirs.nchunks == 2 and theirs[:] == np.arange(8, dtype="<i4").tobytes()
    assert theirs.meta["m"] == 7 and theirs.vlmeta.get_vlmeta("v") == b"hi"
    assert (theirs.typesize, theirs.chunksize, theirs.cparams.codec, theirs.cparams.clevel) \
        == (4, 16, blosc2.Codec.BLOSCLZ, 5)
    sc = blosc2.SChunk(chunksize=16, data=np.arange(8, dtype="<i4").tobytes(),
                       cparams=blosc2.CParams(typesize=4, codec=blosc2.Codec.BLOSCLZ, clevel=5,
                                              filters=[blosc2.Filter.SHUFFLE],
                                              filters_meta=[0], nthreads=nthreads),
                       dparams=blosc2.DParams(nthreads=nthreads), meta={"m": 7})
    sc.vlmeta.set_vlmeta("v", b"hi")
    assert bytes(sc.to_cframe()) == dump


# ---------------------------------------------------------------------------
# The older header layouts, against C-Blosc2's writers of their time
# ---------------------------------------------------------------------------
#
# Each field's offset, msgpack marker and width come from the older frame
# documents (../shared/seeds/003_92fb721ae2a57fd1.txt: 11 and 12 elements,
# the README_FRAME_FORMAT.rst of c-blosc2 commit e87dd0af, 19 Aug 2019;
# 004_be0a667bebef7580.txt: 13 elements); each value is what C-Blosc2's
# writer of that era put there (new_header2_frame in v2.0.0-beta.1, the only
# release writing 12 and 11 elements; new_header_frame from v2.0.0-beta.2,
# 13 elements, frame version 1, to c473b21c, 19 Jan 2021), checked on frames
# written by those two releases.  Where a document says otherwise, the
# comment names it and specs/frame.md lists it ("Slips in the upstream frame
# documents").

OLD_DATA = [np.arange(i * 500, (i + 1) * 500, dtype="<i4") for i in range(3)]
OLD_META = {"m": msgpack.packb("old")}
OLD_VLMETA = {"v": b"x"}


def _fields(layout: int, chunks: list[bytes], frame_len: int):
    """``(offset, name, expected bytes)`` of a header of ``layout`` elements
    holding ``chunks`` (lz4, clevel 5, byte shuffle, typesize 4, 2000 bytes
    each), the vlmetalayer OLD_VLMETA and, with 12 or 13 elements, the
    metalayer OLD_META."""
    first = chunks[0]
    version, typesize, chunksize = first[0], first[3], struct.unpack_from("<i", first, 4)[0]
    fixed = 0x52 if layout == 13 else 0x40         # where the metalayers start
    meta = _metalayer_section(fixed) if layout in (12, 13) else b""
    if layout == 13:
        # beta.2 (d589d4ae): the version (1) in bits 0-3, 0x20 for 64-bit
        # offsets; then a byte left at 0 (945b6950), as 004 says
        general, second = 0x21, ("reserved_flags", 0x00)
    else:
        # beta.1: 0x04 ("frame") + version 0 + 0x20 (64-bit offsets).  003
        # gives "Frame" as 2 in bits 2-3, 0x28 (a slip).  filter_flags: 0x06
        # (shuffle, split) whatever the filters (003's encoding of that)
        general, second = 0x24, ("filter_flags", 0x06)
    out = [
        (0x00, "fixarray", bytes([0x90 | layout])),
        (0x01, "magic", b"\xa8" + b"b2frame\x00"),
        (0x0A, "header_size", b"\xd2" + struct.pack(">i", fixed + len(meta))),
        (0x0F, "frame_size", b"\xcf" + struct.pack(">Q", frame_len)),
        (0x18, "flags_marker", b"\xa4"),
        (0x19, "general_flags", bytes([general])),
        (0x1A, second[0], bytes([second[1]])),
        # both: the codec id (lz4: 1) + clevel << 4.  003 and 004 list the
        # chunk formats, not the ids (lz4hc would be 2, zlib 4, zstd 5)
        (0x1B, "codec_flags", b"\x51"),
        # both: 0, as the documents have it (the split mode came in 2022)
        (0x1C, "reserved_byte", b"\x00"),
        (0x1D, "uncompressed_size", b"\xd3" + struct.pack(">q", 2000 * len(chunks))),
        (0x26, "compressed_size", b"\xd3" + struct.pack(">q", sum(map(len, chunks)))),
        (0x2F, "type_size", b"\xd2" + struct.pack(">i", typesize)),
        (0x34, "chunk_size", b"\xd2" + struct.pack(">i", chunksize)),
        # both: the contexts' thread counts, 1 by default in both releases
        (0x39, "tcomp", b"\xd1" + struct.pack(">h", 1)),
        (0x3C, "tdecomp", b"\xd1" + struct.pack(">h", 1)),
        # beta.1: whether metalayers follow (003's has_metalayers: 12
        # elements); beta.2: whether the trailer holds user data (004's
        # has_usermeta), here the vlmetalayer
        (0x3F, "has_meta", b"\xc2" if layout == 11 else b"\xc3"),
    ]
    if layout == 13:
        # beta.2 (945b6950): fixext 16 (004 draws d2: a slip); type byte =
        # the filters in use (one), packed from slot 0, then 8 metas; slots
        # 6-7 stay 0 (today's udcodec and compcode_meta came in Apr 2021)
        out += [(0x40, "filter_pipeline", b"\xd8" + bytes([1, 1, 0, 0, 0, 0, 0])),
                (0x48, "filter_codes_6_7", bytes(2)), (0x4A, "filter_metas", bytes(8))]
    if meta:
        out.append((fixed, "metalayers", meta))
    assert all(a[0] + len(a[2]) == b[0] for a, b in zip(out, out[1:])), "gap in the layout"
    assert out[-1][0] + len(out[-1][2]) == fixed + len(meta)
    return out, version


def _metalayer_section(start: int) -> bytes:
    """003/004: array of 3 (0x93); uint16 (0xcd) idx; map16 (0xde) name ->
    int32 (0xd2) position of the value; then the values, each a bin32
    (0xc6).  idx counts the array marker, itself and the map (slip 4); the
    values sit in an array16 (0xdc), the third element; a position counts
    from the start of the frame and points at the value's bin32 marker."""
    (name, value), = OLD_META.items()
    entry_len = 1 + len(name) + 5
    idx = 1 + 3 + 3 + entry_len
    values_at = start + idx + 3
    return (b"\x93" + b"\xcd" + struct.pack(">H", idx) + b"\xde" + struct.pack(">H", 1)
            + bytes([0xA0 | len(name)]) + name.encode() + b"\xd2" + struct.pack(">i", values_at)
            + b"\xdc" + struct.pack(">H", 1) + b"\xc6" + struct.pack(">I", len(value)) + value)


FIELD_NAMES = ["fixarray", "magic", "header_size", "frame_size", "flags_marker",
               "general_flags", "filter_flags", "reserved_flags", "codec_flags",
               "reserved_byte", "uncompressed_size", "compressed_size", "type_size",
               "chunk_size", "tcomp", "tdecomp", "has_meta", "filter_pipeline",
               "filter_codes_6_7", "filter_metas", "metalayers"]
_ONLY = {"filter_flags": (11, 12), "reserved_flags": (13,), "filter_pipeline": (13,),
         "filter_codes_6_7": (13,), "filter_metas": (13,), "metalayers": (12, 13)}


@functools.cache
def _old_frame(layout: int) -> tuple[bytes, list[bytes]]:
    chunks = [blosckit.compress(a, codec="lz4", clevel=5, filters=("shuffle",))
              for a in OLD_DATA]
    fr = build_frame(chunks, metalayers={} if layout == 11 else OLD_META,
                     vlmetalayers=OLD_VLMETA, clevel=5, layout=layout)
    return fr, chunks


@pytest.mark.parametrize("layout,field_name", [
    (layout, name) for layout in (11, 12, 13) for name in FIELD_NAMES
    if layout in _ONLY.get(name, (layout,))])
def test_older_header_layouts_match_their_writers(layout, field_name):
    fr, chunks = _old_frame(layout)
    fields, version = _fields(layout, chunks, len(fr))
    assert version == 5            # the chunks themselves are current ones
    (at, _, want), = [f for f in fields if f[1] == field_name]
    assert fr[at:at + len(want)].hex(" ") == want.hex(" "), field_name


def test_the_13_element_pipeline_packs_the_filters_in_use():
    """beta.2 to Jan 2021 kept the filters in use in pipeline order from
    slot 0, their metas alike, and counted them in the type byte."""
    chunks = [blosckit.compress(np.arange(1000, dtype="<i4"),
                                filters=("nofilter", "delta", "nofilter", ("shuffle", 4)))]
    fr = build_frame(chunks, metalayers=OLD_META, layout=13)
    assert fr[0x40:0x52].hex(" ") == (b"\xd8\x02" + bytes([3, 1]) + bytes(6)
                                      + bytes([0, 4]) + bytes(6)).hex(" ")
    assert blosckit.open_frame(fr).filters == [("delta", 0), ("shuffle", 4)]


def test_older_layouts_refuse_what_their_writers_could_not_write():
    chunk = bytearray(blosckit.compress(np.arange(1000, dtype="<i4")))
    with pytest.raises(ValueError, match="12-element"):
        build_frame([bytes(chunk)], layout=12)       # beta.1: 11 elements then
    chunk[2] = (chunk[2] & 0x1F) | (6 << 5)          # codec format 6: see udcodec
    chunk[22] = 32                                   # ndlz, a plugin codec (2021)
    for layout in (13, 12, 11):
        with pytest.raises(ValueError, match="udcodec"):
            build_frame([bytes(chunk)], metalayers=OLD_META if layout == 12 else None,
                        layout=layout)


@pytest.mark.parametrize("layout", [11, 12, 13])
def test_older_layouts_end_with_the_documented_trailer_tail(layout):
    """004's trailer ends with a uint32 (0xce) trailer length, then fixext
    16 (0xd8): the fingerprint type (0: none) and 16 bytes; the trailer
    array (0x94) starts that many bytes before the end.  (Its middle, a
    bin32 usermeta, is the first trailers' (specs/frame.md, "Older
    layouts"); blosckit writes the vlmetalayers of today's trailer, and a
    trailer in the layouts of 12 and 11 elements, whose writer had none.)"""
    fr, _ = _old_frame(layout)
    tail = fr[-23:]
    assert tail[0] == 0xCE and tail[5:7] == b"\xd8\x00" and tail[7:] == bytes(16)
    trailer_len = struct.unpack_from(">I", tail, 1)[0]
    assert fr[len(fr) - trailer_len] == 0x94


# ---------------------------------------------------------------------------
# Variable-size chunks, against python-blosc2's own frames
# ---------------------------------------------------------------------------
#
# python-blosc2 is asked with one thread each way (its output is then
# deterministic), and its frames are read chunk by chunk: its slice reader
# divides by the chunk size, 0 in these frames, and dies with SIGFPE
# (``schunk[:]``, ``blosc2.open(path)[:]``).

def _pinned(codec=blosc2.Codec.LZ4, **kw):
    return dict(cparams=blosc2.CParams(typesize=4, codec=codec, clevel=5, nthreads=1, **kw),
                dparams=blosc2.DParams(nthreads=1))


def _appended(sizes, *, chunksize=4000, meta=None, vlmeta=None):
    """A python-blosc2 super-chunk of ``append_data`` calls of ``sizes`` int32 items."""
    sc = blosc2.SChunk(chunksize=chunksize, meta=meta or {}, **_pinned())
    for i, n in enumerate(sizes):
        sc.append_data(np.arange(n, dtype="<i4") * (i + 1) + i)
    for k, v in (vlmeta or {}).items():
        sc.vlmeta[k] = v
    return sc


def _chunks(sc) -> list[bytes]:
    return [bytes(sc.get_chunk(i)) for i in range(sc.nchunks)]


def _reads_every_chunk(frame: bytes, datas: list[bytes]) -> None:
    """python-blosc2 opens ``frame`` and decodes each chunk to ``datas``."""
    got = blosc2.schunk_from_cframe(frame, copy=True)
    assert got.nchunks == len(datas)
    assert [bytes(got.decompress_chunk(i)) for i in range(got.nchunks)] == datas


VL_SIZES = {
    "short-middle": [1000, 500, 1000],
    "two-short-last": [1000, 500, 500],
    "short-first": [500, 1000],
    "longer": [1000, 2000],
    "full-after-short": [1000, 1000, 250, 1000],
    "many": [500, 2000, 10, 3, 7, 1000],
    "fixed-short-last": [1000, 1000, 500],          # stays a fixed-size frame
}


@pytest.mark.parametrize("chunksize", [4000, None])
@pytest.mark.parametrize("name", sorted(VL_SIZES))
def test_variable_size_frames_are_python_blosc2s_byte_for_byte(name, chunksize):
    """The header (chunksize 0, general flags 0x53: variable_chunks, 64-bit
    offsets, version 3; the block size of the last chunk) and the rest, as
    python-blosc2 writes them for the same chunks."""
    sc = _appended(VL_SIZES[name], meta={"m": [1, 2]}, vlmeta={"v": "x"})
    ref = bytes(sc.to_cframe())
    theirs = blosckit.open_frame(ref)
    assert (theirs.chunksize == 0) == (name != "fixed-short-last")
    mine = build_frame(_chunks(sc), metalayers=theirs.metalayers,
                       vlmetalayers=theirs.vlmetalayers, chunksize=chunksize)
    assert mine == ref
    _reads_every_chunk(mine, [bytes(sc.decompress_chunk(i)) for i in range(sc.nchunks)])


def test_chunksize_0_asks_for_a_variable_size_frame():
    sc = _appended([1000, 1000])
    mine = build_frame(_chunks(sc), chunksize=0)
    got = blosc2.schunk_from_cframe(mine, copy=True)
    assert got.chunksize == 0 and got.nbytes == 8000
    _reads_every_chunk(mine, [bytes(sc.decompress_chunk(i)) for i in range(2)])
    assert build_frame(_chunks(sc)) == bytes(sc.to_cframe())     # fixed-size without it


def test_an_empty_last_chunk_makes_the_frame_variable_size():
    """python-blosc2 writes a fixed-size frame whose chunk count (nbytes /
    chunksize) misses the empty chunk, and cannot open it; blosckit's frame
    keeps both chunks."""
    sc = _appended([1000, 0])
    _python_blosc2_refuses(bytes(sc.to_cframe()))
    mine = build_frame(_chunks(sc))
    _reads_every_chunk(mine, [bytes(sc.decompress_chunk(0)), b""])
    assert blosckit.open_frame(mine).chunksize == 0


def _special(kind, nitems: int) -> bytes:
    """A special chunk of ``nitems`` int32 as C-Blosc2 makes it."""
    sc = blosc2.SChunk(chunksize=4 * nitems, **_pinned())
    sc.fill_special(nitems, kind)
    return bytes(sc.get_chunk(0))


_OPEN_COPY = """
import sys, blosc2
blosc2.schunk_from_cframe(bytes.fromhex(sys.argv[1]), copy=True)
print("opened")
"""


def _python_blosc2_refuses(frame: bytes) -> None:
    """python-blosc2 cannot open ``frame``: it raises, or C-Blosc2 crashes
    on it now and then, so it is asked in a child process."""
    child = cli_runner.python(_OPEN_COPY, frame.hex(), text=True, timeout=120)
    assert child.returncode != 0 and "opened" not in child.stdout, child


def test_special_chunks_are_stored_in_variable_size_frames():
    """python-blosc2 puts a special entry into a variable-size frame, then
    cannot open the frame (it builds special chunks of the chunk size, 0
    here; opened without a copy, reading that chunk fails or crashes the
    interpreter); blosckit stores the special chunk as a chunk there."""
    sc = _appended([1000, 500])
    zeros = _special(blosc2.SpecialValue.ZERO, 1000)
    sc.append_chunk(zeros)
    ref = bytes(sc.to_cframe())
    # blosckit refuses the entry C-Blosc2 cannot read back (specs/frame.md)
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(ref).offsets
    assert (e.value.rule, e.value.path) == ("F-special", "frame.offsets[2]")
    _python_blosc2_refuses(ref)
    data = [bytes(sc.decompress_chunk(i)) for i in range(2)] + [bytes(4000)]
    mine = build_frame(_chunks(sc)[:2] + [zeros])
    _reads_every_chunk(mine, data)
    assert "zeros" not in blosckit.open_frame(mine).offsets


def test_special_chunks_before_a_frame_turns_variable_size_are_stored_then():
    """A special chunk that came while the frame was fixed-size is a special
    entry until a chunk makes the frame variable-size; then it is stored
    before that chunk, and its entry points there."""
    full, short = _appended([1000]), _appended([500])
    nan = _special(blosc2.SpecialValue.NAN, 1000)
    chunks = [_chunks(full)[0], nan, _chunks(short)[0], _chunks(full)[0]]
    data = [bytes(full.decompress_chunk(0)), np.full(1000, np.nan, "<f4").tobytes(),
            bytes(short.decompress_chunk(0)), bytes(full.decompress_chunk(0))]
    fixed = build_frame(chunks[:3])
    assert blosckit.open_frame(fixed).offsets[1] == "nan"
    _reads_every_chunk(fixed, data[:3])
    mine = build_frame(chunks)
    _reads_every_chunk(mine, data)
    f = blosckit.open_frame(mine)
    assert f.chunksize == 0 and f.offsets[1] > f.offsets[2]
    assert f.offsets[3] == f.offsets[1] + len(nan)


def test_vl_block_chunks_of_different_sizes_make_a_variable_size_frame():
    blocks = [[b"abc" * 10, b"defg" * 100], [b"x" * 7], [b"y" * 50, b"z" * 3, b"w" * 9]]
    mine = build_frame([blosckit.compress_vlblocks(b) for b in blocks])
    _reads_every_chunk(mine, [b"".join(b) for b in blocks])
    f = blosckit.open_frame(mine)
    assert (f.version, f.chunksize) == (3, 0)


def test_a_none_among_the_chunks_is_an_error_not_the_end():
    """The short path of build_frame once took a None chunk for the end of
    the chunks and built a frame without the rest."""
    c = blosckit.compress(b"x" * 1000)
    with pytest.raises(TypeError):
        build_frame([c, c, None, c])


@functools.cache
def _many_chunks_schunk():
    """300 chunks of 16 items, zeros (special chunks) now and then, a
    short last chunk: python-blosc2's frame of them."""
    sc = blosc2.SChunk(chunksize=64, cparams=blosc2.CParams(typesize=4, codec=blosc2.Codec.LZ4,
                                                            clevel=5))
    n = 300
    data = np.arange(n * 16, dtype="<i4")
    for i in range(n):
        part = data[i * 16:(i + 1) * 16 - (8 if i == n - 1 else 0)]
        sc.append_data(np.zeros_like(part) if i % 37 in (5, 6) else part)
    return bytes(sc.to_cframe())


@pytest.mark.parametrize("form", ["bytes", "memoryview", "generator", "mixed"])
def test_many_chunks_in_any_form_rebuild_python_blosc2s_frame(form, monkeypatch):
    """The short path reads the headers of a batch of chunks in one native
    call; special chunks, the short last chunk, batch boundaries (batches
    of 64 chunks here) and chunks of every accepted kind all give
    python-blosc2's bytes."""
    from blosckit.frame import build as fb
    monkeypatch.setattr(fb, "_BATCH", 64)
    ref = _many_chunks_schunk()
    f = blosckit.open_frame(ref)
    assert f.nchunks == 300 and "zeros" in f.offsets
    chunks = [f.chunk(i) for i in range(f.nchunks)]
    given = {"bytes": chunks, "memoryview": [memoryview(c) for c in chunks],
             "generator": (c for c in chunks),
             "mixed": [memoryview(c) if i % 3 == 0 else bytearray(c) if i % 3 == 1 else c
                       for i, c in enumerate(chunks)]}[form]
    calls = []
    real = fb.native.plain_chunks
    monkeypatch.setattr(fb.native, "plain_chunks", lambda *a: calls.append(a[2]) or real(*a))
    assert build_frame(given, clevel=5) == ref
    # batches of one kind of chunk go through the native run, mixed ones one by one
    assert bool(calls) == (form != "mixed")


def test_short_path_takes_what_the_chunk_by_chunk_test_takes():
    """The native run over a batch stops where formats.chunk's
    plain_chunk_test first says no, the offsets counted on the way."""
    from array import array
    from blosckit import native
    from blosckit.formats import chunk as fc
    from blosckit.frame import build as fb

    c = blosckit.compress(np.arange(256, dtype="<i4"), codec="lz4")
    special = blosckit.compress_special("zeros", 1024, typesize=4)
    other_size = blosckit.compress(np.arange(200, dtype="<i4"), codec="lz4")
    vl = blosckit.compress_vlblocks([b"ab" * 512])
    alpha = bytes([3]) + c[1:]                   # a version of the alpha extended layout
    lying = c[:12] + struct.pack("<i", len(c) + 1) + c[16:]
    for odd in (special, other_size, vl, alpha, lying):
        for at in (0, 1, 5):
            chunks = [c] * at + [odd] + [c] * 3
            heads = b"".join(x[:fc.LEN_EXTENDED] for x in chunks)
            lens = array("q", [len(x) for x in chunks])
            offsets = array("q", bytes(8 * len(chunks)))
            k = native.plain_chunks(heads, lens, 0, 1024, False, fb._ODD_VERSIONS, 100, offsets)
            test = fc.plain_chunk_test(1024, False)
            want = next(i for i, x in enumerate(chunks) if test(x) < 0)
            assert k == want == at
            assert list(offsets[:k]) == [100 + len(c) * i for i in range(k)]
            # from the chunk after the odd one on, the rest is taken
            assert native.plain_chunks(heads, lens, at + 1, 1024, False, fb._ODD_VERSIONS,
                                       0, offsets) == 3
