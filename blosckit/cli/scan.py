"""``blosckit scan``: every chunk and frame found inside a blob, with its
offset."""
from __future__ import annotations

import argparse
import functools
import sys

from ..tools.scan import scan
from . import containers
from .report import EXIT_OK, each, emit
from .source import load_file


def run(args: argparse.Namespace) -> int:
    """Scan every input; the exit status is the worst one."""
    return each(args, args.files, functools.partial(_one, args))


def _one(args: argparse.Namespace, name: str) -> int:
    where = containers.target(name)
    if where is not None:
        return containers.scan_container(args, name, *where)
    src = load_file(name, "scan")
    found = scan(src.data)
    for f in found:
        if args.json:
            emit({"file": name, "kind": f.kind, "offset": f.offset, "size": f.size,
                  "nbytes": f.nbytes, "summary": f.summary, "error": f.error})
        else:
            tail = f"; does not read: {f.error}" if f.error else ""
            print(f"{name}:{f.offset}: {f.kind} of {f.size} bytes: {f.summary}{tail}")
    if not args.json:
        frames = sum(f.kind == "frame" for f in found)
        print(f"{name}: {frames} frame(s), {len(found) - frames} chunk(s) found",
              file=sys.stderr)
    return EXIT_OK
