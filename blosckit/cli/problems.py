"""Validation problems in the command line's terms: the exit status they
make, a JSON object and a ``FILE:OFFSET: severity: path: message [rule]``
line each."""
from __future__ import annotations

from dataclasses import replace

from ..errors import Problem
from ..formats.rules import RULES
from .report import EXIT_CORRUPT, EXIT_OK, EXIT_UNSUPPORTED, emit


def has_errors(problems: list[Problem]) -> bool:
    """Any problem of severity error (the input is not valid)."""
    return any(p.severity == "error" for p in problems)


def unsupported(p: Problem) -> bool:
    """An error that says this build cannot decode a feature (exit 3), not
    that the input is malformed."""
    r = RULES.get(p.rule)
    return p.severity == "error" and r is not None and r.unsupported


def status(problems: list[Problem]) -> int:
    """0 valid, 1 malformed, 3 valid as far as this build can tell but using
    a feature it cannot decode."""
    if any(p.severity == "error" and not unsupported(p) for p in problems):
        return EXIT_CORRUPT
    return EXIT_UNSUPPORTED if any(map(unsupported, problems)) else EXIT_OK


def shifted(p: Problem, base: int) -> Problem:
    """``p`` of a structure read at byte ``base`` of the file, in file offsets."""
    return p if not base else replace(p, offset=p.offset + base)


def report(args, name: str, kind: str, problems: list[Problem], kind_text: str) -> int:
    """``validate``'s output for one input: a JSON object (``--json``) or a
    line per problem (``FILE: ok (KIND_TEXT)`` when none, unless quiet);
    returns the exit status."""
    if args.json:
        emit({"file": name, "kind": kind, "valid": not has_errors(problems),
              "problems": [problem_dict(name, p) for p in problems]})
    else:
        for p in problems:
            print(problem_line(name, p), flush=True)
        if not problems and not args.quiet:
            print(f"{name}: ok ({kind_text})", flush=True)
    return status(problems)


def problem_dict(name: str, p: Problem) -> dict:
    """``p`` of the input ``name`` as a JSON-able record."""
    return {"file": name, "location": p.location, "severity": p.severity, "offset": p.offset,
            "path": p.path, "message": p.message, "rule": p.rule, "unsupported": unsupported(p)}


def problem_line(name: str, p: Problem) -> str:
    """``p`` of the input ``name`` as ``FILE:OFFSET: severity: path: message
    [rule]``; ``FILE:LOCATION:OFFSET: ...`` for a chunk inside a container
    (LOCATION ``/group/ds[2,0]``, OFFSET in the file holding the chunk)."""
    severity = "unsupported" if unsupported(p) else p.severity
    where = f"{name}:{p.location}" if p.location else name
    return f"{where}:{p.offset}: {severity}: {p.path}: {p.message} [{p.rule}]"
