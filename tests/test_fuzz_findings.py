"""The fuzzing findings of issue 21, one regression test per class.

Each input is a frame python-blosc2 wrote (C-Blosc2's own compat files for
VL-block frames) changed the way the finding describes, with plain
``struct`` edits at offsets the format's declarations give.  What a test
asserts is what C-Blosc2 makes of the input (asked in a child process: it
may crash on them), or the promise of the tool: a FormatError with its
rule and offset, the Problem ``validate`` must report, salvage's output
passing ``validate`` and opening in python-blosc2.  A class still broken
is a strict xfail naming what is wrong (it fails loudly once fixed).

Classes whose regression test lives elsewhere (listed in the report of the
fuzz branch): scan on a version-3 candidate (test_scan), variable-size
chunks that do not add up (test_validate_frames), a chunk of a chunksize-0
frame capped by the frame's nbytes (test_validate_frames), a metalayer
name twice (test_messages), filters_meta >= 128 (test_validate_frames),
a Problem past a 67-byte older-layout input (test_fuzz), a truncated or
broken b2nd frame salvaged (test_salvage).

The second half: each named mutation of :mod:`blosckit.testing.mutations`
makes its class, and every reader and tool (:mod:`blosckit.testing.readers`)
gives data or a FormatError on what it makes, within its memory bound.
"""
from __future__ import annotations

import functools
import hashlib
import math
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import blosckit
from blosckit.formats import b2nd as fb
from blosckit.formats import chunk as fc
from blosckit.formats import frame as ff
from blosckit.tools.salvage import salvage
from helpers import oracle_verdicts
import cli_runner
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")
from blosckit.testing import mutations as mut          # noqa: E402
from blosckit.testing.readers import address_space_cap, every_reader  # noqa: E402

COMPAT = Path(__file__).parent / "data" / "c-blosc2-compat"
H = ff.HEADER
MiB = 1 << 20


# ---------------------------------------------------------------------------
# Frames python-blosc2 writes, and byte edits
# ---------------------------------------------------------------------------

@functools.cache
def b2nd_frame() -> bytes:
    """A 60 x 70 int32 array, chunks (20, 32), blocks (8, 16), a vlmetalayer."""
    a = blosc2.asarray(np.arange(60 * 70, dtype="<i4").reshape(60, 70), chunks=(20, 32),
                       blocks=(8, 16))
    a.schunk.vlmeta["note"] = "an array"
    return bytes(a.schunk.to_cframe())


@functools.cache
def b2nd_1d(dtype: str = "<i4", chunks: int = 40, blocks: int = 16) -> bytes:
    return bytes(blosc2.asarray(np.arange(100).astype(dtype), chunks=(chunks,),
                                blocks=(blocks,)).to_cframe())


@functools.cache
def variable_frame() -> bytes:
    """python-blosc2's variable-size frame: append_data of 1000, 500, 1000 int32."""
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4))
    for n in (1000, 500, 1000):
        sc.append_data(np.arange(n, dtype="<i4"))
    return bytes(sc.to_cframe())


@functools.cache
def special_frame(kind: str, typesize: int, nitems: int = 2500, per_chunk: int = 1000) -> bytes:
    """``SChunk.fill_special``: zeros / NaN as special entries, a value as
    stored special chunks."""
    sc = blosc2.SChunk(chunksize=per_chunk * typesize, cparams=blosc2.CParams(typesize=typesize))
    kw = {"value": np.int32(7)} if kind == "value" else {}
    sc.fill_special(nitems, getattr(blosc2.SpecialValue, kind.upper()), **kw)
    return bytes(sc.to_cframe())


@functools.cache
def meta_frame(meta: tuple = (("abcd", 1), ("ef", 2)),
               vlmeta: tuple = (("note", "hello world" * 5), ("other", 3))) -> bytes:
    sc = blosc2.SChunk(chunksize=4000, data=np.arange(3000, dtype="<i4"),
                       cparams=blosc2.CParams(typesize=4), meta=dict(meta))
    for k, v in vlmeta:
        sc.vlmeta[k] = v
    return bytes(sc.to_cframe())


@functools.cache
def one_chunk_frame() -> bytes:
    """100 int32 in one chunk: a frame of 324 bytes."""
    return bytes(blosc2.SChunk(chunksize=400, data=np.arange(100, dtype="<i4"),
                               cparams=blosc2.CParams(typesize=4)).to_cframe())


def vl_frame() -> bytes:
    """C-Blosc2 3.0.0's frame of VL-block chunks (its compat suite)."""
    return (COMPAT / "vlblocks-lz4-fixed-3.0.0.b2frame").read_bytes()


def put(blob: bytes, at: int, fmt: str, value) -> bytes:
    out = bytearray(blob)
    struct.pack_into(fmt, out, at, value)
    return bytes(out)


def put_header(frame: bytes, name: str, value: int) -> bytes:
    """A frame header field set (big-endian, its declared width)."""
    return put(frame, H.offset(name), ">" + H[name].code, value)


def b2nd_at(frame: bytes, field: str, d: int = 0) -> int:
    """Where extent ``d`` of ``field`` (or the dtype string) of the frame's
    b2nd value lies."""
    f = blosckit.open_frame(frame)
    return f.b2nd.offset + fb.extent_offset(len(f.b2nd.shape), field, d)


def chunk_at(frame: bytes, i: int) -> int:
    return blosckit.open_frame(frame).header_len + blosckit.open_frame(frame).offsets[i]


def errors(blob) -> list[tuple[str, int, str]]:
    return [(p.rule, p.offset, p.path) for p in blosckit.validate(blob) if p.severity == "error"]


# ---------------------------------------------------------------------------
# What C-Blosc2 makes of them: one child process for the module
# ---------------------------------------------------------------------------

class CBlosc2:
    """Verdicts of C-Blosc2 on frames, asked in a child (one for all the
    blobs given at once; any other blob asked alone)."""

    def __init__(self, blobs: list[bytes]):
        blobs = list(dict.fromkeys(blobs))
        self.known = dict(zip(blobs, oracle_verdicts(blobs, kind="frame")))

    def __getitem__(self, blob: bytes):
        if blob not in self.known:
            self.known[blob] = oracle_verdicts([blob], kind="frame")[0]
        return self.known[blob]

    def reads_alike(self, blob: bytes) -> bool:
        """C-Blosc2 reads the frame (and its array) as blosckit does."""
        from blosckit.testing.fuzz import blosckit_outcome, classify
        return classify(blob, "frame", blosckit_outcome(blob, "frame"), self[blob]) is None


