"""The blosckit command line: real runs through ``python -m blosckit``."""
from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import blosckit
from blosckit.inspect_chunk import chunk_nodes

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def run(*args, check=False):
    return subprocess.run([sys.executable, "-m", "blosckit", *map(str, args)],
                          capture_output=True, text=True, check=check)


def test_info_on_every_sample():
    files = sorted(SAMPLES.glob("*chunk"))
    assert files
    r = run("info", "--json", *files)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == len(files)
    for row, path in zip(rows, files):
        c = blosckit.parse_chunk(path.read_bytes())
        assert (row["version"], row["codec"], row["nbytes"], row["cbytes"]) == \
            (c.version, c.codec, c.nbytes, c.cbytes)


def test_compress_decompress_round_trip(tmp_path):
    data = np.linspace(0, 1, 50_000).tobytes()
    src, packed, back = tmp_path / "in.bin", tmp_path / "c.b2chunk", tmp_path / "out.bin"
    src.write_bytes(data)
    r = run("compress", src, packed, "--codec", "zstd", "--typesize", "8", "--filters",
            "shuffle,bitshuffle", "--clevel", "7")
    assert r.returncode == 0, r.stderr
    chunk = packed.read_bytes()
    c = blosckit.parse_chunk(chunk)
    assert (c.codec, c.typesize, c.filters) == ("zstd", 8, [("shuffle", 0), ("bitshuffle", 0)])
    r = run("decompress", packed, back)
    assert r.returncode == 0, r.stderr
    assert back.read_bytes() == data


def test_bad_input_is_one_line_and_exit_1(tmp_path):
    chunk = (SAMPLES / "arange-lz4-shuffle.b2chunk").read_bytes()
    broken = tmp_path / "broken.b2chunk"
    broken.write_bytes(chunk[:100])
    for cmd in (["info"], ["inspect"], ["decompress"]):
        extra = [tmp_path / "o.bin"] if cmd == ["decompress"] else []
        r = run(*cmd, broken, *extra)
        assert r.returncode == 1
        assert "Traceback" not in r.stderr
        line, = r.stderr.strip().splitlines()
        assert f"{broken}:100:" in line and "chunk.header.cbytes" in line


def test_usage_errors_exit_2(tmp_path):
    src = tmp_path / "in.bin"
    src.write_bytes(b"x" * 100)
    r = run("compress", src, tmp_path / "o", "--codec", "nope")
    assert r.returncode == 2 and "nope" in r.stderr and "Traceback" not in r.stderr
    assert run("no-such-command").returncode == 2


def test_missing_file_exit_1(tmp_path):
    r = run("info", tmp_path / "absent")
    assert r.returncode == 1 and "Traceback" not in r.stderr


def test_inspect_json_nodes_match_the_bytes():
    chunk = (SAMPLES / "arange-lz4-shuffle.b2chunk").read_bytes()
    r = run("inspect", "--json", SAMPLES / "arange-lz4-shuffle.b2chunk")
    assert r.returncode == 0, r.stderr
    nodes = json.loads(r.stdout)
    assert [n["path"] for n in nodes] == [n.path for n in chunk_nodes(chunk)]


INT_FORMATS = {1: "<B", 4: "<i"}


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.glob("*chunk")))
def test_inspector_leaf_values_are_the_stored_bytes(sample):
    chunk = (SAMPLES / sample).read_bytes()
    seen = 0
    for n in chunk_nodes(chunk):
        assert 0 <= n.offset <= len(chunk) and n.offset + n.size <= len(chunk)
        if isinstance(n.value, int) and n.size in INT_FORMATS:
            assert struct.unpack_from(INT_FORMATS[n.size], chunk, n.offset)[0] == n.value, n
            seen += 1
    assert seen >= 12     # the 16-byte header alone has 6 byte-sized and 4-byte fields
