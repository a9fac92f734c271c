"""``blosckit corpus``: a seed corpus of valid and edge-case blobs with a
manifest (the fuzz extra)."""
from __future__ import annotations

import argparse
from pathlib import Path

# needs no extra: testing.fuzz imports hypothesis and blosc2 only where it runs them
from ..testing.fuzz import write_corpus
from .fuzz import need_fuzz_extra
from .report import EXIT_OK


def run(args: argparse.Namespace) -> int:
    """Write ``--count`` blobs and manifest.json under OUT; say how many of each kind."""
    need_fuzz_extra()
    entries = write_corpus(Path(args.out), args.count, seed=args.seed)
    kinds: dict[str, int] = {}
    for e in entries:
        key = f"{e['kind']}, {'decode' if 'decode' in e['expect'] else 'reject'}"
        kinds[key] = kinds.get(key, 0) + 1
    print(f"{len(entries)} blobs and manifest.json -> {args.out}: " +
          ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
    return EXIT_OK
