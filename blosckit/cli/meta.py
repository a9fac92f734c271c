"""``blosckit meta FRAME``: list a frame's metalayers and vlmetalayers;
``--set NAME VALUE`` and ``--delete NAME`` change them in place.

Values are msgpack, as python-blosc2 stores them: VALUE is read as JSON
(``3``, ``"text"``, ``[1, 2]``) or, when it is not JSON, as a string.  A
metalayer can only take a value of its own length (C-Blosc2 fixes the
header's length when the frame is made) and cannot be deleted; any other
name is a vlmetalayer, set or added."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import msgpack

from ..frame.edit import EditableFrame
from ..frame.journal import journal_path
from ..frame.read import open_frame
from .report import EXIT_OK, UsageError, emit

PREVIEW = 60                   # characters of a value shown in the listing


def run(args: argparse.Namespace) -> int:
    """List, or apply --set / --delete, then list.  An edit of the frame
    cut short (its journal is there) is undone first, and said so."""
    if args.set or args.delete or journal_path(Path(args.frame)).exists():
        with EditableFrame(args.frame) as f:
            if f.rolled_back:
                print(f"{args.frame}: an edit cut short was undone (the frame is as it was "
                      "before it)", file=sys.stderr)
            for name, text in args.set or ():
                value = msgpack.packb(_value(text))
                if name in f.metalayers:
                    f.update_metalayer(name, value)
                else:
                    f.set_vlmetalayer(name, value)
            for name in args.delete or ():
                if name in f.metalayers:
                    raise UsageError(f"{name} is a metalayer: C-Blosc2 cannot delete one "
                                     "(--set it to a value of the same length)")
                f.delete_vlmetalayer(name)
    with open_frame(args.frame) as f:
        listing = [_entry("metalayer", n, v) for n, v in f.metalayers.items()] + \
                  [_entry("vlmetalayer", n, v) for n, v in f.vlmetalayers.items()]
    if args.json:
        emit({"file": args.frame, "layers": listing})
        return EXIT_OK
    for e in listing:
        shown = e["value"] if e["msgpack"] else "0x" + e["hex"]
        shown = shown if len(shown) <= PREVIEW else shown[:PREVIEW - 3] + "..."
        print(f"{e['kind']} {e['name']}: {e['size']} bytes: {shown}")
    if not listing:
        print(f"{args.frame}: no metalayers or vlmetalayers", file=sys.stderr)
    return EXIT_OK


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _entry(kind: str, name: str, raw: bytes) -> dict:
    """A layer as listed: its value decoded from msgpack (as JSON text, bytes
    as their repr) when it is msgpack, and its bytes in hex."""
    try:
        value = msgpack.unpackb(raw, raw=False, strict_map_key=False)
        shown, ok = json.dumps(value, default=repr), True
    except (ValueError, msgpack.UnpackException, TypeError, RecursionError):
        shown, ok = None, False
    return {"kind": kind, "name": name, "size": len(raw), "msgpack": ok, "value": shown,
            "hex": bytes(raw).hex()}
