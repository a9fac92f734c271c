"""argparse types of the command line's parameters."""
from __future__ import annotations

import argparse
from typing import Callable

from ..formats import enums

FILTER_CHOICES = ("shuffle", "bitshuffle", "delta", "trunc_prec", "bytedelta", "nofilter")


def count(lo: int, hi: int | None = None) -> Callable[[str], int]:
    """An integer in lo..hi (any base Python reads: 0x10, 0o20)."""
    def parse(text: str) -> int:
        try:
            n = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if n < lo or (hi is not None and n > hi):
            upper = "" if hi is None else f"..{hi}"
            raise argparse.ArgumentTypeError(f"{n} is outside {lo}{upper}")
        return n
    return parse


def filters(text: str) -> tuple:
    """``shuffle,trunc_prec:20`` -> ("shuffle", ("trunc_prec", 20))."""
    out: list = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        name, sep, meta = item.partition(":")
        if name not in enums.FILTERS.values():
            raise argparse.ArgumentTypeError(
                f"unknown filter {name!r} (choose from {', '.join(FILTER_CHOICES)})")
        if not sep:
            out.append(name)
            continue
        try:
            out.append((name, int(meta, 0)))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"filter {name!r}: meta {meta!r} is not an integer") from None
    return tuple(out)


def shape(text: str) -> tuple[int, ...]:
    """``50,40`` -> (50, 40): extents of at least 1."""
    try:
        out = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: comma-separated integers") from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: extents of at least 1")
    return out
