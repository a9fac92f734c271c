"""The ``blosckit`` command line.

Exit codes: 0 fine, 1 corrupt or unreadable input (or validation errors), 2
usage errors (bad parameters), 3 valid input that uses a feature this build
cannot decode.  Bad input gives one clear line on stderr, never a traceback
(``--traceback``, before or after the command, shows it); with ``--json``
the failure is also a JSON object on stdout.  Commands over several files go
on after a bad one, name it, and exit with the worst status.  ``-`` reads
standard input (as an output: standard output).
"""
from __future__ import annotations

import argparse
import functools
import json
import mmap
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from .. import __version__
from ..errors import FormatError, Problem, UnsupportedError
from ..formats import frame as ff
from ..formats import npy

EXIT_OK, EXIT_CORRUPT, EXIT_USAGE, EXIT_UNSUPPORTED = 0, 1, 2, 3
STDIO = "-"
PROGRESS_BYTES = 64 << 20         # inputs above this get a progress line on a terminal


class UsageError(Exception):
    """A bad parameter found after argument parsing (exit 2)."""


class InputError(Exception):
    """An input that holds nothing to read, though not malformed (exit 1)."""


# ---------------------------------------------------------------------------
# Reporting: one line per failure on stderr, a JSON object too with --json
# ---------------------------------------------------------------------------

def _emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def _failure(name: str, e: Exception, base: int = 0) -> tuple[int, dict]:
    """Exit status and a JSON-able record of an exception met while
    handling ``name`` (``base``: where the structure starts in the file)."""
    if isinstance(e, FormatError):
        severity = "unsupported" if isinstance(e, UnsupportedError) else "error"
        status = EXIT_UNSUPPORTED if severity == "unsupported" else EXIT_CORRUPT
        return status, {"file": name, "severity": severity, "offset": e.offset + base,
                        "path": e.path, "message": e.message, "rule": e.rule}
    if isinstance(e, InputError):
        return EXIT_CORRUPT, {"file": name, "severity": "error", "message": str(e)}
    if isinstance(e, (UsageError, ValueError)):
        # FormatError is handled above: a plain ValueError is a bad parameter
        return EXIT_USAGE, {"file": name, "severity": "usage", "message": str(e)}
    if isinstance(e, OSError):
        what = e.strerror or type(e).__name__
        where = str(e.filename) if e.filename is not None else name
        return EXIT_CORRUPT, {"file": where, "severity": "error",
                              "message": f"cannot read or write: {what}"}
    if isinstance(e, MemoryError):
        return EXIT_CORRUPT, {"file": name, "severity": "error",
                              "message": "out of memory (input too large?)"}
    return EXIT_CORRUPT, {"file": name, "severity": "error",
                          "message": f"unexpected {type(e).__name__}: {e} "
                                     "(run with --traceback for details)"}


def _line(rec: dict) -> str:
    """A failure record as ``FILE:OFFSET: severity: path: message [rule]``."""
    if rec["severity"] == "usage":
        return f"usage error: {rec['message']}"
    if "offset" not in rec:
        return f"{rec['file']}: {rec['severity']}: {rec['message']}"
    rule = f" [{rec['rule']}]" if rec.get("rule") else ""
    return (f"{rec['file']}:{rec['offset']}: {rec['severity']}: {rec['path']}: "
            f"{rec['message']}{rule}")


def _guarded(name: str, fn: Callable[[], int], args, base: int = 0) -> int:
    """Run ``fn`` for the input ``name``; a failure becomes one stderr line
    (and a JSON object with --json) and an exit status."""
    try:
        return fn()
    except BrokenPipeError:          # output piped into head & co.
        sys.stderr.close()
        return EXIT_OK
    except Exception as e:           # noqa: BLE001 -- every failure gets one line
        if args.traceback:
            raise
        status, rec = _failure(name, e, base)
        print(f"blosckit: {_line(rec)}", file=sys.stderr, flush=True)
        if getattr(args, "json", False):
            _emit({"error": rec})
        return status


# Which status wins over several inputs: usage errors, then corrupt input,
# then features this build lacks.
_RANK = {EXIT_OK: 0, EXIT_UNSUPPORTED: 1, EXIT_CORRUPT: 2, EXIT_USAGE: 3}


def _worse(a: int, b: int) -> int:
    return a if _RANK[a] >= _RANK[b] else b


def _each(args, names: Iterable[str], fn: Callable[[str], int]) -> int:
    """``fn`` for every input in turn; the exit status is the worst one."""
    worst = EXIT_OK
    for name in names:
        worst = _worse(worst, _guarded(name, functools.partial(fn, name), args))
    return worst


# ---------------------------------------------------------------------------
# Inputs: files, "-", sframe directories, structures at an offset
# ---------------------------------------------------------------------------

@dataclass
class Source:
    """One input: ``data`` (None for an sparse frame directory), ``base``
    (where the structure starts in the file, ``--offset``) and
    ``trailing`` (bytes of the file after the structure's declared end)."""
    name: str
    data: Any
    directory: Path | None = None
    base: int = 0
    size: int = 0

    @property
    def kind(self) -> str:
        if self.directory is not None:
            return "sframe"
        return "frame" if ff.looks_like_frame(self.data) else "chunk"

    @property
    def target(self):
        """What the library functions take: the bytes or the directory."""
        return self.directory if self.directory is not None else self.data


