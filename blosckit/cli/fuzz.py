"""``blosckit fuzz``: differential fuzzing of blosckit against C-Blosc2,
and every reader and tool of blosckit on each input under a memory bound
(the fuzz extra: hypothesis and python-blosc2)."""
from __future__ import annotations

import argparse
import sys
from importlib.util import find_spec
from pathlib import Path

# needs no extra: testing.fuzz imports hypothesis and blosc2 only where it runs them
from ..testing.fuzz import FuzzReport, fuzz
from .report import EXIT_OK, UsageError, emit

FUZZ_EXTRA = ("hypothesis", "blosc2")


def need_fuzz_extra() -> None:
    """UsageError unless the fuzz extra's packages are installed."""
    missing = [m for m in FUZZ_EXTRA if find_spec(m) is None]
    if missing:
        raise UsageError(f"this command needs the fuzz extra (pip install "
                         f"'blosckit[fuzz]'): {', '.join(missing)} not installed")


def run(args: argparse.Namespace) -> int:
    """Fuzz for ``--time`` seconds and report the counts."""
    need_fuzz_extra()
    out = Path(args.out) if args.out else None
    on_tty = sys.stderr.isatty()

    def progress(r: FuzzReport) -> None:
        if on_tty:
            print(f"\rfuzzing: {r.seconds:5.0f} s, {r.inputs} inputs, {r.agree} agree, "
                  f"{len(r.new_cases)} new", end="", file=sys.stderr, flush=True)
    report = fuzz(seconds=args.time, seed=args.seed, out=out, progress=progress)
    if on_tty:
        print(file=sys.stderr)
    if args.json:
        emit({"inputs": report.inputs, "agree": report.agree, "seconds": report.seconds,
              "disagreements": report.by_category, "slips": report.slips,
              "mutations": report.mutations, "read_by_all": report.read_by_all,
              "new_cases": report.new_cases})
    else:
        _print_report(report, args.seed, out)
    return EXIT_OK


def _print_report(report: FuzzReport, seed: int, out: Path | None) -> None:
    print(f"{report.inputs} inputs in {report.seconds:.0f} s (seed {seed}): "
          f"{report.agree} read alike by blosckit and C-Blosc2")
    for key, n in sorted(report.by_category.items()):
        print(f"  {n:6d}  {key}")
    print(f"named mutations applied: {sum(report.mutations.values())} "
          f"({len(report.mutations)} classes of finding)")
    if report.slips:
        print("blosckit's readers and tools slipped (each input under every reader, "
              "bounded memory):")
    for key, n in sorted(report.slips.items()):
        print(f"  {n:6d}  {key}")
    news = report.new_cases
    crashes = sum(n.startswith("c-crash") for n in news)
    slips = sum(n.startswith("slip-") for n in news)
    where = f" -> {out}" if out is not None and news else ""
    print(f"{len(news) - crashes - slips} new disagreement(s), {crashes} C-Blosc2 crash(es), "
          f"{slips} slip(s) written{where}")
