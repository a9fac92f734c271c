"""Damage to a sparse frame python-blosc2 wrote exits 1 ("corrupt input"),
never 3 ("valid but unsupported"), from every command.

Exit 3 is for input a writer makes that this build cannot decode (a plugin
codec, an unknown filter, an instrumented chunk).  The offsets index is not
such input: C-Blosc2 writes it with its default parameters (blosclz,
shuffle, 8-byte items), so an index that asks for anything else is damage
(F-index); nor is a stored chunk marked lazy, which only C-Blosc2's memory
holds (F-lazy); nor a vlmetalayer value whose chunk is not its bin32 (F-vlmeta).
python-blosc2 is asked (in a child) whether it refuses each case.
"""
from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

import blosckit
import cli_runner
from blosckit.formats import chunk as fc
from blosckit.formats.rules import RULES
from oracles import oracle

blosc2 = oracle("blosc2")
np = oracle("numpy")

B2FLAGS = fc.EXTENDED.offset("blosc2_flags")
LAZY, INSTRUMENTED = fc.B2_LAZY, fc.EXTENDED["blosc2_flags.instrumented"].bits


@pytest.fixture(scope="module")
def sframes(tmp_path_factory) -> dict[str, Path]:
    """Sparse frames python-blosc2 wrote: 300 chunks (a compressed index),
    a small one with a vlmetalayer, and a b2nd array."""
    root = tmp_path_factory.mktemp("sframes")
    big = root / "big.b2frame"
    s = blosc2.SChunk(chunksize=400, urlpath=str(big), contiguous=False,
                      cparams={"typesize": 4})
    for k in range(300):
        s.append_data(np.arange(k * 100, k * 100 + 100, dtype="i4"))
    small = root / "small.b2frame"
    t = blosc2.SChunk(chunksize=40000, urlpath=str(small), contiguous=False,
                      cparams={"typesize": 4})
    t.append_data(np.arange(10000, dtype="i4"))
    t.append_data(np.arange(10000, dtype="i4") * 3)
    t.vlmeta["x"] = {"a": list(range(30))}
    array = root / "array.b2nd"
    blosc2.asarray(np.arange(300 * 200, dtype="f8").reshape(300, 200), urlpath=str(array),
                   contiguous=False, chunks=(100, 100), blocks=(50, 50))
    del s, t
    return {"big": big, "small": small, "array": array}


def _damaged(src: Path, tmp_path: Path, name: str, edit) -> Path:
    """A copy of the sframe ``src`` with its file ``name`` edited by
    ``edit(bytearray)``."""
    out = tmp_path / f"{src.stem}-damaged"
    shutil.copytree(src, out)
    data = bytearray((out / name).read_bytes())
    edit(data)
    (out / name).write_bytes(bytes(data))
    return out


def _index_at(src: Path) -> int:
    with blosckit.open_frame(src) as f:
        return f.index_span[0]


def _python_blosc2_refuses(path: Path, read: str) -> bool:
    """python-blosc2 (in a child: damaged frames can crash it) fails to
    open ``path`` and run ``read`` on it (``s``: the opened object)."""
    code = f"import sys, blosc2\ns = blosc2.open(sys.argv[1])\n{read}\n"
    r = cli_runner.python(code, str(path), timeout=120)
    return r.returncode != 0


def _statuses(path: Path, tmp_path: Path) -> dict[str, int]:
    out = tmp_path / "out.bin"
    return {cmd: cli_runner.blosckit(*args).returncode for cmd, args in (
        ("validate", ("validate", path)), ("info", ("info", path)),
        ("inspect", ("inspect", path)), ("decompress", ("decompress", "-f", path, out)))}


def _first_error(path: Path):
    errors = [p for p in blosckit.validate(path) if p.severity == "error"]
    assert errors, "the damage was not found"
    return errors[0]


def _flip_index_byte(at: int, value):
    def edit(b: bytearray) -> None:
        b[at] = value(b[at])
    return edit


# Each: what is set in the index chunk's header, and where.
INDEX_DAMAGE = {
    "lazy": (B2FLAGS, lambda x: x | LAZY, "blosc2_flags.lazy"),
    "instrumented": (B2FLAGS, lambda x: x | INSTRUMENTED, "blosc2_flags.instrumented"),
    # codec format 5 (lizard, retired): bits 5-7 of the flags byte
    "codec": (fc.HEADER.offset("flags"), lambda x: x & 0x1F | 5 << 5, "flags.compformat"),
    # filter slot 0 from shuffle to id 8, which no C-Blosc2 defines
    "filter": (fc.EXTENDED.offset("filters"), lambda x: 8, "filters[0]"),
}


