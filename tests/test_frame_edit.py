"""Editing frames in place (``open_frame(path, mode="a")``): the same edits
made by python-blosc2 (C-Blosc2's super-chunk calls, one thread) on a copy
of the same frame give the same bytes, contiguous and sparse; python-blosc2
reads every result; and an edit cut short at any of its file operations
leaves a frame that opens with the old content or that salvage recovers."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgpack
import pytest

import blosckit
from blosckit.frame.edit import EditableFrame, FileIO
from blosckit.frame.journal import journal_path, temporary
import cli_runner
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")

ZSTD = blosc2.Codec.ZSTD


def _c(items, **kw) -> bytes:
    """A chunk python-blosc2 compresses (one thread: deterministic)."""
    return bytes(blosc2.compress2(np.ascontiguousarray(items), typesize=4, codec=ZSTD,
                                  nthreads=1, **kw))


A = _c(np.arange(1000, dtype="<i4") * 3)          # a full chunk (4000 bytes)
SMALL = _c(np.arange(500, dtype="<i4") * 3)       # a short one
BIG = _c(np.arange(2000, dtype="<i4"))            # longer than the frame's chunks
ZEROS = _c(np.zeros(1000, dtype="<i4"))           # a special chunk (zeros)
CHUNKS = {"A": A, "SMALL": SMALL, "BIG": BIG, "ZEROS": ZEROS}
MORE = np.arange(1000, dtype="<i4") + 7
WITH_ZEROS = np.concatenate([np.arange(1000, dtype="<i4"), np.zeros(1000, dtype="<i4"),
                             np.arange(1000, dtype="<i4")])

# name: (python-blosc2's edit of SChunk s (chunks by name in c), blosckit's edit
# of EditableFrame f, the frame's data)
CASES = {
    "append_chunk": ("s.append_chunk(c['A'])", lambda f: f.append_chunk(A), None),
    "append_data": ("s.append_data(MORE)", lambda f: f.append_data(MORE), None),
    "insert_first": ("s.insert_chunk(0, c['A'])", lambda f: f.insert_chunk(0, A), None),
    "insert_middle": ("s.insert_chunk(1, c['A'])", lambda f: f.insert_chunk(1, A), None),
    "insert_zeros": ("s.insert_chunk(1, c['ZEROS'])", lambda f: f.insert_chunk(1, ZEROS), None),
    "update_middle": ("s.update_chunk(1, c['A'])", lambda f: f.update_chunk(1, A), None),
    "update_last": ("s.update_chunk(2, c['A'])", lambda f: f.update_chunk(-1, A), None),
    "update_to_zeros": ("s.update_chunk(0, c['ZEROS'])", lambda f: f.update_chunk(0, ZEROS),
                        None),
    "update_zeros_entry": ("s.update_chunk(1, c['A'])", lambda f: f.update_chunk(1, A),
                           WITH_ZEROS),
    "delete_first": ("s.delete_chunk(0)", lambda f: f.delete_chunk(0), None),
    "delete_last": ("s.delete_chunk(2)", lambda f: f.delete_chunk(2), None),
    "delete_zeros_entry": ("s.delete_chunk(1)", lambda f: f.delete_chunk(1), WITH_ZEROS),
    "append_short": ("s.append_chunk(c['SMALL'])", lambda f: f.append_chunk(SMALL), None),
    "append_after_short": ("s.append_chunk(c['A'])", lambda f: f.append_chunk(A),
                           np.arange(2500, dtype="<i4")),
    "append_longer": ("s.append_chunk(c['BIG'])", lambda f: f.append_chunk(BIG), None),
    "insert_short_middle": ("s.insert_chunk(1, c['SMALL'])",
                            lambda f: f.insert_chunk(1, SMALL), None),
    "update_longer_middle": ("s.update_chunk(1, c['BIG'])", lambda f: f.update_chunk(1, BIG),
                             None),
    "update_short_middle": ("s.update_chunk(1, c['SMALL'])",
                            lambda f: f.update_chunk(1, SMALL), None),
    "append_to_empty": ("s.append_chunk(c['A'])", lambda f: f.append_chunk(A),
                        np.arange(0, dtype="<i4")),
    "append_data_to_empty": ("s.append_data(MORE)", lambda f: f.append_data(MORE),
                             np.arange(0, dtype="<i4")),
    # the last chunk deleted: C-Blosc2 writes the trailer after the header
    # and leaves cbytes (validate once called that frame F-sizes)
    "delete_only_chunk": ("s.delete_chunk(0)", lambda f: f.delete_chunk(0),
                          np.arange(1000, dtype="<i4")),
    "append_after_deleting_all": ("s.delete_chunk(0); s.append_chunk(c['A'])",
                                  lambda f: (f.delete_chunk(0), f.append_chunk(A)),
                                  np.arange(1000, dtype="<i4")),
    "vlmeta_new": ("s.vlmeta['b'] = list(range(3000))",
                   lambda f: f.set_vlmetalayer("b", msgpack.packb(list(range(3000)))), None),
    "vlmeta_replace": ("s.vlmeta['a'] = b'bye'",
                       lambda f: f.set_vlmetalayer("a", msgpack.packb(b"bye")), None),
    "vlmeta_delete": ("del s.vlmeta['a']", lambda f: f.delete_vlmetalayer("a"), None),
    "meta_update": ("s.meta['m'] = 'wxyz'",
                    lambda f: f.update_metalayer("m", msgpack.packb("wxyz")), None),
}
# Where blosckit writes other bytes than C-Blosc2, and why (specs/frame.md,
# "Editing in place"): C-Blosc2 keeps the zeros entry in a frame the edit turns
# variable-size, which it then cannot read (validate: F-special); blosckit
# stores that chunk instead.
DIFFERENT = {
    "turn_variable_with_zeros_entry": ("s.append_chunk(c['BIG'])",
                                       lambda f: f.append_chunk(BIG), WITH_ZEROS),
}

_EDIT = r"""
import json, sys, blosc2, numpy as np
blosc2.set_nthreads(1)
c = {k: bytes.fromhex(v) for k, v in json.loads(sys.argv[1]).items()}
MORE = np.arange(1000, dtype="<i4") + 7
for path, code in json.loads(sys.stdin.read()):
    s = blosc2.open(path, mode="a")
    exec(code)
    del s
