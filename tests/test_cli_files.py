"""The command line on REAL files: chunks, frames, sparse frames, b2nd arrays,
HDF5 and zarr chunks written by the oracle libraries (python-blosc2,
python-blosc, h5py + hdf5plugin, zarr + numcodecs), damaged copies of them,
garbage, blobs with structures embedded, standard input and output.

Every run is ``python -m blosckit`` in a process of its own, forked from a
server that has imported blosckit (tests/cli_runner.py; test_cli.py compares
it with the real commands).  Files are made once per module, and the
commands that take several files are run once over all of them.
"""
from __future__ import annotations

import functools
import json
import random
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import blosckit
from blosckit.chunk.encode import MAX_THREADS

import cli_runner
from oracles import available, oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")
# The samples the other oracles write are left out without them, and a test
# that asks for one is skipped (under BLOSCKIT_REQUIRE_ORACLES=1: fails)
blosc = available("blosc")                  # C-Blosc 1.x
h5py, hdf5plugin = available("h5py"), available("hdf5plugin")


def run(*args, input=None, binary=False, timeout=120):
    """``python -m blosckit ARGS``; ``input`` bytes (or ``binary``) run it
    without text decoding."""
    text = not (binary or isinstance(input, (bytes, bytearray)))
    return cli_runner.blosckit(*args, input=input, text=text, timeout=timeout)


def run_many(calls: list[tuple], inputs: list | None = None) -> list[subprocess.CompletedProcess]:
    """Several independent runs at once (each is mostly interpreter start-up);
    ``inputs``: standard input of each run (bytes), when given."""
    inputs = inputs if inputs is not None else [None] * len(calls)
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(lambda a, i: run(*a, input=i), calls, inputs))


def json_rows(stdout: str) -> list[dict]:
    """One JSON object per line, every line."""
    return [json.loads(line) for line in stdout.splitlines()]


def no_traceback(r: subprocess.CompletedProcess) -> None:
    err = r.stderr if isinstance(r.stderr, str) else r.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    # the CLI's words for an exception it did not expect ("unexpected KeyError: ...")
    assert not re.search(r"unexpected \w+(Error|Exception)\b", err), err


# ``FILE:OFFSET: severity: path: message [rule]`` (stderr lines carry a
# "blosckit: " prefix, inspect's a suffix)
PROBLEM = re.compile(r"^(?P<file>.+?):(?P<offset>\d+): (?P<severity>error|warning|unsupported): "
                     r"(?P<path>\S+): (?P<message>.+) \[(?P<rule>[\w-]+)\]$")


def problem_line(line: str) -> re.Match:
    line = line.removeprefix("blosckit: ").removesuffix(" (inspection stopped here)")
    m = PROBLEM.match(line)
    assert m, f"not FILE:OFFSET: severity: path: message [rule]: {line!r}"
    return m


# ---------------------------------------------------------------------------
# The files: made once with the oracle libraries
# ---------------------------------------------------------------------------

ARANGE = np.arange(100_000, dtype="<i4")
LINSPACE = np.linspace(0, 1, 50_000)
FLOATS = np.linspace(0, 100, 50_000).astype("<f4")
ARRAY = np.arange(60 * 70, dtype="<f8").reshape(60, 70)


@dataclass
class Sample:
    name: str
    path: Path
    kind: str                 # chunk | frame | sframe
    data: bytes               # what decompress writes (the oracle's decoding)
    expect: dict              # info fields as the oracle library states them
    array: np.ndarray | None = None      # b2nd: what decompress to .npy writes
    meta: list = field(default_factory=list)
    vlmeta: list = field(default_factory=list)

    @property
    def size(self) -> int:
        """Bytes offsets count in (a sparse frame: its index file)."""
        p = self.path / "chunks.b2frame" if self.kind == "sframe" else self.path
        return p.stat().st_size

    @property
    def index_bytes(self) -> bytes:
        return (self.path / "chunks.b2frame").read_bytes() if self.kind == "sframe" \
            else self.path.read_bytes()


def _b2_chunk(d: Path, name: str, src: np.ndarray, codec, filters, meta=None, clevel=5):
    chunk = blosc2.compress2(src.tobytes(), codec=codec, clevel=clevel,
                             typesize=src.dtype.itemsize, filters=list(filters),
                             filters_meta=list(meta or [0] * len(filters)))
    path = d / f"{name}.b2chunk"
    path.write_bytes(chunk)
    nbytes, cbytes, blocksize = blosc2.get_cbuffer_sizes(chunk)
    names = [f.name.lower() for f in filters]
    return Sample(name, path, "chunk", blosc2.decompress2(chunk), {
        "format": "Blosc2", "codec": codec.name.lower(), "typesize": src.dtype.itemsize,
        "nbytes": nbytes, "cbytes": cbytes, "blocksize": blocksize,
        "filters": [[n, m] for n, m in zip(names, meta or [0] * len(filters))]})


def _blosc1_chunk(d: Path, name: str, src: np.ndarray, cname: str, shuffle: int, fname: str):
    chunk = blosc.compress(src.tobytes(), typesize=src.dtype.itemsize, cname=cname,
                           shuffle=shuffle)
    path = d / f"{name}.bloscchunk"
    path.write_bytes(chunk)
    nbytes, cbytes, blocksize = blosc.get_cbuffer_sizes(chunk)
    return Sample(name, path, "chunk", blosc.decompress(chunk), {
        "format": "Blosc1", "version": 2, "codec": cname, "typesize": src.dtype.itemsize,
        "nbytes": nbytes, "cbytes": cbytes, "blocksize": blocksize,
        "filters": [[fname, 0]]})


def _schunk_expect(s) -> dict:
    return {"nbytes": s.nbytes, "cbytes": s.cbytes, "nchunks": s.nchunks,
            "typesize": s.typesize, "chunksize": s.chunksize,
            "codec": s.cparams.codec.name.lower(), "clevel": s.cparams.clevel}


def _chunks_of(s) -> bytes:
    return b"".join(s.decompress_chunk(i) for i in range(s.nchunks))


def _frame_sample(name: str, path: Path, kind: str, s, array=None) -> Sample:
    expect = _schunk_expect(s)
    if array is not None:
        expect["b2nd"] = {"shape": list(array.shape)}
    return Sample(name, path, kind, _chunks_of(s), expect, array,
                  meta=list(s.meta.keys()), vlmeta=sorted(s.vlmeta.getall()))


def _hdf5_samples(d: Path) -> list[Sample]:
    out = []
    with h5py.File(d / "data.h5", "w") as f:
        ds2 = f.create_dataset("b2", data=ARRAY, chunks=(30, 70), **hdf5plugin.Blosc2(
            cname="zstd", clevel=5, filters=hdf5plugin.Blosc2.BITSHUFFLE))
        ds1 = f.create_dataset("b1", data=ARRAY, chunks=(30, 70), **hdf5plugin.Blosc(
            cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE))
        _, raw2 = ds2.id.read_direct_chunk((0, 0))
        _, raw1 = ds1.id.read_direct_chunk((0, 0))
    first = ARRAY[:30]
    p2 = d / "hdf5-blosc2.rawchunk"
    p2.write_bytes(raw2)
    if raw2[2:10] == b"b2frame\x00":        # the plugin writes each chunk as a b2nd frame
        s = blosc2.schunk_from_cframe(raw2, copy=True)
        nd = blosc2.ndarray_from_cframe(raw2)
        assert nd[:].tobytes() == first.tobytes()
        out.append(_frame_sample("hdf5-blosc2", p2, "frame", s, nd[:]))
    else:                                    # older plugins: a plain chunk
        out.append(Sample("hdf5-blosc2", p2, "chunk", blosc2.decompress2(raw2),
                          {"nbytes": first.nbytes}))
    if blosc is None:
        return out
    assert blosc.decompress(raw1) == first.tobytes()
    p1 = d / "hdf5-blosc1.rawchunk"
    p1.write_bytes(raw1)
    nbytes, cbytes, blocksize = blosc.get_cbuffer_sizes(raw1)
    out.append(Sample("hdf5-blosc1", p1, "chunk", blosc.decompress(raw1), {
        "format": "Blosc1", "codec": "lz4", "typesize": 8, "nbytes": nbytes,
        "cbytes": cbytes, "blocksize": blocksize}))
    return out


