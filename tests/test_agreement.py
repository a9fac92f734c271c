"""The same fault gets the same rule, offset and path from every tool.

Over the hostile corpus (``helpers.mutations`` of ``helpers.small_chunks``,
the same mutations inside a frame, and ``test_robustness``'s frame
mutations), the first error of ``decompress``, ``getitem``, ``validate``,
the inspector (``chunk_nodes`` / ``frame_nodes``: where it stops) and
``salvage`` (the first damage it reports) must be the same
``(rule, offset, path)``, or none at all.  Every rule has one body
(formats/), and these tools all run it.

What a tool does not read is not asked of it: ``getitem`` of whole items
(a chunk whose nbytes is no multiple of its typesize is skipped);
``validate`` detects the kind of input, so a blob that no longer starts
like a frame is compared with ``decompress``; the inspector shows chunk
``i`` to field level only when asked (``chunk=i``, the chunk the reader
blames); neither the inspector nor salvage reads a b2nd array (F-b2nd on
the array's grid and chunks, F-b2nd-shape), and salvage reads no
metalayer value.  ``BLOSCKIT_LONG=1`` runs every mutation; otherwise a
deterministic sample.
"""
from __future__ import annotations

import random
import re
import shutil

import pytest

import blosckit
from blosckit.errors import FormatError
from blosckit.formats.frame import looks_like_frame
from blosckit.tools.inspect import chunk_nodes, frame_nodes
from blosckit.tools.salvage import salvage
from helpers import LONG, mutations, small_chunks
from oracles import oracle
from test_robustness import SEED, frame_mutations, seed_frames

CHUNKS = small_chunks()
STRIDE = 1 if LONG else 8          # of the systematic mutations, in order
MAX_CLAIM = 1 << 20                # blobs claiming more (special chunks) are left out


def _error(fn) -> tuple | None:
    try:
        fn()
    except FormatError as e:
        return (e.rule, e.offset, e.path)
    return None


def _validated(blob: bytes) -> tuple | None:
    return next(((p.rule, p.offset, p.path) for p in blosckit.validate(blob)
                 if p.severity == "error"), None)


def _claim(blob: bytes) -> int:
    """The nbytes a chunk header claims (0 when there is no header)."""
    return int.from_bytes(blob[4:8], "little", signed=True) if len(blob) >= 16 else 0


