"""The forked children of ``tests/forked.py`` behave as ``python -c`` does
(the tests that ask python-blosc2 about damaged blobs rely on it)."""
from __future__ import annotations

import signal
import subprocess

import pytest

import forked


def test_argv_stdin_stdout_stderr_and_status():
    code = ("import sys\nprint(sys.argv[1:], sys.stdin.read())\n"
            "print('to stderr', file=sys.stderr)\nsys.exit(3)\n")
    r = forked.run(code, "a", "b c", input="in", text=True)
    assert (r.returncode, r.stdout, r.stderr) == (3, "['a', 'b c'] in\n", "to stderr\n")
    assert r.args[1:] == ["-c", code, "a", "b c"]


def test_an_exception_is_status_1_with_its_traceback_and_bytes_stay_bytes():
    r = forked.run("import sys\nsys.stdout.buffer.write(bytes([0, 255]))\nraise KeyError('k')",
                   input=b"\x00")
    assert r.returncode == 1 and r.stdout == b"\x00\xff"
    assert b"Traceback" in r.stderr and b"KeyError: 'k'" in r.stderr
    with pytest.raises(subprocess.CalledProcessError):
        forked.run("raise SystemExit('why')", check=True)


def test_a_crash_is_minus_the_signal_and_the_next_call_still_runs():
    r = forked.run("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
    assert r.returncode == -signal.SIGSEGV
    assert forked.run("import blosc2, sys\nsys.exit(7)").returncode == 7


def test_a_hang_is_killed_at_the_timeout():
    with pytest.raises(subprocess.TimeoutExpired):
        forked.run("import time\ntime.sleep(60)", timeout=0.5)
    assert forked.run("print('after')", text=True).stdout == "after\n"


def test_the_child_runs_in_the_callers_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert forked.run("import os\nprint(os.getcwd())", text=True).stdout.strip() == \
        str(tmp_path)
