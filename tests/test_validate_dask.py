"""``blosckit validate --dask``: the same verdicts as a plain run (one JSON
line per input, in another order), resumed from its own output, and usage
errors for what it cannot do."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import cli_runner
from blosckit.cli.distributed import done_inputs, is_address
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")


def _corpus(d: Path) -> None:
    """Chunks and a frame by python-blosc2, two damaged files, and a file
    that is no Blosc data (skipped by both runs)."""
    d.mkdir()
    for i in range(300):
        (d / f"{i:04d}.b2").write_bytes(blosc2.compress2(np.arange(i, i + 300, dtype="<i4"),
                                                         typesize=4))
    (d / "cut.b2").write_bytes((d / "0007.b2").read_bytes()[:40])
    flipped = bytearray((d / "0008.b2").read_bytes())
    flipped[20] ^= 0x40
    (d / "flipped.b2").write_bytes(bytes(flipped))
    blosc2.SChunk(chunksize=4000, data=np.arange(3000, dtype="<i4"), urlpath=str(d / "f.b2frame"),
                  contiguous=True, mode="w", cparams=blosc2.CParams(typesize=4))
    (d / "notes.txt").write_text("not blosc")


def _lines(text: str) -> list[dict]:
    return sorted((json.loads(line) for line in text.splitlines()), key=json.dumps)


@pytest.mark.long
def test_dask_gives_the_plain_runs_verdicts_and_resumes(tmp_path):
    d = tmp_path / "corpus"
    _corpus(d)
    plain = cli_runner.blosckit("validate", "--json", d)
    # a real process: the local cluster's workers are processes of their own
    run = subprocess.run([sys.executable, "-m", "blosckit", "validate", "--dask", d],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == plain.returncode == 1, run.stderr
    assert _lines(run.stdout) == _lines(plain.stdout)
    assert len(_lines(run.stdout)) == 303
    partial = tmp_path / "partial.jsonl"
    partial.write_text("".join(run.stdout.splitlines(keepends=True)[:120]) + '{"file": "cut')
    rest = subprocess.run([sys.executable, "-m", "blosckit", "validate", "--dask", "--resume",
                           partial, d], capture_output=True, text=True, timeout=600)
    assert len(rest.stdout.splitlines()) == 303 - 120
    # the status is that of the inputs this run checked
    assert rest.returncode == (1 if any(not x.get("valid", False)
                                        for x in _lines(rest.stdout)) else 0), rest.stderr
    resumed = partial.read_text().rsplit("\n", 1)[0] + "\n" + rest.stdout
    assert _lines(resumed) == _lines(plain.stdout)


def test_addresses_and_resume_files(tmp_path):
    assert is_address("local") and is_address("tcp://10.0.0.2:8786")
    assert is_address("scheduler-1:8786")
    assert not is_address("corpus") and not is_address("data/x.b2frame")
    f = tmp_path / "out.jsonl"
    f.write_text('{"file": "a", "valid": true}\n{"error": {"file": "b"}}\n{"file": "c", "va')
    assert done_inputs(str(f)) == {"a", "b"}
    assert done_inputs(str(tmp_path / "none.jsonl")) == set()


@pytest.mark.parametrize("args,message", [
    (["validate", "--dask"], "at least one FILE"),
    (["validate", "--resume", "x.jsonl", "."], "give --dask too"),
])
def test_usage_errors(args, message):
    r = cli_runner.blosckit(*args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