def _map(path: Path) -> memoryview:
    """The file's bytes, mapped (a 10 GB frame is not read whole)."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):         # a pipe or device: read it
            return memoryview(fh.read())
        if st.st_size == 0:
            return memoryview(b"")
        return memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))


def _declared_size(mv: memoryview) -> int:
    """The length a structure at the start of ``mv`` declares (frame_len or
    chunk cbytes), bounded by ``len(mv)``; ``len(mv)`` when it says none."""
    from ..chunk.read import chunk_sizes
    try:
        if ff.looks_like_frame(mv):
            layout = ff.header_layout(mv[0])
            assert layout is not None
            n = int(ff.FAST_HEADERS[layout](mv, 0).frame_len)
        else:
            n = chunk_sizes(mv[:32])[1]
    except Exception:                 # noqa: BLE001 -- damaged: the reader will say why
        return len(mv)
    return min(len(mv), n) if n > 0 else len(mv)


def _load_file(name: str, what: str) -> Source:
    """An input that must be one file (``what`` says which command wants it)."""
    src = _load(name)
    if src.directory is not None:
        raise UsageError(f"{name} is a sparse frame directory; {what} reads one file")
    return src


def _load(name: str, offset: int | None = None) -> Source:
    """The input ``name`` (a file, ``-`` or a sparse frame directory); with
    ``offset``, the structure starting there, cut to its declared length."""
    if name == STDIO:
        mv = memoryview(sys.stdin.buffer.read())
    else:
        path = Path(name)
        if path.is_dir():
            if offset is not None:
                raise UsageError(f"{name}: --offset applies to files, not directories")
            if not _is_sframe(path):
                raise IsADirectoryError(21, f"a directory without {ff.SFRAME_INDEX} "
                                        "(not a sparse frame)", name)
            return Source(name, None, directory=path)
        mv = _map(path)
    if offset is None:
        return Source(name, mv, size=len(mv))
    if offset > len(mv):
        raise UsageError(f"{name}: offset {offset} is past the end ({len(mv)} bytes)")
    inner = mv[offset:]
    return Source(name, inner[:_declared_size(inner)], base=offset, size=len(mv))


def _relocate(e: FormatError, base: int) -> FormatError:
    """An error of a structure read at ``base`` of the file, in file offsets."""
    return e.relocated(base, re.split(r"[.\[]", e.path, maxsplit=1)[0]) if base else e


def _is_sframe(path: Path) -> bool:
    """A directory holding a sparse frame's index file."""
    return (path / ff.SFRAME_INDEX).is_file()


def _walk(names: Iterable[str]) -> Iterator[tuple[str, bool]]:
    """``(name, named)``: the inputs, with the files under directories in
    name order (``named`` False) and sparse frame directories whole."""
    for name in names:
        path = Path(name)
        if name == STDIO or not path.is_dir() or _is_sframe(path):
            yield name, True
            continue
        for root, dirs, files in os.walk(path):
            dirs.sort()
            here = Path(root)
            for d in list(dirs):
                if _is_sframe(here / d):
                    yield str(here / d), False
                    dirs.remove(d)
            for f in sorted(files):
                yield str(here / f), False


def _looks_blosc(path: str) -> bool:
    """A file found in a directory is checked when its first byte could
    start a chunk (format versions 1-6) or a frame (a header fixarray)."""
    with open(path, "rb") as fh:
        head = fh.read(1)
    return bool(head) and (1 <= head[0] <= 6 or ff.header_layout(head[0]) is not None)