def _make_samples(d: Path) -> Samples:
    C, F = blosc2.Codec, blosc2.Filter
    out = [
        _b2_chunk(d, "b2-lz4hc-shuffle", ARANGE, C.LZ4HC, [F.SHUFFLE]),
        _b2_chunk(d, "b2-zstd-bitshuffle", LINSPACE, C.ZSTD, [F.BITSHUFFLE], clevel=9),
        _b2_chunk(d, "b2-zlib-truncprec", FLOATS, C.ZLIB, [F.TRUNC_PREC, F.SHUFFLE],
                  meta=[13, 0]),
        _b2_chunk(d, "b2-blosclz-bytedelta", ARANGE, C.BLOSCLZ, [F.SHUFFLE, F.BYTEDELTA],
                  meta=[0, 4]),
        _b2_chunk(d, "b2-lz4-delta", ARANGE, C.LZ4, [F.DELTA, F.SHUFFLE]),
    ]
    if blosc is not None:
        out += [_blosc1_chunk(d, "blosc1-zlib", ARANGE, "zlib", blosc.SHUFFLE, "shuffle"),
                _blosc1_chunk(d, "blosc1-lz4-bitshuffle", LINSPACE, "lz4", blosc.BITSHUFFLE,
                              "bitshuffle")]
    # a contiguous frame: 10 full chunks and a partial one, metalayers, vlmetalayers
    s = blosc2.SChunk(chunksize=40_000, data=np.arange(101_000, dtype="<i4").tobytes(),
                      cparams={"typesize": 4, "codec": C.ZSTD, "filters": [F.SHUFFLE]},
                      meta={"m1": {"x": 1}, "m2": [1, 2, 3]})
    s.vlmeta["author"] = "me"
    s.vlmeta["n"] = [1, 2]
    p = d / "schunk.b2frame"
    p.write_bytes(s.to_cframe())
    out.append(_frame_sample("cframe", p, "frame", blosc2.open(str(p))))
    # a sparse frame directory
    sd = d / "sparse.b2frame"
    s = blosc2.SChunk(chunksize=40_000, urlpath=str(sd), contiguous=False, mode="w",
                      cparams={"typesize": 4, "codec": C.LZ4, "filters": [F.BITSHUFFLE]})
    for i in range(3):
        s.append_data(ARANGE[i * 10_000:(i + 1) * 10_000].tobytes())
    s.vlmeta["where"] = "sparse"
    del s
    out.append(_frame_sample("sframe", sd, "sframe", blosc2.open(str(sd))))
    # a b2nd array file
    pa = d / "array.b2nd"
    blosc2.asarray(ARRAY, urlpath=str(pa), chunks=(20, 30), blocks=(10, 10), mode="w")
    nd = blosc2.open(str(pa))
    smp = _frame_sample("b2nd", pa, "frame", nd.schunk, ARRAY)
    smp.expect["b2nd"].update(chunkshape=list(nd.chunks), blockshape=list(nd.blocks),
                              dtype=nd.dtype.str)
    out.append(smp)
    if h5py is not None and hdf5plugin is not None:
        out += _hdf5_samples(d)
    return Samples({s.name: s for s in out})


SAMPLE_NAMES = ["b2-lz4hc-shuffle", "b2-zstd-bitshuffle", "b2-zlib-truncprec",
                "b2-blosclz-bytedelta", "b2-lz4-delta", "blosc1-zlib", "blosc1-lz4-bitshuffle",
                "cframe", "sframe", "b2nd", "hdf5-blosc2", "hdf5-blosc1"]
# the oracles a sample needs besides python-blosc2
NEEDS = {"blosc1-zlib": ("blosc",), "blosc1-lz4-bitshuffle": ("blosc",),
         "hdf5-blosc2": ("h5py", "hdf5plugin"), "hdf5-blosc1": ("h5py", "hdf5plugin", "blosc")}
MADE = [n for n in SAMPLE_NAMES if all(available(m) for m in NEEDS.get(n, ()))]


class Samples(dict):
    """The sample files by name.  Asking for one that was not made skips
    the test, naming the missing oracle."""

    def __missing__(self, name: str) -> Sample:
        for module in NEEDS.get(name, ()):
            oracle(module)
        raise KeyError(name)


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> Samples:
    got = _make_samples(tmp_path_factory.mktemp("samples"))
    assert sorted(got) == sorted(MADE)
    return got


@dataclass
class Runs:
    """The multi-file commands, run once over every sample."""
    validate: subprocess.CompletedProcess
    validate_json: dict[str, dict]
    info: dict[str, dict]
    inspect: dict[str, dict]
    inspect_chunk1: dict[str, dict]
    decompress: dict[str, tuple[Path, subprocess.CompletedProcess]]   # "NAME.raw", "NAME.npy"


@pytest.fixture(scope="module")
def runs(samples, tmp_path_factory) -> Runs:
    paths = [samples[n].path for n in MADE]
    frames = [samples[n].path for n in MADE
              if samples[n].kind != "chunk" and samples[n].expect["nchunks"] > 1]
    out = tmp_path_factory.mktemp("decompressed")
    calls = [("validate", *paths), ("validate", "--json", *paths), ("info", "--json", *paths),
             ("inspect", "--json", *paths), ("inspect", "--json", "--chunk", "1", *frames)]
    outs = [f"{n}.raw" for n in MADE] + \
        [f"{n}.npy" for n in MADE if samples[n].array is not None]
    calls += [("decompress", samples[o.rsplit(".", 1)[0]].path, out / o) for o in outs]
    done = run_many(calls)
    v, vj, info, ins, ins1 = done[:5]
    for r in (vj, info, ins, ins1):
        assert r.returncode == 0, r.stderr
    by_file = lambda r: {row["file"]: row for row in json_rows(r.stdout)}   # noqa: E731
    return Runs(v, by_file(vj), by_file(info), by_file(ins), by_file(ins1),
                {o: (out / o, r) for o, r in zip(outs, done[5:])})


# ---------------------------------------------------------------------------
# 1-2. Every real file: validate, info, inspect, decompress
# ---------------------------------------------------------------------------

def test_validate_says_ok_for_every_file(samples, runs):
    r = runs.validate
    assert r.returncode == 0, r.stdout + r.stderr
    no_traceback(r)
    assert r.stdout.splitlines() == [f"{samples[n].path}: ok ({samples[n].kind})"
                                     for n in MADE]


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_validate_json(samples, runs, name):
    s = samples[name]
    assert runs.validate_json[str(s.path)] == {"file": str(s.path), "kind": s.kind,
                                               "valid": True, "problems": []}


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_info_json_agrees_with_the_libraries(samples, runs, name):
    s = samples[name]
    row = runs.info[str(s.path)]
    assert row["kind"] == s.kind and row["valid"] is True and row["problems"] == []
    for key, want in s.expect.items():
        if key == "b2nd":
            assert {k: row["b2nd"][k] for k in want} == want
        else:
            assert row[key] == want, key
    if s.kind == "chunk":
        c = blosckit.parse_chunk(s.path.read_bytes())
        assert (row["version"], row["nbytes"], row["cbytes"], row["typesize"],
                row["blocksize"], row["trailing"]) == \
            (c.version, c.nbytes, c.cbytes, c.typesize, c.blocksize, 0)
        assert row["filters"] == [[n, m] for n, m in c.filters]
        assert row["format"] == ("Blosc2" if c.version >= 3 else "Blosc1")
        assert row["ratio"] == pytest.approx(c.nbytes / c.cbytes, abs=1e-3)
    else:
        with blosckit.open_frame(s.path) as f:
            assert (row["nchunks"], row["nbytes"], row["cbytes"], row["typesize"],
                    row["chunksize"], row["codec"]) == \
                (f.nchunks, f.nbytes, f.cbytes, f.typesize, f.chunksize, f.codec)
        assert row["metalayers"] == s.meta
        assert sorted(row["vlmetalayers"]) == s.vlmeta
        assert ("b2nd" in row) == (s.array is not None)


