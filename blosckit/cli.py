"""The ``blosckit`` command line.

Exit codes: 0 fine, 1 corrupt or unreadable input, 2 usage errors (bad
parameters), 3 valid input that uses a feature this build cannot decode.
Bad input gives one clear line on stderr, never a traceback; ``--traceback``
(before or after the command) shows it.  Commands over several files go on
after a bad one and exit with the worst status.
"""
from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable

from . import __version__
from .errors import FormatError, UnsupportedError
from .formats import npy

EXIT_OK, EXIT_CORRUPT, EXIT_USAGE, EXIT_UNSUPPORTED = 0, 1, 2, 3


class UsageError(Exception):
    """A bad parameter found after argument parsing (exit 2)."""


# ---------------------------------------------------------------------------
# Error handling
# ---------------------------------------------------------------------------

def _run_guarded(name: str, fn: Callable[[], int], traceback: bool) -> int:
    """Run ``fn`` for the file ``name``; turn failures into one stderr line
    naming the file and an exit status."""
    try:
        return fn()
    except BrokenPipeError:          # output piped into head & co.
        sys.stderr.close()
        return EXIT_OK
    except Exception as e:           # noqa: BLE001 -- every failure gets one line
        if traceback:
            raise
        status, line = _describe(name, e)
        print(f"blosckit: {line}", file=sys.stderr)
        return status


def _rule(err: FormatError) -> str:
    return f" [{err.rule}]" if err.rule else ""


def _describe(name: str, e: Exception) -> tuple[int, str]:
    """Exit status and message for an exception raised while handling ``name``."""
    if isinstance(e, UnsupportedError):     # a FormatError too: test it first
        return EXIT_UNSUPPORTED, (f"{name}:{e.offset}: unsupported: {e.path}: "
                                  f"{e.message}{_rule(e)}")
    if isinstance(e, FormatError):
        return EXIT_CORRUPT, f"{name}:{e.offset}: error: {e.path}: {e.message}{_rule(e)}"
    if isinstance(e, (UsageError, ValueError)):
        # FormatError is handled above: a plain ValueError is a bad parameter
        return EXIT_USAGE, f"usage error: {e}"
    if isinstance(e, OSError):
        what = e.strerror or type(e).__name__
        where = e.filename if e.filename is not None else name
        return EXIT_CORRUPT, f"{where}: error: cannot read or write: {what}"
    if isinstance(e, MemoryError):
        return EXIT_CORRUPT, f"{name}: error: out of memory (input too large?)"
    return EXIT_CORRUPT, (f"{name}: error: unexpected {type(e).__name__}: {e} "
                          "(run with --traceback for details)")


def _read(path: str) -> bytes:
    return Path(path).read_bytes()


# ---------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------

def _info_one(path: str, as_json: bool) -> int:
    from .chunk import parse_chunk
    c = parse_chunk(_read(path))
    d = {
        "file": path, "kind": "chunk", "version": c.version, "versionlz": c.versionlz,
        "codec": c.codec, "filters": [list(f) for f in c.filters],
        "typesize": c.typesize, "nbytes": c.nbytes, "cbytes": c.cbytes,
        "ratio": round(c.nbytes / c.cbytes, 3) if c.cbytes else None,
        "blocksize": c.blocksize, "nblocks": c.nblocks, "split": c.split,
        "special": c.special, "memcpyed": c.memcpyed, "vlblocks": c.vlblocks,
        "dict": len(c.dict) if c.dict is not None else None, "lazy": c.lazy,
    }
    if as_json:
        print(json.dumps(d), flush=True)
        return EXIT_OK
    lines = [f"{path}: Blosc chunk, format version {c.version}"]
    lines += [f"  {k:10} {v}" for k, v in d.items() if k not in ("file", "kind")]
    print("\n".join(lines), flush=True)
    return EXIT_OK


def _info(args) -> int:
    """Every file in turn; the exit status is the worst one."""
    worst = EXIT_OK
    for path in args.files:
        status = _run_guarded(path, functools.partial(_info_one, path, args.json),
                              args.traceback)
        worst = max(worst, status)
    return worst


def _inspect(args) -> int:
    from .formats.describe import describe
    from .inspect_chunk import chunk_nodes
    nodes = list(chunk_nodes(_read(args.file)))
    if args.json:
        print(json.dumps([n._asdict() for n in nodes], default=str))
        return EXIT_OK
    for n in nodes:
        depth = n.path.count(".")
        name = n.path.rsplit(".", 1)[-1] if depth else n.path
        where = f"{n.offset:>8}" + (f"+{n.size:<6}" if n.size else " " * 7)
        val = "" if n.value is None else f" = {n.value}"
        note = describe(n.path, n.value) if n.value is not None else ""
        note = f" ({note})" if note else ""
        doc = f"  # {n.doc}" if n.doc else ""
        print(f"{where} {'  ' * depth}{name}{val}{note}{doc}")
    return EXIT_OK