class Progress:
    """A one-line progress report on stderr, shown only on a terminal and
    for large work (``total`` in ``unit``)."""

    def __init__(self, label: str, total: int, unit: str = "bytes", *,
                 threshold: int = PROGRESS_BYTES):
        self.on = sys.stderr.isatty() and total >= threshold
        self.label, self.total, self.unit, self.done = label, max(total, 1), unit, 0

    def advance(self, n: int) -> None:
        self.done += n
        if self.on:
            pct = 100 * self.done // self.total
            print(f"\r{self.label}: {pct:3d}% ({self.done}/{self.total} {self.unit})",
                  end="", file=sys.stderr, flush=True)

    def status(self, text: str) -> None:
        """One line saying what is under way (work that reports no steps)."""
        if self.on:
            print(f"\r{text}", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.on:
            print("\r\033[K", end="", file=sys.stderr, flush=True)


def _open_output(name: str):
    return sys.stdout.buffer if name == STDIO else open(name, "wb")


def _write_output(name: str, chunks: Iterable) -> int:
    """Write the byte strings of ``chunks`` to ``name`` (``-``: stdout);
    returns the byte count."""
    out = _open_output(name)
    n = 0
    try:
        for c in chunks:
            out.write(c)
            n += len(c)
    finally:
        if out is not sys.stdout.buffer:
            out.close()
        else:
            out.flush()
    return n


# ---------------------------------------------------------------------------
# Words of the format, not Python reprs
# ---------------------------------------------------------------------------

def _filters_text(filters) -> str:
    return ", ".join(f"{n}:{m}" if m else n for n, m in filters) or "none"


def _size(n: int) -> str:
    return f"{n} bytes" if n < 10_000 else f"{n} bytes ({_human(n)})"


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return str(n)




# ---------------------------------------------------------------------------
# info
# ---------------------------------------------------------------------------

def _chunk_info(src: Source) -> dict:
    from ..chunk.read import parse_chunk
    from ..formats.describe import chunk_codec
    c = parse_chunk(src.data)
    return {
        "kind": "chunk", "format": "Blosc2" if c.version >= 3 else "Blosc1",
        "version": c.version, "versionlz": c.versionlz, "codec": chunk_codec(c),
        "stream_format": c.codec,
        "filters": [[n, m] for n, m in c.filters], "typesize": c.typesize,
        "nbytes": c.nbytes, "cbytes": c.cbytes,
        "ratio": round(c.nbytes / c.cbytes, 3) if c.cbytes else None,
        "blocksize": c.blocksize, "nblocks": c.nblocks, "split": c.split,
        "special": c.special or "none", "memcpyed": c.memcpyed, "vlblocks": c.vlblocks,
        "dict": len(c.dict) if c.dict is not None else None, "lazy": c.lazy,
        "trailing": len(src.data) - c.cbytes,
    }


def _frame_info(src: Source) -> dict:
    from ..frame.read import open_frame
    with open_frame(src.target) as f:
        offsets = f.offsets
        d: dict[str, Any] = {
            "kind": src.kind, "version": f.version, "header_layout": f.layout,
            "codec": f.codec, "clevel": f.clevel, "filters": [[n, m] for n, m in f.filters],
            "typesize": f.typesize, "chunksize": f.chunksize, "nchunks": f.nchunks,
            "nbytes": f.nbytes, "cbytes": f.cbytes,
            "ratio": round(f.nbytes / f.cbytes, 3) if f.cbytes else None,
            "special_chunks": {k: offsets.count(k) for k in ("zeros", "nan", "uninit")
                               if k in offsets},
            "metalayers": list(f.metalayers), "vlmetalayers": list(f.vlmetalayers),
        }
        if f.b2nd is not None:
            b = f.b2nd
            d["b2nd"] = {"shape": list(b.shape), "chunkshape": list(b.chunkshape),
                         "blockshape": list(b.blockshape), "dtype": b.dtype}
        return d


_INFO_WORDS = {"nbytes": _size, "cbytes": _size, "blocksize": _size, "chunksize": _size,
               "typesize": lambda v: f"{v} bytes", "filters": _filters_text,
               "trailing": lambda v: f"{v} bytes after the chunk" if v else "none",
               "stream_format": lambda v: f"{v} streams"}


def _info_text(name: str, d: dict, problems: list[Problem]) -> str:
    kind = {"chunk": f"{d.get('format')} chunk, format version {d.get('version')}",
            "frame": f"Blosc2 contiguous frame, format version {d.get('version')}",
            "sframe": f"Blosc2 sparse frame, format version {d.get('version')}"}[d["kind"]]
    lines = [f"{name}: {kind}"]
    for k, v in d.items():
        if k in ("kind", "format", "file", "problems", "valid"):
            continue
        if isinstance(v, bool):
            v = "yes" if v else "no"
        elif k in _INFO_WORDS:
            v = _INFO_WORDS[k](v)
        elif isinstance(v, dict):
            v = ", ".join(f"{a} {_list_text(b)}" for a, b in v.items()) or "none"
        elif isinstance(v, list):
            v = _list_text(v)
        elif v is None:
            v = "none"
        lines.append(f"  {k:14} {v}")
    unsupported = sum(map(_unsupported, problems))
    errors = sum(p.severity == "error" for p in problems) - unsupported
    warnings = len(problems) - errors - unsupported
    state = "yes" if not errors else f"no: {errors} error(s)"
    if unsupported:
        state += f"; {unsupported} feature(s) this build cannot decode"
    if warnings:
        state += f", {warnings} warning(s)"
    lines.append(f"  {'valid':14} {state}")
    return "\n".join(lines)


def _list_text(v) -> str:
    if isinstance(v, list):
        return " x ".join(map(str, v)) if all(isinstance(x, int) for x in v) and v \
            else ", ".join(map(str, v)) or "none"
    return str(v)


def _info_one(args, name: str) -> int:
    from ..tools.validate import validate
    src = _load(name, args.offset)
    try:
        d = _chunk_info(src) if src.kind == "chunk" else _frame_info(src)
    except FormatError as e:
        raise _relocate(e, src.base)
    problems = [_shift(p, src.base) for p in validate(src.target, deep=True)]
    if args.json:
        _emit({"file": name, **d, "valid": not _errors(problems),
               "problems": [_problem_dict(name, p) for p in problems]})
    else:
        print(_info_text(name, d, problems), flush=True)
        for p in problems:
            print(_problem_line(name, p), file=sys.stderr)
    return _status(problems)


# ---------------------------------------------------------------------------
# validate
# ---------------------------------------------------------------------------

def _errors(problems: list[Problem]) -> bool:
    return any(p.severity == "error" for p in problems)


def _unsupported(p: Problem) -> bool:
    """An error that says this build cannot decode a feature (exit 3), not
    that the input is malformed."""
    from ..formats.rules import RULES
    r = RULES.get(p.rule)
    return p.severity == "error" and r is not None and r.unsupported


def _status(problems: list[Problem]) -> int:
    """0 valid, 1 malformed, 3 valid as far as this build can tell but using
    a feature it cannot decode."""
    if any(p.severity == "error" and not _unsupported(p) for p in problems):
        return EXIT_CORRUPT
    return EXIT_UNSUPPORTED if any(map(_unsupported, problems)) else EXIT_OK


def _shift(p: Problem, base: int) -> Problem:
    return p if not base else Problem(p.severity, p.offset + base, p.path, p.message, p.rule)


def _problem_dict(name: str, p: Problem) -> dict:
    return {"file": name, "severity": p.severity, "offset": p.offset, "path": p.path,
            "message": p.message, "rule": p.rule, "unsupported": _unsupported(p)}


def _problem_line(name: str, p: Problem) -> str:
    severity = "unsupported" if _unsupported(p) else p.severity
    return f"{name}:{p.offset}: {severity}: {p.path}: {p.message} [{p.rule}]"


def _validate_one(args, name: str) -> int:
    from ..tools.validate import validate
    src = _load(name, args.offset)
    note = Progress(f"validating {name}", src.size)
    note.status(f"validating {name} ({_human(src.size)}, deep={args.deep})...")
    problems = [_shift(p, src.base) for p in validate(src.target, deep=args.deep)]
    note.close()
    if args.json:
        _emit({"file": name, "kind": src.kind, "valid": not _errors(problems),
               "problems": [_problem_dict(name, p) for p in problems]})
    else:
        for p in problems:
            print(_problem_line(name, p), flush=True)
        if not problems and not args.quiet:
            print(f"{name}: ok ({src.kind})", flush=True)
    return _status(problems)


def _nothing_in(directory: str) -> int:
    raise InputError("no chunk, frame or sparse frame in this directory")


def _validate(args) -> int:
    inputs = list(_walk(args.files))
    if args.offset is not None and len(inputs) > 1:
        raise UsageError("--offset reads one structure: give one file")
    note = Progress("validating", len(inputs), "files", threshold=20)
    worst = EXIT_OK
    for d in args.files:             # a directory named on its own must hold something
        if Path(d).is_dir() and not _is_sframe(Path(d)) and not any(
                Path(n).is_dir() or _looks_blosc(n) for n, named in _walk([d])):
            worst = _worse(worst, _guarded(d, functools.partial(_nothing_in, d), args))
    for name, named in inputs:
        if not named and Path(name).is_file() and not _looks_blosc(name):
            if not args.quiet and not args.json:    # a directory's other files
                print(f"{name}: skipped (not a Blosc chunk or frame)", file=sys.stderr)
        else:
            worst = _worse(worst, _guarded(name, functools.partial(_validate_one, args, name),
                                        args))
        note.advance(1)
    note.close()
    return worst


# ---------------------------------------------------------------------------
# inspect
# ---------------------------------------------------------------------------

_COLOURS = {"name": "\033[1m", "value": "\033[32m", "meaning": "\033[36m",
            "doc": "\033[2m", "off": "\033[0m"}


def _node_dict(n, raw: bytes | None) -> dict:
    name = re.split(r"\.(?![^\[]*\])", n.path)[-1]
    return {"path": n.path, "name": name, "offset": n.offset, "size": n.size,
            "value": n.value, "meaning": getattr(n, "meaning", ""), "doc": n.doc,
            "bit": None if n.bit is None else {"first": n.bit[0], "width": n.bit[1]},
            "raw": raw.hex(" ") if raw is not None else None}


def _raw(src: Source, n) -> bytes | None:
    """The stored bytes of a leaf field (up to 16) in a contiguous input."""
    if src.data is None or n.value is None or n.bit is not None or not 0 < n.size <= 16:
        return None
    return bytes(src.data[n.offset:n.offset + n.size])


def _node_text(d: dict, colour: bool) -> str:
    c = _COLOURS if colour else dict.fromkeys(_COLOURS, "")
    depth = d["path"].count(".") + d["path"].count("[") - d["name"].count("[")
    where = f"{d['offset']:>9}" + (f"+{d['size']:<7}" if d["size"] else " " * 8)
    text = f"{where} {'  ' * depth}{c['name']}{d['name']}{c['off']}"
    if d["bit"] is not None:
        b = d["bit"]
        bits = f"bit {b['first']}" if b["width"] == 1 else \
            f"bits {b['first']}-{b['first'] + b['width'] - 1}"
        text += f" ({bits})"
    if d["value"] is not None:
        text += f" = {c['value']}{_value_text(d['value'])}{c['off']}"
    if d["meaning"]:
        text += f" {c['meaning']}({d['meaning']}){c['off']}"
    if d["raw"] is not None:
        text += f" [{d['raw']}]"
    if d["doc"]:
        text += f"  {c['doc']}# {d['doc']}{c['off']}"
    return text


def _value_text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value_text(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_value_text(x)}" for k, x in v.items()) + "}"
    return str(v)


