"""The ``blosckit`` command line.

Exit codes: 0 fine, 1 corrupt or unreadable input (or validation errors), 2
usage errors (bad parameters), 3 valid input that uses a feature this build
cannot decode.  Bad input gives one clear line on stderr, never a traceback
(``--traceback``, before or after the command, shows it); with ``--json``
the failure is also a JSON object on stdout.  Commands over several files go
on after a bad one, name it, and exit with the worst status.  ``-`` reads
standard input (as an output: standard output).

Modules: :mod:`.parser` (the arguments), one per command (:mod:`.info`,
:mod:`.inspect`, :mod:`.validate`, :mod:`.scan`, :mod:`.decompress`,
:mod:`.compress`, :mod:`.salvage`, :mod:`.fuzz`, :mod:`.corpus`, :mod:`.append`,
:mod:`.meta`), and what
they share: :mod:`.source` (inputs), :mod:`.report` (exit codes, failure
lines, JSON lines), :mod:`.problems`, :mod:`.output`, :mod:`.progress`.
"""
from __future__ import annotations

import argparse
import signal
import sys
import threading

from .parser import build_parser
from .report import EXIT_USAGE, guarded

__all__ = ["build_parser", "main"]

PROGRAM = "blosckit"


def main(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv`` (default: ``sys.argv[1:]``); returns
    the exit status."""
    _signals()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.cmd is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return guarded(_named_input(args), lambda: args.fn(args), args)


def _signals() -> None:
    """Die quietly of SIGPIPE, as other command-line tools do (``blosckit
    info *.b2nd | head -1``); turn SIGTERM into SystemExit, so that a killed
    command still removes its temporary output (see :mod:`.output`)."""
    if threading.current_thread() is not threading.main_thread():
        return                        # main() called from a thread: not ours to set
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, _terminated)


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _named_input(args: argparse.Namespace) -> str:
    """Whom a failure outside the per-file loop is told against: the one
    input of a single-input command, else the program."""
    if isinstance(getattr(args, "frame", None), str):  # append, meta: the frame edited
        return args.frame
    if getattr(args, "files", None) is not None:
        return PROGRAM
    return getattr(args, "input", None) or getattr(args, "broken", None) or PROGRAM
