"""The blosckit command line: real runs through ``python -m blosckit``."""
from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import blosckit
from blosckit.tools.inspect import chunk_nodes

import cli_runner
from oracles import oracle

np = oracle("numpy")

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def run(*args, check=False):
    """``python -m blosckit ARGS`` as a process of its own, forked from a
    server that has imported blosckit (tests/cli_runner.py);
    test_the_real_commands_give_the_same_output runs the real ones."""
    r = cli_runner.blosckit(*args)
    if check:
        r.check_returncode()
    return r


def test_the_real_commands_give_the_same_output(tmp_path):
    """``python -m blosckit`` and the ``blosckit`` script themselves, beside
    the forked runs every other test uses: the same streams and status."""
    module, script = [sys.executable, "-m", "blosckit"], [str(Path(sys.executable).with_name(
        "blosckit"))]
    for cmd, args in [(script, ("--version",)), (module, ("--version",)),
                      (module, ("info", "--json", *sorted(SAMPLES.glob("*")))),
                      (module, ("validate", tmp_path / "missing")), (module, ("compress",))]:
        forked = run(*args)
        real = subprocess.run([*cmd, *map(str, args)], capture_output=True, text=True,
                              timeout=300)
        assert (real.returncode, real.stdout, real.stderr) == \
            (forked.returncode, forked.stdout, forked.stderr), (cmd, args)


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
        assert f"{broken}:100: error: chunk: the input ends at byte 100, inside chunk (cbytes " \
            "says the chunk is " in line and line.count("[T-truncated]") == 1


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
    out = json.loads(r.stdout)
    assert (out["kind"], out["stopped"]) == ("chunk", None)
    nodes = out["nodes"]
    assert [n["path"] for n in nodes] == [n.path for n in chunk_nodes(chunk)]
    bits = [n for n in nodes if n["bit"] is not None]
    assert bits and all(n["name"] and n["bit"]["width"] >= 1 for n in bits)
    assert {n["name"] for n in nodes} >= {"version", "typesize", "nbytes", "cbytes"}


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


# ---------------------------------------------------------------------------
# Several files, exit codes, tracebacks
# ---------------------------------------------------------------------------

def _broken(tmp_path, name="broken.b2chunk"):
    chunk = (SAMPLES / "arange-lz4-shuffle.b2chunk").read_bytes()
    path = tmp_path / name
    path.write_bytes(chunk[:100])
    return path


def test_info_goes_on_after_a_bad_file_and_names_it(tmp_path):
    good = SAMPLES / "arange-lz4-shuffle.b2chunk"
    bad = _broken(tmp_path)
    r = run("info", "--json", good, bad, good)
    assert r.returncode == 1
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row.get("file") for row in rows] == [str(good), None, str(good)]
    assert rows[1]["error"]["file"] == str(bad) and rows[1]["error"]["offset"] == 100
    assert rows[1]["error"]["rule"] == "T-truncated"
    assert rows[1]["error"]["message"].startswith("the input ends at byte 100, inside chunk")
    line, = r.stderr.strip().splitlines()
    assert line.startswith(f"blosckit: {bad}:100:") and str(good) not in line


def _unsupported_chunk(tmp_path):
    # a valid chunk whose codec is a plugin blosckit cannot decode
    chunk = bytearray(blosckit.compress(np.arange(10_000, dtype="<i4").tobytes(), typesize=4))
    chunk[2] = (chunk[2] & 0x1F) | (6 << 5)       # compformat 6: user-defined codec
    chunk[22] = 250                                # udcodec id with no decoder
    path = tmp_path / "plugin.b2chunk"
    path.write_bytes(bytes(chunk))
    return path


def test_unsupported_is_exit_3_and_worst_status_wins(tmp_path):
    plugin = _unsupported_chunk(tmp_path)
    out = tmp_path / "o.bin"
    r = run("decompress", plugin, out)
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr and str(plugin) in r.stderr
    r = run("info", plugin, _broken(tmp_path), tmp_path / "absent")
    assert r.returncode == 1
    assert len(r.stderr.strip().splitlines()) >= 2     # both unreadable files named


def test_unreadable_path_names_the_file(tmp_path):
    r = run("info", tmp_path)                          # a directory: IsADirectoryError
    assert r.returncode == 1 and "Traceback" not in r.stderr
    line, = r.stderr.strip().splitlines()
    assert str(tmp_path) in line