def _nodes(src: Source, chunk: int | None):
    from ..tools import inspect as _inspect
    if src.kind == "chunk":
        if chunk is not None:
            raise UsageError("--chunk N applies to frames; this is a chunk")
        return _inspect.chunk_nodes(src.data)
    return _inspect.frame_nodes(src.target, chunk=chunk)


def _inspect_one(args, name: str) -> int:
    src = _load(name, args.offset)
    colour = {"always": True, "never": False}.get(args.color, sys.stdout.isatty())
    nodes: list[dict] = []
    failure = None
    if args.chunk is not None and src.kind != "chunk":
        from ..frame.read import open_frame
        with open_frame(src.target) as f:
            if args.chunk >= f.nchunks:
                raise UsageError(f"--chunk {args.chunk}: the frame has {f.nchunks} chunks")
    try:
        for n in _nodes(src, args.chunk):
            d = _node_dict(n, _raw(src, n))
            d["offset"] += src.base
            if args.json:
                nodes.append(d)
            else:
                print(_node_text(d, colour))
    except FormatError as e:
        failure = e
    if args.json:
        rec = None if failure is None else _failure(name, failure, src.base)[1]
        _emit({"file": name, "kind": src.kind, "nodes": nodes, "stopped": rec})
    if failure is not None:
        status, rec = _failure(name, failure, src.base)
        print(f"blosckit: {_line(rec)} (inspection stopped here)", file=sys.stderr, flush=True)
        return status
    return EXIT_OK


