"""The salvage property over mutations of python-blosc2's frames.

For every mutated input: :func:`blosckit.salvage` raises FormatError, or
its output gets no error from :func:`blosckit.validate`, C-Blosc2 opens it
and reads every chunk, metalayer and vlmetalayer (in a child process: it can
crash) to what blosckit reads, python-blosc2 reads a b2nd output as an
array, and every chunk that was intact in the input is identical (stored
bytes) in the output at its place.

A chunk is *intact* when no mutated byte touches it nor the header, and
its place is known: the offsets index, if it still decodes, still holds
its entry (a damaged index that decodes is an index: nothing tells it
lies); if the index does not decode, every chunk before it is stored (not
special) and untouched, so the scan finds the run from the start of the
section.  In a sparse frame: its own file is untouched.  The seeds are python-blosc2 frames of each kind
salvage knows: a b2nd array, chunks of varying size, special chunks, a
plain frame with metalayers and vlmetalayers, a sparse b2nd frame.
"""
from __future__ import annotations

import random
import re
import shutil
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import blosckit
from blosckit.testing.fuzz import frame_digest
from helpers import oracle_verdicts
from oracles import oracle


@dataclass
class Seed:
    """A python-blosc2 frame and where its parts lie: ``ranges[i]`` is
    chunk i's bytes (None for a special entry); ``chunks[i]`` its stored
    bytes; a sparse seed keeps its files by name (``files``), chunk i in
    ``names[i]``."""
    name: str
    blob: bytes
    header_len: int
    ranges: list[tuple[int, int] | None]
    chunks: list[bytes | None]
    index: tuple[int, int]
    files: dict[str, bytes] = field(default_factory=dict)
    names: list[str | None] = field(default_factory=list)


def _contiguous(name: str, cframe: bytes) -> Seed:
    f = blosckit.open_frame(cframe)
    ranges: list[tuple[int, int] | None] = []
    for i in range(f.nchunks):
        e = f.entries[i]
        if e < 0:
            ranges.append(None)
            continue
        at = f.header_len + e
        ranges.append((at, at + blosckit.chunk_sizes(cframe[at:at + 32])[1]))
    index_at = f.header_len + f.cbytes
    return Seed(name, cframe, f.header_len, ranges,
                [None if r is None else cframe[r[0]:r[1]] for r in ranges],
                (index_at, f.trailer_start))


def _sparse(name: str, make) -> Seed:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.b2nd"
        make(str(path))
        files = {p.name: p.read_bytes() for p in path.iterdir()}
        f = blosckit.open_frame(path)
        names = [None if e < 0 else f"{e:08X}.chunk" for e in
                 (f.entries[i] for i in range(f.nchunks))]
        index = (f.header_len, f.trailer_start)
    return Seed(name, files["chunks.b2frame"], f.header_len, [None] * len(names),
                [None if n is None else files[n] for n in names], index, files, names)


def seeds() -> list[Seed]:
    np = oracle("numpy")
    blosc2 = oracle("blosc2")
    out = []
    a = np.arange(333 * 517, dtype="i8").reshape(333, 517) % 1000
    arr = blosc2.asarray(a, chunks=(100, 128), blocks=(25, 32))
    arr.schunk.vlmeta["note"] = "kept"
    out.append(_contiguous("b2nd", bytes(arr.to_cframe())))
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4))
    for n in (1000, 500, 1000, 700, 1000):
        sc.append_data(np.arange(n, dtype="<i4") * n)
    sc.vlmeta["v"] = [1, 2]
    out.append(_contiguous("variable", bytes(sc.to_cframe())))
    z = blosc2.zeros((10000,), dtype="i4", chunks=(1000,), blocks=(250,))
    z[2000:3000] = 5
    z[5500:5600] = 7
    out.append(_contiguous("specials", bytes(z.to_cframe())))
    p = blosc2.SChunk(chunksize=4000, data=np.arange(9000, dtype="<i4") // 7,
                      cparams=blosc2.CParams(typesize=4, codec=blosc2.Codec.LZ4),
                      meta={"m1": 12, "m2": [1, 2]})
    p.vlmeta["author"] = "me"
    p.vlmeta["n"] = [1, 2, 3]
    out.append(_contiguous("plain", bytes(p.to_cframe())))
    out.append(_sparse("sparse", lambda path: blosc2.asarray(
        np.arange(60 * 70, dtype="<f8").reshape(60, 70), chunks=(20, 35), blocks=(10, 7),
        urlpath=path, contiguous=False)))
    return out


