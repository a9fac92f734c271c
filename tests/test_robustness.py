"""Robustness of the readers against format-aware mutations (issue 13).

Chunk mutations (``helpers.mutations`` of ``helpers.small_chunks``) and
frame mutations (every fixed-header field at boundary values, truncation at
every offset, corrupted offsets-index entries, a corrupted trailer length,
changed msgpack markers, splices of two blobs, and seeded random byte
damage to reach the requested count) are generated here, deterministically,
and run through ``decompress``, ``parse_chunk``, ``open_frame`` (then
``.decompress()``, ``.metalayers``, ``.vlmetalayers``, ``.b2nd``) and
``validate`` by ``tests/robustness_run.py`` in a subprocess under
``RLIMIT_AS`` (baseline + 2 GiB).  Asserted: only FormatError from the
readers, validate never raises, no crash, no hang, every call < 1 s.

CI: about 25,000 inputs.  ``BLOSCKIT_LONG=1``: 1,000,000 inputs, or
``BLOSCKIT_ROBUST_COUNT`` (either mode).
"""
from __future__ import annotations

import json
import os
import pickle
import random
import struct
import subprocess
import sys
import time
from pathlib import Path

import msgpack
import numpy as np

import blosckit
from blosckit.formats.b2nd import build_meta
from blosckit.formats.frame import FLAT_HEADERS
from blosckit.formats.rules import OFFSETS
from helpers import LONG, mutations, small_chunks

SEED = 20250613
COUNT = int(os.environ.get("BLOSCKIT_ROBUST_COUNT", 1_000_000 if LONG else 6_000))
WORKER = Path(__file__).with_name("robustness_run.py")
SLOWEST_ALLOWED = 1.0
TRAILER_LEN_AT = 22          # uint32 big-endian at len - 22

# ---------------------------------------------------------------------------
# Seed frames
# ---------------------------------------------------------------------------


def seed_frames() -> dict[str, bytes]:
    d = np.arange(3000, dtype="<i4").tobytes()
    out = {}
    out["build-mixed"] = blosckit.build_frame(
        [blosckit.compress(d[i:i + 4000], typesize=4, codec=c)
         for i, c in zip(range(0, len(d), 4000), ("zstd", "lz4", "blosclz"))],
        metalayers={"m": b"\x93\x01\x02\x03", "name": msgpack.packb("x" * 20)},
        vlmetalayers={"v": b"hello", "w": msgpack.packb({"a": [1, 2, 3]})})
    out["compress-lz4"] = blosckit.compress_frame(
        d[:6000], chunksize=2000, typesize=4, codec="lz4", filters=("bitshuffle",),
        metalayers={"m": b"\xc0"}, vlmetalayers={"v": b"\x91\x01"})
    out["specials"] = blosckit.build_frame(
        [blosckit.compress_special("zeros", 800, typesize=4),
         blosckit.compress(d[:800], typesize=4),
         blosckit.compress_special("nan", 800, typesize=4)],
        vlmetalayers={"v": b"x" * 40})
    # a 1-D b2nd array: 1000 int32 items, chunks of 400, blocks of 100
    # (the value as C-Blosc2 writes it: fixed-width ints, which it reads by
    # position; generic msgpack with compact ints is refused, rule F-b2nd)
    meta = build_meta((1000,), (400,), (100,), "<i4")
    arr = np.arange(1200, dtype="<i4")
    arr[1000:] = 0
    # blocks of the array's 100 items (C-Blosc2's array reader needs them)
    out["b2nd"] = blosckit.build_frame(
        [blosckit.compress(arr[k:k + 400].tobytes(), typesize=4, codec="zstd", blocksize=400)
         for k in range(0, 1200, 400)],
        metalayers={"b2nd": meta}, vlmetalayers={"attrs": msgpack.packb({"k": 1})})
    for name, fr in out.items():     # the seeds themselves are well formed
        f = blosckit.open_frame(fr)
        f.decompress()
        assert blosckit.validate(fr) == [], name
    assert blosckit.open_frame(out["b2nd"]).b2nd.read()[:4000] == arr[:1000].tobytes()
    return out


# ---------------------------------------------------------------------------
# Frame mutations
# ---------------------------------------------------------------------------

def _header_fields() -> list[tuple[str, int, int, int, int]]:
    """(name, offset, width, shift, mask) of every layout-14 header field;
    mask -1: the whole ``width`` bytes; else a bit field of one byte."""
    tops = sorted((off, k[len("frame.header."):]) for k, off in OFFSETS.items()
                  if k.startswith("frame.header.") and k.count(".") == 2)
    ends = [o for o, _ in tops[1:]] + [87]
    out = []
    for (off, name), end in zip(tops, ends):
        out.append((name, off, end - off, 0, -1))
    for name, (_, shift, mask) in FLAT_HEADERS[14].index.items():
        if "." in name and mask > 0:
            out.append((name, OFFSETS["frame.header." + name], 1, shift, mask))
    return out


