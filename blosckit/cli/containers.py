"""HDF5 files and zarr stores on the command line: what ``info``,
``inspect``, ``validate``, ``scan`` and ``decompress`` do with them.

An input names a container (``data.h5``, ``store.zarr``), optionally one
dataset or array in it (``data.h5:/group/ds``) or one chunk
(``data.h5:/group/ds[2,0]``).  Problems print as
``FILE:LOCATION:OFFSET: severity: path: message [rule]``, OFFSET in the file
that holds the chunk.
"""
from __future__ import annotations

import argparse
import re
import sys
from typing import Iterator

from ..errors import Problem
from ..formats import npy
from ..tools.arrays import read_array
from ..tools.containers import (Container, StoredArray, StoredChunk, container_kind, describe,
                                split_location)
from ..tools.stores import open_container
from ..tools.validate import validate_container
from ..tools.scan import scan
from .output import write_output
from .problems import has_errors, problem_dict, problem_line, report, status
from .report import EXIT_OK, InputError, UsageError, emit
from .source import Source

_CHUNK = re.compile(r"^(?P<array>.*)\[(?P<coords>\d+(?:,\d+)*)?\]$")


def target(name: str) -> tuple[str, str | None] | None:
    """``(container path, location or None)`` when ``name`` names a
    container (or a place in one), else None."""
    path, location = split_location(name)
    return (path, location) if container_kind(path) is not None else None


def _select(c: Container, location: str | None) -> tuple[list[StoredArray], tuple | None]:
    """The arrays a location names, and the chunk coordinates it names."""
    if location is None:
        return c.arrays, None
    m = _CHUNK.match(location)
    if m is None:
        return [_array(c, location)], None
    coords = tuple(map(int, m["coords"].split(","))) if m["coords"] else ()
    return [_array(c, m["array"] or "/")], coords


def _array(c: Container, name: str) -> StoredArray:
    try:
        return c.array(name)
    except KeyError as e:
        raise UsageError(e.args[0]) from None


def _some_arrays(c: Container) -> None:
    """A container named to be checked holds Blosc data (InputError, exit
    1, when it holds none: nothing was checked)."""
    if not c.arrays:
        raise InputError(f"no {_NOUN[c.kind]} in this {describe(c.kind)} (nothing to check)")


_NOUN = {"hdf5": "dataset stored with the Blosc (32001) or Blosc2 (32026) filter",
         "zarr": "array compressed by Blosc"}


def _one_chunk(a: StoredArray, coords: tuple) -> StoredChunk:
    for item in a.chunks():
        if isinstance(item, StoredChunk) and item.coords == coords:
            return item
    raise UsageError(f"{a.location(coords)}: no such chunk stored (never written, or "
                     "outside the chunk grid)")


# ---------------------------------------------------------------------------
# validate, info
# ---------------------------------------------------------------------------

def validate(args: argparse.Namespace, name: str, path: str) -> int:
    """``blosckit validate`` of a container: its problems, one per line."""
    with open_container(path) as c:
        _some_arrays(c)
        kind = c.kind
    return report(args, name, kind, validate_container(path, deep=args.deep), describe(kind))


def _array_dict(a: StoredArray) -> dict:
    stored = without = 0
    for item in a.chunks():
        if isinstance(item, StoredChunk):
            stored += 1
            without += not item.blosc
    return {"name": a.name, "shape": list(a.shape), "chunkshape": list(a.chunkshape),
            "dtype": str(a.dtype), "codec": a.codec, "chunks": stored,
            "chunks_without_blosc": without, "decodable": a.decodable is None}


def info(args: argparse.Namespace, name: str, path: str) -> int:
    """``blosckit info`` of a container: its Blosc datasets or arrays."""
    with open_container(path) as c:
        _some_arrays(c)
        arrays = [_array_dict(a) for a in c.arrays]
        kind = c.kind
    problems = validate_container(path)
    if args.json:
        emit({"file": name, "kind": kind, "arrays": arrays, "valid": not has_errors(problems),
              "problems": [problem_dict(name, p) for p in problems]})
        return status(problems)
    word = "dataset" if kind == "hdf5" else "array"
    print(f"{name}: {describe(kind)}, {len(arrays)} Blosc {word}(s)")
    for d in arrays:
        raw = f" ({d['chunks_without_blosc']} stored without Blosc)" \
            if d["chunks_without_blosc"] else ""
        print(f"  {d['name']:14} {d['dtype']} {_shape(d['shape'])}, chunks "
              f"{_shape(d['chunkshape'])}, {d['codec']}, {d['chunks']} chunk(s) stored{raw}")
    errors = sum(p.severity == "error" for p in problems)
    print(f"  {'valid':14} {'yes' if not errors else f'no: {errors} error(s)'}", flush=True)
    for p in problems:
        print(problem_line(name, p), file=sys.stderr)
    return status(problems)


