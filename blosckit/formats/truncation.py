"""The input ends before the structure it holds does: one rule for every
structure (specs/chunk.md#rules-input).

A truncation is the input's fault (a file cut short, a blob taken at the
wrong length), not a field's, so it has its own rule: reported at the byte
the input ends at, under the path of the structure or field the input ends
inside, saying what makes that structure longer.  The walkers (the chunk
and frame readers, ``formats.parse``) build a :class:`Truncation` view
where they know how long the structure is meant to be and run the rule.
A structure that overruns the space its container gives it (a chunk's
cbytes past the chunks section of a whole frame, an index that does not fit
before the trailer) is the container's rule, not this one: the input did
not end there.
"""
from __future__ import annotations

from typing import NamedTuple

from .rules import rule

__all__ = ["Truncation", "INPUT", "TRUNCATION_RULES", "input_holds_structure", "needed"]

# The rule's own path: a walker stops reading once it is marked bad.
INPUT = "input"


class Truncation(NamedTuple):
    """What the input must hold: ``n`` bytes are there, the structure being
    read ends at byte ``end`` (as its layout or its own size field says);
    ``path`` is the structure (or field) at byte ``n``; ``why`` says in
    words what makes the structure that long ("" when the path says it)."""
    n: int
    end: int
    path: str
    why: str


@rule("T-truncated", "error", INPUT, "chunk.md#rules-input",
      "the input holds every byte of the structure it starts, as its layout and its "
      "own size fields say")
def input_holds_structure(v, src, sink):
    if v.end > v.n:
        why = f" ({v.why})" if v.why else ""
        sink(f"the input ends at byte {v.n}, inside {v.path}{why}", v.n, v.path)


TRUNCATION_RULES = (input_holds_structure,)


def needed(want: int, got: int) -> str:
    """``"4 bytes needed, 2 there"``."""
    return f"{want} byte{'s' * (want != 1)} needed, {got} there"
