"""The child process of ``tests/test_sanitizers.py``: the hostile corpus run
through a blosckit whose native library is built with AddressSanitizer and
UndefinedBehaviorSanitizer.

Run as ``python tests/sanitize_run.py CORPUS PROGRESS`` with ``PYTHONPATH``
starting with the directory holding the instrumented ``blosckit`` copy and
``LD_PRELOAD`` naming the compiler's ``libasan.so`` (the interpreter itself is
not instrumented).  ``CORPUS`` is a pickle ``{"chunks": {name: bytes},
"frames": {name: bytes}}`` written by the parent (python-blosc2 is not run
here: C-Blosc2 itself trips AddressSanitizer, a memcpy with overlapping
ranges in its dictionary compressor).  Before each input the child writes
``section label hex`` to ``PROGRESS`` (replacing the previous line), so
when a sanitizer aborts the process the parent knows which input did it.

Readers may only raise FormatError (UnsupportedError included); validate
never raises; the kernels and the builder must round-trip.  Any other
outcome is listed on stdout and makes the exit status 1.  The last stdout
line is ``SANITIZE-SUMMARY <json>`` with the counts.  ``BLOSCKIT_LONG=1``
runs everything; otherwise every chunk mutation but only samples of the
builder grid and of the frame mutations (fixed seed).
"""
from __future__ import annotations

import gc
import json
import math
import os
import pickle
import random
import sys
import time
import traceback

import numpy as np

import blosckit
import blosckit.native as native
from blosckit import FormatError
from helpers import mutations, np_bitshuffle, np_shuffle, stored_blocks, strip

LONG = os.environ.get("BLOSCKIT_LONG") == "1"
CAP = 1 << 22                     # max_nbytes of the readers
SEED = 20240613
MAX_FAILURES = 30


class Run:
    def __init__(self, progress_path: str):
        self.fd = os.open(progress_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self.counts: dict[str, dict[str, int]] = {}
        self.failures: list[str] = []
        self.section = ""
        self.refusals: dict[str, int] = {}

    def note(self, label: str, blob: bytes = b"") -> None:
        """Record the input about to be run (survives a sanitizer abort)."""
        line = f"{self.section} {label} {bytes(blob).hex()}\n".encode()
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, line, 0)

    def count(self, key: str, n: int = 1) -> None:
        c = self.counts.setdefault(self.section, {})
        c[key] = c.get(key, 0) + n

    def refuse(self, err: Exception) -> None:
        self.count("refused")
        key = f"{self.section}: {str(err)[:70]}"
        self.refusals[key] = self.refusals.get(key, 0) + 1

    def fail(self, label: str, blob, what: str) -> None:
        self.count("failures")
        if len(self.failures) < MAX_FAILURES:
            self.failures.append(f"[{self.section}] {label}: {what}\n    input "
                                 f"({len(blob)} bytes): {bytes(blob).hex()}")


def exact(blob: bytes) -> np.ndarray:
    """A copy of ``blob`` in a buffer of exactly its length (numpy's data
    buffer comes from malloc: AddressSanitizer's redzone starts right after
    the last byte; a bytes object has a NUL byte there)."""
    return np.frombuffer(blob, dtype=np.uint8).copy()


# ---------------------------------------------------------------------------
# Readers
# ---------------------------------------------------------------------------

def call(run: Run, label: str, blob, fn, *args, **kw):
    """``fn(*args, **kw)``: its result, or the FormatError it raised; any
    other exception is a failure (returns None)."""
    run.count("calls")
    try:
        return fn(*args, **kw)
    except FormatError as e:
        run.count("format_errors")
        return e
    except Exception as e:
        run.fail(label, blob, f"{fn.__name__} raised {type(e).__name__}: {e}\n"
                              + "".join(traceback.format_exc(limit=4)))
        return None


