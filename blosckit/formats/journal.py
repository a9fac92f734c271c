"""The undo journal an edit in place writes beside a frame (blosckit's own
file, not a Blosc format; specs/frame.md, "Editing in place"): a magic
line, then records, each a region of one file as it was before the edit,
then a record whose name length is END."""
from __future__ import annotations

import construct as cs

from .layout import Layout

__all__ = ["MAGIC", "Record", "RECORD", "END"]

MAGIC = b"blosckit-journal 1\n"
END = 0xFFFF                    # the name length of the end mark (no name is that long)

Record = cs.Struct(
    "name_len" / cs.Int16ub * "bytes of the file's name (UTF-8), which follow the record; END "
                              "for the end mark",
    "old_size" / cs.Int64sb * "the file's size before the edit, -1 when it did not exist",
    "start" / cs.Int64sb * "where the region starts in the file",
    "length" / cs.Int64sb * "bytes of the region, which follow the name",
)
RECORD = Layout(Record, ">")