"""

_READ = r"""
import json, sys, blosc2
blosc2.set_nthreads(1)
out = []
for path in json.loads(sys.stdin.read()):
    s = blosc2.open(path)
    out.append([s.decompress_chunk(i).hex() for i in range(s.nchunks)])
print(json.dumps(out))
"""


def _make(path: Path, data, contiguous: bool) -> None:
    """A frame python-blosc2 writes: 4000-byte chunks of int32 (zstd, one
    thread), a vlmetalayer and a metalayer."""
    s = blosc2.SChunk(chunksize=4000, data=np.arange(3000, dtype="<i4") if data is None else data,
                      urlpath=str(path), contiguous=contiguous, mode="w",
                      meta={"m": "abcd"},
                      cparams=blosc2.CParams(typesize=4, nthreads=1, codec=ZSTD),
                      dparams=blosc2.DParams(nthreads=1))
    s.vlmeta["a"] = b"hello"
    del s


def _snapshot(path: Path):
    if path.is_dir():
        return {p.name: p.read_bytes() for p in sorted(path.iterdir())}
    return path.read_bytes()


def _python_blosc2_edits(jobs: list[tuple[Path, str]]) -> None:
    cli_runner.python(_EDIT, json.dumps({k: v.hex() for k, v in CHUNKS.items()}),
              input=json.dumps([(str(p), code) for p, code in jobs]), text=True,
              check=True, timeout=300)


def _python_blosc2_reads(paths: list[Path]) -> list[list[bytes]]:
    r = cli_runner.python(_READ, input=json.dumps([str(p) for p in paths]), text=True, check=True,
                  timeout=300)
    return [[bytes.fromhex(c) for c in chunks] for chunks in json.loads(r.stdout)]


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    """Every case edited by python-blosc2 and by blosckit on twin copies:
    name, contiguous -> (python-blosc2's path, blosckit's path)."""
    root = tmp_path_factory.mktemp("edits")
    pairs, jobs = {}, []
    for name, (code, ours, data) in {**CASES, **DIFFERENT}.items():
        for contiguous in (True, False):
            theirs = root / f"{name}-{contiguous}-py.b2frame"
            mine = root / f"{name}-{contiguous}-bk.b2frame"
            _make(theirs, data, contiguous)
            _make(mine, data, contiguous)
            with blosckit.open_frame(mine, mode="a") as f:
                assert isinstance(f, EditableFrame)
                ours(f)
            jobs.append((theirs, code))
            pairs[name, contiguous] = (theirs, mine)
    _python_blosc2_edits(jobs)
    return pairs


@pytest.mark.parametrize("contiguous", [True, False], ids=["cframe", "sframe"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_bytes_are_python_blosc2s(edited, name, contiguous):
    theirs, mine = edited[name, contiguous]
    assert _snapshot(mine) == _snapshot(theirs)
    assert [p for p in blosckit.validate(mine) if p.severity == "error"] == []


@pytest.mark.parametrize("contiguous", [True, False], ids=["cframe", "sframe"])
def test_where_the_bytes_differ_blosckit_writes_what_every_reader_reads(edited, contiguous):
    """C-Blosc2's own output fails validate (a special entry in a
    variable-size frame); blosckit's validates and python-blosc2 reads it."""
    theirs, mine = edited["turn_variable_with_zeros_entry", contiguous]
    assert _snapshot(mine) != _snapshot(theirs)
    assert "F-special" in {p.rule for p in blosckit.validate(theirs)}
    assert [p for p in blosckit.validate(mine) if p.severity == "error"] == []
    expected = [np.arange(1000, dtype="<i4").tobytes(), bytes(4000),
                np.arange(1000, dtype="<i4").tobytes(), np.arange(2000, dtype="<i4").tobytes()]
    assert _python_blosc2_reads([mine]) == [expected]


