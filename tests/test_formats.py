"""The declarations of formats/chunk.py: parse/build/sizeof round trips
(construct's gallery ``common()``), the derived fast struct formats against
the declarations, the spec (specs/chunk.md) naming every field and rule, and
describe's readings keyed by declared fields."""
from __future__ import annotations

import pathlib
import re
import struct

import construct as cs
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from blosckit.formats import chunk as fc
from blosckit.formats import describe as fd
from blosckit.formats import frame as ff
from blosckit.formats import b2nd as fb
from blosckit.formats.layout import Layout, inner
from helpers import strip
from blosckit.formats.rules import RULES

SPEC = pathlib.Path(__file__).resolve().parent.parent / "specs" / "chunk.md"


def common(format, datasample: bytes, objsample, sizesample=cs.SizeofError, **kw):
    """construct's gallery helper: parse, build, sizeof and the round trip."""
    obj = format.parse(datasample, **kw)
    assert strip(obj) == strip(objsample)
    data = format.build(objsample, **kw)
    assert data == datasample
    if isinstance(sizesample, int):
        assert format.sizeof(**kw) == sizesample
    else:
        with pytest.raises(sizesample):
            format.sizeof(**kw)
    assert format.build(format.parse(datasample, **kw), **kw) == datasample


def _flags(compformat=0, dont_split=False, delta=False, bitshuffle=False, memcpyed=False,
           shuffle=False):
    return dict(compformat=compformat, dont_split=dont_split, delta=delta,
                bitshuffle=bitshuffle, memcpyed=memcpyed, shuffle=shuffle)


def _b2flags(instrumented=False, special=0, lazy=False, unimplemented=False,
             big_endian=False, use_dict=False):
    return dict(instrumented=instrumented, special=special, lazy=lazy,
                unimplemented=unimplemented, big_endian=big_endian, use_dict=use_dict)


HDR = struct.pack("<BBBBiii", 2, 1, 0x31, 4, 4000, 1024, 300)
HDR_OBJ = dict(version=2, versionlz=1, flags=_flags(compformat=1, dont_split=True,
                                                      shuffle=True),
               typesize=4, nbytes=4000, blocksize=1024, cbytes=300)

EXT = bytes([0, 0, 0, 0, 3, 1, 5, 7, 0, 0, 0, 0, 0, 2, 0, 0x31])
EXT_OBJ = dict(filters=[0, 0, 0, 0, 3, 1], udcodec=5, compcode_meta=7,
               filters_meta=[0, 0, 0, 0, 0, 2],
               blosc2_flags2=dict(reserved=0, vl_blocks=False),
               blosc2_flags=_b2flags(special=3, use_dict=True))

ALPHA = bytes([1, 2, 0, 0, 0]) + b"\0\0\0" + bytes([0, 9, 0, 0, 0]) + b"\0\0" + b"\x08"
ALPHA_OBJ = dict(filters=[1, 2, 0, 0, 0], reserved1=b"\0\0\0", filters_meta=[0, 9, 0, 0, 0],
                 reserved2=b"\0\0", blosc2_flags=_b2flags(lazy=True))


def test_chunk_header():
    common(fc.ChunkHeader, HDR, HDR_OBJ, 16)


def test_extended_header():
    common(fc.ExtendedHeader, EXT, EXT_OBJ, 16)


def test_extended_header_alpha():
    common(fc.ExtendedHeaderAlpha, ALPHA, ALPHA_OBJ, 16)


def test_header_blosc1():
    common(fc.Header, HDR, dict(HDR_OBJ, extended=None))


def test_header_extended_v5():
    raw = struct.pack("<BBBBiii", 5, 1, 0x95, 8, 80, 80, 32) + EXT
    obj = dict(version=5, versionlz=1,
               flags=_flags(compformat=4, dont_split=True, bitshuffle=True, shuffle=True),
               typesize=8, nbytes=80, blocksize=80, cbytes=32, extended=EXT_OBJ)
    common(fc.Header, raw, obj)