def _check_node_bounds(s: Sample, nodes: list[dict], base: int = 0, size: int | None = None):
    size = s.size if size is None else size
    for n in nodes:
        assert n["offset"] >= base and n["size"] >= 0, n
        m = re.match(r"frame\.chunks\[(\d+)\]", n["path"])
        if s.kind == "sframe" and m:      # counts in its own chunk file
            files = sorted(s.path.glob("*.chunk"))
            limit = files[int(m.group(1))].stat().st_size
            assert n["offset"] + n["size"] <= limit, n
        else:
            assert n["offset"] + n["size"] <= base + size, n


def _check_leaf_bytes(data: bytes, nodes: list[dict]) -> int:
    """Integer leaves against the stored bytes: the frame header, trailer
    and msgpack metalayers are big-endian; chunk headers and a raw offsets
    index little-endian.  Returns how many were checked."""
    checked = 0
    for n in nodes:
        v, size, path = n["value"], n["size"], n["path"]
        if n["raw"] is not None:
            assert n["raw"] == data[n["offset"]:n["offset"] + size].hex(" "), n
        if not isinstance(v, int) or isinstance(v, bool) or n["bit"] is not None \
                or size not in (1, 2, 4, 8):
            continue
        if re.search(r"\['[^']*'\]$", path):
            continue                   # a metalayer's value: msgpack, shown decoded
        if path.startswith(("frame.header.", "frame.trailer.", "frame.metalayers")):
            order = "big"              # msgpack
        elif re.search(r"(^chunk\.|\.header\.|^frame\.offsets\[\d+\]$)", path):
            order = "little"           # a Blosc chunk; a memcpyed offsets index
        else:
            continue
        raw = data[n["offset"]:n["offset"] + size]
        assert int.from_bytes(raw, order, signed=v < 0) == v, n
        checked += 1
    return checked


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_inspect_json_nodes_lie_in_the_file_and_match_the_bytes(samples, runs, name):
    s = samples[name]
    out = runs.inspect[str(s.path)]
    assert (out["kind"], out["stopped"]) == (s.kind, None)
    nodes = out["nodes"]
    assert nodes and {"path", "name", "offset", "size", "value", "meaning", "doc", "bit",
                      "raw"} == set(nodes[0])
    _check_node_bounds(s, nodes)
    by_path = {n["path"]: n for n in nodes}
    if s.kind == "chunk":
        assert by_path["chunk.header.nbytes"]["value"] == s.expect["nbytes"]
        assert by_path["chunk.header.cbytes"]["value"] == s.expect["cbytes"] == s.size
        assert _check_leaf_bytes(s.path.read_bytes(), nodes) >= 10
        return
    data = s.index_bytes
    assert _check_leaf_bytes(data, nodes) >= 20
    assert by_path["frame"]["offset"] == 0 and by_path["frame"]["size"] == len(data)
    assert by_path["frame.header.frame_len"]["value"] == len(data)
    assert by_path["frame.header.nbytes"]["value"] == s.expect["nbytes"]
    assert by_path["frame.header.typesize"]["value"] == s.expect["typesize"]
    assert by_path["frame.header.chunksize"]["value"] == s.expect["chunksize"]
    nchunks = s.expect["nchunks"]
    assert [p for p in by_path if re.fullmatch(r"frame\.chunks\[\d+\]", p)] == \
        [f"frame.chunks[{i}]" for i in range(nchunks)]
    assert [p for p in by_path if re.fullmatch(r"frame\.offsets\[\d+\]", p)] == \
        [f"frame.offsets[{i}]" for i in range(nchunks)]
    for m in s.meta:
        assert f"frame.metalayers[{m!r}]" in by_path
    for m in s.vlmeta:
        assert f"frame.trailer.vlmetalayers[{m!r}]" in by_path
    if s.array is not None:
        assert by_path["frame.metalayers['b2nd'].shape"]["value"] == list(s.array.shape)


@pytest.mark.parametrize("name", ["cframe", "sframe", "b2nd"])
def test_inspect_chunk_expands_one_chunk(samples, runs, name):
    s = samples[name]
    out = runs.inspect_chunk1.get(str(s.path))
    assert out is not None and out["stopped"] is None
    nodes = out["nodes"]
    _check_node_bounds(s, nodes)
    inner = {n["path"]: n for n in nodes if n["path"].startswith("frame.chunks[1].")}
    assert not any(n["path"].startswith(("frame.chunks[0].", "frame.chunks[2]."))
                   for n in nodes)
    assert inner["frame.chunks[1].header.nbytes"]["value"] == s.expect["chunksize"]
    assert inner["frame.chunks[1].header.typesize"]["value"] == s.expect["typesize"]
    data = (sorted(s.path.glob("*.chunk"))[1].read_bytes() if s.kind == "sframe"
            else s.path.read_bytes())
    assert _check_leaf_bytes(data, list(inner.values())) >= 10


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_decompress_gives_the_original_data(samples, runs, name):
    s = samples[name]
    out, r = runs.decompress[f"{name}.raw"]
    assert r.returncode == 0, r.stderr
    # a b2nd frame's raw output is its array's items in C order (what
    # python-blosc2 was given), not its chunks as stored
    want = s.array.tobytes() if "b2nd" in s.expect else s.data
    assert out.read_bytes() == want
    assert str(s.path) in r.stderr and f"{len(want)} bytes" in r.stderr
    if s.expect.get("nbytes") is not None and s.array is None:
        assert len(s.data) == s.expect["nbytes"]
    if s.array is not None:
        npy, r = runs.decompress[f"{name}.npy"]
        assert r.returncode == 0, r.stderr
        got = np.load(npy)
        assert got.shape == s.array.shape
        if got.dtype.kind == "V":           # the HDF5 plugin stores opaque items
            assert got.tobytes() == s.array.tobytes()
        else:
            assert got.dtype == s.array.dtype
            np.testing.assert_array_equal(got, s.array)


def test_lossless_samples_decode_to_their_input(samples):
    # the oracle's decoding, which the tests above compare with, is the input
    assert samples["b2-lz4hc-shuffle"].data == ARANGE.tobytes()
    assert samples["blosc1-lz4-bitshuffle"].data == LINSPACE.tobytes()
    assert samples["cframe"].data == np.arange(101_000, dtype="<i4").tobytes()
    assert samples["sframe"].data == ARANGE[:30_000].tobytes()


