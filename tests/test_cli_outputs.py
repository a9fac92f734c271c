"""Outputs never destroy input: an OUT that is an input is refused, an
existing OUT is kept without --force, a failed command leaves no OUT and no
temporary file, and a broken pipe ends quietly (the zstd/gzip conventions,
specs in blosckit/cli/output.py)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import blosckit
import cli_runner
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def run(*args):
    return cli_runner.blosckit(*args)


@pytest.fixture
def frame_file(tmp_path) -> Path:
    """A frame python-blosc2 wrote."""
    sc = blosc2.SChunk(chunksize=40_000, data=np.arange(50_000, dtype="<i4").tobytes(),
                       cparams=blosc2.CParams(typesize=4))
    p = tmp_path / "x.b2frame"
    p.write_bytes(bytes(sc.to_cframe()))
    return p


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize("command", ["decompress", "compress", "salvage"])
@pytest.mark.parametrize("force", [False, True])
def test_out_that_is_the_input_is_refused(tmp_path, frame_file, command, force):
    before = _listing(tmp_path)
    args = [command, frame_file, frame_file] + (["--force"] if force else [])
    r = run(*args)
    assert r.returncode == 2, r.stderr
    assert "is the input" in r.stderr and "Traceback" not in r.stderr
    assert _listing(tmp_path) == before            # X byte-identical, nothing else written


def test_the_same_file_under_another_name_is_refused(tmp_path, frame_file):
    link = tmp_path / "hard-link.b2frame"
    os.link(frame_file, link)
    before = frame_file.read_bytes()
    r = run("decompress", frame_file, link, "-f")
    assert r.returncode == 2 and "is the input" in r.stderr
    assert frame_file.read_bytes() == before


def test_existing_out_is_kept_without_force(tmp_path, frame_file):
    out = tmp_path / "out.bin"
    out.write_bytes(b"keep me")
    r = run("decompress", frame_file, out)
    assert r.returncode == 2 and "--force" in r.stderr
    assert out.read_bytes() == b"keep me"
    r = run("decompress", frame_file, out, "-f")
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == np.arange(50_000, dtype="<i4").tobytes()


def test_a_failed_command_leaves_no_out(tmp_path, frame_file):
    bad = tmp_path / "bad.b2frame"
    data = bytearray(frame_file.read_bytes())
    f = blosckit.open_frame(bytes(data))
    start, view = f.chunk_view(1)
    data[start + 40:start + 60] = bytes(20)         # a damaged stream in chunk 1
    bad.write_bytes(bytes(data))
    before = _listing(tmp_path)
    r = run("decompress", bad, tmp_path / "out.bin")
    assert r.returncode == 1, r.stderr
    assert _listing(tmp_path) == before             # no out.bin, no .part file


def test_failed_overwrite_keeps_the_old_out(tmp_path, frame_file):
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    r = run("compress", tmp_path / "missing", out, "-f")
    assert r.returncode != 0
    assert out.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([frame_file.name, "out.bin"])


def test_out_gets_the_usual_file_mode(tmp_path, frame_file):
    out = tmp_path / "out.bin"
    assert run("decompress", frame_file, out).returncode == 0
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask


def test_sigterm_leaves_no_partial_out(tmp_path):
    """A command killed while it writes leaves no OUT and no temporary file."""
    big = tmp_path / "big.bin"
    big.write_bytes(np.random.default_rng(0).integers(0, 255, 96 << 20, dtype=np.uint8)
                    .tobytes())
    out = tmp_path / "big.b2frame"
    p = subprocess.Popen([sys.executable, "-m", "blosckit", "compress", big, out,
                          "--chunksize", str(1 << 20), "--codec", "zstd", "--clevel", "9"],
                         stderr=subprocess.PIPE)
    try:
        deadline = 200
        while deadline and not any(q.name.endswith(".part") for q in tmp_path.iterdir()):
            if p.poll() is not None:
                break
            deadline -= 1
            subprocess.run(["sleep", "0.05"])
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 128 + signal.SIGTERM
    assert sorted(q.name for q in tmp_path.iterdir()) == ["big.bin"]


def test_a_broken_pipe_ends_quietly():
    """``blosckit info FILES | head -1``: no message about lost stderr, and
    the status a command killed by SIGPIPE has (as other tools)."""
    # Blosc files only: make_samples.py rightly gets an error line on stderr,
    # written before or after the pipe breaks (a race, not the point here)
    files = sorted(str(p) for p in SAMPLES.glob("*") if p.suffix != ".py") * 200
    cmd = f"{sys.executable} -m blosckit info {' '.join(files)} | head -1"
    r = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], capture_output=True,
                       text=True)
    assert r.stdout.count("\n") == 1 and r.stderr == ""
    assert r.returncode == 128 + signal.SIGPIPE