def test_header_extended_v3_is_alpha():
    raw = struct.pack("<BBBBiii", 3, 1, 0x05, 8, 80, 80, 32) + ALPHA
    obj = dict(version=3, versionlz=1, flags=_flags(bitshuffle=True, shuffle=True),
               typesize=8, nbytes=80, blocksize=80, cbytes=32, extended=ALPHA_OBJ)
    common(fc.Header, raw, obj)


def test_stream_with_context():
    raw = struct.pack("<i", 3) + b"abc"
    common(fc.Stream, raw, dict(csize=3, token=None, cdata=b"abc"), version=5)
    common(fc.Stream, struct.pack("<i", 0), dict(csize=0, token=None, cdata=None), version=5)
    common(fc.Stream, struct.pack("<i", -7) + b"\x01", dict(csize=-7, token=1, cdata=None),
           version=5)
    # before version 4 a run has no token
    common(fc.Stream, struct.pack("<i", -7), dict(csize=-7, token=None, cdata=None),
           version=3)


def test_stream_inside_a_parent_giving_version():
    parent = cs.Struct("version" / cs.Int8ul, "s" / fc.Stream)
    obj = parent.parse(b"\x05" + struct.pack("<i", -2) + b"\x01")
    assert (obj.s.csize, obj.s.token) == (-2, 1)


def test_dict_section():
    common(fc.DictSection, struct.pack("<i", 5) + b"hello", dict(dsize=5, dict=b"hello"))


def test_vlblock():
    raw = struct.pack("<i", 100) + b"x" * 9
    common(fc.VLBlock, raw, dict(size=100, payload=b"x" * 9), 13, len_payload=9)


def test_vlblock_inside_a_parent_giving_len_payload():
    raw = struct.pack("<i", 100) + b"x" * 9
    wrapped = cs.Struct("len_payload" / cs.Computed(9), "block" / fc.VLBlock)
    obj = wrapped.parse(raw)
    assert (obj.block.size, obj.block.payload) == (100, b"x" * 9)
    assert wrapped.build(dict(block=dict(size=100, payload=b"x" * 9))) == raw


def test_lazy_trailer():
    raw = struct.pack("<iq3i", 7, 1 << 40, 10, 20, 30)
    common(fc.LazyTrailer, raw, dict(nchunk=7, offset=1 << 40, block_csizes=[10, 20, 30]),
           4 + 8 + 12, num_blocks=3)


# ---------------------------------------------------------------------------
# Derived fast formats agree with the declarations
# ---------------------------------------------------------------------------

def _leaves(obj, raw_bytes_of_bitstructs):
    """Flatten a parsed fixed-size struct the way the fast format does:
    arrays item by item, a BitStruct as its raw byte."""
    out = []
    for v in obj:
        out.extend(v if isinstance(v, list) else [v])
    return out


def _expected_fast(con, data: bytes) -> list:
    """Field-by-field values from the construct declaration; a one-byte
    BitStruct compares as its raw byte (the byte at that offset)."""
    parsed = con.parse(data)
    out, pos = [], 0
    for sub in con.subcons:
        size = sub.sizeof()
        v = parsed[sub.name]
        if isinstance(v, dict):            # BitStruct: the raw byte
            assert size == 1
            out.append(data[pos])
        elif isinstance(v, list):
            out.extend(v)
        else:
            out.append(v)
        pos += size
    return out


@pytest.mark.parametrize("con,fast", [
    (fc.ChunkHeader, fc.FAST_HEADER), (fc.ExtendedHeader, fc.FAST_EXTENDED),
    (fc.ExtendedHeaderAlpha, fc.FAST_EXTENDED_ALPHA)],
    ids=["header", "extended", "extended-alpha"])
@settings(deadline=None)
@given(data=st.binary(min_size=16, max_size=16))
def test_fast_formats_agree(con, fast, data):
    assert fast.size == con.sizeof() == 16
    assert list(fast.unpack(data)) == _expected_fast(con, data)