def test_zarr_chunk_files(tmp_path):
    zarr, numcodecs, c_blosc = oracle("zarr"), oracle("numcodecs"), oracle("blosc")
    a = np.arange(50 * 40, dtype="<i8").reshape(50, 40)
    comp = numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE)
    store = tmp_path / "a.zarr"
    if hasattr(zarr, "create_array"):                   # zarr 3
        z = zarr.create_array(store=str(store), shape=a.shape, chunks=(25, 40), dtype=a.dtype,
                              zarr_format=2, compressors=comp)
    else:                                               # zarr 2
        z = zarr.open_array(str(store), mode="w", shape=a.shape, chunks=(25, 40),
                            dtype=a.dtype, compressor=comp)
    z[:] = a
    files = [store / "0.0", store / "1.0"]
    assert all(f.is_file() for f in files)
    r = run("validate", store)           # the store is one input: every chunk checked
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [f"{store}: ok (zarr store)"]
    r = run("validate", *files)          # and each chunk file on its own
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == sorted(f"{f}: ok (chunk)" for f in files)
    r = run("info", "--json", *files)
    assert r.returncode == 0, r.stderr
    for row, f, part in zip(json_rows(r.stdout), files, (a[:25], a[25:])):
        raw = f.read_bytes()
        nbytes, cbytes, blocksize = c_blosc.get_cbuffer_sizes(raw)
        assert (row["codec"], row["typesize"], row["nbytes"], row["cbytes"],
                row["filters"]) == ("zstd", 8, nbytes, cbytes, [["bitshuffle", 0]])
        out = tmp_path / f"{f.name}.bin"
        r2 = run("decompress", f, out)
        assert r2.returncode == 0, r2.stderr
        assert out.read_bytes() == part.tobytes() == numcodecs.Blosc().decode(raw)