def _decompress(args) -> int:
    from .chunk import decompress
    data = decompress(_read(args.input), nthreads=args.nthreads)
    Path(args.output).write_bytes(data)
    print(f"{args.input}: {len(data)} bytes -> {args.output}", file=sys.stderr)
    return EXIT_OK


# --- .npy input ---------------------------------------------------------------

NPY_MAGIC = npy.MAGIC
_SIMPLE_DESCR = re.compile(r"[<>|=]?([a-zA-Z])(\d+)(\[\w+\])?")


def _npy_itemsize(descr) -> int:
    """Bytes per item of a .npy ``descr`` (numpy when installed, else the
    simple ``<f8`` / ``|S10`` / ``<U3`` forms)."""
    try:
        import numpy
    except ImportError:
        numpy = None  # type: ignore[assignment]
    if numpy is not None:
        dtype = numpy.dtype(descr if isinstance(descr, str) else [tuple(f) for f in descr])
        if dtype.hasobject:
            raise FormatError("the .npy file holds Python objects, not raw items", 0,
                              "npy.header", rule=npy.T_NPY.id)
        return dtype.itemsize
    m = _SIMPLE_DESCR.fullmatch(descr) if isinstance(descr, str) else None
    if m is None:
        raise UsageError(f"cannot size .npy items {descr!r} without numpy: give --typesize")
    return int(m.group(2)) * (4 if m.group(1) == "U" else 1)


def _npy_split(data: bytes) -> tuple[int, bytes]:
    """(item size, array bytes) of a .npy file (its header is declared in
    formats/npy.py)."""
    descr, start = npy.read(data)
    return _npy_itemsize(descr), data[start:]


def _filters_arg(text: str) -> tuple:
    """``shuffle,trunc_prec:20`` -> ("shuffle", ("trunc_prec", 20))."""
    out: list = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        name, sep, meta = item.partition(":")
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
    from .compress import compress
    data = _read(args.input)
    typesize = args.typesize
    if data.startswith(NPY_MAGIC):
        itemsize, data = _npy_split(data)
        typesize = itemsize if typesize is None else typesize
    out = compress(data, typesize=1 if typesize is None else typesize, codec=args.codec,
                   clevel=args.clevel, filters=args.filters, format=args.format,
                   nthreads=args.nthreads)
    Path(args.output).write_bytes(out)
    ratio = len(data) / len(out) if out else 0
    print(f"{args.input}: {len(data)} -> {len(out)} bytes (ratio {ratio:.2f}) -> {args.output}",
          file=sys.stderr)
    return EXIT_OK


# ---------------------------------------------------------------------------
# Parser
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
        from .buildinfo import native_info
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


def build_parser() -> argparse.ArgumentParser:
    from .compress import FORMATS, MAX_THREADS
    p = argparse.ArgumentParser(prog="blosckit",
                                description="Read, inspect and build Blosc chunks.")
    p.add_argument("--version", action=_VersionAction,
                   help="show the version and the native paths of this build")
    p.add_argument("--traceback", action="store_true", help="show Python tracebacks")
    # accepted after the command too; SUPPRESS keeps the value given before it
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                        help="show Python tracebacks")
    nthreads: dict[str, Any] = dict(type=_count(1, MAX_THREADS), default=1,
                                    help=f"1..{MAX_THREADS}")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("info", parents=[common], help="summary of each chunk file")
    s.add_argument("files", nargs="+")
    s.add_argument("--json", action="store_true", help="one JSON object per file")
    s.set_defaults(fn=_info, many=True)
    s = sub.add_parser("inspect", parents=[common], help="every field with its offset")
    s.add_argument("file")
    s.add_argument("--json", action="store_true", help="a JSON list of nodes")
    s.set_defaults(fn=_inspect)
    s = sub.add_parser("decompress", parents=[common], help="decode a chunk file")
    s.add_argument("input")
    s.add_argument("output")
    s.add_argument("--nthreads", **nthreads)
    s.set_defaults(fn=_decompress)
    s = sub.add_parser("compress", parents=[common], help="encode a file as one chunk")
    s.add_argument("input", help="raw bytes, or a .npy file (its array data is compressed)")
    s.add_argument("output")
    s.add_argument("--codec", default="blosclz")
    s.add_argument("--clevel", type=_count(0, 9), default=5)
    s.add_argument("--typesize", type=_count(1), default=None,
                   help="bytes per item (default: the .npy item size, else 1)")
    s.add_argument("--filters", type=_filters_arg, default=("shuffle",),
                   help="comma-separated, applied in order; name:meta gives a meta "
                        "(e.g. shuffle,trunc_prec:20)")
    s.add_argument("--format", default="blosc2", choices=FORMATS)
    s.add_argument("--nthreads", **nthreads)
    s.set_defaults(fn=_compress)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "many", False):
        return args.fn(args)           # reports each file itself
    name = getattr(args, "file", None) or getattr(args, "input", None) or "blosckit"
    return _run_guarded(name, lambda: args.fn(args), args.traceback)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