@given(st.binary(min_size=32, max_size=32))
@settings(deadline=None)
def test_header_bit_fields_match_raw_bytes(data):
    h = fc.Header.parse(data)
    f = h.flags
    assert f.compformat == data[2] >> 5
    assert (f.dont_split, f.delta, f.bitshuffle, f.memcpyed, f.shuffle) == tuple(
        bool(data[2] >> b & 1) for b in (4, 3, 2, 1, 0))
    assert (h.extended is not None) == ((data[2] & 0x05) == 0x05)
    if h.extended is not None:
        b = h.extended.blosc2_flags
        assert (b.instrumented, b.special, b.lazy, b.big_endian, b.use_dict) == (
            bool(data[31] & 0x80), data[31] >> 4 & 7, bool(data[31] & 8),
            bool(data[31] & 2), bool(data[31] & 1))


# ---------------------------------------------------------------------------
# specs/chunk.md names every field and every rule
# ---------------------------------------------------------------------------

def _field_names(con, seen=None) -> set[str]:
    seen = set() if seen is None else seen
    names = set()
    if id(con) in seen:
        return names
    seen.add(id(con))
    for sub in getattr(con, "subcons", []) or []:
        if getattr(sub, "name", None):
            names.add(sub.name)
        names |= _field_names(sub, seen)
    for attr in ("subcon", "thensubcon", "elsesubcon"):
        s = getattr(con, attr, None)
        if isinstance(s, cs.Construct):
            if getattr(s, "name", None):
                names.add(s.name)
            names |= _field_names(s, seen)
    for c in (getattr(con, "cases", None) or {}).values():
        names |= _field_names(c, seen)
    if isinstance(getattr(con, "default", None), cs.Construct):
        names |= _field_names(con.default, seen)
    return names


def declared_field_names(*modules) -> set[str]:
    modules = modules or (fc,)
    names = set()
    for m in modules:
        for v in vars(m).values():
            if isinstance(v, cs.Construct):
                names |= _field_names(v)
        for h in getattr(m, "FRAME_HEADERS", {}).values():
            names |= _field_names(h)
    return names


def _first_column_names(text: str) -> set[str]:
    """The backquoted names in the column that names fields of each
    markdown table: the one headed "field" where there is one, else the
    first."""
    out: set[str] = set()
    column = None                       # None: outside a table
    for line in text.splitlines():
        if not line.lstrip().startswith("|"):
            column = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if column is None:              # the table's header row
            column = cells.index("field") if "field" in cells else 0
        if column < len(cells):
            out.update(re.findall(r"`([^`]+)`", cells[column]))
    return out


def test_declared_field_names_found():
    names = declared_field_names()
    assert {"version", "versionlz", "typesize", "nbytes", "blocksize", "cbytes", "filters",
            "udcodec", "compcode_meta", "filters_meta", "blosc2_flags2", "blosc2_flags",
            "csize", "dsize", "use_dict", "special"} <= names


@pytest.mark.parametrize("spec, modules", [
    (SPEC, (fc,)),
    (SPEC.with_name("frame.md"), (ff, fb)),
], ids=["chunk.md", "frame.md"])
def test_spec_has_a_row_per_field(spec, modules):
    """Every field a declaration names has a row in its spec's tables."""
    assert spec.exists(), f"{spec} is missing"
    cells = _first_column_names(spec.read_text())
    # a field may be named with its parent (`flags.shuffle`) or alone
    short = cells | {c.rsplit(".", 1)[-1] for c in cells}
    missing = sorted(n for n in declared_field_names(*modules) if n not in short)
    assert missing == []


def test_spec_names_every_rule():
    assert SPEC.exists(), "specs/chunk.md is missing"
    text = SPEC.read_text()
    missing = sorted(r for r, rule in RULES.items() if rule.anchor.startswith("chunk.md")
                     and not re.search(rf"(?<![\w-]){re.escape(r)}(?![\w-])", text))
    assert missing == []


_bits = st.booleans()
_flags_st = st.fixed_dictionaries(dict(
    compformat=st.integers(0, 7), dont_split=_bits, delta=_bits, bitshuffle=_bits,
    memcpyed=_bits, shuffle=_bits))
_b2_st = st.fixed_dictionaries(dict(
    instrumented=_bits, special=st.integers(0, 7), lazy=_bits, unimplemented=_bits,
    big_endian=_bits, use_dict=_bits))
