"""Differential fuzzing against C-Blosc2, and the shareable seed corpus.

Needs the ``fuzz`` extra (hypothesis for the strategies, python-blosc2 for
the oracle).  C-Blosc2 runs in one long-lived child process (python-blosc2
is imported once per session) that forks once per run of inputs, so a crash
or a hang there is a verdict, not the end of the run.

* :func:`c_blosc2_verdicts` -- what C-Blosc2 makes of each blob;
* :func:`fuzz` -- generate and corrupt chunks and frames (blosckit's and
  python-blosc2's; generic damage and the named mutations of
  :mod:`.mutations`), compare blosckit with C-Blosc2, classify each
  disagreement against the known-divergences table, minimise and write the
  new ones; and run every reader and tool on each input under a memory
  bound (:mod:`.readers`: data or FormatError, salvage output that
  validates and C-Blosc2 opens), writing each slip;
* :func:`write_corpus` -- valid and edge-case chunks and frames with a
  manifest of what a correct reader must do with each.
"""
from __future__ import annotations

import atexit
import hashlib
import json
import os
import random
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NamedTuple, Sequence

from ..tools import divergences
from ..chunk.read import decompress
from ..errors import FormatError
from ..formats import b2nd as fb
from ..formats import frame as ff
from ..formats.rules import RULES
from ..frame.read import open_frame
from ..tools.validate import validate
from .mutations import LIES, MUTATIONS, apply
from .readers import Slip, every_reader

__all__ = ["Verdict", "c_blosc2_verdicts", "Outcome", "blosckit_outcome", "classify",
           "fuzz", "write_corpus"]

# The child: reads length-prefixed blobs, writes 66 bytes per blob (C-Blosc2
# status; for chunks the C-Blosc 1.x status, for frames the n-d array's;
# sha256 of what C-Blosc2 read; sha256 of the array's items in C order).
# Status 1 read, 0 refused, 2 not asked (not an array), 3 crashed or hung,
# 4 python-blosc2 cannot list a name C-Blosc2 reads.
_WORKER = r"""
import hashlib, os, select, signal, struct, sys
import blosc2
from blosc2 import blosc2_ext
try:
    import blosc
except ImportError:
    blosc = None
kind = "chunk"
NONE = bytes(32)


def frame_contents(blob):
    # C-level reads only: names come back as str, values as the raw bytes
    # C-Blosc2 stores (python-blosc2's msgpack decoding is not asked for).
    s = blosc2.schunk_from_cframe(blob, copy=True)
    parts = [s.decompress_chunk(i) for i in range(s.nchunks)]
    h = hashlib.sha256(b"".join(parts))
    try:
        metas = sorted((n, blosc2_ext.meta__getitem__(s, n)) for n in s.meta.keys())
        vls = sorted((n, s.vlmeta.get_vlmeta(n)) for n in s.vlmeta.get_names())
    except UnicodeDecodeError:
        return None
    for n, v in metas + [("", b"")] + vls:
        h.update(n.encode() + b"\0" + struct.pack("<q", len(v)) + bytes(v))
    return h.digest(), array_contents(blob, [n for n, _ in metas])


def array_contents(blob, names):
    # an n-d array: its items in C order, as C-Blosc2 assembles them
    if "b2nd" not in names and "caterva" not in names:
        return 2, NONE
    try:
        a = blosc2.ndarray_from_cframe(blob, copy=True)
        return 1, hashlib.sha256(a[...].tobytes()).digest()
    except Exception:
        return 0, NONE


def verdict(blob):
    b2, digest, b1, adigest = 0, NONE, 2, NONE
    try:
        if kind == "frame":
            d = frame_contents(blob)
            if d is None:
                b2 = 4
            else:
                b2, (digest, (b1, adigest)) = 1, d
        else:
            b2, digest = 1, hashlib.sha256(blosc2.decompress(blob)).digest()
    except Exception:
        pass
    if kind == "chunk" and blosc is not None and blob[:1] and blob[0] <= 2:
        try:
            blosc.decompress(blob)
            b1 = 1
        except Exception:
            b1 = 0
    return bytes([b2, b1]) + digest + adigest


def run(todo, emit):
    # one child for the blobs of todo in turn; returns how many it answered
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        for blob in todo:
            os.write(w, verdict(blob))
        os._exit(0)
    os.close(w)
    answered, pending, chunk = 0, b"", b""
    while True:
        ready, _, _ = select.select([r], [], [], 20)
        chunk = os.read(r, 4096) if ready else None
        if not chunk:
            break
        pending += chunk
        whole = len(pending) - len(pending) % 66
        emit(pending[:whole])
        answered += whole // 66
        pending = pending[whole:]
    if chunk is None:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(r)
    return answered


def answer(path):
    data = open(path, "rb").read()
    blobs, pos, out = [], 0, []
    while pos < len(data):
        n = struct.unpack_from("<i", data, pos)[0]
        blobs.append(data[pos + 4:pos + 4 + n])
        pos += 4 + n
    done = 0
    while done < len(blobs):
        done += run(blobs[done:], out.append)
        if done < len(blobs):
            # the child died on this blob; an earlier blob may have damaged its
            # heap, so the blob is tried again alone before it is called a crash
            alone = []
            if run([blobs[done]], alone.append) == 0:
                alone = [bytes([3, 3]) + NONE + NONE]
            out.append(alone[0])
            done += 1
    return b"".join(out)


# One request per line ("KIND PATH"), one answer each (its length in decimal
# and a newline, then the verdicts).  Each request is answered by a child
# forked for it, which reads the blobs and forks C-Blosc2's children in
# turn: the server's own heap holds nothing but the imports, so C-Blosc2,
# reading past a blob, finds what a fresh interpreter's heap would hold,
# not earlier requests' blobs.
for line in sys.stdin:
    kind, path = line.rstrip("\n").split(" ", 1)
    pid = os.fork()
    if pid == 0:
        got = answer(path)
        sys.stdout.buffer.write(b"%d\n" % len(got) + got)
        sys.stdout.buffer.flush()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status:                   # the request's child died: an empty answer
        sys.stdout.buffer.write(b"0\n")
        sys.stdout.buffer.flush()
"""


