"""Exit codes and failures: one line per failure on stderr, a JSON object
too with --json, and the worst status over several inputs."""
from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Callable, Iterable

from ..errors import FormatError, UnsupportedError

EXIT_OK, EXIT_CORRUPT, EXIT_USAGE, EXIT_UNSUPPORTED = 0, 1, 2, 3

# Which status wins over several inputs: usage errors, then corrupt input,
# then features this build lacks.
_RANK = {EXIT_OK: 0, EXIT_UNSUPPORTED: 1, EXIT_CORRUPT: 2, EXIT_USAGE: 3}


class UsageError(Exception):
    """A bad parameter found after argument parsing (exit 2)."""


class InputError(Exception):
    """An input that holds nothing to read, though not malformed (exit 1)."""


def emit(obj: dict) -> None:
    """One JSON object as one line of standard output."""
    print(json.dumps(obj), flush=True)


def failure(name: str, e: Exception, base: int = 0) -> tuple[int, dict]:
    """Exit status and a JSON-able record of an exception met while
    handling ``name`` (``base``: where the structure starts in the file,
    in bytes)."""
    if isinstance(e, FormatError):
        severity = "unsupported" if isinstance(e, UnsupportedError) else "error"
        status = EXIT_UNSUPPORTED if severity == "unsupported" else EXIT_CORRUPT
        return status, {"file": name, "severity": severity, "offset": e.offset + base,
                        "path": e.path, "message": e.message, "rule": e.rule}
    if isinstance(e, ImportError):       # an optional extra this input needs
        return EXIT_UNSUPPORTED, {"file": name, "severity": "unsupported", "message": str(e)}
    if isinstance(e, InputError):
        return EXIT_CORRUPT, {"file": name, "severity": "error", "message": str(e)}
    if isinstance(e, (UsageError, ValueError)):
        # FormatError is handled above: a plain ValueError is a bad parameter
        return EXIT_USAGE, {"file": name, "severity": "usage", "message": str(e)}
    if isinstance(e, OSError):
        what = e.strerror or type(e).__name__
        where = str(e.filename) if e.filename is not None else name
        return EXIT_CORRUPT, {"file": where, "severity": "error",
                              "message": f"cannot read or write: {what}"}
    if isinstance(e, MemoryError):
        return EXIT_CORRUPT, {"file": name, "severity": "error",
                              "message": "out of memory (input too large?)"}
    return EXIT_CORRUPT, {"file": name, "severity": "error",
                          "message": f"unexpected {type(e).__name__}: {e} "
                                     "(run with --traceback for details)"}


def failure_line(rec: dict) -> str:
    """A failure record as ``FILE:OFFSET: severity: path: message [rule]``."""
    if rec["severity"] == "usage":
        return f"usage error: {rec['message']}"
    if "offset" not in rec:
        return f"{rec['file']}: {rec['severity']}: {rec['message']}"
    rule = f" [{rec['rule']}]" if rec.get("rule") else ""
    return (f"{rec['file']}:{rec['offset']}: {rec['severity']}: {rec['path']}: "
            f"{rec['message']}{rule}")


def guarded(name: str, fn: Callable[[], int], args: argparse.Namespace) -> int:
    """Run ``fn`` for the input ``name``; a failure becomes one stderr line
    (and a JSON object with --json) and an exit status."""
    try:
        return fn()
    except BrokenPipeError:          # output piped into head & co.
        sys.stderr.close()
        return EXIT_OK
    except Exception as e:           # noqa: BLE001 -- every failure gets one line
        if args.traceback:
            raise
        status, rec = failure(name, e)
        print(f"blosckit: {failure_line(rec)}", file=sys.stderr, flush=True)
        if getattr(args, "json", False):
            emit({"error": rec})
        return status


def worse(a: int, b: int) -> int:
    """The exit status that wins of ``a`` and ``b``."""
    return a if _RANK[a] >= _RANK[b] else b


def each(args: argparse.Namespace, names: Iterable[str], fn: Callable[[str], int]) -> int:
    """``fn`` for every input in turn; the exit status is the worst one."""
    worst = EXIT_OK
    for name in names:
        worst = worse(worst, guarded(name, functools.partial(fn, name), args))
    return worst