@pytest.mark.parametrize("what", sorted(INDEX_DAMAGE))
def test_an_index_that_asks_for_what_this_build_lacks_is_damage(sframes, tmp_path, what):
    """The issue: a damaged sparse-frame index exited 3.  The index chunk's
    header now asks for a feature blosckit does not decode; C-Blosc2 never
    writes one so: F-index, exit 1 from every command."""
    at, value, field = INDEX_DAMAGE[what]
    src = sframes["big"]
    start = _index_at(src)
    assert not blosckit.parse_chunk(
        (src / "chunks.b2frame").read_bytes()[start:]).memcpyed    # its codec and filters count
    bad = _damaged(src, tmp_path, "chunks.b2frame", _flip_index_byte(start + at, value))
    p = _first_error(bad)
    assert (p.rule, p.offset) == ("F-index", start + at), p
    assert p.path.endswith(field) and p.path.startswith("frame.offsets.header"), p
    assert "C-Blosc2 writes the offsets index with its default parameters" in p.message
    assert not RULES[p.rule].unsupported
    assert _statuses(bad, tmp_path) == dict.fromkeys(
        ("validate", "info", "inspect", "decompress"), 1)
    assert _python_blosc2_refuses(bad, "s[:]")


@pytest.mark.parametrize("where", ["chunk file", "vlmetalayer"])
def test_a_stored_chunk_marked_lazy_is_damage(sframes, tmp_path, where):
    """The lazy bit on a chunk stored in the frame (a data chunk's file, a
    vlmetalayer value in the index file): F-lazy, exit 1 (was T-lazy, 3)."""
    src = sframes["small"]
    if where == "chunk file":
        bad = _damaged(src, tmp_path, "00000000.chunk",
                       _flip_index_byte(B2FLAGS, lambda x: x | LAZY))
        want = (B2FLAGS, "frame.chunks[0].header.extended.blosc2_flags.lazy")
        read = "s.decompress_chunk(0)"
    else:
        with blosckit.open_frame(src) as f:
            f.vlmetalayers_raw
            at = f.vlmetalayer_at["x"]
        bad = _damaged(src, tmp_path, "chunks.b2frame",
                       _flip_index_byte(at + B2FLAGS, lambda x: x | LAZY))
        want = (at + B2FLAGS, "frame.trailer.vlmetalayers['x'].header.extended.blosc2_flags.lazy")
        read = "s.vlmeta['x']"
    p = _first_error(bad)
    assert (p.rule, p.offset, p.path) == ("F-lazy", *want), p
    # decompress writes the chunks' data, which a vlmetalayer is not part of
    decoded = 0 if where == "vlmetalayer" else 1
    assert _statuses(bad, tmp_path) == {"validate": 1, "info": 1, "inspect": 1,
                                        "decompress": decoded}
    assert _python_blosc2_refuses(bad, read)


@pytest.mark.parametrize("delta", [-1, 1])
def test_a_vlmetalayer_bin32_that_is_not_its_chunk_is_damage(sframes, tmp_path, delta):
    """A vlmetalayer's bin32 length one byte short of, or past, the chunk it
    holds: C-Blosc2 refuses the value; validate said T-truncated-like H14
    for the first and nothing for the second.  Now F-vlmeta, at the chunk's
    cbytes, exit 1."""
    src = sframes["small"]
    with blosckit.open_frame(src) as f:
        f.vlmetalayers_raw
        at = f.vlmetalayer_at["x"]
        length = len(f.vlmetalayers_raw["x"])

    def edit(b: bytearray) -> None:
        b[at - 4:at] = struct.pack(">I", length + delta)     # the bin32's length
    bad = _damaged(src, tmp_path, "chunks.b2frame", edit)
    p = _first_error(bad)
    assert (p.rule, p.offset, p.path) == (
        "F-vlmeta", at + fc.HEADER.offset("cbytes"), "frame.trailer.vlmetalayers['x'].header.cbytes")
    assert p.message == (f"the value's chunk says cbytes {length}, its bin32 length is "
                         f"{length + delta} (C-Blosc2 refuses the frame)")
    assert _statuses(bad, tmp_path)["validate"] == 1
    assert _python_blosc2_refuses(bad, "s.vlmeta['x']")


def test_a_dtype_numpy_parses_with_ast_does_not_crash_validate(sframes, tmp_path):
    """A flipped byte made the b2nd dtype ',f8' (found by mutating the
    index file): NumPy's parser raised SyntaxError out of validate.  Now a
    Problem list: the dtype cannot be sized, so it is not compared with the
    typesize, and python-blosc2's refusal is the divergence warning V21's."""
    src = sframes["array"]
    with blosckit.open_frame(src) as f:
        at = f.metalayer_at["b2nd"] + f.metalayers["b2nd"].index(b"<f8")
    bad = _damaged(src, tmp_path, "chunks.b2frame",
                   lambda b: b.__setitem__(slice(at, at + 1), b","))
    with blosckit.open_frame(bad) as f:
        assert f.b2nd.dtype == ",f8"
    problems = blosckit.validate(bad)
    assert [(p.severity, p.rule) for p in problems] == [("warning", "V21")], problems
    assert _python_blosc2_refuses(bad, "s[:]")