HEADER_FIELDS = _header_fields()


def _set(fr: bytes, pos: int, new: bytes) -> bytes:
    b = bytearray(fr)
    b[pos:pos + len(new)] = new
    return bytes(b[:len(fr)]) if pos + len(new) <= len(fr) else bytes(b)


def header_mutations(fr: bytes):
    for name, off, width, shift, mask in HEADER_FIELDS:
        if mask > 0:                           # a bit field
            for v in {0, 1, mask, mask - 1 if mask > 1 else 0}:
                b = bytearray(fr)
                b[off] = (b[off] & ~(mask << shift) & 0xFF) | (v << shift)
                yield f"hdr.{name}={v}", bytes(b)
            continue
        if width in (1, 2, 4, 8):
            top = (1 << 8 * width) - 1
            old = int.from_bytes(fr[off:off + width], "big")
            vals = {0, 1, top, top >> 1, (top >> 1) + 1, (old + 1) & top, (old - 1) & top,
                    len(fr) & top, (len(fr) + 1) & top, old * 2 & top}
            for v in sorted(vals):
                yield f"hdr.{name}={v:#x}", _set(fr, off, v.to_bytes(width, "big"))
        else:                                  # byte arrays: each byte
            for k in range(width):
                for v in (0, 1, 0x7F, 0x80, 0xFF):
                    yield f"hdr.{name}[{k}]={v}", _set(fr, off + k, bytes([v]))


def _layout(fr: bytes) -> tuple[int, int, int, int]:
    """header_len, cbytes, index start, trailer start of a seed frame."""
    header_len = struct.unpack_from(">i", fr, 11)[0]
    cbytes = struct.unpack_from(">q", fr, 39)[0]
    start = header_len + cbytes
    idx_len = struct.unpack_from("<i", fr, start + 12)[0]
    return header_len, cbytes, start, start + idx_len


def index_mutations(fr: bytes, rng: random.Random):
    header_len, cbytes, start, end = _layout(fr)
    old_chunk = fr[start:end]
    entries = np.frombuffer(blosckit.decompress(old_chunk), "<i8").copy()
    specials = [-(1 << 63) | (c << 56) for c in (0x40, 0x20, 0x10, 0x01, 0x02, 0x04, 0xFF)]
    for k in range(len(entries)):
        vals = {0, 1, -1, (1 << 63) - 1, -(1 << 63), len(fr), cbytes, cbytes - 1,
                cbytes + 1, header_len, int(entries[k]) + 1, int(entries[k]) - 1,
                int(entries[k]) + 16, int(entries[(k + 1) % len(entries)]), *specials}
        for v in sorted(vals):
            e = entries.copy()
            e[k] = np.int64(v) if -(1 << 63) <= v < (1 << 63) else 0
            for clevel in (5, 0):
                new = blosckit.compress(e.tobytes(), typesize=8, clevel=clevel)
                label = f"idx[{k}]={v}/c{clevel}"
                if len(new) == len(old_chunk):
                    yield label + ":splice", fr[:start] + new + fr[end:]
                else:
                    yield label + ":resized", fr[:start] + new + fr[end:]
                    n = min(len(new), len(old_chunk))
                    yield label + ":overwrite", fr[:start] + new[:n] + fr[start + n:]
    # fewer and more entries
    for n in (0, 1, len(entries) - 1, len(entries) + 1, 2 * len(entries)):
        e = np.resize(entries, max(n, 0)).astype("<i8")
        new = blosckit.compress(e.tobytes(), typesize=8)
        yield f"idx.count={n}", fr[:start] + new + fr[end:]
    # the index chunk's own header bytes
    for pos in range(start, min(start + 32, end)):
        for v in (0, 1, 0x7F, 0x80, 0xFF):
            yield f"idxhdr@{pos}={v}", _set(fr, pos, bytes([v]))


def trailer_mutations(fr: bytes):
    at = len(fr) - TRAILER_LEN_AT
    old = struct.unpack_from(">I", fr, at)[0]
    for v in sorted({0, 1, 2, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, len(fr), len(fr) + 1,
                     len(fr) - 1, old + 1, old - 1, old + 8, old * 2, TRAILER_LEN_AT}):
        yield f"trailer_len={v}", _set(fr, at, struct.pack(">I", v & 0xFFFFFFFF))
    for pos in range(len(fr) - 24, len(fr)):      # the trailer's tail bytes
        for v in (0, 0xFF):
            yield f"tail@{pos}={v}", _set(fr, pos, bytes([v]))


