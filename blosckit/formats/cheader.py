"""The C header of the format facts, generated from the declarations.

The native code (``blosckit/native/src``) reads chunks and frame indexes
with the same layouts as the Python readers: every offset, width, bit shift
and mask, id and limit it uses comes from ``blosckit_layout.h``, which
:func:`render` writes from the layouts and tables of this package.  The file
is committed (the build compiles C without importing the package);
``tests/test_cheader.py`` fails while it differs from what :func:`render`
gives.  Refresh it with::

    python -m blosckit.formats.cheader          # write it
    python -m blosckit.formats.cheader --check  # exit 1 when it is stale

Names (all ``BK_``, upper case; a field path's dots become underscores):

- a layout ``P`` (``BK_CHUNK_HEADER``, ``BK_CHUNK_EXTENDED``...): ``P_OFS``
  where it starts in its parent, ``P_SIZE``, ``P_END`` (their sum),
  ``P_LITTLE_ENDIAN``;
- its integer field ``F``: ``P_F_OFS`` (in the parent's terms, as
  ``Layout.offset``), ``P_F_SIZE`` in bytes, ``P_F_SIGNED``; an array also
  ``P_F_COUNT`` (items) and ``P_F_ITEM_MASK`` (one item's bits); a bit field
  ``P_F_SHIFT``, ``P_F_WIDTH``, ``P_F_MASK`` (the value's mask, before the
  shift) and ``P_F_BITS`` (the mask in place);
- an id table of :mod:`.enums` (``VERSIONS`` -> ``BK_VERSION_``,
  ``COMPFORMATS`` -> ``BK_COMPFORMAT_``, ``CODECS`` -> ``BK_CODEC_``,
  ``FILTERS`` -> ``BK_FILTER_``, ``SPLITMODES`` -> ``BK_SPLITMODE_``,
  ``SPECIALS`` -> ``BK_SPECIAL_``): one name per id, the id's name in upper
  case (``BK_FILTER_BYTEDELTA_BUGGY``); a codec's stored format
  ``BK_CODEC_<NAME>_COMPFORMAT``;
- any other constant of a module: ``BK_<MODULE>_<NAME>`` with the Python
  name (``BK_CHUNK_MAX_BLOCKSIZE``, ``BK_FRAME_LEN_OFFSET``) or, for a value
  derived here, a name in the same terms (``BK_CHUNK_TOKEN_MIN_VERSION``);
  a group of bits in place ends in ``_BITS`` (``BK_CHUNK_FLAGS_EXTENDED_BITS``,
  ``BK_FRAME_SPECIAL_OFFSET_ZEROS_BITS``: a whole index entry's 64 bits).

Values are never negative (a negative fact is stated by its magnitude:
``BK_CHUNK_MAX_RUN_BYTE``), masks and bits are in hex.

Every value is an integer literal on a ``#define`` line of its own, which is
also what cffi's cdef accepts: ``build_native.py`` hands those lines to cffi,
so Python reads them as ``native._lib.BK_...`` (the native layer does not
import this package).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Iterator

from . import chunk, enums, frame
from .layout import Field, Layout

HEADER_PATH = Path(__file__).resolve().parents[1] / "native" / "src" / "blosckit_layout.h"
COMMAND = "python -m blosckit.formats.cheader"

# The layouts the C code reads, with their prefixes.
LAYOUTS: tuple[tuple[str, Layout], ...] = (
    ("BK_CHUNK_HEADER", chunk.HEADER),
    ("BK_CHUNK_EXTENDED", chunk.EXTENDED),
    ("BK_CHUNK_EXTENDED_ALPHA", chunk.EXTENDED_ALPHA),
    ("BK_FRAME_SPECIAL_OFFSET", frame.SPECIAL_OFFSET),
)

# The id tables, with their prefixes.
ID_TABLES: tuple[tuple[str, dict], ...] = (
    ("BK_VERSION", enums.VERSIONS),
    ("BK_COMPFORMAT", enums.COMPFORMATS),
    ("BK_CODEC", enums.CODECS),
    ("BK_FILTER", enums.FILTERS),
    ("BK_SPLITMODE", enums.SPLITMODES),
    ("BK_SPECIAL", enums.SPECIALS),
)


def c_name(*parts: str) -> str:
    """``parts`` joined into one C name: upper case, every run of characters
    other than letters and digits one underscore."""
    return re.sub(r"[^A-Z0-9]+", "_", "_".join(parts).upper()).strip("_")


def _field_defines(prefix: str, lay: Layout, f: Field) -> Iterator[tuple[str, int]]:
    name = c_name(prefix, f.name)
    yield f"{name}_OFS", lay.offset(f.name)
    if f.width:
        yield f"{name}_SHIFT", f.shift
        yield f"{name}_WIDTH", f.width
        yield f"{name}_MASK", f.mask
        yield f"{name}_BITS", f.bits
        return
    yield f"{name}_SIZE", f.size
    if f.code[-1] == "s":            # bytes: reserved or constant, no integer value
        return
    yield f"{name}_SIGNED", int(f.signed)
    if f.count > 1:
        yield f"{name}_COUNT", f.count
        yield f"{name}_ITEM_MASK", (1 << 8 * f.size // f.count) - 1


def layout_defines(prefix: str, lay: Layout) -> Iterator[tuple[str, int]]:
    """Where the structure ``lay`` sits and how big it is, then each of its
    fields (see the module docstring for the names)."""
    yield f"{prefix}_OFS", lay.base
    yield f"{prefix}_SIZE", lay.size
    yield f"{prefix}_END", lay.base + lay.size
    yield f"{prefix}_LITTLE_ENDIAN", int(lay.order == "<")
    for f in lay.fields.values():
        yield from _field_defines(prefix, lay, f)


def id_defines(prefix: str, table: dict) -> Iterator[tuple[str, int]]:
    """One name per id of ``table`` (``None``, the regular kind among the
    specials, is ``NONE``)."""
    for code, name in table.items():
        yield c_name(prefix, name or "none"), code


def _token_min_version() -> int:
    """The first chunk format version whose run streams carry a token byte,
    read from the ``Stream`` declaration itself (parsed for each version)."""
    run = chunk.FAST_CSIZE.pack(-1) + bytes(chunk.LEN_TOKEN)
    has = {v: chunk.Stream.parse(run, version=v).token is not None for v in enums.VERSIONS}
    first = min(v for v, yes in has.items() if yes)
    assert all(yes == (v >= first) for v, yes in has.items()), has
    return first


def _alpha_version() -> int:
    """The chunk format version that has the alpha extended header."""
    (version,) = (v for v, lay in chunk.EXTENDED_LAYOUTS.items() if lay is chunk.EXTENDED_ALPHA)
    return version


def derived_defines() -> Iterator[tuple[str, int]]:
    """The constants and derived values the C code and its rules use."""
    for code, fmt in enums.CODEC_FORMAT.items():
        yield c_name("BK_CODEC", enums.CODECS[code], "COMPFORMAT"), fmt
    yield "BK_FIRST_UDCODEC", enums.FIRST_UDCODEC
    # chunks: the header's flag groups, the body's field widths, the limits
    yield "BK_CHUNK_FLAGS_EXTENDED_BITS", chunk.FLAGS_EXTENDED
    yield "BK_CHUNK_EXTENDED_ALPHA_VERSION", _alpha_version()
    yield "BK_CHUNK_LEN_BSTART", chunk.LEN_BSTART
    yield "BK_CHUNK_LEN_DSIZE", chunk.FAST_DSIZE.size
    yield "BK_CHUNK_LEN_CSIZE", chunk.LEN_CSIZE
    yield "BK_CHUNK_LEN_TOKEN", chunk.LEN_TOKEN
    yield "BK_CHUNK_TOKEN_RUN", chunk.TOKEN_RUN
    yield "BK_CHUNK_TOKEN_MIN_VERSION", _token_min_version()
    yield "BK_CHUNK_MAX_RUN_BYTE", chunk.MAX_RUN_BYTE
    yield "BK_CHUNK_MAX_NBYTES", chunk.MAX_NBYTES
    yield "BK_CHUNK_MAX_BLOCKSIZE", chunk.MAX_BLOCKSIZE
    yield "BK_CHUNK_MAX_DICTSIZE", chunk.MAX_DICTSIZE
    # frames: the offsets index's entries and the special ones among them
    yield "BK_FRAME_LEN_OFFSET", frame.LEN_OFFSET
    top = frame.SPECIAL_OFFSET["top"]
    # the bit that makes an entry special, in the entry's 64 bits
    yield "BK_FRAME_OFFSET_SPECIAL_BITS", frame.SPECIAL_OFFSET["top.special"].bits << 8 * top.offset
    for kind in frame.SPECIAL_KIND_BITS:      # an entry's 64 bits, as unsigned
        yield (c_name("BK_FRAME_SPECIAL_OFFSET", kind, "BITS"),
               frame.special_offset(kind) % (1 << 8 * frame.LEN_OFFSET))


def sections() -> list[tuple[str, list[tuple[str, int]]]]:
    """The header's groups of ``(name, value)``, each with a title."""
    out = [(f"layout {_python_name(lay)}", list(layout_defines(prefix, lay)))
           for prefix, lay in LAYOUTS]
    out += [(f"ids: {_python_name(table)}", list(id_defines(prefix, table)))
            for prefix, table in ID_TABLES]
    out.append(("constants and derived values", list(derived_defines())))
    return out