def _salvaged(blob) -> bytes | None:
    try:
        return salvage(blob)[0]
    except Exception:           # noqa: BLE001 -- the tests say which
        return None


@pytest.fixture(scope="module")
def c_blosc2() -> CBlosc2:
    inputs = [_case() for _case in CASES_FOR_C]
    outputs = [o for o in (_salvaged(case()) for case in SALVAGED) if o is not None]
    outputs += [o for _, _, o in salvaged_mutations()]
    return CBlosc2(inputs + outputs)


def salvage_keeps_its_promise(blob, c: CBlosc2):
    """salvage raises FormatError, or its output gets no error from
    validate and python-blosc2 opens it (and its array) in a child.
    Returns (output, report), or None after a FormatError."""
    try:
        out, report = salvage(blob)
    except blosckit.FormatError:
        return None
    assert errors(out) == []
    v = c[out]
    assert v.b2_ok and not v.python_only, v
    assert v.array_ok is not False, v
    return out, report


# ---------------------------------------------------------------------------
# The cases (functions, so the module fixture asks C-Blosc2 about them once)
# ---------------------------------------------------------------------------

def case_nbytes_zero() -> bytes:
    return put_header(meta_frame(), "nbytes", 0)


def case_b2nd_padded() -> bytes:
    return put(b2nd_frame(), b2nd_at(b2nd_frame(), "blockshape", 0), ">i", 7)   # 8 -> 7


def case_b2nd_dtype_i8() -> bytes:
    at = b2nd_at(b2nd_frame(), "dtype")
    return b2nd_frame()[:at] + b"<i8" + b2nd_frame()[at + 3:]


def case_blocksize() -> bytes:
    # blocks (8, 16) -> (12, 16): the same padded chunk (24 rows), 192 items a block
    return put(b2nd_frame(), b2nd_at(b2nd_frame(), "blockshape", 0), ">i", 12)


def case_block_wider() -> bytes:
    # 1-d: chunks 40, blocks 16 (padded 48) -> chunks 34, blocks 48: the grid
    # (3 chunks) and the padded chunk (48 items) unchanged
    fr = b2nd_1d()
    fr = put(fr, b2nd_at(fr, "chunkshape", 0), ">i", 34)
    return put(fr, b2nd_at(fr, "blockshape", 0), ">i", 48)


def case_block_wider_same_blocksize() -> bytes:
    # chunks 40 = blocks 40 -> chunks 39: the block one item wider, nothing else
    fr = b2nd_1d("<f8", 40, 40)
    return put(fr, b2nd_at(fr, "chunkshape", 0), ">i", 39)


def case_vlmeta_twice() -> bytes:
    fr = meta_frame(vlmeta=(("note", "hello"), ("nope", 3)))
    assert fr.count(b"\xa4nope") == 1
    return fr.replace(b"\xa4nope", b"\xa4note")


def case_b2nd_twice() -> bytes:
    fr = bytes(blosc2.asarray(np.arange(100, dtype="<i4"), chunks=(40,), blocks=(8,),
                              meta={"b2ne": [1]}).to_cframe())
    assert fr.count(b"\xa4b2ne") == 1
    return fr.replace(b"\xa4b2ne", b"\xa4b2nd")


def case_vl_delta() -> bytes:
    fr = vl_frame()
    at = chunk_at(fr, 0) + fc.EXTENDED.offset("filters")
    assert fr[at:at + 6] == bytes([0, 0, 0, 0, 0, 1])        # shuffle in the last slot
    return put(fr, at, "B", 3)                                 # delta in the first


def case_dtype_nul(dtype: str, stored: bytes) -> bytes:
    fr = b2nd_1d(dtype)
    at = b2nd_at(fr, "dtype")
    return fr[:at] + stored + fr[at + len(stored):]


def case_vlmeta_short(by: int) -> bytes:
    fr = meta_frame()
    f = blosckit.open_frame(fr)
    n = len(f.vlmetalayers_raw["note"])
    return put(fr, f.vlmetalayer_at["note"] - 4, ">I", n - by)


def case_special_filter_id() -> bytes:
    fr = special_frame("value", 4)
    at = chunk_at(fr, 0) + fc.EXTENDED.offset("filters")
    return put(fr, at, "B", 37)


def case_version_2_chunk() -> bytes:
    """python-blosc2's one-chunk frame of 2 bytes (typesize 1, clevel 0),
    its chunk swapped for C-Blosc 1.x's memcpyed chunk of the same bytes
    (header_len, frame_len, cbytes and the index's place moved by the 16
    bytes the Blosc1 header lacks)."""
    sc = blosc2.SChunk(chunksize=2, data=b"ab", cparams=blosc2.CParams(typesize=1, clevel=0))
    fr = bytes(sc.to_cframe())
    f = blosckit.open_frame(fr)
    old = bytes(f.chunk(0))
    new = oracle("blosc").compress(b"ab", typesize=1, clevel=0)
    assert new[0] == 2 and len(old) - len(new) == 16
    start = f.header_len
    out = bytearray(fr[:start] + new + fr[start + len(old):])
    struct.pack_into(">q", out, H.offset("cbytes"), f.cbytes - 16)
    struct.pack_into(">q", out, H.offset("frame_len"), len(out))
    return bytes(out)


@functools.cache
def case_name_empty(where: str) -> bytes:
    """python-blosc2's frame with a metalayer or a vlmetalayer named ""."""
    sc = blosc2.SChunk(chunksize=4000, data=np.arange(3000, dtype="<i4"),
                       meta={"": [1]} if where == "metalayer" else None)
    if where == "vlmetalayer":
        sc.vlmeta[""] = 2
    return bytes(sc.to_cframe())


def case_vlmeta_damaged() -> bytes:
    """The vlmetalayer "note" damaged (its chunk's version byte), "other" intact."""
    fr = meta_frame()
    f = blosckit.open_frame(fr)
    f.vlmetalayers_raw
    return put(fr, f.vlmetalayer_at["note"], "B", 0xEE)


CASES_FOR_C = [case_nbytes_zero, case_b2nd_padded, case_b2nd_dtype_i8, case_blocksize,
               case_block_wider, case_block_wider_same_blocksize, case_vlmeta_twice,
               case_vl_delta, lambda: case_dtype_nul("<f8", b"<f\0"),
               lambda: case_vlmeta_short(1), lambda: case_vlmeta_short(40),
               case_special_filter_id, b2nd_frame, b2nd_1d, vl_frame, case_version_2_chunk,
               lambda: case_name_empty("metalayer"), lambda: case_name_empty("vlmetalayer")]