# ---------------------------------------------------------------------------
# scan
# ---------------------------------------------------------------------------

def _scan_one(args, name: str) -> int:
    from ..tools.scan import scan
    src = _load_file(name, "scan")
    found = scan(src.data)
    for f in found:
        if args.json:
            _emit({"file": name, "kind": f.kind, "offset": f.offset, "size": f.size,
                   "nbytes": f.nbytes, "summary": f.summary, "error": f.error})
        else:
            tail = f"; does not read: {f.error}" if f.error else ""
            print(f"{name}:{f.offset}: {f.kind} of {f.size} bytes: {f.summary}{tail}")
    if not args.json:
        nf = sum(f.kind == "frame" for f in found)
        print(f"{name}: {nf} frame(s), {len(found) - nf} chunk(s) found", file=sys.stderr)
    return EXIT_OK


# ---------------------------------------------------------------------------
# decompress
# ---------------------------------------------------------------------------

def _decompress(args) -> int:
    src = _load(args.input, args.offset)
    try:
        n = _decompress_to(src, args)
    except FormatError as e:
        raise _relocate(e, src.base)
    print(f"{args.input}: {src.kind} -> {n} bytes -> {args.output}", file=sys.stderr)
    return EXIT_OK


def _decompress_to(src: Source, args) -> int:
    if src.kind == "chunk":
        from ..chunk.read import decompress
        return _write_output(args.output, [decompress(src.data, nthreads=args.nthreads)])
    from ..frame.read import open_frame
    with open_frame(src.target) as f:
        if args.output.endswith(".npy"):
            if f.b2nd is None:
                raise UsageError(f"{args.input} is not a b2nd (NDArray) frame: .npy output "
                                 "needs its shape and dtype; write raw bytes instead")
            b = f.b2nd
            head = npy.write_header(b.dtype, b.shape)
            return _write_output(args.output, [head, b.read()])
        note = Progress(f"decompressing {args.input}", f.nbytes)
        if not note.on:            # no progress to show: the batched native decoder
            return _write_output(args.output, [f.decompress(nthreads=args.nthreads)])

        def parts():
            for i in range(f.nchunks):
                data = f.decompress_chunk(i, nthreads=args.nthreads)
                note.advance(len(data))
                yield data
            note.close()
        return _write_output(args.output, parts())


# ---------------------------------------------------------------------------
# compress
# ---------------------------------------------------------------------------

def _npy_itemsize(descr) -> int:
    try:
        return npy.itemsize(descr)
    except ValueError as e:
        raise UsageError(f".npy items: {e}: give --typesize") from None


def _filters_arg(text: str) -> tuple:
    """``shuffle,trunc_prec:20`` -> ("shuffle", ("trunc_prec", 20))."""
    from ..formats import enums
    out: list = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        name, sep, meta = item.partition(":")
        if name not in enums.FILTERS.values():
            raise argparse.ArgumentTypeError(
                f"unknown filter {name!r} (choose from {', '.join(_FILTER_CHOICES)})")
        if not sep:
            out.append(name)
            continue
        try:
            out.append((name, int(meta, 0)))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"filter {name!r}: meta {meta!r} is not an integer") from None
    return tuple(out)


def _compress(args) -> int:
    from ..chunk.encode import MAX_BUFFERSIZE
    src = _load_file(args.input, "compress")
    data = src.data
    typesize = args.typesize
    header = None
    if bytes(data[:len(npy.MAGIC)]) == npy.MAGIC:
        header, start = npy.read_header(data)
        typesize = _npy_itemsize(header["descr"]) if typesize is None else typesize
        data = data[start:]
    if args.chunkshape or args.blockshape or (header and args.output.endswith(".b2nd")):
        return _compress_b2nd(data, header, typesize, args)
    typesize = 1 if typesize is None else typesize
    frame = args.frame or args.chunksize is not None or len(data) > MAX_BUFFERSIZE
    params = dict(typesize=typesize, codec=args.codec, clevel=args.clevel,
                  filters=args.filters, nthreads=args.nthreads)
    if frame:
        if args.format != "blosc2":
            raise UsageError(f"--format {args.format} makes one chunk; frames hold Blosc2 chunks")
        out = _compress_frame(data, args, params)
        what = "frame"
    else:
        from ..chunk.encode import compress
        out = compress(data, format=args.format, **params)
        what = "chunk"
    return _wrote(args, data, out, f"a {what}")


def _wrote(args, data, out: bytes, what: str) -> int:
    """Write ``out`` and say what ``data`` became."""
    _write_output(args.output, [out])
    ratio = len(data) / len(out) if out else 0
    print(f"{args.input}: {len(data)} -> {len(out)} bytes as {what} (ratio {ratio:.2f}) "
          f"-> {args.output}", file=sys.stderr)
    return EXIT_OK