class _Server:
    """The long-lived process that answers :func:`c_blosc2_verdicts`: it
    imports python-blosc2 once (half a second per start otherwise) and forks
    a child per request, which forks one per run of blobs, so a crash in
    C-Blosc2 never reaches it."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.pid = 0
        self.lock = threading.Lock()

    def ask(self, kind: str, path: str, timeout: float) -> bytes:
        with self.lock:
            if self.proc is None or self.proc.poll() is not None or self.pid != os.getpid():
                # a forked caller gets its own server: the pipes are its parent's
                self.proc = subprocess.Popen([sys.executable, "-c", _WORKER],
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                self.pid = os.getpid()
            proc = self.proc
            try:
                proc.stdin.write(f"{kind} {path}\n".encode())
                proc.stdin.flush()
                end, size = time.monotonic() + timeout, b""
                while not size.endswith(b"\n"):
                    size += self._read(proc, 1, end, timeout)
                return self._read(proc, int(size), end, timeout)
            except BaseException:
                proc.kill()          # half an answer may be left in the pipe
                proc.wait()
                self.proc = None
                raise

    @staticmethod
    def _read(proc: subprocess.Popen, n: int, end: float, timeout: float) -> bytes:
        """``n`` bytes of the answer, by the monotonic time ``end``."""
        fd, got = proc.stdout.fileno(), bytearray()
        while len(got) < n:
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise subprocess.TimeoutExpired("c_blosc2_verdicts", timeout)
            part = os.read(fd, n - len(got))
            if not part:
                raise RuntimeError(f"the C-Blosc2 worker exited (status {proc.wait()})")
            got += part
        return bytes(got)

    def close(self) -> None:
        if self.proc is not None and self.pid == os.getpid():
            self.proc.stdin.close()
            self.proc.wait()
        self.proc = None


_SERVER = _Server()
atexit.register(_SERVER.close)


class Verdict(NamedTuple):
    """What the C libraries make of one blob (see :func:`c_blosc2_verdicts`)."""
    b2_ok: bool                 # C-Blosc2 reads it (chunk: decompress; frame: every part)
    b1_ok: bool | None          # C-Blosc 1.x decompresses it; None when not asked
    digest: bytes | None        # sha256 of what C-Blosc2 read, None when it refused
    python_only: bool = False   # C-Blosc2 reads it, python-blosc2 cannot (a non-UTF-8 name)
    crashed: bool = False       # the library crashed or hung on it
    array_ok: bool | None = None        # frames: C-Blosc2 reads the n-d array; None: none
    array_digest: bytes | None = None   # sha256 of its items in C order


def c_blosc2_verdicts(blobs: Sequence[bytes], *, kind: str = "chunk",
                      timeout: float = 600, fresh: bool = False) -> list[Verdict]:
    """For each blob, what the C libraries make of it.  ``kind="chunk"``:
    C-Blosc2 decompresses it, and for chunk versions <= 2 C-Blosc 1.x too.
    ``kind="frame"``: C-Blosc2 opens it as a cframe and reads every chunk,
    metalayer and vlmetalayer (the digest covers them all, as
    :func:`frame_digest` computes it from blosckit's reading), and for a
    b2nd frame python-blosc2's NDArray of it (``array_ok``,
    ``array_digest``).  One oracle process serves every call (``timeout``,
    seconds, bounds each call); ``fresh=True`` starts a new one first, with
    a new address-space layout, where a wild read that landed on mapped
    memory last time may crash."""
    if fresh:
        _SERVER.close()
    with tempfile.NamedTemporaryFile(suffix=".blobs", delete=False) as f:
        for b in blobs:
            f.write(struct.pack("<i", len(b)) + bytes(b))
        path = f.name
    try:
        out = _SERVER.ask(kind, path, timeout)
    finally:
        os.unlink(path)
    if len(out) != 66 * len(blobs):
        raise RuntimeError(f"the C-Blosc2 worker answered {len(out)} bytes for "
                           f"{len(blobs)} blobs")
    frame = kind == "frame"
    return [Verdict(out[k] == 1, None if out[k + 1] == 2 or frame else out[k + 1] == 1,
                    out[k + 2:k + 34] if out[k] == 1 else None, out[k] == 4, out[k] == 3,
                    None if out[k + 1] == 2 or not frame or out[k] != 1 else out[k + 1] == 1,
                    out[k + 34:k + 66] if frame and out[k] == 1 and out[k + 1] == 1 else None)
            for k in range(0, len(out), 66)]


def frame_digest(frame) -> bytes:
    """The digest :func:`c_blosc2_verdicts` computes for a frame, from
    blosckit's reading of it: every chunk's data, then the metalayers and
    vlmetalayers (raw bytes) in name order."""
    h = hashlib.sha256(b"".join(frame.decompress_chunk(i) for i in range(frame.nchunks)))
    names = [(n, v) for n, v in sorted(frame.metalayers.items())]
    names += [("", b"")] + sorted(frame.vlmetalayers.items())
    for n, v in names:
        h.update(n.encode() + b"\0" + struct.pack("<q", len(v)) + bytes(v))
    return h.digest()


# ---------------------------------------------------------------------------
# blosckit's side and the classification
# ---------------------------------------------------------------------------

class Outcome(NamedTuple):
    """blosckit's reading: the digest of the data (as the oracle computes
    it), or the rule and offset of the FormatError; for a b2nd frame also
    the n-d array's (``array``: the digest of its items in C order, or the
    FormatError reading it raised; None for a frame that is no array)."""
    digest: bytes | None
    rule: str | None = None
    offset: int | None = None
    path: str | None = None
    array: bytes | FormatError | None = None


def blosckit_outcome(blob: bytes, kind: str, max_nbytes: int = 1 << 24) -> Outcome:
    try:
        if kind == "frame":
            with open_frame(blob) as f:
                return Outcome(frame_digest(f), array=_array_outcome(f, max_nbytes))
        return Outcome(hashlib.sha256(decompress(blob, max_nbytes=max_nbytes)).digest())
    except FormatError as e:
        return Outcome(None, e.rule, e.offset, e.path)


def _array_outcome(f, max_nbytes: int) -> bytes | FormatError | None:
    # the names C-Blosc2 looks for: a frame naming one is an array to it
    if not any(n in f.metalayers for n in fb.NAMES):
        return None
    try:
        b = f.b2nd
        return hashlib.sha256(b.read(max_nbytes=max_nbytes) if b is not None else b"").digest()
    except FormatError as e:
        return e


def _known(blob: bytes, kind: str) -> list[str]:
    """The divergences of the table that apply to ``blob`` (ids): those of
    decompressing (the oracle never calls getitem: V4 explains nothing)."""
    def readers(chunk) -> list[str]:
        return [d.id for d in divergences.reader_divergences(chunk, operation="decompress")]
    if kind == "chunk":
        return readers(blob)
    try:
        with open_frame(blob) as f:
            ids = [d.id for d, _, _ in divergences.frame_divergences(f)]
            s, e = f.index_span
            ids += readers(f.buffer[s:e])
            ids += [d.id for d in divergences.index_divergences(f.buffer[s:e])]
            for i in range(f.nchunks):
                if isinstance(f.offsets[i], int):
                    ids += readers(f.chunk(i))
            if "uninit" in f.offsets:
                ids.append("V6")
            return sorted(set(ids))
    except FormatError:
        return []


def classify(blob: bytes, kind: str, ours: Outcome, theirs: Verdict) -> tuple[str, str] | None:
    """``(category, explanation)`` of a disagreement, or None when both
    read the same data or both refuse.  Categories: ``c-crash``,
    ``c-wrong-data`` (both read, different data), ``blosckit-rejects``,
    ``c-rejects``; the explanation names the divergence of the table, or
    the stricter blosckit rule, or says it is new."""
    if theirs.crashed:
        known = _known(blob, kind) if ours.digest is not None else []
        where = f"known divergence {', '.join(known)}; " if known else ""
        return "c-crash", (f"C-Blosc2 crashed or hung (a C-Blosc2 bug); {where}blosckit: " +
                           ("reads it" if ours.digest else f"rule {ours.rule} at {ours.offset}"))
    if ours.digest is None and not theirs.b2_ok:
        return None
    if ours.digest is not None and theirs.b2_ok and ours.digest == theirs.digest:
        return _classify_array(blob, ours, theirs)
    known = _known(blob, kind)
    if ours.digest is None:
        return "blosckit-rejects", _stricter(ours.rule, ours.offset, ours.path, "it")
    # blosckit reads it: C-Blosc2 refuses it or reads other data
    category = "c-rejects" if not theirs.b2_ok or theirs.python_only else "c-wrong-data"
    return _explained(category, known)


def _explained(category: str, known: list[str], what: str = "") -> tuple[str, str]:
    """A disagreement where blosckit reads (``what`` names the part): the
    divergences of the table that explain it, or NEW."""
    if known:
        return category, f"known divergence {', '.join(known)}{what}"
    return category, f"NEW: no known divergence explains it{what}"


def _stricter(rule_id: str | None, offset: int | None, path: str | None, what: str) -> str:
    rule = RULES.get(rule_id or "")
    why = (f"blosckit rule {rule_id} ({rule.text})" if rule is not None else
           f"blosckit rule {rule_id}")
    return f"{why} at {offset} ({path}); C-Blosc2 reads {what}"


def _classify_array(blob: bytes, ours: Outcome, theirs: Verdict) -> tuple[str, str] | None:
    """A frame both read alike: how their n-d arrays compare (python-blosc2's
    NDArray and blosckit's ``Frame.b2nd``)."""
    mine, c_ok = ours.array, theirs.array_ok
    if mine is None and c_ok is None:
        return None
    if isinstance(mine, FormatError):
        if not c_ok:
            return None
        return "blosckit-rejects", _stricter(mine.rule, mine.offset, mine.path, "the array")
    if c_ok and mine == theirs.array_digest:
        return None
    return _explained("c-rejects" if not c_ok else "c-wrong-data", _known(blob, "frame"),
                      " (the n-d array)")


# ---------------------------------------------------------------------------
# The fuzzing loop
# ---------------------------------------------------------------------------

def _draw(strategy, n: int, seed: int) -> list:
    """``n`` examples of a hypothesis strategy, reproducible from ``seed``."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as _seed
    out: list = []

    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @_seed(seed)
    @given(strategy)
    def collect(x):
        out.append(x)
    collect()
    return out


def _minimise(blob: bytes, kind: str, same: Callable[[bytes], bool], budget: int = 400) -> bytes:
    """A shorter, plainer blob for which ``same`` still holds: cut the tail
    (halving the cut on failure), then zero windows of bytes (halving the
    window), within ``budget`` checks of ``same``.  Zeroed bytes show which
    bytes matter: what is left is the case."""
    best = blob
    step = max(1, len(best) // 2)
    while step >= 1 and budget > 0:
        cand = best[:len(best) - step]
        budget -= 1
        if cand and same(cand):
            best = cand
        else:
            step //= 2
    width = max(1, len(best) // 2)
    while width >= 1 and budget > 0:
        for at in range(0, len(best), width):
            if budget <= 0:
                break
            window = best[at:at + width]
            if not any(window):
                continue
            cand = best[:at] + bytes(len(window)) + best[at + width:]
            budget -= 1
            if same(cand):
                best = cand
        width //= 2
    return best


@dataclass
class FuzzReport:
    """Counts of a fuzzing run, and the cases written.  ``slips`` counts
    what blosckit's readers and tools did wrong (:class:`.readers.Slip`,
    by label) apart from the disagreements with C-Blosc2."""
    inputs: int = 0
    agree: int = 0
    by_category: dict[str, int] = field(default_factory=dict)
    new_cases: list[str] = field(default_factory=list)
    seconds: float = 0.0
    slips: dict[str, int] = field(default_factory=dict)
    mutations: dict[str, int] = field(default_factory=dict)   # named mutations applied
    # inputs every reader and tool ran on, by kind ("chunk", "frame", "sframe")
    read_by_all: dict[str, int] = field(default_factory=dict)

    def saw(self, what: str) -> None:
        """corrupt()'s observer: counts the named mutations applied."""
        if what.startswith("mutation "):
            name = what.split(" ", 1)[1]
            self.mutations[name] = self.mutations.get(name, 0) + 1


