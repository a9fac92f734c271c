"""A progress line on stderr for long work (only display: nothing else
changes on a terminal)."""
from __future__ import annotations

import sys

PROGRESS_BYTES = 64 << 20         # inputs above this get a progress line on a terminal


class Progress:
    """A one-line progress report on stderr, shown only on a terminal and
    for large work (``total`` in ``unit``)."""

    def __init__(self, label: str, total: int, unit: str = "bytes", *,
                 threshold: int = PROGRESS_BYTES) -> None:
        self.on = sys.stderr.isatty() and total >= threshold
        self.label, self.total, self.unit, self.done = label, max(total, 1), unit, 0

    def advance(self, n: int) -> None:
        """``n`` more ``unit`` done."""
        self.done += n
        if self.on:
            pct = 100 * self.done // self.total
            print(f"\r{self.label}: {pct:3d}% ({self.done}/{self.total} {self.unit})",
                  end="", file=sys.stderr, flush=True)

    def status(self, text: str) -> None:
        """One line saying what is under way (work that reports no steps)."""
        if self.on:
            print(f"\r{text}", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        """Clear the line."""
        if self.on:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
