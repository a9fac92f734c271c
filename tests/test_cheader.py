"""The generated C header of the format facts (blosckit_layout.h).

* The committed header is what ``blosckit.formats.cheader`` renders today
  (a stale header fails here: refresh it with ``python -m
  blosckit.formats.cheader``), and the built module holds the same values.
* The generator itself is checked against sources it does not use: byte
  positions and bits found in what construct builds from the declarations,
  and chunks, ids and limits of python-blosc2 (C-Blosc2).  The header is
  read back from its text here, not through the generator.
* The C files that read chunks and frames spell no format fact as a number.
"""
from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from blosckit.formats import cheader, chunk as fc, frame as ff
from blosckit.native import _native
from helpers import b2_compress, special_chunk

# the checkout's C sources (a test run against an installed wheel has none
# beside the package)
SRC = Path(__file__).resolve().parents[1] / "blosckit" / "native" / "src"
TEXT = (SRC / cheader.HEADER_PATH.name).read_text(encoding="utf-8")


def _values(text: str) -> dict[str, int]:
    """Every ``#define BK_NAME literal`` of a header text, as Python ints."""
    out = {}
    for name, lit in re.findall(r"^#define (BK_\w+) (\S+)$", text, re.M):
        out[name] = int(lit.rstrip("ULul"), 0)
    return out


H = _values(TEXT)


def test_committed_header_is_fresh():
    assert TEXT == cheader.render(), (
        "blosckit/native/src/blosckit_layout.h is stale: run python -m blosckit.formats.cheader")


