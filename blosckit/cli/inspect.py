"""``blosckit inspect``: every field of a chunk or frame with its offset,
bytes and meaning (text, optionally coloured, or JSON)."""
from __future__ import annotations

import argparse
import functools
import re
import sys
from typing import Any, Callable, Iterator

from ..errors import FormatError
from ..frame.read import open_frame
from ..tools.inspect import Node, chunk_nodes, frame_nodes
from . import containers
from .report import EXIT_OK, UsageError, each, emit, failure, failure_line
from .source import Source, load

_COLOURS = {"name": "\033[1m", "value": "\033[32m", "meaning": "\033[36m",
            "doc": "\033[2m", "off": "\033[0m"}
_COLOUR_CHOICE = {"always": True, "never": False}        # else: "auto", on a terminal
RAW_SHOWN = 16                    # fields up to this many bytes show their stored bytes


def run(args: argparse.Namespace) -> int:
    """The fields of every input; the exit status is the worst one."""
    return each(args, args.files, functools.partial(_one, args))


def _one(args: argparse.Namespace, name: str) -> int:
    where = containers.target(name)
    if where is not None and (args.offset is not None or args.chunk is not None):
        raise UsageError("--offset and --chunk read chunk or frame files; name a chunk of an "
                         "HDF5 file or zarr store as FILE:/group/ds[2,0]")
    src = None if where is None else containers.chunk_source(name, *where)
    if where is not None and src is None:
        return _container(args, name, *where)
    src = src or load(name, args.offset)
    if args.chunk is not None and src.kind != "chunk":
        _check_chunk_number(src, args.chunk)
    records: list[dict] = []
    colour = _COLOUR_CHOICE.get(args.color, sys.stdout.isatty())
    keep = records.append if args.json else lambda d: print(node_text(d, colour))
    stopped = _each_node(src, args.chunk, keep)
    status, rec = (EXIT_OK, None) if stopped is None else failure(name, stopped, src.base)
    if args.json:
        emit({"file": name, "kind": src.kind, "nodes": records, "stopped": rec})
    if rec is not None:
        print(f"blosckit: {failure_line(rec)} (inspection stopped here)", file=sys.stderr,
              flush=True)
    return status


def _container(args: argparse.Namespace, name: str, path: str, location: str | None) -> int:
    """The datasets or arrays of a container and where each chunk lies."""
    colour = _COLOUR_CHOICE.get(args.color, sys.stdout.isatty())
    records = []
    for d in containers.container_nodes(path, location):
        if args.json:
            records.append(d)
        else:
            print(node_text(d, colour))
    if args.json:
        emit({"file": name, "kind": containers.container_kind(path), "nodes": records,
              "stopped": None})
    return EXIT_OK


def _each_node(src: Source, chunk: int | None, keep: Callable[[dict], None]
               ) -> FormatError | None:
    """Hand the record of every node of ``src`` (offsets in the file) to
    ``keep`` as it comes; the error that stopped the walk, or None."""
    try:
        for n in _nodes(src, chunk):
            d = node_dict(n, _raw(src, n))
            d["offset"] += src.base
            keep(d)
    except FormatError as e:
        return e
    return None


def _check_chunk_number(src: Source, chunk: int) -> None:
    """``--chunk N`` names a chunk of the frame ``src``."""
    with open_frame(src.target) as f:
        if chunk >= f.nchunks:
            raise UsageError(f"--chunk {chunk}: the frame has {f.nchunks} chunks")


def _nodes(src: Source, chunk: int | None) -> Iterator[Node]:
    if src.kind == "chunk":
        if chunk is not None:
            raise UsageError("--chunk N applies to frames; this is a chunk")
        return chunk_nodes(src.data)
    return frame_nodes(src.target, chunk=chunk)


def _raw(src: Source, n: Node) -> bytes | None:
    """The stored bytes of a leaf field (up to RAW_SHOWN) in a contiguous input."""
    if src.data is None or n.value is None or n.bit is not None or not 0 < n.size <= RAW_SHOWN:
        return None
    return bytes(src.data[n.offset:n.offset + n.size])


def node_dict(n: Node, raw: bytes | None) -> dict:
    """A node as a JSON-able record (``raw``: its stored bytes, or None)."""
    name = re.split(r"\.(?![^\[]*\])", n.path)[-1]
    bit = None
    if n.bit is not None:
        first, width = n.bit
        bit = {"first": first, "width": width}
    return {"path": n.path, "name": name, "offset": n.offset, "size": n.size,
            "value": n.value, "meaning": getattr(n, "meaning", ""), "doc": n.doc,
            "bit": bit, "raw": raw.hex(" ") if raw is not None else None}


def node_text(d: dict, colour: bool) -> str:
    """A node record as one line: offset+size, the name indented by depth,
    its bits, value, meaning, stored bytes and doc."""
    c = _COLOURS if colour else dict.fromkeys(_COLOURS, "")
    depth = d["path"].count(".") + d["path"].count("[") - d["name"].count("[")
    where = f"{d['offset']:>9}" + (f"+{d['size']:<7}" if d["size"] else " " * 8)
    text = f"{where} {'  ' * depth}{c['name']}{d['name']}{c['off']}"
    if d["bit"] is not None:
        text += f" ({_bits_text(**d['bit'])})"
    if d["value"] is not None:
        text += f" = {c['value']}{_value_text(d['value'])}{c['off']}"
    if d["meaning"]:
        text += f" {c['meaning']}({d['meaning']}){c['off']}"
    if d["raw"] is not None:
        text += f" [{d['raw']}]"
    if d["doc"]:
        text += f"  {c['doc']}# {d['doc']}{c['off']}"
    return text


def _bits_text(first: int, width: int) -> str:
    return f"bit {first}" if width == 1 else f"bits {first}-{first + width - 1}"


def _value_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value_text(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_value_text(x)}" for k, x in v.items()) + "}"
    return str(v)
