"""One rule set, two modes.

A rule is a small function ``check(view, src, sink)`` declared beside the
structure it checks (``view`` holds the fields read so far, ``src`` is the
input buffer) (see ``formats/chunk.py``) and registered here with its
id, severity, the field it checks and its anchor in ``specs/``.  It reports
each problem it finds by calling ``sink(message)`` (offset and path default
to the rule's field, taken from the declaration).  The reader passes a
:class:`RaiseFirst` sink, which raises at the first error; the validator a
:class:`Collect` sink, which keeps every :class:`Problem`.  One body, never
two: every id has its function, and the walkers (the chunk and frame
readers, the validator, the inspector, salvage) call it on a view of what
they read, so that each tool reports a fault with the same id, offset and
path (a test walks the code outside ``formats/`` for rules reported by hand).

Ids reuse C-Blosc2's own validation rule ids where C-Blosc2 makes the same
check (H1.., D1.., B1..); ``T-`` ids are checks blosckit adds.  A test
compares this registry with ``specs/`` both ways.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn

from ..errors import FormatError, Problem, UnsupportedError
from . import parse

__all__ = ["Rule", "RULES", "rule", "RaiseFirst", "Collect", "fail", "explain"]

Check = Callable[[Any, Any, "Sink"], None]


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: str                 # "error" | "warning"
    anchor: str                   # "<spec file>#<anchor>"
    path: str                     # the field the rule is about
    text: str                     # what must hold, one line
    unsupported: bool = False     # broken by valid input this build cannot decode
    needs: tuple[str, ...] = ()   # fields whose errors make this rule meaningless
    check: Check | None = field(default=None, compare=False)


RULES: dict[str, Rule] = {}
OFFSETS: dict[str, int] = {}      # field path -> offset, filled by the declarations


def _register(r: Rule) -> Rule:
    assert r.id not in RULES, f"rule {r.id} declared twice"
    assert r.severity in ("error", "warning"), r.severity
    RULES[r.id] = r
    return r


def rule(id: str, severity: str, path: str, anchor: str, text: str, *,
         unsupported: bool = False, needs: tuple[str, ...] = ()) -> Callable[[Check], Rule]:
    """Decorator: register the check function as rule ``id`` and return the Rule."""
    def deco(fn: Check) -> Rule:
        return _register(Rule(id, severity, anchor, path, text, unsupported, needs, fn))
    return deco


_NONE_BAD: frozenset[str] = frozenset()


class Sink:
    """Where rules report.  ``current`` is the rule being run; ``bad`` the
    field paths with an error so far (rules that need them are skipped)."""
    __slots__ = ("current", "bad", "errors")

    def __init__(self) -> None:
        self.current: Rule | None = None
        self.bad: set[str] | frozenset[str] = set()
        self.errors = 0           # errors reported so far (walkers compare counts)

    def __call__(self, message: str, offset: int | None = None, path: str | None = None,
                 *, rule: Rule | None = None) -> None:
        r = rule if rule is not None else self.current
        assert r is not None
        p = r.path if path is None else path
        if offset is None:
            offset = OFFSETS[p]
        self.add(r, offset, p, message)

    def add(self, r: Rule, offset: int, path: str, message: str) -> None:
        raise NotImplementedError

    def ok(self, *paths: str) -> bool:
        """No error so far on any of ``paths``."""
        return not (self.bad and any(p in self.bad for p in paths))

    def run(self, rules: tuple[Rule, ...], view: Any, src: Any) -> None:
        """Run ``rules`` in order on ``view`` (read from ``src``), skipping
        those whose needed fields already have an error."""
        for r in rules:
            if self.bad and not self.ok(*r.needs):
                continue
            self.current = r
            r.check(view, src, self)    # type: ignore[misc]


class RaiseFirst(Sink):
    """The reader's sink: the first error raises (warnings are not the
    reader's business)."""
    __slots__ = ()

    def __init__(self) -> None:
        # nothing is ever marked bad here: no set of its own (readers make
        # one sink per structure, on their hot paths)
        self.current = None
        self.bad = _NONE_BAD
        self.errors = 0

    def add(self, r: Rule, offset: int, path: str, message: str) -> None:
        if r.severity == "error":
            fail(r, offset, path, message)

    def run(self, rules: tuple[Rule, ...], view: Any, src: Any) -> None:
        # nothing is ever marked bad here (the first error raises), so the
        # loop skips the gating: this is the reader's hot path
        for r in rules:
            self.current = r
            r.check(view, src, self)    # type: ignore[misc]


class Collect(Sink):
    """The validator's sink: every problem, in the order found."""
    __slots__ = ("problems",)

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[Problem] = []

    def add(self, r: Rule, offset: int, path: str, message: str) -> None:
        self.problems.append(Problem(r.severity, offset, path, message, r.id))
        if r.severity == "error":
            self.errors += 1
            self.bad.add(r.path)
            self.bad.add(path)

    def error(self, e: FormatError) -> None:
        """Record the error a reader raised (its rule ran into a RaiseFirst sink)."""
        self.problems.append(Problem("error", e.offset, e.path, e.message, e.rule or "?"))
        self.errors += 1
        self.bad.add(e.path)


def fail(r: Rule | str, offset: int, path: str | None, message: str) -> NoReturn:
    """Raise the error for a broken rule (UnsupportedError for unsupported ones)."""
    if isinstance(r, str):
        r = RULES[r]
    cls = UnsupportedError if r.unsupported else FormatError
    raise cls(message, offset, r.path if path is None else path, rule=r.id)


def explain(con, buf, offset: int, path: str, sink: Sink, *, bound: str | None = None,
            **context: Any) -> bool:
    """Report to ``sink``, as its current rule, why the declaration ``con``
    does not parse at ``offset`` of ``buf`` (construct names the field and
    its offset).  Bytes that run out are the input's truncation (its own
    rule) when ``buf`` ends where the input does, else the current rule's,
    at the end of the part ``bound`` names (see :func:`parse`).  For rules
    whose fast reader refused the bytes.  False when construct parses them
    after all (the caller then reports the disagreement itself)."""
    assert sink.current is not None
    try:
        parse(con, buf, offset, path, rule=sink.current.id, bound=bound, **context)
    except FormatError as e:
        sink(e.message, e.offset, e.path, rule=RULES[e.rule or sink.current.id])
        return True
    return False