# inputs whose salvage output the module's C-Blosc2 child judges too
SALVAGED = [lambda: put_header(special_frame("zero", 8), "typesize", 24),
            lambda: put_header(special_frame("zero", 8), "typesize", 516),
            lambda: put_header(meta_frame(), "typesize", 2 ** 31 - 1),
            lambda: put_header(special_frame("nan", 4), "typesize", 2),
            lambda: meta_frame().replace(b"\xa4abcd", b"\xa4\xff\xfe\xfd\xfc"),
            case_special_filter_id, variable_frame, case_vlmeta_damaged]


# ---------------------------------------------------------------------------
# Held-out frame fuzzing
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("typesize", [24, 516])
def test_salvage_special_entries_under_a_typesize_that_does_not_divide_them(typesize, c_blosc2):
    """salvage raised ValueError ("nbytes 8000 is not a multiple of typesize
    24") rebuilding the special entries of a frame whose header typesize
    was changed.  Now: its promise (an output validate accepts and
    python-blosc2 opens), the data kept."""
    fr = special_frame("zero", 8)
    blob = put_header(fr, "typesize", typesize)
    out, _ = salvage_keeps_its_promise(blob, c_blosc2)
    assert blosckit.open_frame(out).decompress() == bytes(2500 * 8)


def test_salvage_header_typesize_int32_max(c_blosc2):
    """salvage raised ValueError on a frame header typesize of 2**31-1."""
    blob = put_header(meta_frame(), "typesize", 2 ** 31 - 1)
    assert salvage_keeps_its_promise(blob, c_blosc2) is not None


@pytest.mark.parametrize("where", ["metalayer", "vlmetalayer"])
def test_salvage_metalayer_name_empty(where, c_blosc2):
    """python-blosc2 writes metalayers and vlmetalayers named "": the frame
    is valid, salvage raised ValueError on it (kept the name, then
    build_frame refused it)."""
    fr = case_name_empty(where)
    assert c_blosc2[fr].b2_ok and errors(fr) == []
    out, report = salvage_keeps_its_promise(fr, c_blosc2)
    assert blosckit.open_frame(out).decompress() == np.arange(3000, dtype="<i4").tobytes()


def test_salvage_metalayer_name_not_utf8(c_blosc2):
    """salvage raised ValueError on a metalayer name that is not UTF-8;
    python-blosc2 cannot list such a name (V15), so salvage's output must
    not keep it."""
    fr = meta_frame()
    blob = fr.replace(b"\xa4abcd", b"\xa4\xff\xfe\xfd\xfc")
    assert "V15" in {p.rule for p in blosckit.validate(blob)}
    out, report = salvage_keeps_its_promise(blob, c_blosc2)
    assert blosckit.open_frame(out).decompress() == np.arange(3000, dtype="<i4").tobytes()


def test_b2nd_chunk_against_the_padded_chunk_validate_agrees_with_the_reader(c_blosc2):
    """Frame.b2nd.read() raised F-b2nd where validate reported no error:
    validate never checked a chunk's size against the padded b2nd chunk.
    Blocks (8, 16) -> (7, 16): the padded chunk is 21 rows, the stored ones
    24; C-Blosc2 refuses the array."""
    blob = case_b2nd_padded()
    assert c_blosc2[blob].array_ok is False
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(blob).b2nd.read()
    meta_at = blosckit.open_frame(blob).b2nd.offset
    assert (e.value.rule, e.value.offset) == ("F-b2nd", meta_at)
    assert ("F-b2nd", meta_at, "frame.metalayers['b2nd']") in errors(blob)


def _in_child(code: str, *args: str) -> subprocess.CompletedProcess:
    return cli_runner.python(code, *args, text=True, timeout=300)


def test_deep_validate_scratch_is_bounded_by_the_frame():
    """A 324-byte frame of one 400-byte chunk, its header chunksize raised
    to 1 GiB: still valid (one chunk, the last, may hold less), but deep
    validate allocated 1 GiB of scratch (MemoryError under a 512 MiB
    limit).  Validate it with 64 MiB to spare."""
    blob = put_header(one_chunk_frame(), "chunksize", 1 << 30)
    assert len(blob) < 400
    with address_space_cap(64 * MiB) as capped:
        assert capped
        problems = blosckit.validate(blob)
    assert [p for p in problems if p.severity == "error"] == []


def test_vlblock_chunk_claiming_int32_max_bytes_is_vl7_within_bounds():
    """A VL-block chunk whose nbytes claims 2**31-1 allocated 2 GiB before
    VL7 (its blocks do not add up).  C-Blosc2's chunk; validate under a
    64 MiB address-space bound."""
    chunk = bytes(blosc2.blosc2_ext.vlcompress([b"abc" * 20, b"hello" * 40, b"z"], typesize=1,
                                               nthreads=1))
    blob = put(chunk, fc.HEADER.offset("nbytes"), "<i", 2 ** 31 - 1)
    with address_space_cap(64 * MiB) as capped:
        assert capped
        problems = blosckit.validate(blob)
        with pytest.raises(blosckit.FormatError) as e:
            blosckit.decompress(blob, max_nbytes=1 << 24)
    assert [(p.rule, p.offset) for p in problems] == [("VL7", fc.HEADER.offset("nbytes"))]
    assert e.value.rule == "T-max-nbytes"
    # in C-Blosc2's VL-block frame, capped by the frame's chunk size
    fr = vl_frame()
    at = chunk_at(fr, 0)
    with address_space_cap(64 * MiB):
        got = errors(put(fr, at + fc.HEADER.offset("nbytes"), "<i", 2 ** 31 - 1))
    assert got[0][:2] == ("T-max-nbytes", at + fc.HEADER.offset("nbytes"))


def test_header_nbytes_zero_with_a_chunks_section(c_blosc2):
    """validate returned [] for a frame whose header nbytes is 0 while its
    chunks section and index hold chunks; C-Blosc2 refuses it."""
    blob = case_nbytes_zero()
    assert not c_blosc2[blob].b2_ok
    assert errors(blob)[0][1:] == (H.offset("nbytes"), "frame.header.nbytes")
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(blob).decompress()
    assert (e.value.offset, e.value.path) == (H.offset("nbytes"), "frame.header.nbytes")