def build(run: Run, label: str, blob, fn, *args, **kw):
    """``fn(*args, **kw)``, a builder: its result; None when it refuses the
    parameters (a ValueError: a combination the format cannot hold) or
    fails in any other way (a failure of the run)."""
    try:
        out = fn(*args, **kw)
    except ValueError as e:
        run.refuse(e)
        return None
    except Exception as e:
        run.fail(label, blob, f"{fn.__name__} raised {type(e).__name__}: {e}")
        return None
    run.count("built")
    return out


def readers(run: Run, label: str, blob: bytes, *, validate: bool = True) -> None:
    """Every chunk reader on ``blob``."""
    run.note(label, blob)
    run.count("inputs")
    src = exact(blob)
    res = call(run, label, blob, blosckit.decompress, src, max_nbytes=CAP)
    res_b = call(run, label, blob, blosckit.decompress, blob, max_nbytes=CAP)
    if isinstance(res, bytes) != isinstance(res_b, bytes) or (
            isinstance(res, bytes) and res != res_b):
        run.fail(label, blob, "decompress of bytes and of an array disagree")
    info = call(run, label, blob, blosckit.parse_chunk, src)
    if isinstance(res, bytes):
        run.count("decoded")
        dst = np.empty(len(res), np.uint8)          # exact size: overwrites are caught
        n = call(run, label, blob, blosckit.decompress_into, src, dst)
        if n is not None and not isinstance(n, FormatError) and (
                n != len(res) or dst.tobytes() != res):
            run.fail(label, blob, "decompress_into disagrees with decompress")
        r2 = call(run, label, blob, blosckit.decompress, src, nthreads=2, max_nbytes=CAP)
        if isinstance(r2, bytes) and r2 != res:
            run.fail(label, blob, "decompress with 2 threads disagrees")
    if isinstance(info, blosckit.Chunk) and info.typesize and 0 < info.nbytes <= CAP \
            and 0 < info.blocksize <= CAP:
        nitems = info.nbytes // info.typesize
        per = max(info.blocksize // info.typesize, 1)
        spans = {(0, min(1, nitems)), (max(nitems - 1, 0), min(1, nitems)),
                 (min(per - 1, nitems), min(2, nitems - min(per - 1, nitems)))}
        for start, cnt in sorted(spans):
            got = call(run, label, blob, blosckit.getitem, src, start, cnt)
            if isinstance(res, bytes) and isinstance(got, bytes):
                ts = info.typesize
                if got != res[start * ts:(start + cnt) * ts]:
                    run.fail(label, blob, f"getitem({start}, {cnt}) disagrees with decompress")
    else:
        call(run, label, blob, blosckit.getitem, src, 0, 0)
    if validate:
        run.count("calls")
        try:
            probs = blosckit.validate(src)
            errors = [p for p in probs if p.severity == "error"]
            if isinstance(res, bytes) and errors:
                run.count("validate_errors_on_decodable")
        except Exception as e:
            run.fail(label, blob, f"validate raised {type(e).__name__}: {e}")


# ---------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------

def section_chunks(run: Run, chunks: dict[str, bytes], rng: random.Random) -> None:
    run.section = "chunks"
    for name in sorted(chunks):
        chunk = chunks[name]
        readers(run, f"{name}:original", chunk)
        muts = list(mutations(chunk))
        run.count("mutations_total", len(muts))
        for label, blob in muts:
            readers(run, f"{name}:{label}", blob)


def section_kernels(run: Run, rng: random.Random) -> None:
    run.section = "kernels"
    sizes = [0, 1, 2, 7, 15, 16, 17, 31, 33, 63, 65, 127, 129, 255, 257, 1023, 1025, 4099]
    if LONG:
        sizes += [8191, 8193, 65537]
    levels = native.available_simd_levels()
    prev = native._force_simd(None)
    try:
        for level in levels:
            native._force_simd(level)
            for n in sizes:
                data = rng.randbytes(n)
                for ts in range(1, 18):
                    label = f"{level}:n={n}:ts={ts}"
                    run.note(label, data)
                    run.count("inputs")
                    src = exact(data)
                    for fwd, inv, ref, kw in (
                            (blosckit.shuffle, blosckit.unshuffle, np_shuffle, {}),
                            (blosckit.bitshuffle, blosckit.bitunshuffle, np_bitshuffle, {}),
                            (blosckit.bitshuffle, blosckit.bitunshuffle, None,
                             {"legacy": True})):
                        run.count("calls", 2)
                        try:
                            out = fwd(src, ts, **kw)
                            back = inv(exact(out), ts, **kw)
                        except Exception as e:
                            run.fail(label, data, f"{fwd.__name__}{kw} raised "
                                                  f"{type(e).__name__}: {e}")
                            continue
                        if back != data:
                            run.fail(label, data, f"{inv.__name__}({fwd.__name__}(x)) != x {kw}")
                        if ref is not None and out != ref(data, ts):
                            run.fail(label, data, f"{fwd.__name__} differs from the numpy "
                                                  "reference")
                    # the _into forms on unaligned views, and the filters
                    if n:
                        run.count("calls", 6)
                        try:
                            buf = np.empty(n + 3, np.uint8)
                            native.shuffle_into(memoryview(src)[1:], buf[3:n + 2], ts)
                            back = np.empty(n - 1, np.uint8)
                            native.unshuffle_into(buf[3:n + 2], back, ts)
                            if back.tobytes() != data[1:]:
                                run.fail(label, data, "unaligned shuffle_into round trip")
                            enc = np.empty(n, np.uint8)
                            native.bytedelta_encode_into(src, enc, ts)
                            dec = np.empty(n, np.uint8)
                            native.bytedelta_decode_into(enc, dec, ts)
                            if dec.tobytes() != data:
                                run.fail(label, data, "bytedelta round trip")
                            enc = np.empty(n, np.uint8)
                            native.delta_encode_into(src, src, enc, ts, is_first_block=True)
                            native.delta_decode_into(enc, enc, ts, True)
                            if enc.tobytes() != data:
                                run.fail(label, data, "delta round trip")
                        except Exception as e:
                            run.fail(label, data, f"_into kernels raised {type(e).__name__}: {e}")
    finally:
        native._force_simd(prev)


CODECS = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")
FILTERS = ((), ("shuffle",), ("bitshuffle",), ("delta", "shuffle"), ("shuffle", "bytedelta"),
           ("delta", "bitshuffle"), (("trunc_prec", 10), "shuffle"))


def _data(kind: str, n: int, rng: random.Random) -> bytes:
    if kind == "random":
        return rng.randbytes(n)
    if kind == "runs":
        out = bytearray()
        while len(out) < n:
            out += bytes([rng.randrange(4)]) * rng.randrange(1, 40)
        return bytes(out[:n])
    return (np.arange(n // 4 + 1, dtype="<i4") * 3).tobytes()[:n]       # "arange"


def section_builder(run: Run, rng: random.Random) -> list[bytes]:
    """blosckit.compress over a grid; returns the chunks for build_chunk."""
    run.section = "builder"
    grid = [(codec, filters, ts, n, kind, bs, fmt, dct)
            for codec in CODECS for filters in FILTERS
            for ts in (1, 2, 3, 4, 8, 13, 17)
            for n in (1, 17, 255, 1000, 4099, 20011)
            for kind in ("random", "runs", "arange")
            for bs in (0, 16 * ts, 250 * ts)
            for fmt in ("blosc2", "blosc1", "blosc1-compat")
            for dct in ((False, True) if fmt == "blosc2" else (False,))]
    if not LONG:
        grid = rng.sample(grid, 1200)
    built = []
    for codec, filters, ts, n, kind, bs, fmt, dct in grid:
        data = _data(kind, n, rng)
        label = f"{codec}:{filters}:ts={ts}:n={n}:{kind}:bs={bs}:{fmt}:dict={dct}"
        run.note(label, data)
        run.count("inputs")
        run.count("calls")
        chunk = build(run, label, data, blosckit.compress, exact(data), typesize=ts,
                      codec=codec, filters=filters, blocksize=bs, format=fmt, dict=dct,
                      clevel=5)
        if chunk is None:
            continue
        lossy = any(isinstance(f, tuple) for f in filters)
        back = call(run, label, chunk, blosckit.decompress, exact(chunk))
        if not isinstance(back, bytes) or (not lossy and back != data) or len(back) != n:
            run.fail(label, chunk, f"compress output does not decode back: {back!r:.80}")
        built.append(chunk)
    return built


def _lies(h: dict, blocks: list, nbytes: int, rng: random.Random):
    """(label, header, blocks, bstarts, dict) variants that lie."""
    def hv(**kw):
        h2 = json.loads(json.dumps(h))
        for k, v in kw.items():
            h2[k] = v
        return h2
    nb = len(blocks)
    yield "as-is", hv(cbytes=None), blocks, None
    for c in (0, 16, 31, 33, (h["cbytes"] or 64) - 1, (h["cbytes"] or 64) + 7, 2**31 - 1):
        yield f"cbytes={c}", hv(cbytes=c), blocks, None
    for v in (0, 1, nbytes - 1, nbytes + 1, nbytes * 2, 2**31 - 1):
        yield f"nbytes={v}", hv(nbytes=v, cbytes=None), blocks, None
    for v in (1, 3, max(h["blocksize"] // 2, 1), h["blocksize"] + 1, h["blocksize"] * 2, 0):
        yield f"blocksize={v}", hv(blocksize=v, cbytes=None), blocks, None
    for v in (1, 3, 255):
        yield f"typesize={v}", hv(typesize=v, cbytes=None), blocks, None
    h2 = hv(cbytes=None)
    h2["flags"]["dont_split"] = not h2["flags"]["dont_split"]
    yield "split-flipped", h2, blocks, None
    if nb > 1:
        yield "blocks-reversed", hv(cbytes=None), blocks[::-1], None
        yield "last-block-dropped", hv(cbytes=None), blocks[:-1] + [[]], None
    base = 32 + 4 * nb
    for bs in ([base - 1] + [base] * (nb - 1), [5] * nb, [-1] * nb, [2**31 - 1] * nb):
        yield f"bstarts={bs[:2]}", hv(cbytes=None), blocks, bs
    for j in {0, nb - 1}:
        for k, s in enumerate(blocks[j]):
            if s.get("cdata") is None:
                continue
            for delta in (1, -1, 1000, -len(s["cdata"]) - 5):
                b2 = [list(x) for x in blocks]
                b2[j][k] = dict(s, csize=s["csize"] + delta)
                yield f"block{j}.stream{k}.csize{delta:+d}", hv(cbytes=None), b2, None
            b2 = [list(x) for x in blocks]
            cd = bytearray(s["cdata"])
            cd[rng.randrange(len(cd))] ^= 1 << rng.randrange(8)
            b2[j][k] = dict(s, cdata=bytes(cd))
            yield f"block{j}.stream{k}.bitflip", hv(cbytes=None), b2, None
            b2 = [list(x) for x in blocks]
            b2[j][k] = {"csize": -rng.randrange(256), "token": None, "cdata": None}
            yield f"block{j}.stream{k}.run-without-token", hv(cbytes=None), b2, None
            break


def section_build_chunk(run: Run, chunks: list[bytes], rng: random.Random) -> None:
    run.section = "build_chunk"
    pool = []
    for c in chunks:
        info = blosckit.parse_chunk(c)
        if info.extended and not info.memcpyed and info.special is None \
                and not info.vlblocks and not info.dict and info.nblocks:
            pool.append((c, info))
    if not LONG:
        pool = rng.sample(pool, min(len(pool), 80))
    for c, info in pool:
        h = strip(info.header)
        blocks = stored_blocks(c)
        for lie, h2, b2, bstarts in _lies(h, blocks, info.nbytes, rng):
            label = f"{info.codec}:{info.filters}:ts={info.typesize}:nb={info.nbytes}:{lie}"
            run.note(label, c)
            run.count("calls")
            out = build(run, label, c, blosckit.build_chunk, h2, b2, bstarts=bstarts,
                        check=False)
            if out is None:
                continue
            readers(run, label, out, validate=LONG or rng.random() < 0.3)


def frame_readers(run: Run, label: str, blob: bytes) -> None:
    run.note(label, blob)
    run.count("inputs")
    f = call(run, label, blob, blosckit.open_frame, exact(blob))
    if f is None or isinstance(f, FormatError):
        return
    res = call(run, label, blob, f.decompress)
    if isinstance(res, bytes):
        run.count("decoded")
    if f.nchunks:
        call(run, label, blob, f.chunk, f.nchunks - 1)
    b = call(run, label, blob, lambda: f.b2nd)
    if b is not None and not isinstance(b, FormatError):
        # the native block kernel: whole reads at 1 and 2 threads, a stepped region
        for nthreads in (1, 2):
            call(run, label, blob, b.read, max_nbytes=1 << 24, nthreads=nthreads)
        if math.prod(b.shape) * f.typesize <= 1 << 24:
            call(run, label, blob, b.__getitem__, tuple(slice(1, None, 2) for _ in b.shape))


def section_frames(run: Run, frames: dict[str, bytes], rng: random.Random) -> None:
    run.section = "frames"
    frames = dict(frames)
    d = np.arange(5000, dtype="<i4").tobytes()
    frames["blosckit-build_frame"] = blosckit.build_frame(
        [blosckit.compress(d[i:i + 4000], typesize=4, codec=codec)
         for i, codec in zip(range(0, len(d), 4000), ("zstd", "lz4", "blosclz", "zlib", "zstd"))],
        metalayers={"m": b"\x93\x01\x02\x03"}, vlmetalayers={"v": b"hello"})
    frames["blosckit-compress_frame"] = blosckit.compress_frame(
        d, chunksize=3000, typesize=4, codec="lz4", filters=("bitshuffle",))
    frames["blosckit-specials"] = blosckit.build_frame(
        [blosckit.compress_special("zeros", 4000, typesize=4),
         blosckit.compress(d[:4000], typesize=4),
         blosckit.compress_special("nan", 4000, typesize=4)])
    for name in sorted(frames):
        fr = frames[name]
        frame_readers(run, f"{name}:original", fr)
        muts = [(f"cut{n}", fr[:n]) for n in range(len(fr))]
        for pos in range(len(fr)):
            for bit in range(8):
                b = bytearray(fr)
                b[pos] ^= 1 << bit
                muts.append((f"flip{pos}.{bit}", bytes(b)))
        run.count("mutations_total", len(muts))
        if not LONG:
            muts = rng.sample(muts, min(len(muts), 900))
        for label, blob in muts:
            frame_readers(run, f"{name}:{label}", blob)


def main() -> int:
    corpus_path, progress_path = sys.argv[1], sys.argv[2]
    with open(corpus_path, "rb") as fh:
        corpus = pickle.load(fh)
    print(f"native module: {native._native.__file__}", flush=True)
    print(f"simd levels: {native.available_simd_levels()}, long: {LONG}", flush=True)
    run = Run(progress_path)
    rng = random.Random(SEED)
    t0 = time.perf_counter()
    times = {}
    for name, fn in (("chunks", lambda: section_chunks(run, corpus["chunks"], rng)),
                     ("kernels", lambda: section_kernels(run, rng)),
                     ("builder+build_chunk",
                      lambda: section_build_chunk(run, section_builder(run, rng), rng)),
                     ("frames", lambda: section_frames(run, corpus["frames"], rng))):
        t = time.perf_counter()
        fn()
        gc.collect()      # cycles holding buffers are freed here, not at exit
        times[name] = round(time.perf_counter() - t, 1)
    run.section = "done"
    run.note("done")
    for f in run.failures:
        print("FAILURE " + f)
    summary = {"native": native._native.__file__, "long": LONG, "counts": run.counts,
               "top_refusals": sorted(run.refusals.items(), key=lambda kv: -kv[1])[:6],
               "seconds": times, "total_seconds": round(time.perf_counter() - t0, 1),
               "failures": sum(c.get("failures", 0) for c in run.counts.values())}
    print("SANITIZE-SUMMARY " + json.dumps(summary), flush=True)
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
