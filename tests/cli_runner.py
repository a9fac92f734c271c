"""``python -m blosckit ARGS`` for the command-line tests, and ``python -c
CODE ARGS`` for the tests that ask python-blosc2 about a blob in a child of
its own (damaged blobs may crash C-Blosc2), without paying the
interpreter's start-up and the imports on every run.

A server process (this file, run as a script) imports blosckit once; for
each run it forks a child that puts the run's files on file descriptors 0,
1 and 2, changes to the caller's directory and runs the ``blosckit``
package's ``__main__`` as ``python -m blosckit`` does.  So each run is still
a process of its own, with its own exit status, standard streams and
nothing left from earlier runs; what it skips is about 0.3 s of start-up.
Runs may overlap (the server does not wait for one child before forking
the next).  ``tests/test_cli.py`` keeps runs of the real ``python -m
blosckit`` and ``blosckit`` commands.  The ``python -c`` runs have a server
of their own (``--python-blosc2``), which has imported python-blosc2 and
NumPy instead of blosckit; not for children that must be fresh in other
ways (memory limits: a child inherits the server's mappings; import order).

Protocol: one JSON request per line on the server's stdin ``{"id", "argv",
"code", "cwd", "stdin", "stdout", "stderr", "timeout"}`` (file paths; stdin
may be null; code null for a ``-m blosckit`` run), one JSON reply per line
on its stdout ``{"id", "status"}`` (a child killed by a signal -N, as
subprocess reports it).
"""
from __future__ import annotations

import atexit
import io
import itertools
import json
import locale
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path

# ---------------------------------------------------------------------------
# The server (runs in its own process)
# ---------------------------------------------------------------------------


def _child(req: dict) -> None:
    """In the forked child: become ``python -m blosckit ARGV`` (or ``python
    -c CODE ARGV``); never returns."""
    import runpy
    import traceback
    status = 1
    try:
        os.chdir(req["cwd"])
        for fd, path, flags in ((0, req["stdin"] or os.devnull, os.O_RDONLY),
                                (1, req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            opened = os.open(path, flags, 0o644)
            os.dup2(opened, fd)
            os.close(opened)
        # new standard streams over the new descriptors, made as the
        # interpreter makes them at start-up (same encoding and errors)
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)),
                                     encoding=sys.__stdin__.encoding,
                                     errors=sys.__stdin__.errors)
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)),
                                      encoding=sys.__stdout__.encoding,
                                      errors=sys.__stdout__.errors)
        sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
                                      encoding=sys.__stderr__.encoding,
                                      errors=sys.__stderr__.errors, line_buffering=True)
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)      # as the interpreter sets it
        try:
            if req["code"] is None:
                sys.argv = ["-m", *req["argv"]]
                runpy.run_module("blosckit", run_name="__main__", alter_sys=True)
            else:
                sys.argv = ["-c", *req["argv"]]
                if not sys.flags.safe_path:     # python -c: the working directory first
                    sys.path[0] = ""
                exec(compile(req["code"], "<string>", "exec"),
                     {"__name__": "__main__", "__builtins__": __builtins__})
            status = 0
        except SystemExit as e:
            # the interpreter's rules for the exit status
            if e.code is None:
                status = 0
            elif isinstance(e.code, int):
                status = e.code & 0xFF
            else:
                print(e.code, file=sys.stderr)
                status = 1
        except BaseException:
            traceback.print_exc()
            status = 1
        threading._shutdown()              # what the interpreter does at exit
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                status = status or 120             # as the interpreter does
    finally:
        os._exit(status)


def serve(python_blosc2: bool) -> None:
    """Read requests on stdin; fork a child per run; reply with its status."""
    if python_blosc2:
        import blosc2                      # noqa: F401 (the imports the runs skip)
    else:
        import blosckit.cli                # noqa: F401
    try:
        import numpy                       # noqa: F401 (blosckit imports it where needed)
    except ImportError:
        pass
    running: dict[int, tuple[str, float]] = {}           # pid -> (id, deadline)
    sel = selectors.DefaultSelector()
    sel.register(sys.stdin.fileno(), selectors.EVENT_READ)
    pending, eof = b"", False
    while not eof or running:
        if eof:
            time.sleep(0.005)
        elif sel.select(timeout=0.005):
            chunk = os.read(sys.stdin.fileno(), 65536)
            eof = not chunk
            pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            req = json.loads(line)
            pid = os.fork()
            if pid == 0:
                sel.close()
                _child(req)
            running[pid] = (req["id"], time.monotonic() + req["timeout"])
        for pid, (rid, deadline) in list(running.items()):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
            done, wstatus = os.waitpid(pid, os.WNOHANG)
            if done:
                del running[pid]
                status = (-os.WTERMSIG(wstatus) if os.WIFSIGNALED(wstatus)
                          else os.WEXITSTATUS(wstatus))
                sys.stdout.write(json.dumps({"id": rid, "status": status}) + "\n")
                sys.stdout.flush()