def test_b2nd_dtype_itemsize_other_than_the_typesize(c_blosc2):
    """validate returned [] for a b2nd dtype whose items are not typesize
    bytes wide ('<i4' -> '<i8' in an int32 frame); C-Blosc2 reads other
    data for the array."""
    blob = case_b2nd_dtype_i8()
    v = c_blosc2[blob]
    written = hashlib.sha256(np.arange(60 * 70, dtype="<i4").tobytes()).digest()
    assert v.array_ok is False or v.array_digest != written      # not the array written
    at = b2nd_at(blob, "dtype")
    assert errors(blob) == [("F-b2nd-dtype", at, "frame.metalayers['b2nd'].dtype.dtype")]
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(blob).b2nd.read()
    assert (e.value.rule, e.value.offset) == ("F-b2nd-dtype", at)


def test_b2nd_blocksize_other_than_blockshape_items(c_blosc2):
    """Blocks (8, 16) -> (12, 16): the padded chunk and the grid unchanged,
    the stored chunks' blocks 128 items where the metalayer says 192.
    C-Blosc2 refuses the array; validate returned []."""
    blob = case_blocksize()
    assert c_blosc2[blob].b2_ok and c_blosc2[blob].array_ok is False
    assert any(r.startswith("F-b2nd") for r, _, _ in errors(blob)), blosckit.validate(blob)


def test_b2nd_block_extent_larger_than_chunk_extent(c_blosc2):
    """Where only the block outgrows its chunk (chunks 40 = blocks 40 ->
    chunks 39), C-Blosc2 and blosckit read the same array.  Where the
    block also changes (1-d: chunks 40, blocks 16 -> chunks 34, blocks 48,
    the grid and the padded chunk unchanged) C-Blosc2 refuses the array:
    validate returned []."""
    same = case_block_wider_same_blocksize()
    assert c_blosc2.reads_alike(same) and c_blosc2[same].array_ok
    blob = case_block_wider()
    assert c_blosc2[blob].b2_ok and c_blosc2[blob].array_ok is False
    assert errors(blob) != []


_NAMES = """
import sys, blosc2
for arg in sys.argv[1:]:
    s = blosc2.schunk_from_cframe(bytes.fromhex(arg), copy=True)
    print(" ".join(list(s.meta.keys()) + ["|"] + list(s.vlmeta.get_names())))
"""


def test_vlmetalayer_or_b2nd_name_twice_is_f_meta():
    """blosckit's dict kept one of two vlmetalayers of one name where
    python-blosc2 lists both; likewise a second metalayer named b2nd beside
    an array's own.  F-meta at the second name."""
    cases = ((case_vlmeta_twice(), "frame.trailer.vlmetalayers", "abcd ef | note note"),
             (case_b2nd_twice(), "frame.metalayers", "b2nd b2nd |"))
    child = _in_child(_NAMES, *(blob.hex() for blob, _, _ in cases))
    assert child.stdout.splitlines() == [listed for _, _, listed in cases], child.stderr
    for blob, section, _ in cases:
        got = errors(blob)
        assert got and got[0][0] == "F-meta" and got[0][2] == f"{section}.index[1].name", got
        with pytest.raises(blosckit.FormatError) as e:
            with blosckit.open_frame(blob) as f:
                f.vlmetalayers
        assert e.value.rule == "F-meta"


def test_vlblock_chunk_with_delta_set_by_hand(c_blosc2):
    """C-Blosc2 decodes other bytes for a VL-block chunk whose filters name
    delta (compress_vlblocks refuses delta for this reason); validate
    returned []."""
    blob = case_vl_delta()
    assert c_blosc2[blob].b2_ok and not c_blosc2.reads_alike(blob)
    assert blosckit.validate(blob) != []


def test_sparse_frame_index_cbytes_zero(tmp_path):
    """Held-out finding: validate returned [] for a sparse frame whose
    index header says cbytes 0, which C-Blosc2 refuses (it bounds every
    chunk file number by cbytes - 32).  No entry can pass, so the fault is
    the header's: reported there, once, by the validator and the reader."""
    d = tmp_path / "s.b2frame"
    sc = blosc2.SChunk(chunksize=4000, data=np.arange(3000, dtype="<i4"),
                       cparams=blosc2.CParams(typesize=4), urlpath=str(d), contiguous=False,
                       mode="w")
    del sc
    index = d / ff.SFRAME_INDEX
    index.write_bytes(put_header(index.read_bytes(), "cbytes", 0))
    child = _in_child("import sys, blosc2; blosc2.open(sys.argv[1])[:]", str(d))
    assert child.returncode != 0
    got = errors(d)
    assert got == [("F-offset", H.offset("cbytes"), "frame.header.cbytes")], got
    with pytest.raises(blosckit.FormatError) as e:
        with blosckit.open_frame(d) as f:
            f.decompress_chunk(0)
    assert (e.value.rule, e.value.offset, e.value.path) == got[0]


@pytest.mark.parametrize("cbytes,refused", [(32, False), (33, False), (31, True)])
def test_sparse_frame_index_cbytes_small(tmp_path, cbytes, refused):
    """Around the bound: with cbytes 32 and up the header is no fault (a
    chunk file number above cbytes - 32 would be the entry's); below, every
    entry fails and the header is named."""
    d = tmp_path / "s.b2frame"
    sc = blosc2.SChunk(chunksize=4000, data=np.arange(1000, dtype="<i4"),
                       cparams=blosc2.CParams(typesize=4, clevel=0), urlpath=str(d),
                       contiguous=False, mode="w")
    del sc
    index = d / ff.SFRAME_INDEX
    index.write_bytes(put_header(index.read_bytes(), "cbytes", cbytes))
    child = _in_child("import sys, blosc2; blosc2.open(sys.argv[1])[:]", str(d))
    assert (child.returncode != 0) == refused
    assert errors(d) == ([("F-offset", H.offset("cbytes"), "frame.header.cbytes")]
                         if refused else [])


def test_salvage_nan_entries_under_typesize_2(c_blosc2):
    """salvage wrote special entries its own rules reject (NaN with typesize
    2).  The entries are damage (F-special); the output keeps its promise."""
    blob = put_header(special_frame("nan", 4), "typesize", 2)
    assert "F-special" in {r for r, _, _ in errors(blob)}
    salvage_keeps_its_promise(blob, c_blosc2)