def test_python_blosc2_reads_every_edited_frame(edited):
    paths = [mine for (theirs, mine) in edited.values()]
    read = _python_blosc2_reads(paths)
    for path, chunks in zip(paths, read):
        with blosckit.open_frame(path) as f:
            assert chunks == [f.decompress_chunk(i) for i in range(f.nchunks)], path.name


def test_reading_follows_the_edits(tmp_path):
    p = tmp_path / "f.b2frame"
    _make(p, None, True)
    with blosckit.open_frame(p, mode="a") as f:
        assert f.nchunks == 3
        f.append_data(MORE)
        assert f.nchunks == 4 and f.decompress_chunk(3) == MORE.tobytes()
        f.delete_chunk(0)
        assert f.decompress_chunk(0) == np.arange(1000, 2000, dtype="<i4").tobytes()
        f.set_vlmetalayer("z", msgpack.packb(1))
        assert msgpack.unpackb(f.vlmetalayers["z"]) == 1


def test_bad_edits_are_value_errors_and_write_nothing(tmp_path):
    p = tmp_path / "f.b2frame"
    _make(p, None, True)
    before = p.read_bytes()
    blosc1 = oracle("blosc").compress(np.arange(1000, dtype="<i4").tobytes(), typesize=4)
    vl = bytes(blosc2.blosc2_ext.vlcompress([b"ab" * 100, b"cd" * 50], typesize=1,
                                            codec=ZSTD, clevel=5, filters=[], filters_meta=[],
                                            nthreads=1))
    with blosckit.open_frame(p, mode="a") as f:
        for bad, why in ((blosc1, "Blosc1"), (A[:-1], "T-truncated"), (b"\x00" * 40, "not a chunk"),
                         (vl, "VL-block")):
            with pytest.raises(ValueError, match=why):
                f.append_chunk(bad)
        with pytest.raises(ValueError, match="as long"):
            f.update_metalayer("m", msgpack.packb("longer value"))
        with pytest.raises(ValueError, match="no metalayer"):
            f.update_metalayer("nope", b"x")
        with pytest.raises(ValueError, match="no vlmetalayer"):
            f.delete_vlmetalayer("nope")
        with pytest.raises(IndexError):
            f.update_chunk(3, A)
    assert p.read_bytes() == before
    with pytest.raises(ValueError, match="mode"):
        blosckit.open_frame(p, mode="w")
    with pytest.raises(ValueError, match="path"):
        blosckit.open_frame(before, mode="a")


# -- edits cut short ---------------------------------------------------------------