# ---------------------------------------------------------------------------
# The client (in the test process)
# ---------------------------------------------------------------------------

class _Server:
    def __init__(self, flags: list[str]) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, *flags], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lock = threading.Lock()
        self.waiting: dict[str, Future] = {}
        self.ids = itertools.count()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            reply = json.loads(line)
            with self.lock:
                fut = self.waiting.pop(reply["id"])
            fut.set_result(reply["status"])
        with self.lock:                        # the server died: fail every waiting run
            for fut in self.waiting.values():
                fut.set_exception(RuntimeError("the blosckit run server ended"))

    def run(self, argv: list[str], code: str | None, stdin: Path | None, stdout: Path,
            stderr: Path, timeout: float) -> int:
        fut: Future = Future()
        with self.lock:
            rid = str(next(self.ids))
            self.waiting[rid] = fut
            self.proc.stdin.write(json.dumps({
                "id": rid, "argv": argv, "code": code, "cwd": os.getcwd(),
                "stdin": None if stdin is None else str(stdin), "stdout": str(stdout),
                "stderr": str(stderr), "timeout": timeout}) + "\n")
            self.proc.stdin.flush()
        return fut.result(timeout=timeout + 60)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


_servers: dict[bool, _Server] = {}          # by python_blosc2
_server_lock = threading.Lock()


def _run(cmd: list[str], argv: list[str], code: str | None, input: bytes | str | None,
         text: bool, timeout: float) -> subprocess.CompletedProcess:
    """What ``subprocess.run(cmd, capture_output=True, text=text,
    input=input, timeout=timeout)`` gives, from a forked run."""
    with _server_lock:
        server = _servers.get(code is not None)
        if server is None:
            server = _servers[code is not None] = _Server(
                ["--python-blosc2"] if code is not None else [])
            atexit.register(server.close)
    with tempfile.TemporaryDirectory(prefix="blosckit-run-") as d:
        files = Path(d)
        stdin = None
        if input is not None:
            stdin = files / "stdin"
            stdin.write_bytes(input.encode() if isinstance(input, str) else bytes(input))
        status = server.run(argv, code, stdin, files / "stdout", files / "stderr", timeout)
        out, err = (files / "stdout").read_bytes(), (files / "stderr").read_bytes()
    if text:
        # as subprocess decodes with text=True: the locale's encoding,
        # universal newlines
        out, err = (io.TextIOWrapper(io.BytesIO(b), encoding=locale.getpreferredencoding(False))
                    .read() for b in (out, err))
    if status == -signal.SIGKILL:
        raise subprocess.TimeoutExpired(cmd, timeout, out, err)
    return subprocess.CompletedProcess(cmd, status, out, err)


def blosckit(*args, input: bytes | str | None = None, text: bool = True,
             timeout: float = 120) -> subprocess.CompletedProcess:
    """What ``subprocess.run([python, "-m", "blosckit", *args],
    capture_output=True, text=text, input=input, timeout=timeout)`` gives,
    from a forked run."""
    argv = [str(a) for a in args]
    return _run([sys.executable, "-m", "blosckit", *argv], argv, None, input, text, timeout)


def python(code: str, *args, input: bytes | str | None = None, text: bool = False,
           timeout: float = 120, check: bool = False) -> subprocess.CompletedProcess:
    """What ``subprocess.run([python, "-c", code, *args], capture_output=True,
    text=text, input=input, timeout=timeout, check=check)`` gives, forked
    from an interpreter that has imported python-blosc2 and NumPy."""
    argv = [str(a) for a in args]
    r = _run([sys.executable, "-c", code, *argv], argv, code, input, text, timeout)
    if check:
        r.check_returncode()
    return r


if __name__ == "__main__":
    serve(sys.argv[1:] == ["--python-blosc2"])