def test_traceback_before_or_after_the_command(tmp_path):
    bad = _broken(tmp_path)
    for args in (["--traceback", "info", bad], ["info", bad, "--traceback"]):
        r = run(*args)
        assert r.returncode != 0 and "Traceback" in r.stderr and "FormatError" in r.stderr


def test_memory_error_is_one_line(tmp_path):
    # a MemoryError raised inside a command (here: the chunk reader, patched
    # where the info command looks it up) must not reach the user as a traceback
    script = ("import sys, blosckit.cli.info as info\n"
              "def boom(*a, **k): raise MemoryError()\n"
              "info.parse_chunk = boom\n"
              "from blosckit.cli import main\n"
              "sys.exit(main(sys.argv[1:]))\n")
    good = SAMPLES / "arange-lz4-shuffle.b2chunk"
    r = subprocess.run([sys.executable, "-c", script, "info", str(good)],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    line, = r.stderr.strip().splitlines()
    assert "memory" in line and str(good) in line
    r = subprocess.run([sys.executable, "-c", script, "--traceback", "info", str(good)],
                       capture_output=True, text=True)
    assert "Traceback" in r.stderr and "MemoryError" in r.stderr


@pytest.mark.parametrize("args", [
    ["--typesize", "0"], ["--typesize", "300", "--format", "blosc1"], ["--nthreads", "0"],
    ["--nthreads", "1000000000"], ["--clevel", "10"], ["--filters", "trunc_prec:x"],
    ["--filters", "nope"], ["--format", "blosc3"],
])
def test_bad_compress_parameters_exit_2(tmp_path, args):
    src = tmp_path / "in.bin"
    src.write_bytes(bytes(1000))
    r = run("compress", src, tmp_path / "o", *args)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.strip()


# ---------------------------------------------------------------------------
# compress: .npy input, filters with metas, formats
# ---------------------------------------------------------------------------

def test_npy_typesize_and_data(tmp_path):
    arr = np.linspace(0, 1, 20_000)
    src, packed = tmp_path / "a.npy", tmp_path / "a.b2chunk"
    np.save(src, arr)
    r = run("compress", src, packed)
    assert r.returncode == 0, r.stderr
    c = blosckit.parse_chunk(packed.read_bytes())
    assert c.typesize == 8
    assert blosckit.decompress(packed.read_bytes()) == arr.tobytes()
    r = run("compress", src, packed, "--typesize", "4", "--force")
    assert r.returncode == 0 and blosckit.parse_chunk(packed.read_bytes()).typesize == 4


@pytest.mark.parametrize("cut", [9, 20, 100])
def test_broken_npy_input_is_corrupt_input(tmp_path, cut):
    src, packed = tmp_path / "a.npy", tmp_path / "o"
    np.save(src, np.arange(100.0))
    src.write_bytes(src.read_bytes()[:cut])
    r = run("compress", src, packed)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    # a header cut short: the input's truncation, at the end of the 100-byte
    # file or inside the magic, lengths or text of the header
    assert "a.npy" in r.stderr and "[T-truncated]" in r.stderr, r.stderr
    assert f"a.npy:{cut}: error: npy." in r.stderr and \
        f"the input ends at byte {cut}, inside npy." in r.stderr, r.stderr


def test_npy_to_b2nd_frame(tmp_path):
    """A .npy array becomes a b2nd frame python-blosc2 opens as that array:
    with the shapes given, and by default for an OUT ending in .b2nd."""
    blosc2 = oracle("blosc2")
    a = (np.arange(120 * 50, dtype="<f4") / 7).reshape(120, 50)
    np.save(tmp_path / "a.npy", a)
    r = run("compress", tmp_path / "a.npy", tmp_path / "a.b2nd", "--codec", "zstd",
            "--chunkshape", "40,25", "--blockshape", "10,25")
    assert r.returncode == 0, r.stderr
    assert "chunks (40, 25), blocks (10, 25)" in r.stderr
    arr = blosc2.open(str(tmp_path / "a.b2nd"))
    assert (arr.shape, arr.chunks, arr.blocks) == ((120, 50), (40, 25), (10, 25))
    assert np.array_equal(arr[...], a)
    big = np.arange(3 * 700 * 800, dtype="<i8").reshape(3, 700, 800)    # 13 MB
    np.save(tmp_path / "big.npy", big)
    r = run("compress", tmp_path / "big.npy", tmp_path / "big.b2nd")
    assert r.returncode == 0, r.stderr
    arr = blosc2.open(str(tmp_path / "big.b2nd"))
    # the default shapes are python-blosc2's for the same array
    theirs = blosc2.asarray(big)
    assert (arr.chunks, arr.blocks) == (theirs.chunks, theirs.blocks)
    assert np.array_equal(arr[...], big)
    r = run("decompress", tmp_path / "big.b2nd", tmp_path / "back.npy")
    assert r.returncode == 0 and np.array_equal(np.load(tmp_path / "back.npy"), big)


@pytest.mark.parametrize("make,args,message", [
    (lambda p: np.save(p, np.asfortranarray(np.ones((3, 4)))), (), "Fortran order"),
    (lambda p: np.save(p, np.ones((3, 4))), ("--chunkshape", "2"), "1 extents, the array 2"),
    (lambda p: np.save(p, np.ones((3, 4))), ("--blockshape", "0,1"), "at least 1"),
    (lambda p: p.write_bytes(bytes(48)), ("--chunkshape", "4"), "need a .npy input"),
])
def test_b2nd_compress_usage_errors(tmp_path, make, args, message):
    src = tmp_path / "in.npy"
    make(src)
    r = run("compress", src, tmp_path / "out.b2nd", *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_raw_input_defaults_to_typesize_1(tmp_path):
    src, packed = tmp_path / "in.bin", tmp_path / "o"
    src.write_bytes(np.arange(10_000, dtype="<i4").tobytes())
    assert run("compress", src, packed).returncode == 0
    assert blosckit.parse_chunk(packed.read_bytes()).typesize == 1


def test_filters_with_metas(tmp_path):
    arr = np.linspace(0, 1, 20_000)
    src, packed = tmp_path / "a.npy", tmp_path / "a.b2chunk"
    np.save(src, arr)
    r = run("compress", src, packed, "--filters", "shuffle,trunc_prec:20")
    assert r.returncode == 0, r.stderr
    chunk = packed.read_bytes()
    assert blosckit.parse_chunk(chunk).filters == [("shuffle", 0), ("trunc_prec", 20)]
    assert chunk == blosckit.compress(arr, filters=("shuffle", ("trunc_prec", 20)))


def test_blosc1_compat_format(tmp_path):
    src, packed = tmp_path / "in.bin", tmp_path / "o"
    src.write_bytes(np.arange(10_000, dtype="<i4").tobytes())
    r = run("compress", src, packed, "--typesize", "4", "--filters", "delta,shuffle",
            "--format", "blosc1")
    assert r.returncode == 2 and "blosc1-compat" in r.stderr
    r = run("compress", src, packed, "--typesize", "4", "--filters", "delta,shuffle",
            "--format", "blosc1-compat")
    assert r.returncode == 0, r.stderr
    assert blosckit.decompress(packed.read_bytes()) == src.read_bytes()


# ---------------------------------------------------------------------------
# --version
# ---------------------------------------------------------------------------

def test_version_prints_the_version():
    r = run("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == f"blosckit {blosckit.__version__}"


def test_version_prints_the_native_paths():
    info = blosckit.native_info()
    r = run("--version")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()[1:]
    assert lines and not any(line.startswith("native: unavailable") for line in lines)
    for key in info:
        assert any(str(key) in line for line in lines), key
    for name, entry in info.get("codecs", {}).items():    # one line per codec
        assert any(line.split()[:1] == [name] for line in lines), name


def _run_on_terminal(*args) -> tuple[int, str]:
    """Run the CLI with stderr on a pseudo-terminal; (status, what it wrote there)."""
    import os
    import pty
    leader, follower = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "blosckit", *map(str, args)],
                         stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    seen = b""
    while True:
        try:
            piece = os.read(leader, 4096)
        except OSError:               # the child closed the terminal
            break
        if not piece:
            break
        seen += piece
    os.close(leader)
    return p.wait(timeout=120), seen.decode(errors="replace")


@pytest.mark.long
def test_large_work_shows_progress_on_a_terminal_only(tmp_path):
    src = tmp_path / "big.bin"
    src.write_bytes(np.arange(10 << 20, dtype="<i8").tobytes())        # 80 MiB
    out = tmp_path / "big.b2frame"
    status, err = _run_on_terminal("compress", src, out, "--frame", "--typesize", "8")
    assert status == 0 and "compressing" in err and "100%" in err
    status, err = _run_on_terminal("decompress", out, tmp_path / "back.bin")
    assert status == 0 and "decompressing" in err and "%" in err
    r = run("decompress", out, tmp_path / "back2.bin")                 # piped: no progress
    assert r.returncode == 0 and "%" not in r.stderr
    assert (tmp_path / "back2.bin").read_bytes() == src.read_bytes()
