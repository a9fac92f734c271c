"""``blosckit info``: a summary of each chunk or frame, and whether it is
valid."""
from __future__ import annotations

import argparse
import functools
import sys
from typing import Any, Callable

from ..chunk.read import parse_chunk
from ..errors import FormatError, Problem
from ..formats import chunk as fc
from ..formats import enums
from ..formats.describe import chunk_codec
from ..frame.read import open_frame
from ..tools.validate import validate
from .problems import has_errors, problem_dict, problem_line, shifted, status, unsupported
from . import containers
from .report import UsageError, each, emit
from .sizes import size_text
from .source import Source, load, relocated

_KINDS = {"chunk": "{format} chunk, format version {version}",
          "frame": "Blosc2 contiguous frame, format version {version}",
          "sframe": "Blosc2 sparse frame, format version {version}"}
_NOT_SHOWN = ("kind", "format", "file", "problems", "valid")   # said in the first line, or JSON only
def run(args: argparse.Namespace) -> int:
    """A summary of every input; the exit status is the worst one."""
    return each(args, args.files, functools.partial(_one, args))


def _one(args: argparse.Namespace, name: str) -> int:
    where = containers.target(name)
    if where is not None and args.offset is not None:
        raise UsageError("--offset reads a chunk or frame file, not an HDF5 file or zarr store")
    src = None if where is None else containers.chunk_source(name, *where)
    if where is not None and src is None:
        return containers.info(args, name, where[0])
    src = src or load(name, args.offset)
    try:
        d = chunk_info(src) if src.kind == "chunk" else frame_info(src)
    except FormatError as e:
        raise relocated(e, src.base)
    problems = [shifted(p, src.base) for p in validate(src.target, deep=True)]
    if args.json:
        emit({"file": name, **d, "valid": not has_errors(problems),
              "problems": [problem_dict(name, p) for p in problems]})
    else:
        print(info_text(name, d, problems), flush=True)
        for p in problems:
            print(problem_line(name, p), file=sys.stderr)
    return status(problems)


def chunk_info(src: Source) -> dict:
    """The summary of the chunk ``src`` holds (sizes in bytes)."""
    c = parse_chunk(src.data)
    return {
        "kind": "chunk", "format": enums.family(c.version),
        "version": c.version, "versionlz": c.versionlz, "codec": chunk_codec(c),
        "stream_format": c.codec,
        "filters": [[n, m] for n, m in c.filters], "typesize": c.typesize,
        "nbytes": c.nbytes, "cbytes": c.cbytes, "ratio": _ratio(c.nbytes, c.cbytes),
        "blocksize": c.blocksize, "nblocks": c.nblocks, "split": c.split,
        "special": c.special or "none", "memcpyed": c.memcpyed, "vlblocks": c.vlblocks,
        "dict": len(c.dict) if c.dict is not None else None, "lazy": c.lazy,
        "trailing": len(src.data) - c.cbytes,
    }


def _special_chunks(f, offsets: list) -> dict[str, int]:
    """Chunks of one repeated value, by kind: special offsets (zeros, NaN,
    uninit) and stored special chunks (a repeated value, or any kind in a
    frame of variable-size chunks), from the chunks' headers only."""
    counts: dict[str, int] = {}
    for i, entry in enumerate(offsets):
        kind = entry if isinstance(entry, str) else None
        if kind is None:
            try:
                _, view = f.chunk_view(i)
            except FormatError:
                continue            # a damaged entry: validate says what is wrong
            if len(view) < fc.LEN_HEADER:
                continue            # a sparse frame's chunk file cut short: likewise
            kind = enums.SPECIALS.get(fc.stored_chunk(view).special)
        if kind is not None:
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def frame_info(src: Source) -> dict:
    """The summary of the frame (contiguous or sparse) ``src`` holds."""
    with open_frame(src.target) as f:
        offsets = f.offsets
        d: dict[str, Any] = {
            "kind": src.kind, "version": f.version, "header_layout": f.layout,
            "codec": f.codec, "clevel": f.clevel, "filters": [[n, m] for n, m in f.filters],
            "typesize": f.typesize, "chunksize": f.chunksize, "nchunks": f.nchunks,
            "nbytes": f.nbytes, "cbytes": f.cbytes, "ratio": _ratio(f.nbytes, f.cbytes),
            "special_chunks": _special_chunks(f, offsets),
            "metalayers": list(f.metalayers), "vlmetalayers": list(f.vlmetalayers),
        }
        if f.b2nd is not None:
            b = f.b2nd
            d["b2nd"] = {"shape": list(b.shape), "chunkshape": list(b.chunkshape),
                         "blockshape": list(b.blockshape), "dtype": b.dtype}
        return d


def _ratio(nbytes: int, cbytes: int) -> float | None:
    return round(nbytes / cbytes, 3) if cbytes else None


# ---------------------------------------------------------------------------
# The text: one line per entry, words of the format rather than Python reprs
# ---------------------------------------------------------------------------

def info_text(name: str, d: dict, problems: list[Problem]) -> str:
    """The summary ``d`` of the input ``name`` and its validity, as lines."""
    lines = [f"{name}: {_KINDS[d['kind']].format(**d)}"]
    lines += [f"  {k:14} {_value_text(k, v)}" for k, v in d.items() if k not in _NOT_SHOWN]
    lines.append(f"  {'valid':14} {_valid_text(problems)}")
    return "\n".join(lines)


def _filters_text(filters: list) -> str:
    return ", ".join(f"{n}:{m}" if m else n for n, m in filters) or "none"


_WORDS: dict[str, Callable[[Any], str]] = {
    "nbytes": size_text, "cbytes": size_text, "blocksize": size_text, "chunksize": size_text,
    "typesize": lambda v: f"{v} bytes", "filters": _filters_text,
    "trailing": lambda v: f"{v} bytes after the chunk" if v else "none",
    "stream_format": lambda v: f"{v} streams"}


def _value_text(key: str, v: Any) -> str:
    """The value of entry ``key`` in words."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if key in _WORDS:
        return _WORDS[key](v)
    if isinstance(v, dict):
        return ", ".join(f"{a} {_list_text(b)}" for a, b in v.items()) or "none"
    if isinstance(v, list):
        return _list_text(v)
    return "none" if v is None else str(v)


def _list_text(v: Any) -> str:
    """A shape as ``50 x 40``, other lists comma-separated."""
    if isinstance(v, list):
        return " x ".join(map(str, v)) if all(isinstance(x, int) for x in v) and v \
            else ", ".join(map(str, v)) or "none"
    return str(v)


def _valid_text(problems: list[Problem]) -> str:
    """``yes``, or how many errors, undecodable features and warnings."""
    n_unsupported = sum(map(unsupported, problems))
    errors = sum(p.severity == "error" for p in problems) - n_unsupported
    warnings = len(problems) - errors - n_unsupported
    state = "yes" if not errors else f"no: {errors} error(s)"
    if n_unsupported:
        state += f"; {n_unsupported} feature(s) this build cannot decode"
    if warnings:
        state += f", {warnings} warning(s)"
    return state