# ---------------------------------------------------------------------------
# 3. Several files with a bad one in the middle
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bad_frame(samples, tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("bad") / "cut.b2frame"
    p.write_bytes(samples["cframe"].path.read_bytes()[:3000])
    return p


def several_calls(samples, bad_frame) -> dict[str, tuple]:
    s = {k: v.path for k, v in samples.items()}
    missing = bad_frame.parent / "absent.b2frame"
    return {
        "validate": ("validate", s["b2-lz4hc-shuffle"], bad_frame, missing, s["sframe"]),
        "validate-json": ("validate", "--json", s["b2-lz4hc-shuffle"], bad_frame, missing,
                          s["sframe"]),
        "info": ("info", s["cframe"], bad_frame, s["b2nd"]),
        "info-json": ("info", "--json", s["cframe"], bad_frame, s["b2nd"]),
        "inspect": ("inspect", s["blosc1-zlib"], bad_frame, s["cframe"]),
        "inspect-json": ("inspect", "--json", s["blosc1-zlib"], bad_frame, missing, s["cframe"]),
        "scan-json": ("scan", "--json", s["cframe"], missing, s["cframe"]),
    }


@pytest.fixture(scope="module")
def several(samples, bad_frame) -> dict[str, subprocess.CompletedProcess]:
    calls = several_calls(samples, bad_frame)
    return dict(zip(calls, run_many(list(calls.values()))))


def failed(several, call: str) -> subprocess.CompletedProcess:
    """The run of ``call`` over several files, one of them bad: exit 1, no traceback."""
    r = several[call]
    assert r.returncode == 1
    no_traceback(r)
    return r


@pytest.fixture
def missing(bad_frame) -> Path:
    return bad_frame.parent / "absent.b2frame"


def test_validate_several_files_with_a_bad_one(samples, bad_frame, several, missing):
    good1, good2 = samples["b2-lz4hc-shuffle"].path, samples["sframe"].path
    r = failed(several, "validate")
    lines = r.stdout.splitlines()
    assert lines[0] == f"{good1}: ok (chunk)" and lines[-1] == f"{good2}: ok (sframe)"
    bad = [problem_line(x) for x in lines[1:-1]]
    assert bad and all(m["file"] == str(bad_frame) for m in bad)
    assert bad[0]["offset"] == "3000" and bad[0]["severity"] == "error"
    err, = r.stderr.strip().splitlines()
    assert str(missing) in err and str(good1) not in err
    r = failed(several, "validate-json")
    rows = json_rows(r.stdout)
    assert [row.get("file") for row in rows] == [str(good1), str(bad_frame), None, str(good2)]
    assert [row.get("valid") for row in rows] == [True, False, None, True]
    assert rows[2]["error"]["file"] == str(missing)
    p = rows[1]["problems"][0]
    # cut at 3000: the input's truncation, inside the frame's chunks section
    assert (p["offset"], p["severity"], p["path"], p["rule"]) == \
        (3000, "error", "frame.chunks", "T-truncated")
    assert p["message"].startswith("the input ends at byte 3000, inside frame.chunks "
                                   "(frame_len says the frame is ")


def test_info_several_files_with_a_bad_one(samples, bad_frame, several):
    good1, good2 = samples["cframe"].path, samples["b2nd"].path
    r = failed(several, "info")
    assert f"{good1}: Blosc2 contiguous frame" in r.stdout
    assert f"{good2}: Blosc2 contiguous frame" in r.stdout
    assert str(bad_frame) not in r.stdout
    line, = r.stderr.strip().splitlines()
    m = problem_line(line)
    assert (m["file"], m["offset"]) == (str(bad_frame), "3000")
    r = failed(several, "info-json")
    rows = json_rows(r.stdout)
    assert [row.get("file") for row in rows] == [str(good1), None, str(good2)]
    assert rows[1]["error"]["file"] == str(bad_frame)
    assert rows[1]["error"]["offset"] == 3000 and rows[1]["error"]["rule"]
    assert rows[0]["nbytes"] == samples["cframe"].expect["nbytes"]


def test_inspect_several_files_with_a_bad_one(samples, bad_frame, several, missing):
    good1, good2 = samples["blosc1-zlib"].path, samples["cframe"].path
    r = failed(several, "inspect-json")
    rows = json_rows(r.stdout)
    assert [row.get("file") for row in rows] == [str(good1), str(bad_frame), None, str(good2)]
    assert rows[0]["stopped"] is None and rows[3]["stopped"] is None
    stopped = rows[1]["stopped"]
    assert stopped["file"] == str(bad_frame) and stopped["offset"] == 3000
    assert rows[1]["nodes"], "what could be read before the damage is shown"
    assert all(n["offset"] + n["size"] <= 3000 for n in rows[1]["nodes"])
    assert rows[2]["error"]["file"] == str(missing)
    errs = r.stderr.strip().splitlines()
    assert len(errs) == 2 and str(bad_frame) in errs[0] and str(missing) in errs[1]
    problem_line(errs[0])
    r = failed(several, "inspect")
    assert r.stdout.count("\n") > 100 and str(bad_frame) in r.stderr


def test_scan_several_files_with_a_bad_one(samples, bad_frame, several, missing):
    good = samples["cframe"].path
    r = failed(several, "scan-json")
    rows = json_rows(r.stdout)
    assert [row.get("file") for row in rows] == [str(good), None, str(good)]
    assert rows[1]["error"]["file"] == str(missing)


# ---------------------------------------------------------------------------
# 4. Damaged copies and garbage
# ---------------------------------------------------------------------------

def _frame_positions(b: bytes) -> dict[str, int]:
    """Byte positions in a cframe, found from the format alone (msgpack
    big-endian header fields; the trailer's length 22 bytes from the end)."""
    n = len(b)
    header_len = int.from_bytes(b[11:15], "big")
    cbytes = int.from_bytes(b[39:47], "big")
    index = header_len + cbytes
    trailer = n - int.from_bytes(b[n - 22:n - 18], "big")
    assert b[trailer] == 0x94 and b[n - 23] == 0xCE and b[index] in (2, 3, 4, 5)
    return {"header.magic": 2, "header.magic5": 5, "header.header_len": 14,
            "header.frame_len": 23, "header.nbytes": 37, "header.cbytes": 46,
            "index.version": index, "index.nbytes": index + 4, "index.cbytes": index + 12,
            "trailer.marker": trailer, "trailer.len_marker": n - 23,
            "trailer.len": n - 20, "trailer.fingerprint_marker": n - 18}


CHUNK_FLIPS = {"version": 0, "nbytes": 6, "cbytes": 13}


@pytest.fixture(scope="module")
def damaged(samples, tmp_path_factory) -> list[tuple[Path, int]]:
    """(path, size) of damaged copies: cut at several offsets, a byte
    inverted in a frame's header, index and trailer (a chunk's header)."""
    d = tmp_path_factory.mktemp("damaged")
    out = []
    for name in ("b2-lz4hc-shuffle", "b2-zstd-bitshuffle", "blosc1-zlib", "cframe", "b2nd",
                 "hdf5-blosc2"):
        b = samples[name].path.read_bytes()
        n = len(b)
        for cut in sorted({0, 1, 8, 15, 16, 31, 40, n // 3, n // 2, n - 30, n - 1}):
            p = d / (f"{name}.cut{cut}" if cut != n // 2 else f"{name}.cut{cut}-half")
            p.write_bytes(b[:cut])
            out.append((p, cut))
        flips = _frame_positions(b) if samples[name].kind == "frame" else CHUNK_FLIPS
        for what, pos in flips.items():
            bb = bytearray(b)
            bb[pos] ^= 0xFF
            p = d / f"{name}.flip-{what}"
            p.write_bytes(bytes(bb))
            out.append((p, n))
    return out


def test_damaged_copies_validate(damaged):
    paths = [p for p, _ in damaged]
    size = {str(p): n for p, n in damaged}
    rj, r, rq = run_many([("validate", "--json", *paths), ("validate", *paths),
                          ("validate", "--shallow", "-q", *paths)])
    assert rj.returncode == 1
    no_traceback(rj)
    rows = json_rows(rj.stdout)
    assert [row["file"] for row in rows] == [str(p) for p in paths]
    for row in rows:
        assert row["valid"] is False, row
        errors = [p for p in row["problems"] if p["severity"] == "error"]
        assert errors, row
        for p in row["problems"]:
            assert 0 <= p["offset"] <= size[row["file"]], p
            assert p["path"] and p["message"] and p["rule"], p
    assert r.returncode == 1
    no_traceback(r)
    named = set()
    for line in r.stdout.splitlines():
        m = problem_line(line)
        assert 0 <= int(m["offset"]) <= size[m["file"]], line
        named.add(m["file"])
    assert named == set(size)
    assert rq.returncode == 1
    no_traceback(rq)
    assert rq.stdout and all(problem_line(x) for x in rq.stdout.splitlines())


def test_damaged_copies_info_and_inspect(damaged):
    paths = [p for p, _ in damaged]
    size = {str(p): n for p, n in damaged}
    info, ins = run_many([("info", "--json", *paths), ("inspect", "--json", *paths)])
    for r in (info, ins):
        assert r.returncode in (1, 3)
        no_traceback(r)
    rows = json_rows(info.stdout)
    assert len(rows) == len(paths)
    for row, p in zip(rows, paths):
        if "error" in row:
            rec = row["error"]
            assert rec["file"] == str(p) and rec["severity"] in ("error", "unsupported")
            assert 0 <= rec["offset"] <= size[str(p)], rec
        else:
            assert row["file"] == str(p) and row["valid"] is False, row
    rows = json_rows(ins.stdout)
    assert len(rows) == len(paths)
    for row, p in zip(rows, paths):
        rec = row.get("error") or row["stopped"]
        # a cut structure stops the inspector; an inverted byte may only
        # change a value it shows (the validator is what judges values)
        assert rec is not None or ".flip-" in p.name, f"inspect read {p} to the end"
        if rec is not None:
            assert rec["file"] == str(p) and 0 <= rec["offset"] <= size[str(p)], rec
        for n in row.get("nodes", []):
            assert 0 <= n["offset"] and n["offset"] + n["size"] <= size[str(p)], (p, n)
    for line in info.stderr.splitlines() + ins.stderr.splitlines():
        m = problem_line(line)
        assert 0 <= int(m["offset"]) <= size[m["file"]], line


DECOMPRESS_PICKS = ("b2-lz4hc-shuffle.flip-cbytes", "blosc1-zlib.flip-version",
                    "cframe.flip-header.frame_len", "cframe.flip-index.version",
                    "cframe.flip-trailer.len", "b2nd.flip-index.cbytes",
                    "hdf5-blosc2.flip-trailer.len_marker")


def test_damaged_copies_decompress(damaged, tmp_path):
    # one run per file (decompress takes one input): cut in the middle, and
    # inverted bytes of chunk headers and of a frame's header, index and trailer
    picked = [(p, n) for p, n in damaged if p.name.endswith(DECOMPRESS_PICKS) or
              p.name.startswith(("b2-zstd-bitshuffle.cut", "b2nd.cut")) and
              p.name.endswith("-half")]
    assert len(picked) >= 8
    done = run_many([("decompress", p, tmp_path / f"{p.name}.out") for p, _ in picked])
    for (p, n), r in zip(picked, done):
        assert r.returncode in (1, 3), (p, r.stderr)
        no_traceback(r)
        line, = r.stderr.strip().splitlines()
        m = problem_line(line)
        assert m["file"] == str(p) and 0 <= int(m["offset"]) <= n, line


def test_damaged_sparse_frames(samples, tmp_path):
    src = samples["sframe"].path
    dirs = {}
    for what in ("missing-chunk", "cut-chunk", "cut-index"):
        d = tmp_path / f"{what}.b2frame"
        shutil.copytree(src, d)
        dirs[what] = d
    (dirs["missing-chunk"] / "00000001.chunk").unlink()
    c = dirs["cut-chunk"] / "00000002.chunk"
    c.write_bytes(c.read_bytes()[:200])
    i = dirs["cut-index"] / "chunks.b2frame"
    i.write_bytes(i.read_bytes()[:150])
    names = [str(d) for d in dirs.values()]
    calls = [("validate", "--json", *dirs.values()), ("info", "--json", *dirs.values()),
             ("inspect", "--json", *dirs.values())]
    calls += [("decompress", d, tmp_path / f"{d.name}.out") for d in dirs.values()]
    done = run_many(calls)
    for args, r in zip(calls, done):
        assert r.returncode == 1, (args, r.stderr)
        no_traceback(r)
        for line in r.stderr.strip().splitlines():
            assert problem_line(line)["file"] in names, line
    validate, info, inspect = (json_rows(r.stdout) for r in done[:3])
    assert [row["file"] for row in validate] == names
    assert all(row["kind"] == "sframe" and row["valid"] is False for row in validate)
    for rows in (info, inspect):
        assert len(rows) == 3
        for row, name in zip(rows, names):
            rec = row.get("error") or row.get("stopped") or \
                (row["problems"][0] if not row.get("valid", True) else None)
            assert rec and rec["file"] == name, row
    for r, name in zip(done[3:], names):
        assert problem_line(r.stderr.strip())["file"] == name


@pytest.fixture(scope="module")
def garbage(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("garbage")
    rnd = random.Random(20240501)
    out = {"random": d / "random.bin", "empty": d / "empty.bin", "dir": d / "not-sparse"}
    out["random"].write_bytes(rnd.randbytes(5000))
    out["empty"].write_bytes(b"")
    out["dir"].mkdir()
    (out["dir"] / "notes.txt").write_text("not a Blosc file\n")
    (out["dir"] / "00000000.chunk").write_bytes(b"")   # looks like an sframe's, is not one
    return out


def test_garbage_is_exit_1_with_one_clear_line(garbage, tmp_path):
    paths = [garbage[k] for k in ("random", "empty", "dir")]
    names = [str(p) for p in paths]
    calls = {"info": ("info", "--json", *paths), "inspect": ("inspect", "--json", *paths),
             "validate": ("validate", *paths[:2]),
             "scan": ("scan", *paths[:2])}
    for k, p in enumerate(paths):
        calls[f"decompress{k}"] = ("decompress", p, tmp_path / "o.bin")
        calls[f"salvage{k}"] = ("salvage", "--json", p, tmp_path / "s.b2frame")
    done = dict(zip(calls, run_many(list(calls.values()))))
    for key, r in done.items():
        assert r.returncode == (0 if key == "scan" else 1), (key, r.stdout, r.stderr)
        no_traceback(r)
    for key in ("info", "inspect", "decompress0", "decompress1", "decompress2", "salvage0",
                "salvage1", "salvage2"):                 # one line on stderr per bad input
        lines = done[key].stderr.strip().splitlines()
        assert len(lines) == (3 if key in ("info", "inspect") else 1), done[key].stderr
        for line in lines:
            named = [p for p in paths if f"{p}:" in line]
            assert named, line
            if named[0] == garbage["dir"]:
                assert "not a sparse frame" in line
            else:
                m = problem_line(line)
                assert 0 <= int(m["offset"]) <= named[0].stat().st_size
    for key in ("info", "inspect", "salvage0", "salvage1", "salvage2"):   # and JSON objects
        rows = json_rows(done[key].stdout)
        assert len(rows) == (3 if key in ("info", "inspect") else 1)
        for row in rows:
            rec = row.get("error") or row.get("stopped")
            assert rec and rec["file"] in names, row
    for line in done["validate"].stdout.splitlines():   # validate: problems on stdout
        assert problem_line(line)["file"] in names[:2]
    assert not (tmp_path / "s.b2frame").exists()       # nothing rebuilt, nothing written
    assert not (tmp_path / "o.bin").exists() or (tmp_path / "o.bin").stat().st_size == 0
    # scan: nothing found is not an error
    assert done["scan"].stdout == "" and \
        done["scan"].stderr.count("0 frame(s), 0 chunk(s) found") == 2


def test_validate_walks_a_directory_that_is_not_a_sparse_frame(garbage, samples, tmp_path):
    d = tmp_path / "mixed"
    d.mkdir()
    shutil.copy(samples["b2-lz4hc-shuffle"].path, d / "a.b2chunk")
    (d / "b.b2chunk").write_bytes(samples["b2-lz4hc-shuffle"].path.read_bytes()[:100])
    shutil.copytree(samples["sframe"].path, d / "c.b2frame")
    (d / "readme.txt").write_text("hello")
    empty, r = run_many([("validate", garbage["dir"]), ("validate", d)])
    # nothing there looks like Blosc: a directory named alone must hold something
    assert empty.returncode == 1 and empty.stdout == ""
    no_traceback(empty)
    assert "notes.txt: skipped" in empty.stderr
    assert "no chunk, frame or sparse frame in this directory" in empty.stderr
    assert r.returncode == 1
    no_traceback(r)
    lines = r.stdout.splitlines()
    assert f"{d / 'a.b2chunk'}: ok (chunk)" in lines
    assert f"{d / 'c.b2frame'}: ok (sframe)" in lines
    bad = [problem_line(x) for x in lines if x.startswith(str(d / "b.b2chunk"))]
    assert bad and bad[0]["offset"] == "100"
    assert not any("00000000.chunk" in x for x in lines + r.stderr.splitlines())
    assert "readme.txt: skipped" in r.stderr


def _unsupported_chunk(path: Path) -> Path:
    chunk = bytearray(blosckit.compress(ARANGE[:10_000].tobytes(), typesize=4))
    chunk[2] = (chunk[2] & 0x1F) | (6 << 5)       # compformat 6: user-defined codec
    chunk[22] = 250                                # a plugin codec id with no decoder
    path.write_bytes(bytes(chunk))
    return path


def test_unsupported_codec_decompress_is_exit_3(tmp_path):
    p = _unsupported_chunk(tmp_path / "plugin.b2chunk")
    r = run("decompress", p, tmp_path / "o.bin")
    assert r.returncode == 3, r.stderr
    no_traceback(r)
    m = problem_line(r.stderr.strip())
    assert m["severity"] == "unsupported" and m["offset"] == "22" and m["rule"] == "T-codec"


def test_unsupported_codec_info_names_the_codec(tmp_path):
    p = _unsupported_chunk(tmp_path / "plugin.b2chunk")
    r = run("info", p)
    assert r.returncode in (1, 3), r.stderr
    no_traceback(r)
    assert "codec-250" in r.stdout + r.stderr


# ---------------------------------------------------------------------------
# 5. Standard input and output; compress and decompress round trips
# ---------------------------------------------------------------------------

STDIN_SAMPLES = ["b2-zstd-bitshuffle", "cframe"]
STDIN_CALLS = [("validate", "-"), ("info", "--json", "-"), ("decompress", "-", "-")]


def test_stdin_validate_info_decompress(samples, tmp_path):
    calls, inputs = [], []
    for name in STDIN_SAMPLES:
        calls += STDIN_CALLS
        inputs += [samples[name].path.read_bytes()] * len(STDIN_CALLS)
    calls.append(("inspect", "--json", "-"))
    inputs.append(samples["cframe"].path.read_bytes())
    cut = samples["cframe"].path.read_bytes()[:1000]
    calls += [("validate", "-"), ("info", "-"), ("decompress", "-", "-")]
    inputs += [cut] * 3
    npy = tmp_path / "a.npy"
    calls.append(("decompress", "-", npy))
    inputs.append(samples["b2nd"].path.read_bytes())
    done = run_many(calls, inputs)
    for k, name in enumerate(STDIN_SAMPLES):
        s = samples[name]
        v, i, d = done[3 * k:3 * k + 3]
        assert v.returncode == 0 and v.stdout.decode() == f"-: ok ({s.kind})\n", v.stderr
        assert i.returncode == 0, i.stderr
        row = json.loads(i.stdout)
        assert row["file"] == "-" and row["nbytes"] == s.expect["nbytes"] and row["valid"]
        assert d.returncode == 0 and d.stdout == s.data, d.stderr
        assert b"-: " in d.stderr and b"-> -" in d.stderr        # the report: not on stdout
    ins = done[3 * len(STDIN_SAMPLES)]
    assert ins.returncode == 0, ins.stderr
    out = json.loads(ins.stdout)
    assert (out["file"], out["kind"], out["stopped"]) == ("-", "frame", None)
    assert _check_leaf_bytes(samples["cframe"].path.read_bytes(), out["nodes"]) >= 20
    for r in done[-4:-1]:                 # a cut frame on stdin: named "-", file offsets
        assert r.returncode == 1
        no_traceback(r)
        m = problem_line((r.stdout or r.stderr).decode().strip().splitlines()[0])
        assert (m["file"], m["offset"]) == ("-", "1000")
    assert done[-1].returncode == 0, done[-1].stderr           # stdin to a .npy file
    np.testing.assert_array_equal(np.load(npy), samples["b2nd"].array)


CODECS = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]


def test_compress_decompress_round_trip_chunks(tmp_path):
    data = LINSPACE.tobytes()
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    calls = []
    for codec, fmt in [(c, "blosc2") for c in CODECS] + [("lz4hc", "blosc1"), ("zlib", "blosc1")]:
        calls.append(("compress", src, tmp_path / f"{codec}-{fmt}.chunk", "--codec", codec,
                      "--typesize", "8", "--format", fmt, "--clevel", "7",
                      "--filters", "shuffle" if fmt == "blosc1" else "shuffle,bitshuffle"))
    for args, r in zip(calls, run_many(calls)):
        assert r.returncode == 0, (args, r.stderr)
        chunk = Path(args[2]).read_bytes()
        assert blosc2.decompress2(chunk) == data               # the oracle reads it
        if args[8] == "blosc1":
            assert oracle("blosc").decompress(chunk) == data   # and so does C-Blosc 1.x
            assert chunk[0] == 2
        row = blosckit.parse_chunk(chunk)
        assert (row.typesize, row.nbytes) == (8, len(data))
    packed = Path(calls[4][2])                                  # zstd, blosc2
    r = run("decompress", packed, "-", binary=True)
    assert r.returncode == 0 and r.stdout == data


def test_compress_stdin_to_stdout_and_back(tmp_path):
    data = ARANGE.tobytes()
    r = run("compress", "-", "-", "--typesize", "4", "--codec", "lz4hc", input=data)
    assert r.returncode == 0, r.stderr
    chunk = r.stdout
    assert blosc2.decompress2(chunk) == data
    assert blosckit.parse_chunk(chunk).typesize == 4
    r = run("decompress", "-", "-", input=chunk)
    assert r.returncode == 0 and r.stdout == data
    assert b"-: chunk -> 400000 bytes -> -" in r.stderr


def test_compress_frame_round_trip(tmp_path):
    chunksize, typesize, codec = 12_345 * 8, 8, "lz4"
    data = LINSPACE.tobytes()[:chunksize * 3 + 8 * 1001]      # and a partial last chunk
    src, frame = tmp_path / "in.bin", tmp_path / "out.b2frame"
    src.write_bytes(data)
    r = run("compress", src, frame, "--frame", "--chunksize", chunksize, "--typesize",
            typesize, "--codec", codec, "--filters", "shuffle")
    assert r.returncode == 0, r.stderr
    assert "as a frame" in r.stderr
    s = blosc2.open(str(frame))
    assert (s.nbytes, s.typesize, s.chunksize) == (len(data), typesize, chunksize)
    assert s.nchunks == -(-len(data) // chunksize) and s.nchunks >= 4
    assert _chunks_of(s) == data and s[:] == data
    assert _chunks_of(blosc2.schunk_from_cframe(frame.read_bytes(), copy=True)) == data
    v, back, piped = run_many([("validate", frame), ("decompress", frame, "-"),
                               ("compress", "-", "-", "--chunksize", chunksize, "--typesize",
                                typesize, "--codec", codec)], [b"", b"", data])
    assert v.returncode == 0 and v.stdout == f"{frame}: ok (frame)\n".encode()
    assert back.returncode == 0 and back.stdout == data
    # and through the pipes: compress - - | decompress - -
    assert piped.returncode == 0, piped.stderr
    assert _chunks_of(blosc2.schunk_from_cframe(piped.stdout, copy=True)) == data
    assert run("decompress", "-", "-", input=piped.stdout).stdout == data


def test_compress_npy_then_decompress(tmp_path):
    src, packed, back = tmp_path / "a.npy", tmp_path / "a.b2frame", tmp_path / "back.bin"
    np.save(src, ARRAY)
    r = run("compress", src, packed, "--chunksize", 4800)
    assert r.returncode == 0, r.stderr
    s = blosc2.open(str(packed))
    assert s.typesize == 8 and s[:] == ARRAY.tobytes()
    assert run("decompress", packed, back).returncode == 0
    assert back.read_bytes() == ARRAY.tobytes()


# ---------------------------------------------------------------------------
# 6. scan a blob; --offset reads what it found
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def blob(samples, tmp_path_factory):
    rnd = random.Random(7)
    parts = [("frame", samples["cframe"]), ("chunk", samples["b2-lz4hc-shuffle"]),
             ("chunk", samples["blosc1-zlib"])]
    data = bytearray(rnd.randbytes(3001))
    where = []
    for kind, s in parts:
        where.append((len(data), kind, s))
        data += s.path.read_bytes()
        data += rnd.randbytes(rnd.randrange(1000, 3000))
    p = tmp_path_factory.mktemp("blob") / "disk.img"
    p.write_bytes(bytes(data))
    return p, where


@pytest.fixture(scope="module")
def blob_scan(blob) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    path, _ = blob
    return tuple(run_many([("scan", "--json", path), ("scan", path)]))


def test_scan_finds_exactly_the_embedded_structures(blob, blob_scan):
    path, where = blob
    r, text = blob_scan
    assert r.returncode == 0, r.stderr
    rows = json_rows(r.stdout)
    assert [(row["offset"], row["kind"]) for row in rows] == [(o, k) for o, k, _ in where]
    for row, (off, kind, s) in zip(rows, where):
        assert row["file"] == str(path) and row["error"] is None
        assert row["size"] == s.path.stat().st_size
        assert row["nbytes"] == s.expect["nbytes"]
        assert row["summary"]
    r = text
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) == 3
    for line, (off, kind, s) in zip(lines, where):
        assert line.startswith(f"{path}:{off}: {kind} of {s.path.stat().st_size} bytes: "), line
    assert "1 frame(s), 2 chunk(s) found" in r.stderr


def test_scan_names_the_codec_as_info_does(blob, blob_scan):
    rows = json_rows(blob_scan[0].stdout)
    assert "lz4hc" in rows[1]["summary"], rows[1]["summary"]


def test_offset_reads_each_embedded_structure(blob, tmp_path):
    path, where = blob
    calls = []
    for off, kind, s in where:
        calls += [("info", "--json", "--offset", off, path), ("validate", "--offset", off, path),
                  ("decompress", "--offset", off, path, tmp_path / f"{off}.bin"),
                  ("inspect", "--json", "--offset", off, path)]
    done = run_many(calls)
    data = path.read_bytes()
    for k, (off, kind, s) in enumerate(where):
        info, val, dec, ins = done[4 * k:4 * k + 4]
        assert info.returncode == 0, info.stderr
        row = json.loads(info.stdout)
        assert row["kind"] == kind and row["nbytes"] == s.expect["nbytes"] and row["valid"]
        if kind == "chunk":
            assert row["trailing"] == 0 and row["cbytes"] == s.expect["cbytes"]
        else:
            assert row["nchunks"] == s.expect["nchunks"]
        assert val.returncode == 0 and val.stdout == f"{path}: ok ({kind})\n", val.stdout
        assert dec.returncode == 0, dec.stderr
        assert (tmp_path / f"{off}.bin").read_bytes() == s.data
        assert ins.returncode == 0, ins.stderr
        nodes = json.loads(ins.stdout)["nodes"]
        assert nodes[0]["offset"] == off
        _check_node_bounds(s, nodes, base=off)
        assert _check_leaf_bytes(data, nodes) >= 10       # offsets are file offsets


def test_offset_errors_are_in_file_offsets(samples, tmp_path):
    frame = bytearray(samples["cframe"].path.read_bytes())
    index = _frame_positions(bytes(frame))["index.version"]
    frame[index] ^= 0xFF
    blob = tmp_path / "blob.bin"
    blob.write_bytes(bytes(1000) + bytes(frame) + bytes(500))
    calls = [("validate", "--offset", 1000, blob), ("info", "--offset", 1000, blob),
             ("decompress", "--offset", 1000, blob, tmp_path / "o.bin")]
    for r in run_many(calls):
        assert r.returncode == 1
        no_traceback(r)
        m = problem_line((r.stdout + r.stderr).strip().splitlines()[0])
        assert (m["file"], int(m["offset"])) == (str(blob), 1000 + index), m.group(0)
        assert m["path"].startswith("frame.offsets")


# ---------------------------------------------------------------------------
# 7. salvage
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def broken_frames(samples, tmp_path_factory):
    s = samples["cframe"]
    b = s.path.read_bytes()
    pos = _frame_positions(b)
    index, trailer = pos["index.version"], pos["trailer.marker"]
    d = tmp_path_factory.mktemp("broken")
    out = {}
    junk = bytearray(b)
    junk[index:trailer] = b"\xab" * (trailer - index)
    out["junk-index"] = junk
    out["no-trailer"] = b[:trailer]
    out["cut-trailer"] = b[:trailer + 10]
    hurt = bytearray(junk)                    # and chunk 3's streams overwritten
    s_open = blosc2.open(str(s.path))
    starts = [int.from_bytes(b[11:15], "big")]
    for i in range(s_open.nchunks - 1):
        starts.append(starts[-1] + blosckit.chunk_sizes(b[starts[-1]:starts[-1] + 32])[1])
    c3 = starts[3]
    hurt[c3 + 40:c3 + 80] = bytes(40)
    out["junk-index-bad-chunk"] = hurt
    paths = {}
    for k, v in out.items():
        p = d / f"{k}.b2frame"
        p.write_bytes(bytes(v))
        paths[k] = p
    for p in paths.values():                  # broken, as the validator sees it
        assert any(x.severity == "error" for x in blosckit.validate(p.read_bytes()))
    chunks = [s_open.decompress_chunk(i) for i in range(s_open.nchunks)]
    calls = {k: ("salvage", p, d / f"{k}.fixed") for k, p in paths.items()}
    calls["json"] = ("salvage", "--json", paths["junk-index-bad-chunk"], d / "json.fixed")
    calls["intact"] = ("salvage", samples["b2nd"].path, d / "intact.fixed")
    runs = dict(zip(calls, run_many(list(calls.values()))))
    return paths, chunks, runs, {k: c[-1] for k, c in calls.items()}


@pytest.mark.parametrize("what", ["junk-index", "no-trailer", "cut-trailer",
                                  "junk-index-bad-chunk"])
def test_salvage_rebuilds_a_frame_python_blosc2_opens(broken_frames, what):
    paths, chunks, runs, outs = broken_frames
    broken, r, out = paths[what], runs[what], outs[what]
    assert r.returncode == 0, r.stderr
    no_traceback(r)
    assert f"-> {out}" in r.stderr and "damaged" in r.stderr
    assert any(line.startswith(f"{broken}:") and ": damage: " in line
               for line in r.stdout.splitlines())
    s = blosc2.open(str(out))
    got = [s.decompress_chunk(i) for i in range(s.nchunks)]
    lost = what.endswith("bad-chunk")          # chunk 3: zeros keep its place
    want = [bytes(len(c)) if lost and i == 3 else c for i, c in enumerate(chunks)]
    assert got == want
    assert s.meta.keys() == ["m1", "m2"]
    if what == "junk-index":                  # the trailer is intact: vlmetalayers kept
        assert s.vlmeta.getall() == {"author": "me", "n": [1, 2]}
    assert blosckit.validate(out.read_bytes()) == []
    assert sum(line.startswith("chunk ") for line in r.stdout.splitlines()) == len(want) - lost
    assert sum(line.startswith("lost chunk 3: ") for line in r.stdout.splitlines()) == lost


def test_salvage_json(broken_frames):
    paths, chunks, runs, outs = broken_frames
    r, out = runs["json"], outs["json"]
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["file"] == str(paths["junk-index-bad-chunk"]) and rep["output"] == str(out)
    assert rep["intact"] is False and rep["chunksize"] == 40_000
    assert [x["index"] for x in rep["recovered"]] == [i for i in range(len(chunks)) if i != 3]
    assert [x["index"] for x in rep["lost"]] == [3]
    assert rep["lost"][0]["region"] == [[3 * 40_000, 4 * 40_000]]
    assert all(x["nbytes"] == len(c) for x, c in
               zip(rep["recovered"], [c for i, c in enumerate(chunks) if i != 3]))
    assert rep["damage"] and all({"offset", "path", "rule", "message"} <= set(d)
                                 for d in rep["damage"])
    assert rep["dropped"]
    assert blosc2.open(str(out)).nchunks == len(chunks)


def test_salvage_an_intact_frame_keeps_its_data(samples, broken_frames):
    s = samples["b2nd"]
    r, out = broken_frames[2]["intact"], broken_frames[3]["intact"]
    assert r.returncode == 0, r.stderr
    assert "intact" in r.stderr
    np.testing.assert_array_equal(blosc2.open(str(out))[:], s.array)


# ---------------------------------------------------------------------------
# 8. Usage errors
# ---------------------------------------------------------------------------

def test_usage_errors_exit_2(samples, tmp_path):
    src = tmp_path / "in.bin"
    src.write_bytes(bytes(1000))
    chunk, frame = samples["b2-lz4hc-shuffle"].path, samples["cframe"].path
    past = frame.stat().st_size + 1
    calls = [
        ("no-such-command",),
        ("compress", src, tmp_path / "o", "--typesize", "300"),
        ("compress", src, tmp_path / "o", "--nthreads", "0"),
        ("compress", src, tmp_path / "o", "--filters", "nope"),
        ("info", "--offset", past, frame), ("validate", "--offset", past, frame),
        ("decompress", "--offset", past, frame, tmp_path / "o"),
        ("inspect", "--json", "--offset", past, frame),
        ("inspect", "--chunk", "3", chunk),
        ("validate", "--offset", "0", chunk, frame),
        ("info", "--offset", "0", samples["sframe"].path),
        ("decompress", frame, tmp_path / "o.npy"),          # not a b2nd frame
    ]
    for args, r in zip(calls, run_many(calls)):
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        no_traceback(r)
        assert r.stderr.strip(), args
        if "--json" in args:
            row, = json_rows(r.stdout)
            assert row["error"]["severity"] == "usage"
    assert not (tmp_path / "o").exists()


def test_bare_blosckit_prints_help_and_exits_2():
    r = run()
    assert r.returncode == 2 and "usage: blosckit" in r.stderr and "COMMAND" in r.stderr
    no_traceback(r)


def test_inspect_chunk_past_the_last_chunk_is_a_usage_error(samples):
    r = run("inspect", "--chunk", "99", samples["cframe"].path)
    assert r.returncode == 2, r.stderr
    no_traceback(r)


@pytest.mark.parametrize("cmd", ["scan", "compress"])
def test_sparse_frame_directory_where_a_file_is_needed(samples, tmp_path, cmd):
    extra = [] if cmd == "scan" else [tmp_path / "out"]
    r = run(cmd, samples["sframe"].path, *extra)
    assert r.returncode in (1, 2), r.stderr
    no_traceback(r)
    assert str(samples["sframe"].path) in r.stderr


def test_salvage_takes_a_sparse_frame_directory(samples, tmp_path):
    """A sparse frame (python-blosc2's) is salvaged into a contiguous frame
    python-blosc2 opens with the same data."""
    out = tmp_path / "out.b2frame"
    r = run("salvage", samples["sframe"].path, out)
    assert r.returncode == 0, r.stderr
    no_traceback(r)
    assert "intact" in r.stderr and "file 00000000.chunk" in r.stdout
    theirs = blosc2.open(str(samples["sframe"].path))
    ours = blosc2.open(str(out))
    assert ours.nchunks == theirs.nchunks
    assert [ours.decompress_chunk(i) for i in range(ours.nchunks)] == \
        [theirs.decompress_chunk(i) for i in range(theirs.nchunks)]
    assert blosckit.validate(out.read_bytes()) == []


# ---------------------------------------------------------------------------
# 9. --help
# ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _compress_help() -> str:
    r = run("compress", "--help")
    assert r.returncode == 0 and r.stderr == ""
    return " ".join(r.stdout.split())


def test_compress_help_lists_codecs_and_defaults():
    text = _compress_help()
    assert "{" + ",".join(CODECS) + "}" in text
    for codec in CODECS:
        assert codec in text
    assert "0..9 (default: 5)" in text
    assert "chunk format (default: blosc2)" in text
    assert "{blosc2,blosc1,blosc1-compat}" in text
    assert f"threads, 1..{MAX_THREADS} (default: 1)" in text
    assert "default: the .npy item size, else 1" in text
    assert "default 4 MiB" in text
    for name in ("shuffle", "bitshuffle", "delta", "trunc_prec", "bytedelta"):
        assert name in text


def test_compress_help_shows_the_codec_default():
    assert re.search(r"--codec \{[a-z0-9,]+\}[^-]*default: blosclz", _compress_help())


def test_compress_help_has_no_python_reprs():
    text = _compress_help()
    for repr_ in ("('shuffle',)", "default: None", "default: False"):
        assert repr_ not in text, repr_