_i32 = st.integers(-2**31, 2**31 - 1)
_u8 = st.integers(0, 255)


@st.composite
def _headers(draw):
    version = draw(st.integers(0, 255))
    h = dict(version=version, versionlz=draw(_u8), flags=draw(_flags_st), typesize=draw(_u8),
             nbytes=draw(_i32), blocksize=draw(_i32), cbytes=draw(_i32), extended=None)
    if h["flags"]["shuffle"] and h["flags"]["bitshuffle"]:
        if version == 3:
            h["extended"] = dict(filters=draw(st.lists(_u8, min_size=5, max_size=5)),
                                 reserved1=draw(st.binary(min_size=3, max_size=3)),
                                 filters_meta=draw(st.lists(_u8, min_size=5, max_size=5)),
                                 reserved2=draw(st.binary(min_size=2, max_size=2)),
                                 blosc2_flags=draw(_b2_st))
        else:
            h["extended"] = dict(filters=draw(st.lists(_u8, min_size=6, max_size=6)),
                                 udcodec=draw(_u8), compcode_meta=draw(_u8),
                                 filters_meta=draw(st.lists(_u8, min_size=6, max_size=6)),
                                 blosc2_flags2=dict(reserved=draw(st.integers(0, 127)),
                                                    vl_blocks=draw(_bits)),
                                 blosc2_flags=draw(_b2_st))
    return h


@given(_headers())
def test_pack_header_matches_the_declaration(h):
    assert fc.pack_header(h) == fc.Header.build(h)


@given(st.binary(min_size=4, max_size=4), st.integers(1, 64))
def test_fast_item_formats_agree(data, n):
    # the one-field formats the reader uses for bstarts, dsize, csize and VL sizes
    for con, fast in ((fc.Bstarts.subcon, fc.FAST_BSTART), (fc.DictSection.dsize, fc.FAST_DSIZE),
                      (fc.Stream.csize, fc.FAST_CSIZE), (fc.VLBlock.size, fc.FAST_VLSIZE)):
        assert fast.unpack(data)[0] == con.parse(data)
    raw = data * n
    assert list(fc.fast_bstarts(n).unpack(raw)) == list(fc.Bstarts.parse(raw, num_blocks=n))


@given(st.binary(min_size=0, max_size=64))
def test_stream_declaration_agrees_with_the_reader_walk(data):
    """The Stream declaration and the reader's hand-derived walk (csize, token
    for versions >= 4, payload) take the same bytes."""
    from blosckit.formats import parse
    from blosckit.errors import FormatError
    for version in (3, 5):
        try:
            s = parse(fc.Stream, data, 0, "s", rule="B4", version=version)
        except FormatError:
            continue
        size = fc.LEN_CSIZE + (fc.LEN_TOKEN if s.token is not None else 0) + max(s.csize, 0)
        assert (s.token is not None) == (s.csize < 0 and version >= 4)
        assert size <= len(data)


@given(st.binary(min_size=32, max_size=32))
def test_derived_header_parser_equals_the_declaration(data):
    assert strip(fc.parse_header(data)) == strip(fc.Header.parse(data))


# ---------------------------------------------------------------------------
# describe: one reading per declared field
# ---------------------------------------------------------------------------

def _declares(decl, field: str) -> bool:
    """Whether ``decl`` (a layout or a construct struct) declares ``field``
    (dotted; a trailing ``[]``: the items of an array; ``""``: the whole)."""
    name = field.removesuffix("[]")
    array = name != field
    if "[]" in name:
        return False
    if isinstance(decl, Layout):
        f = decl.fields.get(name)
        return not name or (f is not None and (f.count > 1) == array)
    con = decl
    for part in filter(None, name.split(".")):
        con = inner(con)
        if isinstance(con, cs.Transformed):      # a BitStruct
            con = inner(con.subcon)
        subs = {s.name: s for s in getattr(con, "subcons", ())}
        if part not in subs:
            return False
        con = subs[part]
    return isinstance(inner(con), cs.Array) == array