def _compress_b2nd(data, header: dict | None, typesize: int, args) -> int:
    """A .npy array as a b2nd frame (python-blosc2's NDArray)."""
    from ..frame import b2nd
    if header is None:
        raise UsageError("--chunkshape / --blockshape need a .npy input (its shape and dtype)")
    if header.get("fortran_order"):
        raise UsageError(f"{args.input} is in Fortran order; b2nd arrays are C order "
                         "(save it with numpy.ascontiguousarray)")
    descr = header["descr"]
    if not isinstance(descr, str):
        descr = f"|V{typesize}"          # a record type: b2nd stores its items as such
    shape = tuple(header.get("shape", ()))
    chunks = args.chunkshape or b2nd.default_shape(shape, typesize, b2nd.CHUNK_BYTES)
    blocks = args.blockshape or b2nd.default_shape(chunks, typesize, b2nd.BLOCK_BYTES)
    for name, ext in (("--chunkshape", chunks), ("--blockshape", blocks)):
        if len(ext) != len(shape):
            raise UsageError(f"{name} has {len(ext)} extents, the array {len(shape)} "
                             f"dimensions (shape {shape})")
    out = b2nd.compress_b2nd(data, shape=shape, dtype=descr, typesize=typesize,
                             chunkshape=chunks, blockshape=blocks, codec=args.codec,
                             clevel=args.clevel, filters=args.filters, nthreads=args.nthreads)
    shown = " x ".join(map(str, shape)) or "scalar"
    return _wrote(args, data, out, f"a b2nd frame, shape {shown}, chunks {chunks}, "
                                   f"blocks {blocks}")


def _shape_arg(text: str) -> tuple[int, ...]:
    """``50,40`` -> (50, 40): extents of at least 1."""
    try:
        out = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: comma-separated integers") from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: extents of at least 1")
    return out


