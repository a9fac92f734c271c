"""Python children that start in milliseconds, for asking python-blosc2.

Many tests ask python-blosc2 about a blob in a child process, since a
damaged blob may crash C-Blosc2.  A fresh interpreter spends half a second
importing python-blosc2 and NumPy; here one "zygote" interpreter imports
them once per test session and forks a child per call, which runs the
code as ``python -c CODE ARGS...`` would (``__main__``, ``sys.argv``, the
exit status, or minus the signal that ended it).  The zygote itself never
calls C-Blosc2, so each child starts as clean as a fresh interpreter that
has imported the two.

Not for children that must be fresh in other ways: memory limits (the
child inherits the zygote's mappings), import-order checks, other
environments.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time

_ZYGOTE = r"""
import json, os, sys, traceback
import blosc2, numpy
# one request per line; answers: the child's pid, then its status
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        for fd, name, mode in ((0, "stdin", os.O_RDONLY), (1, "stdout", os.O_WRONLY),
                               (2, "stderr", os.O_WRONLY)):
            os.dup2(os.open(req[name], mode), fd)
        sys.stdin, sys.stdout, sys.stderr = open(0), open(1, "w"), open(2, "w")
        os.chdir(req["cwd"])
        sys.argv = ["-c", *req["args"]]
        status = 0
        try:
            exec(compile(req["code"], "<string>", "exec"), {"__name__": "__main__"})
        except SystemExit as e:
            if e.code is None or isinstance(e.code, int):
                status = e.code or 0
            else:
                print(e.code, file=sys.stderr)
                status = 1
        except BaseException:
            traceback.print_exc()
            status = 1
        for f in (sys.stdout, sys.stderr):
            f.flush()
        os._exit(status)
    print(pid, flush=True)
    _, st = os.waitpid(pid, 0)
    print(-os.WTERMSIG(st) if os.WIFSIGNALED(st) else os.WEXITSTATUS(st), flush=True)
"""


class _Zygote:
    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.pid = 0
        self.lock = threading.Lock()

    def start(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None or self.pid != os.getpid():
            self.proc = subprocess.Popen([sys.executable, "-c", _ZYGOTE], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, bufsize=1)
            self.pid = os.getpid()
        return self.proc

    def close(self) -> None:
        if self.proc is not None and self.pid == os.getpid():
            self.proc.stdin.close()
            self.proc.wait()
        self.proc = None


_ZYG = _Zygote()
atexit.register(_ZYG.close)


def _line(proc: subprocess.Popen, deadline: float | None) -> str | None:
    """The zygote's next answer line; None when the deadline passes first."""
    left = None if deadline is None else max(0.0, deadline - time.monotonic())
    if not select.select([proc.stdout], [], [], left)[0]:
        return None
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError("the python-blosc2 zygote exited")
    return line


def run(code: str, *args: str, input: bytes | str | None = None, text: bool = False,
        timeout: float | None = 120, check: bool = False) -> subprocess.CompletedProcess:
    """``subprocess.run([python, "-c", code, *args], input=input,
    capture_output=True, text=text, timeout=timeout, check=check)``, forked
    from an interpreter that has imported python-blosc2 and NumPy."""
    with tempfile.TemporaryDirectory() as tmp, _ZYG.lock:
        names = {n: os.path.join(tmp, n) for n in ("stdin", "stdout", "stderr")}
        data = input.encode() if isinstance(input, str) else (input or b"")
        for n in names:
            with open(names[n], "wb") as f:
                f.write(data if n == "stdin" else b"")
        proc = _ZYG.start()
        proc.stdin.write(json.dumps({"code": code, "args": list(args), "cwd": os.getcwd(),
                                     **names}) + "\n")
        proc.stdin.flush()
        pid = int(_line(proc, None))
        deadline = None if timeout is None else time.monotonic() + timeout
        status = _line(proc, deadline)
        if status is None:
            os.kill(pid, 9)
            _line(proc, None)
        with open(names["stdout"], "rb") as f:
            out = f.read()
        with open(names["stderr"], "rb") as f:
            err = f.read()
    argv = [sys.executable, "-c", code, *args]
    if text:
        out, err = out.decode(), err.decode()
    if status is None:
        raise subprocess.TimeoutExpired(argv, timeout, out, err)
    r = subprocess.CompletedProcess(argv, int(status), out, err)
    if check:
        r.check_returncode()
    return r
