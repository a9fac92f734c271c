"""``blosckit salvage``: a valid frame rebuilt from a damaged one, and what
was recovered, chunk by chunk."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import FormatError
from ..formats.frame import SFRAME_INDEX
from ..tools.salvage import SalvageReport, salvage_pieces
from .output import check_output, write_output
from .report import EXIT_OK, emit
from .source import is_sframe, load_file


def run(args: argparse.Namespace) -> int:
    """Rebuild BROKEN into OUT and report (text or one JSON object)."""
    check_output(args.output, [args.broken], args.force)
    # a sparse frame directory is salvaged even when its index file is gone
    path = Path(args.broken)
    if path.is_dir() and (is_sframe(path) or any(path.glob("*.chunk"))):
        target: Path | memoryview = path
    else:
        target = load_file(args.broken, "salvage").data
    pieces, report = salvage_pieces(target)
    if report.nothing_found and isinstance(target, Path) and not is_sframe(target):
        raise FormatError(f"a directory without {SFRAME_INDEX} (not a sparse frame), and no "
                          "chunk file in it decodes: nothing to rebuild", 0, "frame")
    if report.nothing_found:
        at = report.damage[0] if report.damage else None
        raise FormatError("no intact chunk found: nothing to rebuild",
                          at.offset if at else 0, "frame", rule=at.rule if at else None)
    write_output(args.output, pieces)
    if args.json:
        emit(_report_dict(args, report))
    else:
        _print_report(args, report)
    return EXIT_OK


def _report_dict(args: argparse.Namespace, report: SalvageReport) -> dict:
    return {"file": args.broken, "output": args.output, "intact": report.intact,
            "chunksize": report.chunksize,
            "recovered": [vars(r) for r in report.recovered],
            "dropped": [vars(d) for d in report.dropped],
            "lost": [{"index": i, "region": [list(r) for r in region]}
                     for i, region in report.lost_regions],
            "damage": [vars(d) for d in report.damage], "notes": report.notes}


def _print_report(args: argparse.Namespace, report: SalvageReport) -> None:
    """One line per damage, recovered chunk, dropped part and note; the
    outcome on stderr."""
    for d in report.damage:
        print(f"{args.broken}:{d.offset}: damage: {d.path}: {d.message} [{d.rule}]")
    for r in report.recovered:
        where = f"offset {r.offset}" if r.offset is not None else \
            f"file {r.file}" if r.file is not None else "the index (special chunk)"
        was = f", chunk {r.source_index} of the index" if r.source_index is not None else ""
        print(f"chunk {r.index}: {r.nbytes} bytes from {where}, found by {r.found_by}{was}")
    for x in report.dropped:
        where = f"offset {x.offset}" if x.offset is not None else "unknown offset"
        size = f" ({x.length} bytes)" if x.length is not None else ""
        name = f" {x.name!r}" if x.name is not None else ""
        print(f"dropped {x.what}{name} at {where}{size}: {x.reason}")
    for i, region in report.lost_regions:
        span = ", ".join(f"{a}:{b}" for a, b in region)
        print(f"lost chunk {i}: zeros stand in its place ([{span}])")
    for note in report.notes:
        print(f"note: {note}")
    print(f"{args.broken}: {'intact' if report.intact else 'damaged'}; "
          f"{len(report.recovered)} chunk(s) recovered, {len(report.lost_regions)} lost "
          f"(zeros in their places) -> {args.output}", file=sys.stderr)