def _compress_frame(data, args, params: dict) -> bytes:
    from ..frame.build import compress_frame
    ts = params["typesize"]
    size = args.chunksize if args.chunksize is not None else max(ts, (4 << 20) // ts * ts)
    if size % ts:
        raise UsageError(f"--chunksize {size} is not a multiple of the typesize {ts}")
    note = Progress(f"compressing {args.input}", len(data))
    out = compress_frame(data, chunksize=size, progress=note.advance, **params)
    note.close()
    return out


# ---------------------------------------------------------------------------
# salvage
# ---------------------------------------------------------------------------

def _salvage(args) -> int:
    from ..tools.salvage import salvage
    src = _load_file(args.broken, "salvage")
    out, report = salvage(src.data)
    if report.nothing_found:
        raise FormatError("no intact chunk found: nothing to rebuild", len(src.data), "frame",
                          rule=report.damage[0].rule if report.damage else None)
    _write_output(args.output, [out])
    if args.json:
        _emit({"file": args.broken, "output": args.output, "intact": report.intact,
               "chunksize": report.chunksize,
               "recovered": [vars(r) for r in report.recovered],
               "dropped": [vars(d) for d in report.dropped],
               "damage": [vars(d) for d in report.damage], "notes": report.notes})
        return EXIT_OK
    for d in report.damage:
        print(f"{args.broken}:{d.offset}: damage: {d.path}: {d.message} [{d.rule}]")
    for r in report.recovered:
        where = f"offset {r.offset}" if r.offset is not None else "the index (special chunk)"
        was = f", chunk {r.source_index} of the index" if r.source_index is not None else ""
        print(f"chunk {r.index}: {r.nbytes} bytes from {where}, found by {r.found_by}{was}")
    for x in report.dropped:
        where = f"offset {x.offset}" if x.offset is not None else "unknown offset"
        size = f" ({x.length} bytes)" if x.length is not None else ""
        print(f"dropped {x.what} at {where}{size}: {x.reason}")
    for note in report.notes:
        print(f"note: {note}")
    print(f"{args.broken}: {'intact' if report.intact else 'damaged'}; "
          f"{len(report.recovered)} chunk(s) recovered -> {args.output}", file=sys.stderr)
    return EXIT_OK


# ---------------------------------------------------------------------------
# fuzz, corpus (the fuzz extra)
# ---------------------------------------------------------------------------

def _need_fuzz_extra() -> None:
    from importlib.util import find_spec
    missing = [m for m in ("hypothesis", "blosc2") if find_spec(m) is None]
    if missing:
        raise UsageError(f"this command needs the fuzz extra (pip install "
                         f"'blosckit[fuzz]'): {', '.join(missing)} not installed")


def _fuzz(args) -> int:
    _need_fuzz_extra()
    from ..testing.fuzz import fuzz
    out = Path(args.out) if args.out else None
    on_tty = sys.stderr.isatty()

    def progress(r) -> None:
        if on_tty:
            print(f"\rfuzzing: {r.seconds:5.0f} s, {r.inputs} inputs, {r.agree} agree, "
                  f"{len(r.new_cases)} new", end="", file=sys.stderr, flush=True)
    report = fuzz(seconds=args.time, seed=args.seed, out=out, progress=progress)
    if on_tty:
        print(file=sys.stderr)
    if args.json:
        _emit({"inputs": report.inputs, "agree": report.agree, "seconds": report.seconds,
               "disagreements": report.by_category, "new_cases": report.new_cases})
        return EXIT_OK
    print(f"{report.inputs} inputs in {report.seconds:.0f} s (seed {args.seed}): "
          f"{report.agree} read alike by blosckit and C-Blosc2")
    for key, n in sorted(report.by_category.items()):
        print(f"  {n:6d}  {key}")
    news = report.new_cases
    crashes = sum(n.startswith("c-crash") for n in news)
    where = f" -> {out}" if out is not None and news else ""
    print(f"{len(news) - crashes} new disagreement(s), {crashes} C-Blosc2 crash(es) "
          f"written{where}")
    return EXIT_OK


def _corpus(args) -> int:
    _need_fuzz_extra()
    from ..testing.fuzz import write_corpus
    entries = write_corpus(Path(args.out), args.count, seed=args.seed)
    kinds: dict[str, int] = {}
    for e in entries:
        key = f"{e['kind']}, {'decode' if 'decode' in e['expect'] else 'reject'}"
        kinds[key] = kinds.get(key, 0) + 1
    print(f"{len(entries)} blobs and manifest.json -> {args.out}: " +
          ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
    return EXIT_OK


# ---------------------------------------------------------------------------
# --version
# ---------------------------------------------------------------------------

class _VersionAction(argparse.Action):
    """``--version``: the version and which paths of this build are native."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"blosckit {__version__}")
        print("\n".join(_native_lines()))
        parser.exit()


def _native_lines() -> list[str]:
    """``native_info()`` as a few readable lines (imported late: the version
    flag should work even where the native layer does not load)."""
    try:
        from ..codecs.buildinfo import native_info
        info = native_info()
    except Exception as e:          # noqa: BLE001 -- report, do not crash --version
        return [f"native: unavailable ({type(e).__name__}: {e})"]
    lines = []
    for key, value in info.items():
        if not isinstance(value, dict):
            lines.append(f"{key}: {_brief(value)}")
            continue
        lines.append(f"{key}:")
        for sub, v in value.items():
            lines.append(f"  {sub:10} {_codec_line(v) if _is_codec(v) else _brief(v)}")
    return lines


def _is_codec(v) -> bool:
    return isinstance(v, dict) and "encode" in v and "decode" in v


def _codec_line(v: dict) -> str:
    """One codec: its encode and decode paths, and why identity is not claimed."""
    text = f"encode {_brief(v['encode'])}; decode {_brief(v['decode'])}"
    if v.get("available") is False:
        text = "not available; " + text
    if v.get("byte_identical") is False and v.get("caveat"):
        text += f"; not byte-identical: {v['caveat']}"
    return text


def _brief(v) -> str:
    """A value of ``native_info()`` in a few words."""
    if isinstance(v, dict) and "path" in v:
        detail = ", ".join(str(v[k]) for k in ("via", "library", "version") if v.get(k))
        return f"{v['path']} ({detail})" if detail else str(v["path"])
    if isinstance(v, dict):
        return ", ".join(f"{k} {_brief(w)}" for k, w in v.items())
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v))
    return str(v)


# ---------------------------------------------------------------------------
# Parser
# ---------------------------------------------------------------------------

def _count(lo: int, hi: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in lo..hi."""
    def parse(text: str) -> int:
        try:
            n = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if n < lo or (hi is not None and n > hi):
            upper = "" if hi is None else f"..{hi}"
            raise argparse.ArgumentTypeError(f"{n} is outside {lo}{upper}")
        return n
    return parse


_FILTER_CHOICES = ("shuffle", "bitshuffle", "delta", "trunc_prec", "bytedelta", "nofilter")


class _Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults in --help (those worth saying: not None, not a flag's False),
    and the epilogs kept as written."""

    def _get_help_string(self, action):
        if action.default is None or isinstance(action.default, bool):
            return action.help or ""
        return super()._get_help_string(action)


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    # accepted after the command too; SUPPRESS keeps the value given before it
    common.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                        help="show Python tracebacks")
    return common


def _offset_arg(s: argparse.ArgumentParser) -> None:
    s.add_argument("--offset", type=_count(0), default=None, metavar="N",
                   help="read the chunk or frame starting at byte N of the file "
                        "(cut to its declared length)")


def _json_arg(s: argparse.ArgumentParser, what: str) -> None:
    s.add_argument("--json", action="store_true", help=what)


def build_parser() -> argparse.ArgumentParser:
    from ..chunk.encode import FORMATS, MAX_THREADS
    from ..codecs.registry import REPORTED
    codecs = [c for c in REPORTED if c != "snappy"]
    p = argparse.ArgumentParser(
        prog="blosckit", formatter_class=_Formatter,
        description="Read, inspect, validate, salvage and build Blosc chunks and Blosc2 "
                    "frames (contiguous, sparse and b2nd).",
        epilog="exit codes: 0 fine, 1 corrupt input or validation errors, 2 usage error, "
               "3 valid but unsupported (a plugin codec, an unknown filter).\n"
               "FILE may be '-' for standard input; OUT may be '-' for standard output.")
    p.add_argument("--version", action=_VersionAction,
                   help="show the version and the native paths of this build")
    p.add_argument("--traceback", action="store_true", help="show Python tracebacks")
    common = _common()
    nthreads: dict[str, Any] = dict(type=_count(1, MAX_THREADS), default=1,
                                    help=f"threads, 1..{MAX_THREADS}")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")

    def add(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common], help=help, description=help,
                              formatter_class=_Formatter)

    s = add("info", "a summary of each chunk or frame, and whether it is valid")
    s.add_argument("files", nargs="+", metavar="FILE")
    _json_arg(s, "one JSON object per file")
    _offset_arg(s)
    s.set_defaults(fn=lambda a: _each(a, a.files, functools.partial(_info_one, a)))

    s = add("inspect", "every field of a chunk or frame with its offset, bytes and meaning")
    s.add_argument("files", nargs="+", metavar="FILE")
    _json_arg(s, "one JSON object per file, with every node")
    _offset_arg(s)
    s.add_argument("--chunk", type=_count(0), default=None, metavar="N",
                   help="frames: expand chunk N to the field level")
    s.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the text output")
    s.set_defaults(fn=lambda a: _each(a, a.files, functools.partial(_inspect_one, a)))

    s = add("validate", "every problem of each chunk or frame "
                        "(FILE:OFFSET: severity: path: message [rule])")
    s.add_argument("files", nargs="+", metavar="FILE",
                   help="files, sparse frame directories, or directories to walk")
    _json_arg(s, "one JSON object per file")
    _offset_arg(s)
    depth = s.add_mutually_exclusive_group()
    depth.add_argument("--deep", dest="deep", action="store_true", default=True,
                       help="decode every chunk and check every size")
    depth.add_argument("--shallow", dest="deep", action="store_false",
                       help="check headers, indexes and chunk headers only (fast)")
    s.add_argument("-q", "--quiet", action="store_true", help="say nothing for valid files")
    s.set_defaults(fn=_validate)

    s = add("scan", "every chunk and frame found inside a blob, with offsets")
    s.add_argument("files", nargs="+", metavar="FILE")
    _json_arg(s, "one JSON object per structure found")
    s.set_defaults(fn=lambda a: _each(a, a.files, functools.partial(_scan_one, a)))

    s = add("decompress", "decode a chunk or a frame (detected) to raw bytes, or .npy "
                          "for a b2nd frame")
    s.add_argument("input", metavar="IN")
    s.add_argument("output", metavar="OUT", help="raw bytes; a name ending in .npy writes a "
                                                 "NumPy file (b2nd frames)")
    _offset_arg(s)
    s.add_argument("--nthreads", **nthreads)
    s.set_defaults(fn=_decompress)

    s = add("compress", "encode a file as one chunk, a frame of chunks, or (a .npy array) "
                        "a b2nd frame")
    s.add_argument("input", metavar="IN",
                   help="raw bytes, or a .npy file (its array data is compressed)")
    s.add_argument("output", metavar="OUT")
    s.add_argument("--codec", default="blosclz", choices=codecs, help="codec")
    s.add_argument("--clevel", type=_count(0, 9), default=5, help="0..9")
    s.add_argument("--typesize", type=_count(1, 255), default=None,
                   help="bytes per item, 1..255 (default: the .npy item size, else 1)")
    s.add_argument("--filters", type=_filters_arg, default="shuffle",
                   help="comma-separated, applied in order; name:meta gives a meta "
                        f"(e.g. shuffle,trunc_prec:20); names: {', '.join(_FILTER_CHOICES)}")
    s.add_argument("--format", default="blosc2", choices=FORMATS, help="chunk format")
    s.add_argument("--frame", action="store_true",
                   help="write a contiguous frame (the default above one chunk's limit, "
                        "2 GiB)")
    s.add_argument("--chunksize", type=_count(1), default=None, metavar="BYTES",
                   help="bytes per frame chunk (implies --frame; default 4 MiB, a "
                        "multiple of the typesize)")
    s.add_argument("--chunkshape", type=_shape_arg, default=None, metavar="N,N,...",
                   help="items per chunk along each dimension: write the .npy array as a "
                        "b2nd frame (also the default for an OUT ending in .b2nd; default "
                        "shape: up to 4 MiB per chunk)")
    s.add_argument("--blockshape", type=_shape_arg, default=None, metavar="N,N,...",
                   help="items per block along each dimension (b2nd; default: up to 32 KiB "
                        "per block)")
    s.add_argument("--nthreads", **nthreads)
    s.set_defaults(fn=_compress)

    s = add("fuzz", "differential fuzzing of blosckit against C-Blosc2 (fuzz extra)")
    s.add_argument("--against", default="c-blosc2", choices=("c-blosc2",),
                   help="the other reader")
    s.add_argument("--time", type=_count(1), default=60, metavar="SECONDS",
                   help="how long to run")
    s.add_argument("--seed", type=_count(0), default=0, help="reproducible runs")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="write each new disagreement here (minimised, with a .txt)")
    _json_arg(s, "the counts as one JSON object")
    s.set_defaults(fn=_fuzz)

    s = add("corpus", "write a seed corpus of valid and edge-case blobs with a manifest "
                      "(fuzz extra)")
    s.add_argument("out", metavar="OUT", help="directory to write")
    s.add_argument("--count", type=_count(1), default=200, metavar="N", help="blobs")
    s.add_argument("--seed", type=_count(0), default=0, help="reproducible corpora")
    s.set_defaults(fn=_corpus)

    s = add("salvage", "rebuild a valid frame from a damaged one; prints what was "
                       "recovered, chunk by chunk")
    s.add_argument("broken", metavar="BROKEN")
    s.add_argument("output", metavar="OUT")
    _json_arg(s, "the report as one JSON object")
    s.set_defaults(fn=_salvage)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.cmd is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if getattr(args, "files", None) is not None:
        return _guarded("blosckit", lambda: args.fn(args), args)
    name = getattr(args, "input", None) or getattr(args, "broken", None) or "blosckit"
    return _guarded(name, lambda: args.fn(args), args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