def _getitem_all(blob: bytes) -> None:
    c = blosckit.parse_chunk(blob)
    blosckit.getitem(blob, 0, c.nbytes // c.typesize)


def _whole_items(blob: bytes) -> bool:
    try:
        c = blosckit.parse_chunk(blob)
    except FormatError:
        return True                    # getitem raises the same header error
    return c.typesize > 0 and c.nbytes % c.typesize == 0


@pytest.mark.parametrize("name", sorted(CHUNKS))
def test_chunk_tools_agree(name):
    wrong = []
    for k, (label, blob) in enumerate(mutations(CHUNKS[name])):
        if k % STRIDE or _claim(blob) > MAX_CLAIM:
            continue
        want = _error(lambda: blosckit.decompress(blob))
        got = {"validate": _validated(blob),
               "inspect": _error(lambda: list(chunk_nodes(blob)))}
        if _whole_items(blob):
            got["getitem"] = _error(lambda: _getitem_all(blob))
        wrong += [(label, tool, want, g) for tool, g in got.items() if g != want]
    assert wrong == []


# ---------------------------------------------------------------------------
# Frames
# ---------------------------------------------------------------------------

def _read_everything(blob: bytes) -> None:
    """What a reader meets, in the order validate checks it: the frame, its
    vlmetalayers, the b2nd metalayer, the index, the array, the chunks."""
    with blosckit.open_frame(blob) as f:
        f.vlmetalayers
        b = f.b2nd
        f.entries
        if b is not None:
            b.read()
        f.decompress()


def _inspected(blob: bytes, want: tuple | None) -> tuple | None:
    m = want and re.match(r"frame\.chunks\[(\d+)\]", want[2])
    return _error(lambda: list(frame_nodes(blob, chunk=int(m.group(1)) if m else None)))


def _salvaged(blob: bytes) -> tuple | None:
    _, report = salvage(blob)
    d = report.damage[0] if report.damage else None
    return None if d is None else (d.rule, d.offset, d.path)


def _reads_no_array(want: tuple | None) -> bool:
    """The fault is the b2nd metalayer's: the inspector and salvage read no
    array (and salvage keeps metalayer values as bytes)."""
    return want is not None and (want[0] in ("F-b2nd", "F-b2nd-shape", "F-b2nd-dtype"))


def _compare_frame(label: str, blob: bytes, wrong: list) -> None:
    if not looks_like_frame(blob):          # validate reads it as a chunk
        want = _error(lambda: blosckit.decompress(blob))
        if _claim(blob) <= MAX_CLAIM and _validated(blob) != want:
            wrong.append((label, "validate", want, _validated(blob)))
        return
    want = _error(lambda: _read_everything(blob))
    got = {"validate": _validated(blob)}
    if not _reads_no_array(want):
        got["inspect"] = _inspected(blob, want)
        got["salvage"] = _salvaged(blob)
    wrong += [(label, tool, want, g) for tool, g in got.items() if g != want]


SEEDS = seed_frames()


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_frame_tools_agree(name):
    wrong: list = []
    for k, (label, blob) in enumerate(frame_mutations(SEEDS[name], random.Random(SEED))):
        if k % STRIDE == 0:
            _compare_frame(label, blob, wrong)
    assert wrong == []


def _frame_of(chunk: bytes) -> tuple[bytes, int] | None:
    """A frame of three copies of ``chunk`` and where its middle one starts
    (None when the frame stores no bytes for it: a special chunk)."""
    try:
        fr = blosckit.build_frame([chunk] * 3)
        with blosckit.open_frame(fr) as f:
            if not isinstance(f.offsets[1], int):
                return None
            return fr, f.chunk_view(1)[0]
    except (FormatError, ValueError):
        return None


@pytest.mark.parametrize("name", sorted(CHUNKS))
def test_a_damaged_chunk_in_a_frame_gets_the_same_error_everywhere(name):
    """The chunk mutations that keep the chunk's length, put in the middle
    of a frame: the reader, validate, the inspector and salvage agree."""
    made = _frame_of(CHUNKS[name])
    if made is None:
        pytest.skip("a special chunk: the frame stores no bytes for it")
    fr, at = made
    n = len(CHUNKS[name])
    wrong: list = []
    for k, (label, chunk) in enumerate(mutations(CHUNKS[name], every_truncation=False)):
        if k % STRIDE or len(chunk) != n or _claim(chunk) > MAX_CLAIM:
            continue
        blob = fr[:at] + chunk + fr[at + n:]
        _compare_frame(label, blob, wrong)
    assert wrong == []


# ---------------------------------------------------------------------------
# Truncations: the input's own rule, the same from every tool
# ---------------------------------------------------------------------------

def _python_blosc2_blobs() -> dict[str, bytes]:
    """Inputs python-blosc2 writes: a frame with metalayers and a
    vlmetalayer, a b2nd frame (the issue's array, made smaller), a chunk."""
    blosc2 = oracle("blosc2")
    import numpy as np
    s = blosc2.SChunk(chunksize=16000, data=np.arange(20000, dtype="i4").tobytes(),
                      cparams={"typesize": 4}, meta={"m": 7})
    s.vlmeta["v"] = {"a": list(range(20))}
    a = np.arange(120 * 90, dtype="i8").reshape(120, 90) % 1000
    b2nd = blosc2.asarray(a, chunks=(50, 40), blocks=(10, 20))
    chunk = blosc2.compress2(np.linspace(0, 1, 3000).tobytes(), typesize=8)
    return {"schunk": s.to_cframe(), "b2nd": b2nd.to_cframe(), "chunk": chunk}


def _cut_points(n: int, header: int) -> list[int]:
    """Every cut inside the first ``header`` bytes (the headers, field by
    field), then a stride through the rest, and the last bytes (index and
    trailer) one by one."""
    every = range(0, min(n, header))
    stride = range(header, n, 1 if LONG else 37)
    tail = range(max(0, n - 40), n)
    return sorted(set(every) | set(stride) | set(tail))


def _raised(fn) -> FormatError | None:
    try:
        fn()
    except FormatError as e:
        return e
    return None


def _check_cut(label: str, part: bytes, cut: int, read, wrong: list) -> None:
    """``read(part)`` stops at the cut with T-truncated in plain words, and
    the other tools report the same (rule, offset, path)."""
    e = _raised(lambda: read(part))
    assert e is not None and (e.rule, e.offset) == ("T-truncated", cut), (label, e)
    assert e.message.startswith(f"the input ends at byte {cut}, inside {e.path}"), e


@pytest.mark.parametrize("name", ["schunk", pytest.param("b2nd", marks=pytest.mark.long), "chunk"])
def test_a_truncation_is_its_own_rule_everywhere(name):
    """An input python-blosc2 wrote, cut at any byte: every tool reports the
    same T-truncated, at the cut, in plain words naming the structure the
    input ends inside."""
    blob = _python_blosc2_blobs()[name]
    wrong: list = []
    for cut in _cut_points(len(blob), 140 if name != "chunk" else 40):
        part = blob[:cut]
        frame = looks_like_frame(part)
        _check_cut(f"{name} cut {cut}", part, cut,
                   _read_everything if frame else blosckit.decompress, wrong)
        _compare_frame(f"{name} cut {cut}", part, wrong)
        if not frame:
            want = _error(lambda: blosckit.decompress(part))
            got = _error(lambda: list(chunk_nodes(part)))
            if got != want:
                wrong.append((f"{name} cut {cut}", "inspect", want, got))
    assert wrong == []


def test_a_sparse_frame_cut_short_is_a_truncation_everywhere(tmp_path):
    """The index file of a sparse frame python-blosc2 wrote, and a chunk
    file of it, cut at many bytes: the reader, validate and the inspector
    agree on T-truncated at the cut (offsets in the file that is cut).
    (salvage takes no sparse frame yet.)"""
    blosc2 = oracle("blosc2")
    import numpy as np
    src = tmp_path / "src.b2frame"
    s = blosc2.SChunk(chunksize=16000, urlpath=str(src), contiguous=False,
                      cparams={"typesize": 4})
    s.append_data(np.arange(4000, dtype="i4"))
    s.append_data(np.arange(4000, dtype="i4") * 3)
    s.vlmeta["v"] = [1, 2, 3]
    del s
    wrong: list = []
    for name in ("chunks.b2frame", "00000001.chunk"):
        whole = (src / name).read_bytes()
        for cut in _cut_points(len(whole), 140):
            work = tmp_path / f"cut-{name}-{cut}"
            shutil.copytree(src, work)
            (work / name).write_bytes(whole[:cut])
            label = f"{name} cut {cut}"
            _check_cut(label, str(work), cut, _read_everything, wrong)
            want = _error(lambda: _read_everything(str(work)))
            got = {"validate": _validated(str(work)),
                   "inspect": _inspected(str(work), want)}
            wrong += [(label, tool, want, g) for tool, g in got.items() if g != want]
            shutil.rmtree(work)
    assert wrong == []