class _Cut(Exception):
    pass


class _FailingIO(FileIO):
    """File operations that fail at the ``k``-th (counting from 0); a
    ``torn`` write lands its first half before failing."""

    def __init__(self, k: int, torn: bool):
        self.k, self.torn, self.count = k, torn, 0

    def _tick(self) -> bool:
        self.count += 1
        return self.count - 1 == self.k

    def write(self, path, data, at):
        if self._tick():
            if self.torn:
                super().write(path, bytes(data)[:len(data) // 2], at)
            raise _Cut
        super().write(path, data, at)

    def append(self, path, data):
        if self._tick():
            if self.torn:
                super().append(path, bytes(data)[:len(data) // 2])
            raise _Cut
        super().append(path, data)

    def truncate(self, path, size):
        if self._tick():
            raise _Cut
        super().truncate(path, size)

    def replace(self, path, data):
        if self._tick():
            if self.torn:         # the temporary file is left half written
                temporary(path).write_bytes(bytes(data)[:len(data) // 2])
            raise _Cut
        super().replace(path, data)

    def remove(self, path):
        if self._tick():
            raise _Cut
        super().remove(path)


def _content(path: Path) -> list[bytes] | None:
    """The chunks' data of the frame at ``path``, None when it does not open."""
    try:
        with blosckit.open_frame(path) as f:
            return [f.decompress_chunk(i) for i in range(f.nchunks)]
    except blosckit.FormatError:
        return None


def _salvaged(path: Path) -> list[bytes]:
    out, _ = blosckit.salvage(path)
    assert [p for p in blosckit.validate(out) if p.severity == "error"] == []
    with blosckit.open_frame(out) as f:
        return [f.decompress_chunk(i) for i in range(f.nchunks)]


CUT_CASES = ["append_chunk", "insert_middle", "update_middle", "update_longer_middle",
             "update_short_middle", "update_to_zeros", "delete_first", "vlmeta_new",
             "meta_update", "append_longer"]


@pytest.mark.parametrize("contiguous", [True, False], ids=["cframe", "sframe"])
# a torn write is the harder case (it lands half its bytes): every run;
# a write that fails whole, in the long tier
@pytest.mark.parametrize("torn", [pytest.param(False, id="failed", marks=pytest.mark.long),
                                  pytest.param(True, id="torn")])
@pytest.mark.parametrize("name", CUT_CASES)
def test_an_edit_cut_at_any_operation_loses_nothing(tmp_path, name, torn, contiguous):
    """Fail the k-th file operation of the edit (the k-th write lands half
    of its bytes when torn), for every k: read-only, the frame gives the
    old content or the new, or FormatError (the edit's mark: never other
    data); salvage gives back the old content or the new, all of it;
    opened for editing again, it holds the old content or the new
    (the journal puts the old bytes back: the very bytes of the frame
    before the edit or after it), with no journal left."""
    _, ours, data = CASES[name]
    base = tmp_path / "base.b2frame"
    _make(base, data, contiguous)
    old = _content(base)
    done = tmp_path / "done.b2frame"
    _copy(base, done)
    with EditableFrame(done) as f:
        ours(f)
    new = _content(done)
    assert old is not None and new is not None and old != new or name.startswith(("vl", "meta"))
    k = 0
    while True:
        p = tmp_path / f"cut{k}.b2frame"
        _copy(base, p)
        try:
            with EditableFrame(p, io=_FailingIO(k, torn)) as f:
                ours(f)
        except _Cut:
            assert _content(p) in (old, new, None), k
            if journal_path(p).exists():        # salvage reads through the journal
                out, report = blosckit.salvage(p)
                assert blosckit.validate(out) == []
                with blosckit.open_frame(out) as g:
                    assert [g.decompress_chunk(i) for i in range(g.nchunks)] in (old, new), k
            EditableFrame(p).close()            # rolls the cut edit back
            assert not journal_path(p).exists()
            assert _snapshot(p) in (_snapshot(base), _snapshot(done)), k
        else:
            assert _content(p) == new and not journal_path(p).exists()
            break
        k += 1
    assert k >= 3                # the journal, the mark, the edit's writes


def _copy(src: Path, dst: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        shutil.copyfile(src, dst)