MARKERS = (0x90, 0x91, 0x9F, 0xA0, 0xA8, 0xBF, 0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6,
           0xCC, 0xCD, 0xCE, 0xCF, 0xD0, 0xD1, 0xD2, 0xD3, 0xD9, 0xDA, 0xDB, 0xDC, 0xDD,
           0xDE, 0xDF, 0x80, 0x8F, 0x00, 0x7F, 0xE0, 0xFF)


def _is_marker(b: int) -> bool:
    return 0x80 <= b <= 0xBF or 0xC0 <= b <= 0xDF


def marker_mutations(fr: bytes):
    header_len, _, _, end = _layout(fr)
    spots = [o for k, o in OFFSETS.items()
             if k.startswith("frame.header.") and (k.endswith("marker") or k.endswith("fixarray"))]
    spots += [p for p in range(87, header_len) if _is_marker(fr[p])]      # metalayers
    spots += [p for p in range(end, len(fr) - TRAILER_LEN_AT) if _is_marker(fr[p])]  # trailer
    for pos in sorted(set(spots)):
        for v in MARKERS:
            if v != fr[pos]:
                yield f"marker@{pos}={v:#x}", _set(fr, pos, bytes([v]))


def frame_mutations(fr: bytes, rng: random.Random):
    yield "original", fr
    for n in range(len(fr)):
        yield f"cut{n}", fr[:n]
    yield from header_mutations(fr)
    yield from index_mutations(fr, rng)
    yield from trailer_mutations(fr)
    yield from marker_mutations(fr)


def random_mutation(rng: random.Random, pool: list[tuple[str, str, bytes]]):
    """One seeded random mutation of a blob of ``pool``."""
    name, kind, blob = pool[rng.randrange(len(pool))]
    op = rng.randrange(6)
    b = bytearray(blob)
    if op == 0 and len(b):                      # bit flips
        for _ in range(rng.randint(1, 4)):
            p = rng.randrange(len(b))
            b[p] ^= 1 << rng.randrange(8)
        label = "flips"
    elif op == 1 and len(b):                    # bytes set to boundary values
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.choice((0, 1, 0x7F, 0x80, 0xFF))
        label = "bytes"
    elif op == 2 and len(b) >= 4:               # a 32-/64-bit word at a boundary value
        w = rng.choice((4, 8))
        p = rng.randrange(max(len(b) - w, 1))
        v = rng.choice((0, 1, -1, (1 << (8 * w - 1)) - 1, -(1 << (8 * w - 1)), len(b)))
        b[p:p + w] = v.to_bytes(w, rng.choice(("big", "little")), signed=True)
        label = f"word{w}@{p}"
    elif op == 3:                               # a splice of two blobs
        other_name, other_kind, other = pool[rng.randrange(len(pool))]
        a, c = rng.randrange(len(b) + 1), rng.randrange(len(other) + 1)
        return (f"rsplice {name}[:{a}]+{other_name}[{c}:]",
                "x" if kind != other_kind else kind, bytes(b[:a]) + other[c:])
    elif op == 4 and len(b) > 1:                # a range deleted or duplicated
        p, q = sorted(rng.sample(range(len(b)), 2))
        b = b[:p] + b[q:] if rng.random() < 0.5 else b[:q] + b[p:q] + b[q:]
        label = f"range{p}:{q}"
    else:                                       # truncation + random tail
        p = rng.randrange(len(b) + 1)
        b = b[:p] + bytes(rng.randrange(256) for _ in range(rng.randrange(8)))
        label = f"retail{p}"
    return f"rand-{label} {name}", kind, bytes(b)