# ---------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------

def _mutate(rng: random.Random, blob: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """1-3 damages: a byte set, a stretch overwritten or zeroed, a cut;
    returns the bytes and the damaged ranges (a cut: to the end)."""
    s = bytearray(blob)
    damage: list[tuple[int, int]] = []
    for _ in range(rng.randint(1, 3)):
        if len(s) < 2:
            break
        i = rng.randrange(len(s))
        r = rng.random()
        if r < 0.45:
            s[i] = rng.randrange(256)
            damage.append((i, i + 1))
        elif r < 0.65:
            del s[i:]
            damage.append((i, 1 << 62))
        else:
            n = rng.randint(1, 64)
            fill = bytes(n) if r < 0.8 else rng.randbytes(n)
            s[i:i + n] = fill[:len(s) - i]
            damage.append((i, i + n))
    return bytes(s), damage


def _touched(r: tuple[int, int], damage: list[tuple[int, int]]) -> bool:
    return any(a < r[1] and r[0] < b for a, b in damage)


def intact_chunks(seed: Seed, bad: bytes, damage: list[tuple[int, int]]) -> list[int]:
    """The chunks of a contiguous seed that stay intact in ``bad``: their
    bytes and the header untouched, and their index entry still the same
    where the damaged index still decodes (a damaged index that decodes is
    a valid index: nothing tells it lies), else every chunk before them
    stored and untouched."""
    if _touched((0, seed.header_len), damage):
        return []
    entries = _entries(bad[seed.index[0]:seed.index[1]])
    original = _entries(seed.blob[seed.index[0]:seed.index[1]])
    assert original is not None
    out = []
    clean_so_far = True
    for i, r in enumerate(seed.ranges):
        if r is None:
            # a special chunk lives in the index only: without the index,
            # nothing tells the chunks after it that it was there
            clean_so_far = False
            continue
        ok = not _touched(r, damage)
        reached = clean_so_far if entries is None else \
            (i < len(entries) and entries[i] == original[i] and len(entries) == len(original))
        if ok and reached:
            out.append(i)
        clean_so_far = clean_so_far and ok
    return out


def _entries(index: bytes) -> list[int] | None:
    """The offsets an index chunk decodes to, None when it does not."""
    try:
        raw = blosckit.decompress(index)
    except blosckit.FormatError:
        return None
    if len(raw) % 8:
        return None
    return list(struct.unpack(f"<{len(raw) // 8}q", raw))


# ---------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------

_DIVERGENCE = re.compile(r"[VL]\d+")


@dataclass
class Tally:
    inputs: int = 0
    refused: int = 0             # salvage raised FormatError (nothing to recover)
    outputs: list[bytes] = field(default_factory=list)
    b2nd: list[bool] = field(default_factory=list)
    intact_checked: int = 0
    checked: int = 0             # outputs C-Blosc2 read back
    divergent: list[list[str]] = field(default_factory=list)   # per output: its divergences
    excused: int = 0             # outputs C-Blosc2 reads otherwise, for a divergence warned of
    uninit: list[bool] = field(default_factory=list)   # per output: holds an uninit chunk


def _check_output(seed: Seed, out: bytes, report, intact: list[int], tally: Tally,
                  label: str) -> None:
    problems = blosckit.validate(out)
    errors = [p for p in problems if p.severity == "error"]
    assert errors == [], (label, errors)
    # a chunk the input held that C-Blosc2 misreads or refuses (a divergence
    # of specs/divergences.md, which validate warns of) is kept as it was
    tally.divergent.append(sorted({p.rule for p in problems if _DIVERGENCE.fullmatch(p.rule)}))
    with blosckit.open_frame(out) as f:
        for i in intact:
            assert i < f.nchunks and bytes(f.chunk(i)) == seed.chunks[i], (label, i, report)
            tally.intact_checked += 1
        tally.b2nd.append(f.b2nd is not None)
        # an uninit chunk's data is undefined (C-Blosc2 hands back whatever
        # memory held): no digest of it can agree
        tally.uninit.append(any(f.special(i) == "uninit" for i in range(f.nchunks)))
    tally.outputs.append(out)


def run(count: int, seed_value: int = 7, sparse_every: int = 10) -> Tally:
    """``count`` mutations over the seeds (each ``sparse_every``-th of the
    sparse seed, whose mutations need files); asserts the property and
    returns the tally (C-Blosc2's verdicts checked in one child at the end)."""
    rng = random.Random(seed_value)
    all_seeds = seeds()
    flat = [s for s in all_seeds if not s.files]
    sparse = [s for s in all_seeds if s.files]
    tally = Tally()
    tmp = Path(tempfile.mkdtemp(prefix="salvage-prop-"))
    try:
        for k in range(count):
            tally.inputs += 1
            if sparse and k % sparse_every == sparse_every - 1:
                _sparse_case(rng, rng.choice(sparse), tmp / f"s{k}", tally)
                continue
            seed = rng.choice(flat)
            bad, damage = _mutate(rng, seed.blob)
            try:
                out, report = blosckit.salvage(bad)
            except blosckit.FormatError:
                tally.refused += 1
                continue
            _check_output(seed, out, report, intact_chunks(seed, bad, damage), tally,
                          f"{seed.name}: {damage}")
            if len(tally.outputs) >= _BATCH:        # memory: ask C-Blosc2 in batches
                check_with_c_blosc2(tally)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check_with_c_blosc2(tally)
    return tally


def _sparse_case(rng: random.Random, seed: Seed, path: Path, tally: Tally) -> None:
    """Damage one file of a sparse frame (or remove it)."""
    path.mkdir()
    victim = rng.choice(sorted(seed.files))
    index = seed.blob
    for name, data in seed.files.items():
        if name != victim:
            (path / name).write_bytes(data)
        elif rng.random() < 0.8:
            bad, damage = _mutate(rng, data)
            (path / name).write_bytes(bad)
            if name == "chunks.b2frame":
                index = bad if not _touched((0, seed.header_len), damage) else b""
        elif name == "chunks.b2frame":
            index = b""
    try:
        out, report = blosckit.salvage(path)
    except blosckit.FormatError:
        tally.refused += 1
        return
    # where the index still decodes, its entries place the files; else
    # their numbers do (python-blosc2 numbers them in index order)
    # (a damaged header of the index file: no claim, as for a contiguous frame)
    entries = _entries(index[seed.index[0]:seed.index[1]]) if index else None
    original = _entries(seed.blob[seed.index[0]:seed.index[1]])
    intact = [i for i, n in enumerate(seed.names) if n is not None and n != victim and index
              and (entries == original if entries is not None else _index_keeps_places(seed))]
    _check_output(seed, out, report, intact, tally, f"{seed.name}: {victim}")


def _index_keeps_places(seed: Seed) -> bool:
    """Without its index, a sparse frame's chunk files are placed by number:
    right when python-blosc2 numbered them in index order."""
    return seed.names == [f"{i:08X}.chunk" for i in range(len(seed.names))]


_BATCH = 500


def check_with_c_blosc2(tally: Tally) -> None:
    """C-Blosc2 opens every output and reads what blosckit reads; a b2nd
    output is an array python-blosc2 reads.  The outputs checked are let go
    (counted in ``tally.checked``)."""
    if not tally.outputs:
        return
    verdicts = oracle_verdicts(tally.outputs, kind="frame")
    for out, v, is_array, warned, uninit in zip(tally.outputs, verdicts, tally.b2nd,
                                                 tally.divergent, tally.uninit):
        same = uninit or v.digest == frame_digest(blosckit.open_frame(out))
        alike = v.b2_ok and same and v.array_ok is (True if is_array else None)
        if not alike and warned:
            tally.excused += 1
            continue
        assert v.b2_ok, out.hex()
        assert same, out.hex()
        assert v.array_ok is (True if is_array else None), out.hex()
    tally.checked += len(tally.outputs)
    tally.outputs.clear()
    tally.b2nd.clear()
    tally.divergent.clear()
    tally.uninit.clear()