def test_salvage_output_of_an_empty_chunk_is_no_f_index(c_blosc2):
    """salvage outputs validate rejected with F-index: found again by the
    fuzz loop on an empty chunk (16 bytes) C-Blosc2 writes."""
    chunk = bytes(blosc2.compress2(b"", typesize=1))
    salvage_keeps_its_promise(chunk, c_blosc2)


def test_salvage_of_a_valid_frame_copies_no_special_chunk_s_filter_id(c_blosc2):
    """A stored special chunk (a repeated value) whose filter slot says 37:
    readers ignore a special chunk's filters and C-Blosc2 opens the frame,
    validate finds nothing; salvage's output names filter 37 in its header
    (V14) and C-Blosc2 cannot open it."""
    blob = case_special_filter_id()
    assert c_blosc2[blob].b2_ok and blosckit.validate(blob) == []
    salvage_keeps_its_promise(blob, c_blosc2)


def test_b2nd_dtype_string_holding_a_nul(c_blosc2):
    """C-Blosc2 uses a dtype string up to its NUL, blosckit read the string
    as stored.  '<i4' -> '<i\\0': python-blosc2's dtype is '<i' (int32, the
    same items), and blosckit's NumPy dtype too; '<f8' -> '<f\\0': float32
    items in a frame of typesize 8, which python-blosc2 cannot make an
    array of, and blosckit refuses (F-b2nd-dtype)."""
    same = case_dtype_nul("<i4", b"<i\0")
    child = _in_child("import sys, blosc2; a = blosc2.ndarray_from_cframe(bytes.fromhex("
                      "sys.argv[1])); print(a.dtype.str, a[:].tobytes().hex())", same.hex())
    dtype, items = child.stdout.split()
    b = blosckit.open_frame(same).b2nd
    assert b.numpy_dtype().str == dtype and b.array().dtype.str == dtype
    assert b.read().hex() == items
    wider = case_dtype_nul("<f8", b"<f\0")
    assert c_blosc2[wider].array_ok is False
    at = b2nd_at(wider, "dtype")
    assert errors(wider) == [("F-b2nd-dtype", at, "frame.metalayers['b2nd'].dtype.dtype")]


# ---------------------------------------------------------------------------
# validate
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("by", [1, 40])
def test_vlmetalayer_bin32_length_shorter_than_its_chunk(by, c_blosc2):
    """C-Blosc2 refuses a frame whose vlmetalayer's bin32 length is shorter
    than the chunk it holds; validate returned [].  Now F-vlmeta, at
    the value's length field."""
    blob = case_vlmeta_short(by)
    assert not c_blosc2[blob].b2_ok
    f = blosckit.open_frame(meta_frame())
    f.vlmetalayers_raw
    cbytes_at = f.vlmetalayer_at["note"] + fc.HEADER.offset("cbytes")
    got = errors(blob)
    assert got[0] == ("F-vlmeta", cbytes_at,
                      "frame.trailer.vlmetalayers['note'].header.cbytes"), got
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(blob).vlmetalayers
    assert (e.value.rule, e.value.offset) == got[0][:2]


def test_frame_holding_a_version_2_chunk(c_blosc2):
    """Found by the fuzz loop of this branch (a salvage output C-Blosc2
    refused): C-Blosc2 reads a Blosc1 chunk alone, not inside a frame."""
    blob = case_version_2_chunk()
    assert blosckit.open_frame(blob).decompress() == b"ab"
    assert not c_blosc2[blob].b2_ok
    start = blosckit.open_frame(blob).header_len
    assert [(p.rule, p.offset, p.path) for p in blosckit.validate(blob)] == \
        [("V25", start, "frame.chunks[0].header.version")]


def test_b2nd_array_of_a_dtype_numpy_cannot_parse():
    """Found by the fuzz loop of this branch: the array reader raised
    TypeError ("data type '\\x05B\\x16' not understood"); V21 warns of the
    string, the reader must refuse it with a FormatError."""
    blob = case_dtype_nul("<i4", b"\x05B\x16")
    assert "V21" in {p.rule for p in blosckit.validate(blob)}
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(blob).b2nd.array()
    assert e.value.rule == "V21"


# ---------------------------------------------------------------------------
# salvage
# ---------------------------------------------------------------------------

def test_salvage_variable_size_frame_keeps_every_chunk_in_place(c_blosc2):
    """python-blosc2's valid variable-size frame: salvage dropped the 500-item
    chunk ("a fixed-chunksize frame cannot place it") and exited 0."""
    fr = variable_frame()
    out, report = salvage_keeps_its_promise(fr, c_blosc2)
    f = blosckit.open_frame(out)
    assert f.chunksize == 0 and f.nchunks == 3
    assert f.decompress() == blosckit.open_frame(fr).decompress()


def test_salvage_keeps_intact_vlmetalayers_beside_a_damaged_one(c_blosc2):
    blob = case_vlmeta_damaged()
    assert errors(blob)[0][0] == "T-version"
    out, report = salvage_keeps_its_promise(blob, c_blosc2)
    assert list(blosckit.open_frame(out).vlmetalayers) == ["other"]


def test_salvage_of_a_sparse_frame(tmp_path, c_blosc2):
    d = tmp_path / "s.b2frame"
    sc = blosc2.SChunk(chunksize=4000, data=np.arange(3000, dtype="<i4"),
                       cparams=blosc2.CParams(typesize=4), urlpath=str(d), contiguous=False,
                       mode="w")
    del sc
    out, report = salvage_keeps_its_promise(d, c_blosc2)
    assert blosckit.open_frame(out).decompress() == np.arange(3000, dtype="<i4").tobytes()


def test_salvage_of_a_zeros_chunk_of_partial_items(c_blosc2):
    """Found by the fuzz loop of this branch: C-Blosc2's zeros chunk of
    4000 bytes, its typesize set to 3 (not a divisor): C-Blosc2 decodes
    it alone; salvage's frame of it holds a special entry C-Blosc2 cannot
    rebuild."""
    chunk = bytearray(special_chunk_zeros())
    chunk[fc.HEADER.offset("typesize")] = 3
    v, = oracle_verdicts([bytes(chunk)])
    assert v.b2_ok and v.digest is not None
    salvage_keeps_its_promise(bytes(chunk), c_blosc2)


@functools.cache
def special_chunk_zeros() -> bytes:
    """C-Blosc2's special chunk of 1000 zero int32 (SChunk.fill_special)."""
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4))
    sc.fill_special(1000, blosc2.SpecialValue.ZERO)
    return bytes(sc.get_chunk(0))