def test_info_on_a_chunk_file_cut_to_nothing(sframes, tmp_path):
    """info took the stored chunk's header from an empty chunk file (a raw
    struct.error, "unexpected error"); now it reports the cut file."""
    bad = _damaged(sframes["small"], tmp_path, "00000001.chunk", lambda b: b.clear())
    r = cli_runner.blosckit("info", bad)
    assert r.returncode == 1 and "unexpected" not in r.stderr, r.stderr
    assert "frame.chunks[1].header: the input ends at byte 0, inside frame.chunks[1].header" \
        in r.stdout + r.stderr
    assert "[T-truncated]" in r.stdout + r.stderr


@pytest.mark.long
def test_no_damage_to_an_index_file_exits_3(sframes, tmp_path):
    """Every byte of a python-blosc2 sparse frame's index file set to 0,
    0xff and each single-bit flip, and every cut: validate finds no error
    that is only 'unsupported', except an instrumented vlmetalayer value (a
    chunk C-Blosc2's API can write on request, which holds statistics, not
    data).  A CI-sized share of the bytes; BLOSCKIT_LONG=1 runs them all."""
    from helpers import LONG
    src = sframes["small"]
    whole = (src / "chunks.b2frame").read_bytes()
    with blosckit.open_frame(src) as f:
        f.vlmetalayers_raw
        vl_flags = f.vlmetalayer_at["x"] + B2FLAGS
    work = tmp_path / "w"
    shutil.copytree(src, work)
    blobs = [whole[:n] for n in range(len(whole))]
    for i in range(0, len(whole), 1 if LONG else 3):
        for v in {0, 0xFF} | {whole[i] ^ 1 << bit for bit in range(8)}:
            if v != whole[i]:
                blobs.append(whole[:i] + bytes([v]) + whole[i + 1:])
    unsupported = []
    for blob in blobs:
        (work / "chunks.b2frame").write_bytes(blob)
        errors = [p for p in blosckit.validate(work) if p.severity == "error"]
        if errors and all(RULES[p.rule].unsupported for p in errors):
            unsupported.append(errors[0])
    assert all((p.rule, p.offset) == ("T-instr", vl_flags) for p in unsupported), unsupported


def _set_cbytes(value: int):
    from blosckit.formats import frame as ff
    at = ff.FLAT_HEADERS[14].offset("cbytes")

    def edit(b: bytearray) -> None:
        b[at:at + 8] = struct.pack(">q", value)
    return edit


@pytest.mark.parametrize("cbytes", [0, 1, 32])
def test_an_index_file_whose_cbytes_leaves_no_room_for_its_file_numbers(
        sframes, tmp_path, cbytes):
    """Held-out finding: a sparse frame whose index file says cbytes 0
    validated [] and python-blosc2 cannot open it: C-Blosc2 bounds every
    index entry by cbytes - 32, chunk file numbers too.  F-offset at each
    entry above the bound (file numbers 0 and 1 here; cbytes 32 leaves
    room for file 0 only).  Below 32 no file number can pass: the fault is
    the header's cbytes, reported once."""
    src = sframes["small"]
    with blosckit.open_frame(src) as f:
        entries = [(i, o) for i, o in enumerate(f.offsets) if isinstance(o, int)]
    assert [o for _, o in entries] == [0, 1]
    bad = _damaged(src, tmp_path, "chunks.b2frame", _set_cbytes(cbytes))
    errors = [(p.rule, p.path) for p in blosckit.validate(bad) if p.severity == "error"]
    assert errors == ([("F-offset", "frame.header.cbytes")] if cbytes < 32 else
                      [("F-offset", f"frame.offsets[{i}]") for i, o in entries
                       if o > cbytes - 32])
    assert _python_blosc2_refuses(bad, "s[:]")


def test_an_index_file_cbytes_just_large_enough_is_valid(sframes, tmp_path):
    """cbytes 33 leaves room for file numbers 0 and 1: C-Blosc2 reads the
    frame and so does blosckit; a frame of special chunks only has cbytes 0
    (python-blosc2 writes it so) and no file number to bound."""
    bad = _damaged(sframes["small"], tmp_path, "chunks.b2frame", _set_cbytes(33))
    assert blosckit.validate(bad) == []
    assert not _python_blosc2_refuses(bad, "s[:]")
    zeros = tmp_path / "zeros.b2frame"
    s = blosc2.SChunk(chunksize=4000, urlpath=str(zeros), contiguous=False,
                      cparams={"typesize": 4})
    s.fill_special(3000, blosc2.SpecialValue.ZERO)
    del s
    with blosckit.open_frame(zeros) as f:
        assert f.cbytes == 0 and f.offsets == ["zeros"] * 3
    assert blosckit.validate(zeros) == []