def fuzz(*, seconds: float = 60, seed: int = 0, out: Path | None = None,
         batch: int = 200, progress: Callable[[FuzzReport], None] | None = None,
         readers: bool = True) -> FuzzReport:
    """Run blosckit and C-Blosc2 on generated and corrupted chunks and
    frames for about ``seconds``; return the counts.  Disagreements no
    known divergence explains are minimised (a shorter blob keeping the
    same classification against blosckit) and written under ``out`` as
    ``<category>-<n>.bin`` with a ``.txt`` line of explanation.  The frames
    are blosckit's (:func:`.strategies.frames`: fixed, variable-size and
    VL-block chunks, specials, b2nd arrays, older layouts) and
    python-blosc2's (written in a child process), damaged by
    :func:`.strategies.corrupt` (its named mutations included).  With
    ``readers``, every reader and tool also runs on each input under a
    memory bound (:func:`.readers.every_reader`), sparse frames too, and
    C-Blosc2 is asked whether salvage's outputs open; each slip is counted
    in ``report.slips`` and its first case of each label written as
    ``slip-<kind>-<n>.bin``."""
    from . import strategies as bst
    report = FuzzReport()
    start = time.monotonic()
    rounds = 0
    seeds = python_blosc2_frames()
    while time.monotonic() - start < seconds:
        s = seed * 1_000_003 + rounds
        valid = [c for _, c in _draw(bst.chunks(max_nbytes=4096), batch // 2, s)]
        bad = _draw(bst.corrupt(valid), batch // 2, s + 1)
        frames = [f for _, f in _draw(bst.frames(max_chunks=4, chunkings=bst.CHUNKINGS,
                                                 stored_specials=True), batch // 8, s + 2)]
        bad_frames = _draw(bst.corrupt(frames + seeds, observe=report.saw), batch // 8, s + 3)
        # as many again made by the named mutations only (every class of
        # finding as likely as the others), each known by its mutation
        named = named_batch(frames + seeds, batch // 8, s + 6)
        made_by = {blob: name for name, blob in named}
        for name, _ in named:
            report.saw(f"mutation {name}")
        bad_frames += [blob for _, blob in named]
        salvaged: list[tuple[bytes, bytes, str]] = []
        for kind, blobs in (("chunk", valid + bad), ("frame", frames + bad_frames)):
            for i, (blob, theirs) in enumerate(zip(blobs, c_blosc2_verdicts(blobs, kind=kind))):
                report.inputs += 1
                if readers:
                    salvaged += _run_readers(blob, kind, out, report)
                ours = blosckit_outcome(blob, kind)
                found = classify(blob, kind, ours, theirs)
                if found is not None and found[1].startswith("NEW") and found[0] != "c-crash":
                    found = _alone(blobs, i, kind, ours, found, out, report)
                if found is None:
                    report.agree += 1
                    continue
                category, why = found
                key = f"{kind} {category}: {_label(why)}"
                if why.startswith("NEW") and blob in made_by:
                    key += f" [mutation {made_by[blob]}]"
                report.by_category[key] = report.by_category.get(key, 0) + 1
                if (why.startswith("NEW") or category == "c-crash") and out is not None:
                    _write_case(out, blob, kind, category, why, report)
        if readers:
            _check_salvaged(salvaged, out, report)
            sparse = [f for _, f in _draw(bst.sframes(max_chunks=3), batch // 20, s + 4)]
            for k, files in enumerate(sparse):
                # every other index damaged by the named mutations that fit it
                index = files[ff.SFRAME_INDEX]
                names = [n for n in MUTATIONS if k % 2 and apply(n, index) is not None]
                damage = bst.corrupt([index], mutations=names or None, observe=report.saw)
                _run_sparse(files, damage, s + 5 + k, out, report)
        rounds += 1
        report.seconds = time.monotonic() - start
        if progress is not None:
            progress(report)
    report.seconds = time.monotonic() - start
    return report


def named_batch(blobs: Sequence[bytes], n: int, seed: int) -> list[tuple[str, bytes]]:
    """``n`` blobs made by the named mutations of :mod:`.mutations`, with the
    name of each: a mutation drawn first (each as likely as the others),
    then a blob of ``blobs`` it fits, then its choices (``random.Random``
    of ``seed``)."""
    rng = random.Random(seed)
    fits: dict[str, list[bytes]] = {}
    out: list[tuple[str, bytes]] = []
    names = list(MUTATIONS)
    while names and len(out) < n:
        name = rng.choice(names)
        if name not in fits:
            fits[name] = [b for b in blobs if apply(name, b) is not None]
        if not fits[name]:
            names.remove(name)          # it fits none of these blobs
            continue
        made = apply(name, rng.choice(fits[name]), rng.choice)
        if made is not None:
            out.append((name, made))
    return out


# python-blosc2's frames of the kinds the fuzzing findings came from: an
# n-d array (with a vlmetalayer), a variable-size frame (append_data of a
# shorter chunk), special entries (zeros, NaN), stored special chunks (a
# repeated value), metalayers and vlmetalayers, a one-chunk frame, VL-block
# chunks.  Written
# in a child: the fuzzer never runs C-Blosc2 in its own process.
_SEEDS = r"""
import numpy as np
import blosc2
out = []
a = blosc2.asarray(np.arange(60 * 70, dtype="<i4").reshape(60, 70), chunks=(20, 32),
                   blocks=(8, 16))
a.schunk.vlmeta["note"] = "an array"
out.append(a.schunk.to_cframe())
out.append(blosc2.asarray(np.arange(100, dtype="<f8"), chunks=(40,), blocks=(40,)).to_cframe())
s = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4))
for n in (1000, 500, 1000):
    s.append_data(np.arange(n, dtype="<i4"))
out.append(s.to_cframe())
for kind, ts in (("ZERO", 8), ("NAN", 4), ("VALUE", 4)):
    s = blosc2.SChunk(chunksize=400 * ts, cparams=blosc2.CParams(typesize=ts))
    kw = {"value": np.int32(7)} if kind == "VALUE" else {}
    s.fill_special(1000, getattr(blosc2.SpecialValue, kind), **kw)
    out.append(s.to_cframe())
s = blosc2.SChunk(chunksize=4000, data=np.arange(3000, dtype="<i4"),
                  cparams=blosc2.CParams(typesize=4), meta={"abcd": [1], "ef": 2})
s.vlmeta["note"] = "hello world" * 3
s.vlmeta["x"] = [1, 2, 3]
out.append(s.to_cframe())
out.append(blosc2.SChunk(chunksize=400, data=np.arange(100, dtype="<i4"),
                         cparams=blosc2.CParams(typesize=4)).to_cframe())
vl = bytes(blosc2.blosc2_ext.vlcompress([b"abc" * 20, b"hello" * 40, b"z"], typesize=1,
                                        nthreads=1))
s = blosc2.SChunk(chunksize=261, cparams=blosc2.CParams(typesize=1))
s.insert_chunk(0, vl)
s.insert_chunk(1, vl)
out.append(s.to_cframe())
for f in out:
    print(bytes(f).hex())
"""


def python_blosc2_frames(timeout: float = 120) -> list[bytes]:
    """python-blosc2's frames of the kinds the held-out fuzzing damaged
    (see ``_SEEDS``), written in a child process; none when python-blosc2
    (or NumPy) cannot run."""
    try:
        lines = subprocess.run([sys.executable, "-c", _SEEDS], capture_output=True, text=True,
                               timeout=timeout, check=True).stdout.split()
    except (subprocess.SubprocessError, OSError):
        return []
    return [bytes.fromhex(line) for line in lines]


def _run_readers(src: bytes | Path, kind: str, out: Path | None,
                 report: FuzzReport) -> list[tuple[bytes, bytes, str]]:
    """Every reader on ``src``; its slips counted (and written); salvage's
    output returned as ``(input, output, kind)`` for C-Blosc2's verdict."""
    readings = every_reader(src)
    report.read_by_all[kind] = report.read_by_all.get(kind, 0) + 1
    for slip in readings.slips:
        _count_slip(slip, src, kind, out, report)
    if readings.salvaged is None or not isinstance(src, bytes):
        return []
    return [(src, readings.salvaged, kind)]


def _count_slip(slip: Slip, src: bytes | Path, kind: str, out: Path | None,
                report: FuzzReport) -> None:
    key = f"{kind} {slip.label}"
    first = key not in report.slips
    report.slips[key] = report.slips.get(key, 0) + 1
    if first and out is not None:
        _write_slip(out, src, kind, slip, report)


def _check_salvaged(salvaged: list[tuple[bytes, bytes, str]], out: Path | None,
                    report: FuzzReport) -> None:
    """C-Blosc2 must open every output of salvage (and its array, for a b2nd
    frame): one child for the round's outputs."""
    if not salvaged:
        return
    for (src, made, kind), v in zip(salvaged, c_blosc2_verdicts([m for _, m, _ in salvaged],
                                                                kind="frame")):
        if v.b2_ok and v.array_ok is not False and not v.python_only:
            continue
        said = sorted({p.rule for p in validate(made)})
        what = "the array" if v.b2_ok and v.array_ok is False else "the frame"
        why = f"validate: {', '.join(said)}" if said else "validate: []"
        _count_slip(Slip("salvage", "output", f"c-blosc2 refuses ({why})",
                         f"C-Blosc2 cannot read {what} of its output ({why})"),
                    src, kind, out, report)


def _run_sparse(files: dict[str, bytes], damage, seed: int, out: Path | None,
                report: FuzzReport) -> None:
    """Every reader on a sparse frame directory whose index is damaged."""
    index = _draw(damage, 1, seed)[0]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "fuzz.b2frame"
        d.mkdir()
        for name, data in {**files, ff.SFRAME_INDEX: index}.items():
            (d / name).write_bytes(data)
        report.inputs += 1
        _run_readers(d, "sframe", out, report)


def _write_slip(out: Path, src: bytes | Path, kind: str, slip: Slip,
                report: FuzzReport) -> None:
    """The first input of a slip's label, with a line saying what happened
    (an sframe directory is copied whole)."""
    out.mkdir(parents=True, exist_ok=True)
    name = f"slip-{kind}-{len(report.new_cases)}"
    if isinstance(src, bytes):
        (out / f"{name}.bin").write_bytes(src)
    else:
        shutil.copytree(src, out / name)
    (out / f"{name}.txt").write_text(f"{slip.reader}: {slip.what}\n")
    report.new_cases.append(name)


def _alone(blobs: Sequence[bytes], i: int, kind: str, ours: Outcome, found: tuple[str, str],
           out: Path | None, report: FuzzReport) -> tuple[str, str]:
    """A new disagreement judged again with blob ``i`` alone in a fresh
    process.  When C-Blosc2 then agrees, an earlier input of the batch left
    its memory damaged without crashing it: the input that did it is found
    by bisection and both are written as ``c-memory-<kind>-<n>-culprit``
    and ``-victim``."""
    victim = blobs[i]
    alone = c_blosc2_verdicts([victim], kind=kind)[0]
    if classify(victim, kind, ours, alone) == found:
        return found

    def damaged(before: Sequence[bytes]) -> bool:
        return c_blosc2_verdicts([*before, victim], kind=kind)[-1] != alone
    lo, hi = 0, i - 1           # the latest start whose run still damages: the culprit
    if i == 0 or not damaged(blobs[:i]):
        return "c-flaky", "C-Blosc2 read it otherwise once, not again (alone or after the batch)"
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if damaged(blobs[mid:i]):
            lo = mid
        else:
            hi = mid - 1
    why = (f"C-Blosc2 reads it right alone, wrongly after input {lo} of its batch ran in the "
           f"same process: that input damaged C-Blosc2's memory without crashing it "
           f"({'alone' if damaged(blobs[lo:lo + 1]) else 'with the inputs up to this one'})")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        name = f"c-memory-{kind}-{len(report.new_cases)}"
        (out / f"{name}-culprit.bin").write_bytes(blobs[lo])
        (out / f"{name}-victim.bin").write_bytes(victim)
        (out / f"{name}.txt").write_text(f"c-memory: {why}; run {name}-culprit.bin then "
                                         f"{name}-victim.bin in one process\n")
        report.new_cases.append(name)
    return "c-memory", why


def _label(why: str) -> str:
    """The part of an explanation that groups cases: the divergence ids, the
    blosckit rule, or NEW / crash."""
    if why.startswith("known divergence "):
        return why[len("known divergence "):]
    if why.startswith("blosckit rule "):
        return "stricter rule " + why.split()[2]
    if why.startswith("C-Blosc2 reads it right alone"):
        return "memory damaged by an earlier input"
    return "NEW" if why.startswith("NEW") else why.split(";")[0]


def _write_case(out: Path, blob: bytes, kind: str, category: str, why: str,
                report: FuzzReport) -> None:
    def rules(o: Outcome) -> tuple:
        return o.rule, o.array.rule if isinstance(o.array, FormatError) else None
    want = rules(blosckit_outcome(blob, kind))

    def same(b: bytes) -> bool:
        return rules(blosckit_outcome(b, kind)) == want
    small = _minimise(blob, kind, same)
    ours = blosckit_outcome(small, kind)
    found = classify(small, kind, ours, c_blosc2_verdicts([small], kind=kind)[0])
    if found is None or (found[0], _label(found[1])) != (category, _label(why)):
        small = blob                    # the minimised blob lost the disagreement
        ours = blosckit_outcome(small, kind)
    out.mkdir(parents=True, exist_ok=True)
    n = len(report.new_cases)
    name = f"{category}-{kind}-{n}"
    (out / f"{name}.bin").write_bytes(small)
    (out / f"{name}.txt").write_text(
        f"{category}: {why}; blosckit: "
        f"{'reads it' if ours.digest else f'{ours.rule} at {ours.offset} ({ours.path})'}\n")
    report.new_cases.append(name)


# ---------------------------------------------------------------------------
# The seed corpus
# ---------------------------------------------------------------------------

def write_corpus(out: Path, count: int, *, seed: int = 0) -> list[dict]:
    """``count`` blobs (about a third valid chunks, a sixth valid frames, the
    rest corrupted copies) under ``out`` with ``manifest.json``: for each
    file, how it was made and what a correct reader must do with it --
    ``decode`` (the sha256 and length of the data, for chunks; of every
    chunk's data joined, for frames) or ``reject`` (offset, rule, path of
    the first error)."""
    from . import strategies as bst
    out.mkdir(parents=True, exist_ok=True)
    n_chunks, n_frames = max(1, count // 3), max(1, count // 6)
    n_bad = max(0, count - n_chunks - n_frames)
    chunks = _unique(lambda s: [c for _, c in _draw(bst.chunks(max_nbytes=8192), n_chunks, s)],
                     n_chunks, seed)
    frames = _unique(lambda s: [f for _, f in _draw(bst.frames(max_chunks=5), n_frames, s)],
                     n_frames, seed + 100)
    lies = _lies(frames, n_bad)
    n_bad -= len(lies)
    bad = _unique(lambda s: _draw(bst.corrupt(chunks + frames), n_bad, s), n_bad,
                  seed + 200, seen=set(chunks) | set(frames)) if n_bad else []
    entries = []
    for k, (blob, made) in enumerate([(c, "strategies.chunks()") for c in chunks]
                                     + [(f, "strategies.frames()") for f in frames]
                                     + [(b, f"mutations.{lie}") for lie, b in lies]
                                     + [(b, "strategies.corrupt()") for b in bad]):
        kind = "frame" if ff.looks_like_frame(blob) else "chunk"
        name = f"{k:05d}.{'b2frame' if kind == 'frame' else 'b2chunk'}"
        (out / name).write_bytes(blob)
        entry = {"file": name, "kind": kind, "made_by": made, "size": len(blob),
                 **_expectation(blob, kind)}
        if made.startswith("mutations.lie-"):
            rule = MUTATIONS[made.split(".", 1)[1]].rule
            entry["lie"] = {"rule": rule, "severity": RULES[rule].severity}
        entries.append(entry)
    manifest = {"producer": "blosckit", "count": len(entries), "seed": seed,
                "format": "expect.decode: a reader returns data of this sha256 and length "
                          "(frames: every chunk's data joined, the metalayers and "
                          "vlmetalayers readable); expect.array (b2nd frames): "
                          "the array's shape, dtype and the sha256 and length of its items "
                          "in C order, or where reading it fails; expect.reject: it raises "
                          "at this offset for this rule (specs/); lie (frames the composer "
                          "wrote lying in one field, made_by mutations.lie-*): the rule "
                          "validate reports for the lie, and its severity",
                "entries": entries}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return entries


def _lies(frames: list[bytes], room: int) -> list[tuple[str, bytes]]:
    """One frame per lie of the composer (:data:`.mutations.LIES`), each
    made from the first of ``frames`` it fits; at most ``room``."""
    out = []
    for name in LIES:
        made = next((m for m in (apply(name, f) for f in frames) if m is not None), None)
        if made is not None and len(out) < room:
            out.append((name, made))
    return out


def _unique(draw: Callable[[int], list[bytes]], n: int, seed: int,
            seen: set[bytes] | None = None) -> list[bytes]:
    """``n`` distinct blobs (not in ``seen``) from draws with seeds from
    ``seed`` on (hypothesis starts from the simplest examples, which repeat)."""
    seen = set() if seen is None else set(seen)
    out: list[bytes] = []
    for k in range(20):
        for b in draw(seed + k):
            if b not in seen and len(out) < n:
                seen.add(b)
                out.append(b)
        if len(out) == n:
            break
    return out


def _rejection(e: FormatError) -> dict:
    return {"reject": {"offset": e.offset, "rule": e.rule, "path": e.path}}


def _digest(data: bytes) -> dict:
    return {"sha256": hashlib.sha256(data).hexdigest(), "nbytes": len(data)}


def _expectation(blob: bytes, kind: str) -> dict:
    array = None
    try:
        if kind == "frame":
            with open_frame(blob) as f:
                data = f.decompress()
                f.vlmetalayers          # part of reading a frame: refused when they are not
                array = _array_expectation(f)
        else:
            data = decompress(blob, max_nbytes=1 << 24)
    except FormatError as e:
        return {"expect": _rejection(e)}
    expect: dict[str, Any] = {"decode": _digest(data)}
    if array is not None:
        expect["array"] = array
    return {"expect": expect, "c_blosc2_divergences": _known(blob, kind)}


def _array_expectation(f) -> dict | None:
    """A b2nd frame's array: shape, dtype and the C-order items' digest (or
    where reading it fails); None for a frame that is no array."""
    try:
        b = f.b2nd
        if b is None:
            return None
        return {"shape": list(b.shape), "dtype": b.dtype, **_digest(b.read())}
    except FormatError as e:
        return _rejection(e)