def corpus_iter(count: int):
    """``(label, kind, blob)``: every systematic mutation, splices, then
    seeded random mutations up to ``count`` in all (generated lazily)."""
    rng = random.Random(SEED)
    out: list[tuple[str, str, bytes]] = []
    chunks = small_chunks()
    frames = seed_frames()
    for name, c in chunks.items():
        out.append((f"chunk {name}:original", "c", c))
        out += [(f"chunk {name}:{lab}", "c", b) for lab, b in mutations(c)]
    for name, fr in frames.items():
        out += [(f"frame {name}:{lab}", "f", b) for lab, b in frame_mutations(fr, rng)]
    seeds = [(f"chunk {n}", "c", c) for n, c in chunks.items()] + \
            [(f"frame {n}", "f", f) for n, f in frames.items()]
    # splices: a prefix of one + a suffix of another (chunk/frame mixes too)
    for _ in range(2000):
        (na, ka, a), (nb, kb, b) = rng.choice(seeds), rng.choice(seeds)
        i, j = rng.randrange(len(a) + 1), rng.randrange(len(b) + 1)
        out.append((f"splice {na}[:{i}]+{nb}[{j}:]", ka if ka == kb else "x", a[:i] + b[j:]))
    # the same offset in both (a frame's prefix, another frame's suffix)
    fl = list(frames.items())
    for (na, a) in fl:
        for (nb, b) in fl:
            if na != nb:
                for i in range(0, min(len(a), len(b)), 7):
                    out.append((f"splice {na}[:{i}]+{nb}[{i}:]", "f", a[:i] + b[i:]))
    yield from out
    for _ in range(count - len(out)):
        yield random_mutation(rng, out if rng.random() < 0.7 else seeds)


def corpus(count: int) -> list[tuple[str, str, bytes]]:
    return list(corpus_iter(count))


def _batches(it, n: int):
    batch = []
    for x in it:
        batch.append(x)
        if len(batch) == n:
            yield batch
            batch = []
    if batch:
        yield batch


def test_corpus_is_deterministic_and_big_enough():
    a = corpus(1000)
    assert len(a) >= 20_000
    assert [x[2] for x in a[:3000]] == [x[2] for x in corpus(1000)[:3000]]
    kinds = {k for _, k, _ in a}
    assert kinds == {"c", "f", "x"}
    assert sum(lab.startswith("frame ") for lab, _, _ in a) >= 5000


def _run_workers(items, tmp_path: Path, problems: list[str]) -> list[dict]:
    """``items`` split between two workers (the machine has 2 cores), each
    forking per run of blobs; their summaries, failures added to ``problems``."""
    nworkers = 2
    parts = [items[k::nworkers] for k in range(nworkers)]
    # the workers import the blosckit under test (a checkout or an installed wheel)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(blosckit.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]))
    procs = []
    for k, part in enumerate(parts):
        path = tmp_path / f"blobs{k}.pickle"
        with open(path, "wb") as fh:
            pickle.dump([(kind, blob) for _, kind, blob in part], fh)
        procs.append(subprocess.Popen([sys.executable, str(WORKER), str(path)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env))
    summaries = []
    for p, part in zip(procs, parts):
        out, err = p.communicate(timeout=3600)
        assert p.returncode == 0, (p.returncode, err.decode()[-3000:])
        line = [ln for ln in out.decode().splitlines() if ln.startswith("ROBUST-SUMMARY ")][-1]
        s = json.loads(line[len("ROBUST-SUMMARY "):])
        assert s["inputs"] == len(part)
        for i, msg in s["failures"]:
            label, kind, blob = part[i]
            problems.append(f"{label} [{kind}, {len(blob)} bytes]: {msg}\n"
                            f"    input: {blob.hex()}")
        sl = s["slowest"]
        s["slowest"]["label"] = part[sl["index"]][0] if sl["index"] >= 0 else ""
        if sl["seconds"] >= SLOWEST_ALLOWED:
            label, kind, blob = part[sl["index"]]
            problems.append(f"slow: {sl['api']} took {sl['seconds']:.3f} s on {label} "
                            f"[{kind}, {len(blob)} bytes]\n    input: {blob.hex()}")
        summaries.append(s)
    return summaries


def test_readers_survive_mutations(tmp_path):
    t0 = time.perf_counter()
    problems: list[str] = []
    summaries: list[dict] = []
    for batch in _batches(corpus_iter(COUNT), 100_000):
        summaries += _run_workers(batch, tmp_path, problems)
    total = {key: sum(s[key] for s in summaries)
             for key in ("inputs", "calls", "format_errors", "forks", "failures_total")}
    slow = max(summaries, key=lambda s: s["slowest"]["seconds"])["slowest"]
    report = (f"robustness: {total}, {time.perf_counter() - t0:.1f} s "
              f"(workers {[s['seconds'] for s in summaries]}), slowest call {slow['api']} "
              f"{slow['seconds'] * 1000:.1f} ms on {slow['label']}")
    print(report)
    assert total["inputs"] >= min(COUNT, 20_000)
    assert total["calls"] >= 3 * total["inputs"]
    assert total["format_errors"] > 0          # the mutations did reach the checks
    assert not problems, (report + f"\n{len(problems)} problems, the first 20:\n"
                          + "\n".join(problems[:20]))