def test_salvage_report_says_no_none_bytes():
    _, report = salvage(case_vlmeta_damaged())
    assert "None bytes" not in str(report)


# ---------------------------------------------------------------------------
# The named mutations make their classes; every reader on what they make
# ---------------------------------------------------------------------------

@functools.cache
def seeds() -> dict[str, bytes]:
    """The frames the held-out fuzzing mutated: python-blosc2's (an array,
    a 1-d array, a variable-size frame, special entries, stored specials,
    metalayers and vlmetalayers, one chunk, a sparse frame's index),
    C-Blosc2's VL-block frame and an 11-element header (blosckit's builder
    writes the bytes C-Blosc2 2.0.0-beta.1 wrote; no library writes it now)."""
    index = sparse_files()[ff.SFRAME_INDEX]
    return {"b2nd": b2nd_frame(), "b2nd-1d": b2nd_1d(), "b2nd-1d-whole-blocks":
            b2nd_1d("<f8", 40, 40), "variable": variable_frame(),
            "zeros": special_frame("zero", 8), "nan": special_frame("nan", 4),
            "value": special_frame("value", 4), "meta": meta_frame(),
            "one-chunk": one_chunk_frame(), "vlblocks": vl_frame(), "sparse-index": index,
            "older-11": blosckit.build_frame([bytes(blosc2.compress2(bytes(range(200)) * 4,
                                                                     typesize=4))], layout=11)}


@functools.cache
def sparse_files() -> dict[str, bytes]:
    """python-blosc2's sparse frame (3000 int32 in chunks of 1000): its files."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "s.b2frame"
        sc = blosc2.SChunk(chunksize=4000, data=np.arange(3000, dtype="<i4"),
                           cparams=blosc2.CParams(typesize=4), urlpath=str(d),
                           contiguous=False, mode="w")
        del sc
        return {p.name: p.read_bytes() for p in d.iterdir()}


def as_input(seed: str, blob: bytes, tmp_path: Path):
    """What a reader is given: the blob, or for a sparse frame's index its
    directory with python-blosc2's chunk files."""
    if seed != "sparse-index":
        return blob
    d = tmp_path / "s.b2frame"
    d.mkdir(exist_ok=True)
    for name, data in {**sparse_files(), ff.SFRAME_INDEX: blob}.items():
        (d / name).write_bytes(data)
    return d


@functools.cache
def mutated(name: str) -> tuple[tuple[str, bytes], ...]:
    """``(seed, blob)`` for each seed the mutation fits (first picks)."""
    return tuple((k, out) for k, blob in seeds().items()
                 if (out := mut.apply(name, blob)) is not None)


def _header(blob: bytes, name: str) -> int:
    layout = ff.FLAT_HEADERS[ff.header_layout(blob[0])]
    return struct.unpack_from(">" + layout[name].code, blob, layout.offset(name))[0]


def _b2nd_parts(blob: bytes):
    f = blosckit.open_frame(blob)
    m = fb.B2ndMeta.parse(f.metalayers["b2nd"])
    return f, [(s.value, c.value, b.value) for s, c, b in
               zip(m.shape, m.chunkshape, m.blockshape)], m


