"""``blosckit validate``: every problem of each chunk or frame, over files,
sparse frame directories and the directories to walk."""
from __future__ import annotations

import argparse
import contextlib
import functools
import io
import sys
from pathlib import Path

from ..tools.validate import validate
from . import containers, distributed
from .problems import report, shifted
from .progress import Progress
from .report import EXIT_OK, InputError, UsageError, guarded, worse
from .sizes import human
from .source import is_sframe, load
from .walk import holds_inputs, looks_blosc, walk

_FILES_SHOWN = 20                 # a progress line over at least this many files


def run(args: argparse.Namespace) -> int:
    """Validate every input; the exit status is the worst one."""
    if args.dask is not None and not distributed.is_address(args.dask):
        args.files, args.dask = [args.dask, *args.files], distributed.LOCAL
    if not args.files:
        raise UsageError("give at least one FILE")
    inputs = list(walk(args.files))
    if args.dask is not None:
        return distributed.run(args, [name for name, named in inputs
                                      if named or not Path(name).is_file()
                                      or looks_blosc(name)], check_batch)
    if args.resume is not None:
        raise UsageError("--resume continues a --dask run: give --dask too")
    if args.offset is not None and len(inputs) > 1:
        raise UsageError("--offset reads one structure: give one file")
    worst = _empty_directories(args)
    note = Progress("validating", len(inputs), "files", threshold=_FILES_SHOWN)
    for name, named in inputs:
        if not named and Path(name).is_file() and not looks_blosc(name):
            if not args.quiet and not args.json:    # a directory's other files
                print(f"{name}: skipped (not a Blosc chunk or frame)", file=sys.stderr)
        else:
            worst = worse(worst, guarded(name, functools.partial(_one, args, name), args))
        note.advance(1)
    note.close()
    return worst


def _empty_directories(args: argparse.Namespace) -> int:
    """A directory named on its own must hold something to read: exit 1
    (and one line) for each that does not."""
    worst = EXIT_OK
    for d in args.files:
        if Path(d).is_dir() and not is_sframe(Path(d)) and not holds_inputs(d):
            worst = worse(worst, guarded(d, functools.partial(_nothing_in, d), args))
    return worst


def _one(args: argparse.Namespace, name: str) -> int:
    where = containers.target(name)
    if where is not None:
        if where[1] is not None or args.offset is not None:
            raise UsageError("validate checks a whole HDF5 file or zarr store: name the file")
        return containers.validate(args, name, where[0])
    src = load(name, args.offset)
    note = Progress(f"validating {name}", src.size)
    note.status(f"validating {name} ({human(src.size)}, deep={args.deep})...")
    problems = [shifted(p, src.base) for p in validate(src.target, deep=args.deep)]
    note.close()
    return report(args, name, src.kind, problems, src.kind)


def check_batch(names: list[str], deep: bool) -> list[tuple[int, list[str], list[str]]]:
    """On a dask worker (``--dask``): each input as a plain ``--json`` run
    handles it: its exit status, the JSON lines it prints and its stderr
    lines (so both runs give the same verdicts)."""
    args = argparse.Namespace(json=True, deep=deep, quiet=True, offset=None, traceback=False)
    out = []
    for name in names:
        so, se = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
            code = guarded(name, functools.partial(_one, args, name), args)
        out.append((code, so.getvalue().splitlines(), se.getvalue().splitlines()))
    return out


def _nothing_in(directory: str) -> int:
    raise InputError("no chunk, frame or sparse frame in this directory")
