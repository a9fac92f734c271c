"""``blosckit append`` and ``blosckit meta``: frames edited in place from the
command line, checked by python-blosc2; bad requests change nothing; an edit
cut short is undone by the next one; a terminal and a pipe give the same
bytes and status."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import blosckit
import cli_runner
from blosckit.frame.edit import EditableFrame, FileIO
from blosckit.frame.journal import journal_path
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")


def run(*args):
    return cli_runner.blosckit(*args)


def _frame(path: Path, contiguous: bool = True, n: int = 3000) -> None:
    s = blosc2.SChunk(chunksize=4000, data=np.arange(n, dtype="<i4"), urlpath=str(path),
                      contiguous=contiguous, mode="w", meta={"m": "abcd"},
                      cparams=blosc2.CParams(typesize=4, nthreads=1),
                      dparams=blosc2.DParams(nthreads=1))   # the header's thread counts
    s.vlmeta["a"] = "hello"
    del s


def _python_blosc2(path: Path) -> tuple[bytes, dict, dict]:
    code = ("import sys, json, blosc2\ns = blosc2.open(sys.argv[1])\n"
            "print(json.dumps([bytes(s[:]).hex(), {k: s.meta[k] for k in s.meta.keys()},"
            " s.vlmeta[:]]))")
    r = cli_runner.python(code, str(path), text=True, check=True, timeout=120)
    data, meta, vlmeta = json.loads(r.stdout)
    return bytes.fromhex(data), meta, vlmeta


@pytest.mark.parametrize("contiguous", [True, False], ids=["cframe", "sframe"])
def test_append_compresses_files_with_the_frames_parameters(tmp_path, contiguous):
    f = tmp_path / "f.b2frame"
    _frame(f, contiguous)
    raw = tmp_path / "more.bin"
    raw.write_bytes(np.arange(100, 1100, dtype="<i4").tobytes())
    arr = tmp_path / "more.npy"
    np.save(arr, np.arange(2500, dtype="<i4") * 2)
    r = run("append", f, raw, arr, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["chunks_before"], out["chunks"], out["bytes"]) == (3, 7, 14000)
    data, meta, vlmeta = _python_blosc2(f)
    assert data == b"".join([np.arange(3000, dtype="<i4").tobytes(), raw.read_bytes(),
                             (np.arange(2500, dtype="<i4") * 2).tobytes()])
    assert meta == {"m": "abcd"} and vlmeta == {"a": "hello"}
    assert blosckit.validate(f) == []
    # the same as python-blosc2 appending the same pieces
    twin = tmp_path / "twin.b2frame"
    _frame(twin, contiguous)
    code = ("import sys, blosc2, numpy as np\nblosc2.set_nthreads(1)\n"
            "s = blosc2.open(sys.argv[1], mode='a')\n"
            "s.append_data(np.arange(100, 1100, dtype='<i4'))\n"
            "a = np.arange(2500, dtype='<i4') * 2\n"
            "[s.append_data(a[i:i + 1000]) for i in range(0, 2500, 1000)]\n")
    cli_runner.python(code, str(twin), check=True, timeout=120)
    if contiguous:
        assert f.read_bytes() == twin.read_bytes()
    else:
        assert {p.name: p.read_bytes() for p in f.iterdir()} == \
            {p.name: p.read_bytes() for p in twin.iterdir()}


def test_meta_lists_sets_and_deletes(tmp_path):
    f = tmp_path / "f.b2frame"
    _frame(f)
    r = run("meta", f)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ['metalayer m: 5 bytes: "abcd"',
                                     'vlmetalayer a: 6 bytes: "hello"']
    r = run("meta", f, "--set", "m", '"wxyz"', "--set", "note", '{"k": [1, 2]}',
            "--delete", "a", "--json")
    assert r.returncode == 0, r.stderr
    layers = json.loads(r.stdout)["layers"]
    assert [(x["kind"], x["name"], json.loads(x["value"])) for x in layers] == \
        [("metalayer", "m", "wxyz"), ("vlmetalayer", "note", {"k": [1, 2]})]
    _, meta, vlmeta = _python_blosc2(f)
    assert meta == {"m": "wxyz"} and vlmeta == {"note": {"k": [1, 2]}}
    assert blosckit.validate(f) == []


@pytest.mark.parametrize("args,message", [
    (["meta", "{f}", "--set", "m", '"longer"'], "as long"),
    (["meta", "{f}", "--delete", "m"], "cannot delete"),
    (["meta", "{f}", "--delete", "nope"], "no vlmetalayer"),
    (["append", "{f}", "{f}"], "is the frame"),
    (["append", "{f}", "{odd}"], "whole items"),
])
def test_bad_requests_are_usage_errors_and_change_nothing(tmp_path, args, message):
    f = tmp_path / "f.b2frame"
    _frame(f)
    odd = tmp_path / "odd.bin"
    odd.write_bytes(b"123")
    before = f.read_bytes()
    r = run(*[a.format(f=f, odd=odd) for a in args])
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert f.read_bytes() == before and not journal_path(f).exists()
    assert "Traceback" not in r.stderr


def test_append_refuses_an_array_and_damaged_frames(tmp_path):
    b2nd = tmp_path / "a.b2nd"
    blosc2.asarray(np.arange(100, dtype="<i4").reshape(10, 10), urlpath=str(b2nd), mode="w")
    raw = tmp_path / "x.bin"
    raw.write_bytes(bytes(40))
    r = run("append", b2nd, raw)
    assert r.returncode == 2 and "b2nd" in r.stderr
    cut = tmp_path / "cut.b2frame"
    _frame(tmp_path / "f.b2frame")
    cut.write_bytes((tmp_path / "f.b2frame").read_bytes()[:100])
    r = run("append", cut, raw)
    assert r.returncode == 1 and "[T-truncated]" in r.stderr
    assert cut.stat().st_size == 100


def test_an_edit_cut_short_is_undone_by_the_next_command(tmp_path):
    f = tmp_path / "f.b2frame"
    _frame(f)
    before = f.read_bytes()

    class Killed(FileIO):
        """Dies at the chunk's write, after the journal and the mark."""
        count = 0

        def write(self, path, data, at):
            Killed.count += 1
            if Killed.count == 2:
                raise KeyboardInterrupt
            super().write(path, data, at)

    with pytest.raises(KeyboardInterrupt):
        with EditableFrame(f, io=Killed()) as e:
            e.append_data(np.arange(1000, dtype="<i4"))
    assert journal_path(f).exists()
    r = run("validate", f)                     # marked: refused, never misread
    assert r.returncode == 1 and "F-frame-len" in r.stdout + r.stderr
    r = run("meta", f)
    assert r.returncode == 0 and "undone" in r.stderr
    assert f.read_bytes() == before and not journal_path(f).exists()


def test_a_terminal_and_a_pipe_get_the_same_bytes(tmp_path):
    import pty
    outs = []
    for on_terminal in (False, True):
        f = tmp_path / f"f{on_terminal}.b2frame"
        _frame(f)
        raw = tmp_path / "x.bin"
        raw.write_bytes(np.arange(5000, dtype="<i4").tobytes())
        if on_terminal:
            leader, follower = pty.openpty()
            p = subprocess.Popen([sys.executable, "-m", "blosckit", "append", str(f), str(raw)],
                                 stdout=follower, stderr=follower)
            os.close(follower)
            while True:
                try:
                    if not os.read(leader, 4096):
                        break
                except OSError:
                    break
            os.close(leader)
            status = p.wait(timeout=120)
        else:
            status = run("append", f, raw).returncode
        outs.append((status, f.read_bytes()))
    assert outs[0] == outs[1] and outs[0][0] == 0
