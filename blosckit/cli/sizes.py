"""Byte counts in words."""
from __future__ import annotations

_EXACT_BELOW = 10_000      # smaller counts read well enough as they are
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
_STEP = 1024


def size_text(n: int) -> str:
    """``n`` bytes, with a binary-prefixed figure beside large counts."""
    return f"{n} bytes" if n < _EXACT_BELOW else f"{n} bytes ({human(n)})"


def human(n: float) -> str:
    """``n`` bytes in the largest binary unit that keeps the figure >= 1."""
    for unit in _UNITS:
        if n < _STEP or unit == _UNITS[-1]:
            return f"{n:.1f} {unit}" if unit != _UNITS[0] else f"{int(n)} B"
        n /= _STEP
    return str(n)
