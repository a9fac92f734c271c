"""The ``blosckit`` command line.

Commands print one clear line on stderr for bad input and exit 1 (2 for
usage errors); ``--traceback`` shows the Python traceback instead.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import __version__
from .errors import FormatError


def _read(path: str) -> bytes:
    return Path(path).read_bytes()


def _info(args) -> int:
    from .chunk import parse_chunk
    for path in args.files:
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
        if args.json:
            print(json.dumps(d))
        else:
            print(f"{path}: Blosc chunk, format version {c.version}")
            for k, v in d.items():
                if k not in ("file", "kind"):
                    print(f"  {k:10} {v}")
    return 0


def _inspect(args) -> int:
    from .formats.describe import describe
    from .inspect_chunk import chunk_nodes
    nodes = list(chunk_nodes(_read(args.file)))
    if args.json:
        print(json.dumps([n._asdict() for n in nodes], default=str))
        return 0
    for n in nodes:
        depth = n.path.count(".")
        name = n.path.rsplit(".", 1)[-1] if depth else n.path
        where = f"{n.offset:>8}" + (f"+{n.size:<6}" if n.size else " " * 7)
        val = "" if n.value is None else f" = {n.value}"
        note = describe(n.path, n.value) if n.value is not None else ""
        note = f" ({note})" if note else ""
        doc = f"  # {n.doc}" if n.doc else ""
        print(f"{where} {'  ' * depth}{name}{val}{note}{doc}")
    return 0


def _decompress(args) -> int:
    from .chunk import decompress
    data = decompress(_read(args.input), nthreads=args.nthreads)
    Path(args.output).write_bytes(data)
    print(f"{args.input}: {len(data)} bytes -> {args.output}", file=sys.stderr)
    return 0


def _compress(args) -> int:
    from .compress import compress
    data = _read(args.input)
    filters = tuple(f for f in args.filters.split(",") if f) if args.filters else ()
    out = compress(data, typesize=args.typesize, codec=args.codec, clevel=args.clevel,
                   filters=filters, format=args.format, nthreads=args.nthreads)
    Path(args.output).write_bytes(out)
    ratio = len(data) / len(out) if out else 0
    print(f"{args.input}: {len(data)} -> {len(out)} bytes (ratio {ratio:.2f}) -> {args.output}",
          file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="blosckit",
                                description="Read, inspect and build Blosc chunks.")
    p.add_argument("--version", action="version", version=f"blosckit {__version__}")
    p.add_argument("--traceback", action="store_true", help="show Python tracebacks")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("info", help="summary of a chunk file")
    s.add_argument("files", nargs="+")
    s.add_argument("--json", action="store_true", help="one JSON object per file")
    s.set_defaults(fn=_info)
    s = sub.add_parser("inspect", help="every field with its offset")
    s.add_argument("file")
    s.add_argument("--json", action="store_true", help="a JSON list of nodes")
    s.set_defaults(fn=_inspect)
    s = sub.add_parser("decompress", help="decode a chunk file")
    s.add_argument("input")
    s.add_argument("output")
    s.add_argument("--nthreads", type=int, default=1)
    s.set_defaults(fn=_decompress)
    s = sub.add_parser("compress", help="encode a file as one chunk")
    s.add_argument("input")
    s.add_argument("output")
    s.add_argument("--codec", default="blosclz")
    s.add_argument("--clevel", type=int, default=5)
    s.add_argument("--typesize", type=int, default=1)
    s.add_argument("--filters", default="shuffle", help="comma-separated, applied in order")
    s.add_argument("--format", default="blosc2", choices=("blosc2", "blosc1"))
    s.add_argument("--nthreads", type=int, default=1)
    s.set_defaults(fn=_compress)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except BrokenPipeError:          # output piped into head & co.
        sys.stderr.close()
        return 0
    except FormatError as e:
        if args.traceback:
            raise
        where = getattr(args, "file", None) or getattr(args, "input", None) or \
            " ".join(getattr(args, "files", []) or [])
        print(f"blosckit: {where}:{e.offset}: error: {e.path}: {e.message}", file=sys.stderr)
        return 1
    except OSError as e:
        if args.traceback:
            raise
        print(f"blosckit: error: {e}", file=sys.stderr)
        return 1
    except ValueError as e:          # bad parameters: a usage error
        if args.traceback:
            raise
        print(f"blosckit: usage error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
