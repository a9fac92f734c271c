"""The forked ``python -c`` runs of ``tests/cli_runner.py`` behave as the
real command does (the tests that ask python-blosc2 about damaged blobs
rely on it)."""
from __future__ import annotations

import signal
import subprocess
import sys

import pytest

import cli_runner


def test_argv_stdin_stdout_stderr_and_status():
    code = ("import sys\nprint(sys.argv[1:], sys.stdin.read())\n"
            "print('to stderr', file=sys.stderr)\nsys.exit(3)\n")
    r = cli_runner.python(code, "a", "b c", input="in", text=True)
    assert (r.returncode, r.stdout, r.stderr) == (3, "['a', 'b c'] in\n", "to stderr\n")
    assert r.args == [sys.executable, "-c", code, "a", "b c"]
    real = subprocess.run(r.args, input="in", capture_output=True, text=True)
    assert (real.returncode, real.stdout, real.stderr) == (r.returncode, r.stdout, r.stderr)


def test_an_exception_is_status_1_with_its_traceback_and_bytes_stay_bytes():
    r = cli_runner.python("import sys\nsys.stdout.buffer.write(bytes([0, 255]))\n"
                          "raise KeyError('k')", input=b"\x00")
    assert r.returncode == 1 and r.stdout == b"\x00\xff"
    assert b"Traceback" in r.stderr and b"KeyError: 'k'" in r.stderr
    with pytest.raises(subprocess.CalledProcessError):
        cli_runner.python("raise SystemExit('why')", check=True)


def test_a_crash_is_minus_the_signal_and_the_next_run_still_runs():
    r = cli_runner.python("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
    assert r.returncode == -signal.SIGSEGV
    assert cli_runner.python("import blosc2, sys\nsys.exit(7)").returncode == 7


def test_a_hang_is_killed_at_the_timeout():
    with pytest.raises(subprocess.TimeoutExpired):
        cli_runner.python("import time\ntime.sleep(60)", timeout=0.5)
    assert cli_runner.python("print('after')", text=True).stdout == "after\n"


def test_the_run_is_in_the_callers_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli_runner.python("import os\nprint(os.getcwd())", text=True).stdout.strip() == \
        str(tmp_path)


def test_the_import_path_starts_as_python_c_starts_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = "import sys\nprint(repr(sys.path[0]))"
    real = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert real.returncode == 0
    assert cli_runner.python(code, text=True).stdout == real.stdout