def test_every_reading_names_a_declared_field():
    # the check itself catches a renamed field or a lost array
    assert _declares(fc.HEADER, "flags.shuffle") and not _declares(fc.HEADER, "flags.shufle")
    assert _declares(fc.Stream, "csize") and not _declares(fc.Stream, "csize[]")
    assert not _declares(fc.EXTENDED, "udcodec[]") and _declares(fc.EXTENDED, "filters[]")
    for path, d in fd.FIELDS.items():
        assert d.declarations, path
        for decl in d.declarations:
            assert _declares(decl, d.field), (path, decl)
            if isinstance(decl, Layout) and not d.root:
                assert path.startswith(decl.root + "."), (path, decl)


# A field in the terms of each reading the old path dispatch gave, and a value
# it names: every one still reads as something.
READ_BEFORE = {
    "chunk.header.version": 5,
    "chunk.header.flags.shuffle": 1,
    "chunk.header.flags.bitshuffle": 1,
    "chunk.header.flags.compformat": 1,
    "chunk.header.extended.filters[2]": 1,
    "chunk.header.extended.udcodec": 1,
    "chunk.header.extended.blosc2_flags.special": 1,
    "chunk.blocks[0].streams[3].csize": -7,
    "frame.header.magic": ff.MAGIC,
    "frame.header.general_flags.version": 2,
    "frame.header.general_flags.offsets_size": 1,
    "frame.header.frame_type": 1,
    "frame.header.filter_flags.shuffle": 2,
    "frame.header.codec_flags.codec": 5,
    "frame.header.other_flags.splitmode": 3,
    "frame.header.has_vlmetalayers": 0xC3,
    "frame.header.filter_pipeline.filters[5]": 1,
    "frame.header.filter_pipeline.udcodec": 1,
    "frame.trailer.version": 1,
    "frame.trailer.fingerprint_type": 0,
    "frame.offsets[7]": ff.special_offset("nan"),
}


@pytest.mark.parametrize("path", sorted(READ_BEFORE))
def test_every_field_read_before_still_reads(path):
    assert fd.describe(path, READ_BEFORE[path]) != ""


def test_fields_without_a_reading_read_as_nothing():
    assert fd.describe("chunk.header.typesize", 4) == ""
    assert fd.describe("frame.metalayers['b2nd'].shape", [3, 4]) == ""


@given(st.binary(min_size=fc.LEN_HEADER, max_size=fc.LEN_EXTENDED + 4))
@settings(max_examples=300, deadline=None)
@example(bytes([3, 1, 0x07]) + bytes(28) + b"\xff")      # the alpha extended layout
@example(bytes([5, 1, 0x07]) + bytes(27) + b"\xff\xff")  # every kind and VL bit set
def test_stored_chunk_is_the_raw_header_s_fields(raw):
    """The frame builders' per-chunk fast read agrees with the whole header
    read from the declaration, for any bytes (both layouts of extended
    header, short inputs included)."""
    h = fc.raw_header(raw)
    got = fc.stored_chunk(raw)
    assert got == (h.nbytes, h.cbytes, h.blocksize, h.special, h.vl_blocks)


@given(st.binary(min_size=fc.LEN_HEADER, max_size=fc.LEN_EXTENDED + 4), st.booleans(),
       st.sampled_from([0, 1, 256, 1024]))
@settings(max_examples=300, deadline=None)
@example(struct.pack("<BBBBiii", 5, 1, 0x07, 4, 1024, 1024, 33) + bytes(17), False, 1024)
@example(struct.pack("<BBBBiii", 4, 1, 0x07, 4, 256, 256, 32) + bytes(15) + b"\x01", True, 256)
def test_plain_chunk_test_agrees_with_stored_chunk(raw, vl, nbytes):
    """The frame builders' short path takes exactly the chunks the whole
    read calls plain chunks of the frame's size."""
    h = fc.raw_header(raw)
    plain = (len(raw) >= fc.LEN_EXTENDED and h.six_slots
             and h.nbytes == nbytes and h.cbytes == len(raw) and h.special == 0
             and h.vl_blocks == vl)
    assert fc.plain_chunk_test(nbytes, vl)(raw) == (h.cbytes if plain else -1)