def test_check_command(tmp_path, capsys):
    path = tmp_path / "blosckit_layout.h"
    assert cheader.main(["--check", "--path", str(path)]) == 1       # missing
    assert "python -m blosckit.formats.cheader" in capsys.readouterr().err
    assert cheader.main(["--path", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == TEXT
    path.write_text(TEXT.replace("#define BK_CHUNK_HEADER_NBYTES_OFS 4",
                                 "#define BK_CHUNK_HEADER_NBYTES_OFS 5"), encoding="utf-8")
    assert cheader.main(["--check", "--path", str(path)]) == 1


def test_built_module_has_the_header_values():
    # a module built before the header changed would hold other numbers
    assert len(H) > 200
    assert {n: getattr(_native.lib, n) for n in H} == H


def test_every_name_is_defined_once():
    names = re.findall(r"^#define (\w+)", TEXT, re.M)
    assert len(names) == len(set(names))
    assert "BK_CHUNK_HEADER_NBYTES_OFS" in names and "BLOSCKIT_LAYOUT_H" in names


# ---------------------------------------------------------------- construct


def _position(built: bytes, marker: bytes) -> int:
    assert built.count(marker) == 1
    return built.index(marker)


def test_header_offsets_from_construct():
    values = dict(version=0xA1, versionlz=0xA2, typesize=0xA3, nbytes=0x11223344,
                  blocksize=0x21324354, cbytes=0x31425364)
    flags = dict(compformat=0, dont_split=False, delta=False, bitshuffle=False,
                 memcpyed=False, shuffle=False)
    built = fc.ChunkHeader.build(dict(values, flags=flags))
    assert len(built) == H["BK_CHUNK_HEADER_SIZE"] == H["BK_CHUNK_HEADER_END"]
    for name in ("nbytes", "blocksize", "cbytes"):
        ofs = _position(built, struct.pack("<i", values[name]))
        assert H[f"BK_CHUNK_HEADER_{name.upper()}_OFS"] == ofs, name
        assert H[f"BK_CHUNK_HEADER_{name.upper()}_SIZE"] == 4
        assert H[f"BK_CHUNK_HEADER_{name.upper()}_SIGNED"] == 1
    for name in ("version", "versionlz", "typesize"):
        assert H[f"BK_CHUNK_HEADER_{name.upper()}_OFS"] == _position(built, bytes([values[name]]))
    assert H["BK_CHUNK_HEADER_FLAGS_OFS"] == _position(
        fc.ChunkHeader.build(dict(values, flags=dict(flags, compformat=7))), b"\xe0")


def _bits(bitstruct, zero: dict, **one) -> int:
    return bitstruct.build(dict(zero, **one))[0]


def test_flag_bits_from_construct():
    zero = dict(compformat=0, dont_split=False, delta=False, bitshuffle=False,
                memcpyed=False, shuffle=False)
    shift = H["BK_CHUNK_HEADER_FLAGS_COMPFORMAT_SHIFT"]
    mask = H["BK_CHUNK_HEADER_FLAGS_COMPFORMAT_MASK"]
    for value in range(8):
        byte = _bits(fc.ChunkFlags, zero, compformat=value)
        assert (byte >> shift) & mask == value
        assert byte == value << shift
    assert _bits(fc.ChunkFlags, zero, compformat=7) == H["BK_CHUNK_HEADER_FLAGS_COMPFORMAT_BITS"]
    for name in ("dont_split", "delta", "bitshuffle", "memcpyed", "shuffle"):
        byte = _bits(fc.ChunkFlags, zero, **{name: True})
        assert H[f"BK_CHUNK_HEADER_FLAGS_{name.upper()}_BITS"] == byte, name
        assert 1 << H[f"BK_CHUNK_HEADER_FLAGS_{name.upper()}_SHIFT"] == byte, name
    assert H["BK_CHUNK_FLAGS_EXTENDED_BITS"] == _bits(fc.ChunkFlags, zero, shuffle=True,
                                                      bitshuffle=True)

    zero2 = dict(instrumented=False, special=0, lazy=False, unimplemented=False,
                 big_endian=False, use_dict=False)
    shift = H["BK_CHUNK_EXTENDED_BLOSC2_FLAGS_SPECIAL_SHIFT"]
    mask = H["BK_CHUNK_EXTENDED_BLOSC2_FLAGS_SPECIAL_MASK"]
    for value in range(8):
        assert (_bits(fc.Blosc2Flags, zero2, special=value) >> shift) & mask == value
    for name in ("instrumented", "lazy", "use_dict"):
        assert H[f"BK_CHUNK_EXTENDED_BLOSC2_FLAGS_{name.upper()}_BITS"] == _bits(
            fc.Blosc2Flags, zero2, **{name: True}), name
    assert H["BK_CHUNK_EXTENDED_BLOSC2_FLAGS2_VL_BLOCKS_BITS"] == fc.Blosc2Flags2.build(
        dict(reserved=0, vl_blocks=True))[0]


def test_extended_offsets_from_construct():
    built = fc.ExtendedHeader.build(dict(
        filters=[0xB1, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6], udcodec=0xC1, compcode_meta=0xC2,
        filters_meta=[0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6],
        blosc2_flags2=dict(reserved=0, vl_blocks=False),
        blosc2_flags=dict(instrumented=True, special=0, lazy=False, unimplemented=False,
                          big_endian=False, use_dict=False)))
    base = H["BK_CHUNK_EXTENDED_OFS"]
    assert base == H["BK_CHUNK_HEADER_END"]
    assert base + len(built) == H["BK_CHUNK_EXTENDED_END"]
    assert H["BK_CHUNK_EXTENDED_FILTERS_OFS"] == base + _position(built, bytes(range(0xB1, 0xB7)))
    assert H["BK_CHUNK_EXTENDED_FILTERS_COUNT"] == 6
    assert H["BK_CHUNK_EXTENDED_FILTERS_META_OFS"] == base + _position(
        built, bytes(range(0xD1, 0xD7)))
    assert H["BK_CHUNK_EXTENDED_UDCODEC_OFS"] == base + _position(built, b"\xc1")
    assert H["BK_CHUNK_EXTENDED_COMPCODE_META_OFS"] == base + _position(built, b"\xc2")
    assert H["BK_CHUNK_EXTENDED_BLOSC2_FLAGS_OFS"] == base + _position(built, b"\x80")

    alpha = fc.ExtendedHeaderAlpha.build(dict(
        filters=[0xB1, 0xB2, 0xB3, 0xB4, 0xB5], reserved1=b"\0\0\0",
        filters_meta=[0xD1, 0xD2, 0xD3, 0xD4, 0xD5], reserved2=b"\0\0",
        blosc2_flags=dict(instrumented=True, special=0, lazy=False, unimplemented=False,
                          big_endian=False, use_dict=False)))
    assert H["BK_CHUNK_EXTENDED_ALPHA_FILTERS_OFS"] == base + _position(
        alpha, bytes(range(0xB1, 0xB6)))
    assert H["BK_CHUNK_EXTENDED_ALPHA_FILTERS_META_OFS"] == base + _position(
        alpha, bytes(range(0xD1, 0xD6)))
    assert H["BK_CHUNK_EXTENDED_ALPHA_BLOSC2_FLAGS_OFS"] == base + _position(alpha, b"\x80")


def test_stream_facts_from_construct():
    # a run's token byte: parsed from version 4 on
    for version in range(1, 7):
        parsed = fc.Stream.parse(struct.pack("<i", -7) + b"\x01", version=version)
        assert (parsed.token is not None) == (version >= H["BK_CHUNK_TOKEN_MIN_VERSION"])
    assert H["BK_CHUNK_LEN_CSIZE"] == len(fc.Stream.build(dict(csize=0, token=None, cdata=None),
                                                          version=5))
    assert H["BK_CHUNK_LEN_TOKEN"] == len(fc.Stream.build(
        dict(csize=-7, token=1, cdata=None), version=5)) - H["BK_CHUNK_LEN_CSIZE"]
    assert H["BK_CHUNK_LEN_BSTART"] == len(fc.Bstarts.build([0, 0], num_blocks=2)) // 2
    assert H["BK_CHUNK_LEN_DSIZE"] == len(fc.DictSection.build(dict(dsize=1, dict=b"x"))) - 1


def test_special_offsets_from_construct():
    top0 = dict(special=True, reserved=0, uninit=False, nan=False, zeros=False)
    for kind in ("zeros", "nan", "uninit"):
        built = ff.SpecialOffset.build(dict(low=bytes(7), top=dict(top0, **{kind: True})))
        assert H[f"BK_FRAME_SPECIAL_OFFSET_{kind.upper()}_BITS"] == int.from_bytes(built, "little")
        assert H[f"BK_FRAME_SPECIAL_OFFSET_TOP_{kind.upper()}_OFS"] == _position(
            built, built[-1:]) == len(built) - 1
    flag = ff.SpecialOffset.build(dict(low=bytes(7), top=dict(top0)))
    assert H["BK_FRAME_OFFSET_SPECIAL_BITS"] == int.from_bytes(flag, "little")
    assert H["BK_FRAME_LEN_OFFSET"] == ff.Offset.sizeof() == len(flag)


# ---------------------------------------------------------- python-blosc2


def test_ids_and_limits_match_blosc2():
    blosc2 = pytest.importorskip("blosc2")
    for codec in blosc2.Codec:
        assert H[f"BK_CODEC_{codec.name}"] == codec.value
    for flt in blosc2.Filter:
        assert H[f"BK_FILTER_{flt.name}"] == flt.value
    names = {"NOT_SPECIAL": "NONE", "ZERO": "ZEROS"}
    for sv in blosc2.SpecialValue:
        assert H[f"BK_SPECIAL_{names.get(sv.name, sv.name)}"] == sv.value
    for mode in blosc2.SplitMode:
        assert H[f"BK_SPLITMODE_{mode.name.removesuffix('_SPLIT')}"] == mode.value
    assert H["BK_CHUNK_MAX_BLOCKSIZE"] == blosc2.MAX_BLOCKSIZE
    assert H["BK_CHUNK_HEADER_SIZE"] == blosc2.MIN_HEADER_LENGTH
    assert H["BK_CHUNK_EXTENDED_END"] == blosc2.EXTENDED_HEADER_LENGTH == blosc2.MAX_OVERHEAD


@pytest.mark.parametrize("codec", ["blosclz", "lz4", "lz4hc", "zlib", "zstd"])
def test_fields_of_blosc2_chunks(codec):
    pytest.importorskip("blosc2")
    data = bytes(range(256)) * 40 + b"tail"
    c = b2_compress(data, typesize=4, codec=codec, filters=[("bytedelta", 4), "shuffle"],
                    splitmode="never")

    def field(name):
        ofs = H[f"BK_CHUNK_HEADER_{name}_OFS"]
        return int.from_bytes(c[ofs:ofs + H[f"BK_CHUNK_HEADER_{name}_SIZE"]], "little")

    assert field("NBYTES") == len(data)
    assert field("CBYTES") == len(c)
    assert field("TYPESIZE") == 4
    flags = c[H["BK_CHUNK_HEADER_FLAGS_OFS"]]
    ext = H["BK_CHUNK_FLAGS_EXTENDED_BITS"]
    assert flags & ext == ext
    assert flags & H["BK_CHUNK_HEADER_FLAGS_DONT_SPLIT_BITS"]
    compformat = (flags >> H["BK_CHUNK_HEADER_FLAGS_COMPFORMAT_SHIFT"]) & H[
        "BK_CHUNK_HEADER_FLAGS_COMPFORMAT_MASK"]
    assert compformat == H[f"BK_CODEC_{codec.upper()}_COMPFORMAT"]
    ids = c[H["BK_CHUNK_EXTENDED_FILTERS_OFS"]:][:H["BK_CHUNK_EXTENDED_FILTERS_COUNT"]]
    metas = c[H["BK_CHUNK_EXTENDED_FILTERS_META_OFS"]:][:H["BK_CHUNK_EXTENDED_FILTERS_COUNT"]]
    assert ids[:2] == bytes([H["BK_FILTER_BYTEDELTA"], H["BK_FILTER_SHUFFLE"]])
    assert metas[0] == 4


def test_special_kind_of_blosc2_chunks():
    pytest.importorskip("blosc2")
    shift = H["BK_CHUNK_EXTENDED_BLOSC2_FLAGS_SPECIAL_SHIFT"]
    mask = H["BK_CHUNK_EXTENDED_BLOSC2_FLAGS_SPECIAL_MASK"]
    for kind, name in (("zero", "ZEROS"), ("nan", "NAN"), ("uninit", "UNINIT")):
        c = special_chunk(kind, 100, 8)
        b2 = c[H["BK_CHUNK_EXTENDED_BLOSC2_FLAGS_OFS"]]
        assert (b2 >> shift) & mask == H[f"BK_SPECIAL_{name}"]


# ------------------------------------------------------------ the C files

# The files that read chunks and frames: besides 0 and 1, every number in
# their code is a name from the generated header.
READERS = ("fastpath.c", "framecheck.c", "framebuild.c", "chunkdec.c", "chunkenc.c")


@pytest.mark.parametrize("name", READERS)
def test_c_readers_use_names(name):
    code = (SRC / name).read_text(encoding="utf-8")
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    code = re.sub(r"//[^\n]*|\"(?:\\.|[^\"\\\n])*\"", " ", code)
    numbers = re.findall(r"(?<![\w.])(0[xX][0-9a-fA-F]+|\d+)[uUlL]*(?![\w.])", code)
    assert set(numbers) <= {"0", "1"}, f"{name}: literal numbers {sorted(set(numbers))}"
    assert '#include "blosckit_native.h"' in (SRC / name).read_text(encoding="utf-8")


def test_native_header_includes_the_layout():
    text = (SRC / "blosckit_native.h").read_text(encoding="utf-8")
    assert '#include "blosckit_layout.h"' in text
    assert not re.search(r"#define BK_CODEC_", text)      # ids come from the layout only