def _padded(c: int, b: int) -> int:
    return -(-c // b) * b


def _frame_chunks(blob: bytes) -> list[fc.RawHeader]:
    f = blosckit.open_frame(blob)
    f.vlmetalayers_raw
    at = [f.header_len + o for o in f.offsets if isinstance(o, int)]
    return [fc.raw_header(blob, a) for a in at + list(f.vlmetalayer_at.values())]


def _names(blob: bytes, where: str) -> list[bytes]:
    """Raw (vl)metalayer names, read with the declaration (not the reader)."""
    if where == "meta":
        start = ff.LEN_FIXED[ff.header_layout(blob[0])]
        end = _header(blob, "header_len")
    else:
        tail = len(blob) - ff.LEN_TRAILER_TAIL
        start = len(blob) - ff.FAST_TRAILER_TAIL.get(blob, "trailer_len", tail) \
            + ff.LEN_TRAILER_HEAD
        end = len(blob)
    return [bytes(e.name) for e in ff.Metalayers.parse(blob[start:end]).index]


def _entries(blob: bytes) -> list[int]:
    """The offsets index's int64 entries (negative: special), read past the
    frame reader's rules."""
    at = _header(blob, "header_len") + _header(blob, "cbytes")
    raw = blosckit.decompress(blob[at:at + blosckit.chunk_sizes(blob[at:])[1]])
    return list(struct.unpack(f"<{len(raw) // 8}q", raw))


ANY = frozenset()          # any problem at all (the rule is not settled yet)

# name -> (the class, checked on each blob it makes; the rules validate
# must report one of, None where the class is no fault of the input; the
# reason validate does not yet, for a class still broken)
CLASSES: dict[str, tuple] = {
    "header-nbytes-zero": (lambda b: _header(b, "nbytes") == 0, {"F-index"}, None),
    "variable-nbytes-off": (lambda b: _header(b, "chunksize") == 0, {"F-nbytes"}, None),
    "special-typesize-non-divisor": (
        lambda b: _header(b, "chunksize") % _header(b, "typesize") != 0 and
        min(_entries(b)) < 0, {"V16"}, None),
    "header-typesize-max": (lambda b: _header(b, "typesize") == 2 ** 31 - 1, None, None),
    "header-chunksize-huge": (lambda b: _header(b, "chunksize") >= 1 << 30 and len(b) < 2000
                              and blosckit.open_frame(b).nchunks == 1, None, None),
    "header-filters-meta-high": (
        lambda b: max(b[H.offset("filter_pipeline.filters_meta"):
                        H.offset("filter_pipeline.filters_meta") + 6]) >= 128, {"V23"}, None),
    "metalayer-name-empty": (lambda b: b"" in _names(b, "meta"), None, None),
    "metalayer-name-not-utf8": (lambda b: any(n and n[0] >= 0x80 for n in _names(b, "meta")),
                                {"V15"}, None),
    "metalayer-name-twice": (lambda b: len(set(_names(b, "meta"))) < len(_names(b, "meta")),
                             {"F-meta"}, None),
    "vlmetalayer-name-empty": (lambda b: b"" in _names(b, "vlmeta"), None, None),
    "vlmetalayer-name-not-utf8": (
        lambda b: any(n and n[0] >= 0x80 for n in _names(b, "vlmeta")), {"V15"}, None),
    "vlmetalayer-name-twice": (
        lambda b: len(set(_names(b, "vlmeta"))) < len(_names(b, "vlmeta")), {"F-meta"}, None),
    "vlmetalayer-bin32-short": (lambda b: True, {"F-vlmeta"}, None),
    "vlmetalayer-value-damaged": (lambda b: True, {"T-version"}, None),
    "b2nd-shape-grid": (
        lambda b: math.prod(-(-s // c) for s, c, _ in _b2nd_parts(b)[1])
        != blosckit.open_frame(b).nchunks, {"F-b2nd"}, None),
    "b2nd-padded-chunk": (
        lambda b: math.prod(_padded(c, x) for _, c, x in _b2nd_parts(b)[1]) *
        blosckit.open_frame(b).typesize != blosckit.open_frame(b).chunksize, {"F-b2nd"}, None),
    "b2nd-blocksize-mismatch": (
        lambda b: (math.prod(_padded(c, x) for _, c, x in _b2nd_parts(b)[1]) *
                   blosckit.open_frame(b).typesize == blosckit.open_frame(b).chunksize and
                   math.prod(x for _, _, x in _b2nd_parts(b)[1]) * blosckit.open_frame(b).typesize
                   != blosckit.parse_chunk(blosckit.open_frame(b).chunk(0)).blocksize),
        {"F-b2nd"}, None),
    "b2nd-block-wider-than-chunk": (
        lambda b: any(x > c for _, c, x in _b2nd_parts(b)[1]) and
        math.prod(_padded(c, x) for _, c, x in _b2nd_parts(b)[1]) *
        blosckit.open_frame(b).typesize == blosckit.open_frame(b).chunksize, None, None),
    "b2nd-dtype-itemsize": (
        lambda b: np.dtype(bytes(_b2nd_parts(b)[2].dtype.dtype).decode()).itemsize
        != blosckit.open_frame(b).typesize, {"F-b2nd-dtype"}, None),
    "b2nd-dtype-nul": (lambda b: b"\0" in bytes(_b2nd_parts(b)[2].dtype.dtype), None, None),
    "chunk-version-3": (lambda b: 3 in {h.version for h in _frame_chunks(b)}, None, None),
    "vlblock-delta": (lambda b: any(3 in h.filters for h in _frame_chunks(b)), {"V24"}, None),
    "vlblock-nbytes-huge": (lambda b: True, {"T-max-nbytes", "VL7"}, None),
    "chunk-nbytes-huge": (lambda b: True, {"T-max-nbytes"}, None),
    "special-chunk-filter-id": (lambda b: any(37 in h.filters for h in _frame_chunks(b)),
                                None, None),
    "special-entry-nan-typesize": (lambda b: _header(b, "typesize") not in (4, 8),
                                   {"F-special"}, None),
    "chunks-truncated": (lambda b: len(b) < _header(b, "frame_len"), {"T-truncated"}, None),
    "sparse-index-cbytes-zero": (lambda b: _header(b, "cbytes") == 0, {"F-offset"}, None),
    "older-layout-header-cut": (lambda b: ff.header_layout(b[0]) != 14, {"F-vlmeta-flag"}, None),
    # the composer's lies (frame_parts, build(check=False))
    "lie-frame-len": (lambda b: _header(b, "frame_len") != len(b), {"F-frame-len"}, None),
    "lie-header-len": (lambda b: not ff.LEN_FIXED[14] <= _header(b, "header_len") <= len(b),
                       {"F-header-len"}, None),
    "lie-nbytes": (lambda b: _counted(b) > len(_entries(b)), {"F-index"}, None),
    "lie-nchunks": (lambda b: _counted(b) != len(_entries(b)) and _header(b, "frame_len") == len(b),
                    {"F-index"}, None),
    "lie-offset-past-section": (
        lambda b: max(_entries(b)) > _header(b, "cbytes") - fc.LEN_HEADER, {"F-offset"}, None),
    "lie-offset-stray-bits": (
        lambda b: any(e < 0 and ff.special_extra_bits(e) for e in _entries(b)),
        {"F-special-bits"}, None),
    "lie-offset-no-kind": (lambda b: any(e < 0 and ff.special_kind(e) is None for e in _entries(b)),
                           {"F-special"}, None),
    "lie-chunk-short-at-full": (lambda b: len(set(_entries(b))) < len(_entries(b)), {"F-chunk"},
                                None),
    "lie-trailer-len": (lambda b: _trailer_len(b) != _trailer_len(_honest(b)), {"F-trailer"},
                        None),
    "lie-metalayer-length": (lambda b: True, {"F-meta"}, None),
    "lie-vlmetalayer-length": (lambda b: True, {"F-vlmeta"}, None),
    "lie-fingerprint": (lambda b: _fingerprint(b) != (0, bytes(16)), {"F-fingerprint"}, None),
}


def _counted(blob: bytes) -> int:
    """The chunks a fixed-size frame's header counts (nbytes / chunksize)."""
    return -(-_header(blob, "nbytes") // _header(blob, "chunksize"))


def _trailer_len(blob: bytes) -> int:
    return ff.FAST_TRAILER_TAIL.get(blob, "trailer_len", len(blob) - ff.LEN_TRAILER_TAIL)


def _fingerprint(blob: bytes) -> tuple[int, bytes]:
    at = len(blob) - ff.LEN_TRAILER_TAIL
    return (ff.FAST_TRAILER_TAIL.get(blob, "fingerprint_type", at),
            ff.FAST_TRAILER_TAIL.get(blob, "fingerprint", at))


def _honest(blob: bytes) -> bytes:
    """The seed a lie-trailer-len frame came from: the trailer's true
    length is the bytes after the index (its chunk header says where it
    ends)."""
    at = _header(blob, "header_len") + _header(blob, "cbytes")
    end = at + blosckit.chunk_sizes(blob[at:])[1] if _header(blob, "nbytes") else at
    out = bytearray(blob)
    ff.FAST_TRAILER_TAIL.put(out, "trailer_len", len(blob) - end, len(blob) - ff.LEN_TRAILER_TAIL)
    return bytes(out)


def test_every_named_mutation_has_its_class_here():
    assert sorted(CLASSES) == sorted(mut.MUTATIONS)
    assert all(m.doc for m in mut.MUTATIONS.values())


@pytest.mark.parametrize("name", sorted(mut.MUTATIONS))
def test_named_mutation_makes_its_class(name):
    """It fits some seed, and every blob it makes is of its class."""
    made = mutated(name)
    assert made, name
    for seed, blob in made:
        assert CLASSES[name][0](blob), (name, seed)


def _xfail_where(names: dict[str, str]):
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=names[n]))
            if n in names else n for n in sorted(mut.MUTATIONS)]


@pytest.mark.parametrize("name", _xfail_where(
    {n: c[2] for n, c in CLASSES.items() if c[2] is not None}))
def test_validate_reports_what_each_named_mutation_makes(name, tmp_path):
    """The target rule fires in validate (one of them; ANY: some problem,
    the rule is not settled), on every blob the mutation makes."""
    rules = CLASSES[name][1]
    if rules is None:
        assert CLASSES[name][2] is None
        return                      # no fault of the input: the readers' test below
    for seed, blob in mutated(name):
        got = {p.rule for p in blosckit.validate(as_input(seed, blob, tmp_path))}
        assert (got & rules) if rules else got, (seed, got)


# What every reader still does wrong on them: the label of the slip
READER_SLIPS: dict[str, str] = {}


@pytest.mark.parametrize("name", _xfail_where(READER_SLIPS))
def test_every_reader_on_each_named_mutation(name, tmp_path):
    """The readers, validate, inspect, scan and salvage give data or a
    FormatError, agree with validate, salvage's output validates, and none
    maps more memory than the input's header and max_nbytes allow."""
    for seed, blob in mutated(name):
        assert every_reader(as_input(seed, blob, tmp_path)).slips == [], seed


def test_corrupt_asks_for_each_class():
    """corrupt(mutations=[name]) applies that mutation only, with drawn
    choices (other values than the first), to blobs it fits."""
    from blosckit.testing import strategies as bst
    from blosckit.testing.fuzz import _draw
    for k, name in enumerate(sorted(mut.MUTATIONS)):
        fits = [seeds()[seed] for seed, _ in mutated(name)]
        for blob in _draw(bst.corrupt(fits, mutations=[name]), 3, k):
            assert CLASSES[name][0](blob), name


@functools.cache
def salvaged_mutations() -> tuple[tuple[str, str, bytes], ...]:
    """``(mutation, seed, salvage's output)`` for every contiguous frame a
    named mutation makes and salvage returns a frame for."""
    out = []
    for name in sorted(mut.MUTATIONS):
        for seed, blob in mutated(name):
            made = None if seed == "sparse-index" else _salvaged(blob)
            if made is not None:
                out.append((name, seed, made))
    return tuple(out)


SALVAGE_REFUSED = {
}


@pytest.mark.parametrize("name", _xfail_where(SALVAGE_REFUSED))
def test_salvage_output_of_each_named_mutation_opens_in_c_blosc2(name, c_blosc2):
    """The salvage promise: its output opens in python-blosc2 (C-Blosc2, in
    the module's child), the array too for a b2nd frame."""
    for _, seed, made in (x for x in salvaged_mutations() if x[0] == name):
        v = c_blosc2[made]
        assert v.b2_ok and not v.python_only and v.array_ok is not False, seed


def test_every_reader_slips_on_nothing_python_blosc2_wrote():
    """The judge itself: python-blosc2's valid frames (and C-Blosc2's
    VL-block frame) give no slip (its sparse frame does, salvage refusing
    directories: test_salvage_of_a_sparse_frame)."""
    for seed, blob in seeds().items():
        if seed != "sparse-index":
            assert every_reader(blob).slips == [], seed


def test_address_space_cap_stops_an_allocation_past_it_and_only_inside():
    """The memory bound of the fuzz run: 64 MiB to spare, 256 MiB asked
    fail (MemoryError, Python's or the native reader's); after the block
    the same allocation works and the limit is what it was."""
    import resource
    before = resource.getrlimit(resource.RLIMIT_AS)
    big = blosckit.compress_special("zeros", 256 * MiB, typesize=4)
    with pytest.raises(MemoryError):
        with address_space_cap(64 * MiB) as capped:
            assert capped
            blosckit.decompress(big)
    with pytest.raises(MemoryError):
        with address_space_cap(64 * MiB):
            bytearray(256 * MiB)
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    assert len(bytearray(256 * MiB)) == 256 * MiB


@pytest.mark.long
def test_the_fuzz_loop_reaches_every_class(tmp_path):
    """blosckit fuzz's loop: every named mutation applied (each class of
    finding), every reader run on every input (slips counted), and nothing
    but the classes still broken found (test_fuzz.KNOWN_SLIPS, KNOWN_NEW)."""
    from blosckit.testing.fuzz import fuzz
    from test_fuzz import KNOWN_NEW, unknown_slips
    report = fuzz(seconds=40, seed=5, out=tmp_path)
    assert sorted(report.mutations) == sorted(mut.MUTATIONS)
    assert all(report.read_by_all.get(k, 0) > 0 for k in ("chunk", "frame", "sframe")), \
        report.read_by_all
    assert unknown_slips(report.slips) == [], report.slips
    new = [k for k in report.by_category if ": NEW" in k
           and not any(k.endswith(f"[mutation {m}]") for m in KNOWN_NEW)]
    assert new == [], report.by_category


def test_every_reader_survives_an_empty_array_under_its_memory_cap():
    """Found by the atheris run: a b2nd frame of shape (3, 0).  The array
    reader imported NumPy under the small memory cap the empty array earns;
    NumPy's OpenBLAS could not start its threads and ended the process
    (no exception to catch).  In a fresh interpreter, as the harness runs."""
    blob = "nqhiMmZyYW1lANIAAAClzwAAAAAAAADIpBIAlALTAAAAAAAAAADTAAAAAAAAAADSAAAACNIAAAAA0gAAAEDRAADRAAHC2AYAAAAAAAAEAAAAAAAAAAAAk80AEd4AAaRiMm5k0gAAAGvcAAHGAAAANZcAApLTAAAAAAAAAAPTAAAAAAAAAACS0gAAAATSAAAAApLSAAAABNIAAAABANsAAAADPGY4lAGTzQAG3gAA3AAAzgAAACPYAAAAAAAAAAAAAAAAAAAAAAA="
    code = ("import base64, sys\n"
            "from blosckit.testing.readers import every_reader\n"
            "r = every_reader(base64.b64decode(sys.argv[1]))\n"
            "print(len(r.slips))\n")
    run = subprocess.run([sys.executable, "-c", code, blob], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0 and run.stdout.split() == ["0"], run.stderr[-2000:]