def _shape(s: list) -> str:
    return " x ".join(map(str, s)) or "()"


# ---------------------------------------------------------------------------
# scan, inspect
# ---------------------------------------------------------------------------

def scan_container(args: argparse.Namespace, name: str, path: str,
                   location: str | None) -> int:
    """``blosckit scan`` of a container: each chunk by location, offset in
    its file, size and what it is."""
    count = 0
    with open_container(path) as c:
        arrays, coords = _select(c, location)
        for a in arrays:
            for item in a.chunks():
                if not isinstance(item, StoredChunk) or coords not in (None, item.coords):
                    continue
                count += 1
                _scan_chunk(args, path, item)
    if not args.json:
        print(f"{path}: {count} chunk(s) found", file=sys.stderr)
    return EXIT_OK


def _scan_chunk(args: argparse.Namespace, name: str, item: StoredChunk) -> None:
    found = scan(item.blosc_data) if item.blosc else []
    if not item.blosc:
        rows = [("raw", item.offset, len(item.data), "stored without Blosc", None)]
    else:
        rows = [(f.kind, f.offset + item.offset, f.size, f.summary, f.error) for f in found] \
            or [("unknown", item.offset, len(item.data), "no Blosc chunk or frame found", None)]
    for kind, offset, size, summary, error in rows:
        if args.json:
            emit({"file": name, "location": item.location, "kind": kind, "offset": offset,
                  "size": size, "summary": summary, "error": error})
        else:
            tail = f"; does not read: {error}" if error else ""
            print(f"{name}:{item.location}:{offset}: {kind} of {size} bytes: {summary}{tail}")


def chunk_source(name: str, path: str, location: str | None) -> Source | None:
    """The one chunk ``location`` names, as an input of the chunk and frame
    commands (offsets in the file that holds it), or None when the
    location names no single chunk."""
    with open_container(path) as c:
        arrays, coords = _select(c, location)
        if coords is None:
            return None
        item = _one_chunk(arrays[0], coords)
        if not item.blosc:
            raise UsageError(f"{item.location} is stored without Blosc (raw items)")
        data = memoryview(bytes(item.blosc_data))
    return Source(f"{name}", data, base=item.offset, size=len(data))


def container_nodes(path: str, location: str | None) -> Iterator[dict]:
    """``inspect`` records of a container: each array and each of its chunks
    (offset and size in the file holding it)."""
    with open_container(path) as c:
        arrays, _ = _select(c, location)
        for a in arrays:
            yield _node(a.name, 0, 0, {"shape": list(a.shape), "chunkshape": list(a.chunkshape),
                                       "dtype": str(a.dtype)}, a.codec)
            for item in a.chunks():
                if isinstance(item, Problem):
                    continue
                rel = item.file.relative_to(c.path).as_posix() if item.file != c.path else ""
                doc = ("stored without Blosc" if not item.blosc else "Blosc data") + \
                    (f" in {rel}" if rel else "")
                yield _node(item.location, item.offset, len(item.data), None, doc)


def _node(path: str, offset: int, size: int, value: object, doc: str) -> dict:
    return {"path": path, "name": path, "offset": offset, "size": size, "value": value,
            "meaning": "", "doc": doc, "bit": None, "raw": None}


# ---------------------------------------------------------------------------
# decompress
# ---------------------------------------------------------------------------

def decompress(args: argparse.Namespace, path: str, location: str | None) -> int:
    """``blosckit decompress`` of a dataset or array: its items in C order,
    as ``.npy`` (its dtype and shape) or raw bytes; returns bytes written."""
    with open_container(path) as c:
        arrays, coords = _select(c, location)
        if coords is not None:
            raise UsageError("decompress takes a dataset or array (FILE:/group/ds), "
                             "not one chunk")
        if len(arrays) != 1:
            names = ", ".join(a.name for a in arrays) or "none"
            raise UsageError(f"{path} holds {len(arrays)} Blosc datasets or arrays ({names}): "
                             f"name one as {path}:/NAME")
        array = read_array(arrays[0])
    import numpy                       # read_array needed it
    pieces = [array.reshape(-1).view(numpy.uint8)]
    if args.output.endswith(".npy"):
        descr = numpy.lib.format.dtype_to_descr(array.dtype)
        pieces.insert(0, numpy.frombuffer(npy.write_header(descr, array.shape), numpy.uint8))
    return write_output(args.output, pieces)