def _python_name(obj: object) -> str:
    """``module.NAME`` of a layout or table (for the header's comments)."""
    return next(f"{mod.__name__.rsplit('.', 1)[1]}.{name}" for mod in (chunk, frame, enums)
                for name, value in vars(mod).items() if value is obj and name.isupper())


def defines() -> list[tuple[str, int]]:
    """Every ``(name, value)`` of the header, in its order; a name is never
    defined twice."""
    out = [d for _, group in sections() for d in group]
    names = [n for n, _ in out]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
    return out


def c_literal(name: str, value: int) -> str:
    """``value`` as a C integer literal that cffi's cdef reads too: masks
    and bits in hex, values beyond an int with their suffix.  Never
    negative: C needs ``(-1)`` in parentheses, which the cdef refuses."""
    if value < 0:
        raise ValueError(f"{name}: a negative value ({value}) cannot be a C and cdef literal")
    text = f"{value:#x}" if name.endswith(("_MASK", "_BITS")) else str(value)
    return text + "ULL" if value > 0x7FFFFFFF else text


_BANNER = f"""\
/* blosckit_layout.h: the format facts of the Blosc chunks and frames, for
 * the native code.  GENERATED from blosckit/formats/ (layout.py, chunk.py,
 * frame.py, enums.py) by blosckit/formats/cheader.py: do not edit.  After
 * changing a declaration, refresh it with
 *
 *     {COMMAND}
 *
 * (tests/test_cheader.py fails while it is stale).  The names are explained
 * in cheader.py's docstring.  Every line between the guards is a #define of
 * an integer literal: build_native.py hands them to cffi's cdef, so Python
 * reads them as blosckit.native._lib.BK_...
 */
#ifndef BLOSCKIT_LAYOUT_H
#define BLOSCKIT_LAYOUT_H
"""


def render() -> str:
    """The text of ``blosckit_layout.h``."""
    defines()                        # every name once
    lines = [_BANNER]
    for title, group in sections():
        lines.append(f"/* {title} */")
        lines += [f"#define {name} {c_literal(name, value)}" for name, value in group]
        lines.append("")
    lines += ["#endif", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Write the header (or, with ``--check``, compare it); the exit status."""
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when the committed header differs from the declarations")
    ap.add_argument("--path", type=Path, default=HEADER_PATH, help="the header file")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        current = args.path.read_text(encoding="utf-8") if args.path.exists() else ""
        if current != text:
            print(f"{args.path} is stale: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    args.path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
