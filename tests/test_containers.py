"""HDF5 files and zarr stores as inputs: every Blosc chunk is found where
h5py's chunk index and zarr's files put it, checked, named by dataset and
chunk coordinates, and decoded into the arrays h5py+hdf5plugin and zarr
read; planted faults are reported at their dataset, coordinates and byte
offset, and the oracles refuse the same chunks."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import blosckit
from blosckit.cli.problems import problem_line
from blosckit.tools.arrays import read_array
from blosckit.tools.containers import StoredChunk
from blosckit.tools.stores import open_container

import cli_runner
from oracles import oracle

np = oracle("numpy")
h5py = oracle("h5py")
hdf5plugin = oracle("hdf5plugin")
zarr = oracle("zarr")
numcodecs = oracle("numcodecs")

# name -> (data, chunks, filter); shapes that leave edge chunks
HDF5_DATASETS = {
    "/g/blosc2_2d": (np.arange(60 * 45, dtype="<f8").reshape(60, 45) / 7, (25, 20),
                     lambda: hdf5plugin.Blosc2(cname="zstd", clevel=5)),
    "/g/sub/blosc1": (np.arange(1000, dtype="<i4") // 3, (300,),
                      lambda: hdf5plugin.Blosc(cname="lz4", clevel=5,
                                               shuffle=hdf5plugin.Blosc.SHUFFLE)),
    "/blosc2_1d": (np.arange(5000, dtype="<i2"), (1024,),
                   lambda: hdf5plugin.Blosc2(cname="blosclz", clevel=9,
                                             filters=hdf5plugin.Blosc2.BITSHUFFLE)),
}


@pytest.fixture(scope="module")
def h5file(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("h5") / "data.h5"
    with h5py.File(p, "w") as f:
        for name, (data, chunks, flt) in HDF5_DATASETS.items():
            f.create_dataset(name, data=data, chunks=chunks, **flt())
        f.create_dataset("/gzip", data=np.arange(100), chunks=(10,), compression="gzip")
        f.create_dataset("/g/checked", data=np.arange(3000, dtype="<f4").reshape(1000, 3),
                         chunks=(400, 3), fletcher32=True, **hdf5plugin.Blosc(cname="zstd"))
    return p


def _copy(src: Path, tmp_path: Path) -> Path:
    out = tmp_path / src.name
    out.write_bytes(src.read_bytes())
    return out


def _flip(path: Path, offset: int, value: int) -> None:
    with open(path, "r+b") as fh:
        fh.seek(offset)
        fh.write(bytes([value]))


# ---------------------------------------------------------------------------
# HDF5
# ---------------------------------------------------------------------------

def test_hdf5_chunks_are_h5pys_chunks(h5file):
    with open_container(h5file) as c, h5py.File(h5file) as f:
        assert [a.name for a in c.arrays] == sorted([*HDF5_DATASETS, "/g/checked"])
        for a in c.arrays:
            ds = f[a.name]
            chunks = list(a.chunks())
            assert len(chunks) == ds.id.get_num_chunks()
            for ch in chunks:
                assert isinstance(ch, StoredChunk)
                first = tuple(i * n for i, n in zip(ch.coords, ds.chunks))
                mask, raw = ds.id.read_direct_chunk(first)
                assert bytes(ch.data) == raw and ch.blosc == (mask & 1 == 0)
                assert ch.location == f"{a.name}[{','.join(map(str, ch.coords))}]"
                # HDF5's index holds the chunk at that byte offset of the file
                assert ds.id.get_chunk_info_by_coord(first).byte_offset == ch.offset


def test_hdf5_valid_file_gives_no_problem(h5file):
    assert blosckit.validate(h5file) == []
    assert blosckit.validate(str(h5file), deep=False) == []


def test_hdf5_datasets_decode_as_h5py_reads_them(h5file):
    with open_container(h5file) as c, h5py.File(h5file) as f:
        for a in c.arrays:
            want = f[a.name][...]
            got = read_array(a)
            assert got.dtype == want.dtype and np.array_equal(got, want), a.name


def _chunk_info(path: Path, name: str, coords: tuple[int, ...]):
    with h5py.File(path) as f:
        ds = f[name]
        first = tuple(i * n for i, n in zip(coords, ds.chunks))
        return ds.id.get_chunk_info_by_coord(first), ds.id.read_direct_chunk(first)[1]


def test_hdf5_blosc1_fault_is_found_at_its_chunk(h5file, tmp_path):
    p = _copy(h5file, tmp_path)
    info, _ = _chunk_info(p, "/g/sub/blosc1", (2,))
    _flip(p, info.byte_offset + 3, 0)               # the Blosc header's typesize
    problems = blosckit.validate(p)
    assert [(q.location, q.offset, q.path, q.rule) for q in problems] == [
        ("/g/sub/blosc1[2]", info.byte_offset + 3, "chunk.header.typesize", "H5")]
    with h5py.File(p) as f:                          # the filter refuses it too
        assert np.array_equal(f["/g/sub/blosc1"][:600], HDF5_DATASETS["/g/sub/blosc1"][0][:600])
        with pytest.raises(OSError):
            f["/g/sub/blosc1"][600:]


def test_hdf5_blosc2_frame_fault_is_found_at_its_chunk(h5file, tmp_path):
    p = _copy(h5file, tmp_path)
    info, raw = _chunk_info(p, "/g/blosc2_2d", (2, 1))       # an edge chunk
    with blosckit.open_frame(raw) as fr:
        inner = raw.index(fr.chunk(0))                      # the frame's data chunk
    _flip(p, info.byte_offset + inner + 3, 0)                # its typesize
    problems = blosckit.validate(p)
    assert len(problems) == 1
    q = problems[0]
    assert (q.location, q.offset, q.path, q.rule) == (
        "/g/blosc2_2d[2,1]", info.byte_offset + inner + 3, "frame.chunks[0].header.typesize",
        "H5")
    with h5py.File(p) as f:
        with pytest.raises(OSError):
            f["/g/blosc2_2d"][50:, 20:40]


def test_hdf5_fletcher32_after_blosc_is_left_out_of_the_blosc_data(h5file):
    with open_container(h5file) as c:
        a = c.array("/g/checked")
        chunks = list(a.chunks())
        assert chunks and all(ch.tail == 4 for ch in chunks if ch.blosc)
        assert any(ch.blosc for ch in chunks)


# ---------------------------------------------------------------------------
# zarr
# ---------------------------------------------------------------------------

V2_DATA = (np.arange(50 * 40, dtype="<i8").reshape(50, 40) * 3) + 1
V3_DATA = (np.arange(33 * 17, dtype="<f4").reshape(33, 17) / 3) + 1
SHARD_DATA = np.arange(45 * 50, dtype="<u2").reshape(45, 50) + 1


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("zarr")
    v2 = zarr.open_group(str(d / "v2.zarr"), mode="w", zarr_format=2)
    a = v2.create_array("g/a", shape=V2_DATA.shape, chunks=(20, 15), dtype=V2_DATA.dtype,
                        compressors=numcodecs.Blosc(cname="zstd", clevel=3,
                                                    shuffle=numcodecs.Blosc.BITSHUFFLE))
    a[:] = V2_DATA
    b = v2.create_array("b", shape=(100,), chunks=(30,), dtype="<i4",
                        compressors=numcodecs.Blosc(cname="lz4"),
                        chunk_key_encoding={"name": "v2", "separator": "/"})
    b[:] = np.arange(1, 101, dtype="<i4")
    v3 = zarr.open_group(str(d / "v3.zarr"), mode="w", zarr_format=3)
    x = v3.create_array("x", shape=V3_DATA.shape, chunks=(10, 5), dtype=V3_DATA.dtype,
                        compressors=zarr.codecs.BloscCodec(cname="lz4", clevel=5))
    x[:] = V3_DATA
    s = v3.create_array("grp/s", shape=SHARD_DATA.shape, chunks=(5, 10), shards=(20, 20),
                        dtype=SHARD_DATA.dtype,
                        compressors=zarr.codecs.BloscCodec(cname="zstd", clevel=5))
    s[:] = SHARD_DATA
    return {"v2": d / "v2.zarr", "v3": d / "v3.zarr"}


def test_zarr_stores_are_valid_and_list_their_arrays(stores):
    for p in stores.values():
        assert blosckit.validate(p) == []
    with open_container(stores["v2"]) as c:
        assert [a.name for a in c.arrays] == ["/b", "/g/a"]
    with open_container(stores["v3"]) as c:
        assert [a.name for a in c.arrays] == ["/grp/s", "/x"]


def test_zarr_arrays_decode_as_zarr_reads_them(stores):
    for p in stores.values():
        with open_container(p) as c:
            for a in c.arrays:
                want = zarr.open_array(str(p / a.name.lstrip("/")))[...]
                got = read_array(a)
                assert got.dtype == want.dtype and np.array_equal(got, want), (p, a.name)


def test_zarr_chunks_are_zarrs_chunks(stores):
    with open_container(stores["v2"]) as c:
        a = c.array("/g/a")
        got = {ch.coords: ch.file for ch in a.chunks()}
        names = {f.name for f in (stores["v2"] / "g" / "a").iterdir() if f.name[0] != "."}
        assert {f"{i}.{j}" for i, j in got} == names
        assert all(f.name == f"{i}.{j}" for (i, j), f in got.items())
        b = c.array("/b")
        assert sorted(ch.coords for ch in b.chunks()) == [(0,), (1,), (2,), (3,)]
    with open_container(stores["v3"]) as c:
        s = c.array("/grp/s")
        inner = list(s.chunks())
        # every inner chunk of every shard: 9 x 5 inner chunks of 5 x 10
        assert sorted(ch.coords for ch in inner) == [(i, j) for i in range(9) for j in range(5)]
        assert {ch.file.name for ch in inner} == {"0", "1", "2"}


def _shard_index(path: Path, n: int):
    """(offset, nbytes) of each inner chunk, read with numpy from the end of
    the shard file (the index and its 4-byte crc32c, as zarr writes them)."""
    raw = path.read_bytes()
    return np.frombuffer(raw[len(raw) - 16 * n - 4:len(raw) - 4], "<u8").reshape(n, 2)


def test_zarr_v2_fault_is_found_at_its_chunk(stores, tmp_path):
    import shutil
    p = tmp_path / "v2.zarr"
    shutil.copytree(stores["v2"], p)
    _flip(p / "g" / "a" / "1.2", 3, 0)
    problems = blosckit.validate(p)
    assert [(q.location, q.offset, q.path, q.rule) for q in problems] == [
        ("/g/a[1,2]", 3, "chunk.header.typesize", "H5")]
    with pytest.raises(Exception):
        numcodecs.Blosc().decode((p / "g" / "a" / "1.2").read_bytes())


def test_zarr_shard_inner_chunk_fault_is_found_at_its_place(stores, tmp_path):
    import shutil
    p = tmp_path / "v3.zarr"
    shutil.copytree(stores["v3"], p)
    shard = p / "grp" / "s" / "c" / "1" / "2"           # shard (1, 2): rows 20..39, cols 40..49
    index = _shard_index(shard, 4 * 2)
    assert (index[1::2] == 2 ** 64 - 1).all()              # local column 1: past the edge
    j = 4                                                 # local (2, 0) in the 4 x 2 grid
    offset = int(index[j, 0])
    _flip(shard, offset + 3, 0)
    problems = blosckit.validate(p)
    assert [(q.location, q.offset, q.path, q.rule) for q in problems] == [
        ("/grp/s[6,4]", offset + 3, "chunk.header.typesize", "H5")]


def test_zarr_shard_index_fault_is_reported(stores, tmp_path):
    import shutil
    p = tmp_path / "v3.zarr"
    shutil.copytree(stores["v3"], p)
    shard = p / "grp" / "s" / "c" / "0" / "0"
    size = shard.stat().st_size
    _flip(shard, size - 4 - 16 * 8 + 1, 0x7F)             # entry 0's offset
    problems = blosckit.validate(p)
    start = size - 4 - 16 * 8
    # the checksum no longer matches, and entry 0 points past the shard's chunk bytes
    assert [(q.location, q.offset, q.path, q.rule) for q in problems] == [
        ("/grp/s/c/0/0", size - 4, "shard.index.crc32c", "T-shard-index"),
        ("/grp/s/c/0/0", start, "shard.index[0]", "T-shard-index")]
    with pytest.raises(Exception):                        # zarr refuses the shard too
        zarr.open_array(str(p / "grp" / "s"))[:20, :20]


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------

def test_cli_validate_under_a_pipe_names_file_location_and_offset(h5file, tmp_path):
    p = _copy(h5file, tmp_path)
    info, _ = _chunk_info(p, "/g/sub/blosc1", (1,))
    _flip(p, info.byte_offset + 3, 0)
    r = subprocess.run([sys.executable, "-m", "blosckit", "validate", str(p)],
                       capture_output=True, text=True, timeout=120)
    (q,) = blosckit.validate(p)
    assert r.returncode == 1, r.stderr
    assert r.stdout == problem_line(str(p), q) + "\n"
    assert r.stdout.startswith(f"{p}:/g/sub/blosc1[1]:{info.byte_offset + 3}: error: "
                               "chunk.header.typesize: ")
    assert r.stdout.rstrip().endswith("[H5]") and r.stderr == ""


def test_cli_commands_on_containers(h5file, stores, tmp_path):
    r = cli_runner.blosckit("validate", h5file, stores["v2"], stores["v3"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [f"{h5file}: ok (HDF5 file)", f"{stores['v2']}: ok (zarr store)",
                                     f"{stores['v3']}: ok (zarr store)"]
    r = cli_runner.blosckit("info", h5file)
    assert r.returncode == 0 and "/g/blosc2_2d" in r.stdout and "Blosc2 filter (32026)" in r.stdout
    r = cli_runner.blosckit("info", "--json", f"{stores['v3']}:/grp/s[1,1]")
    assert r.returncode == 0, r.stderr
    assert '"kind": "chunk"' in r.stdout
    r = cli_runner.blosckit("scan", stores["v3"])
    assert r.returncode == 0 and f"{stores['v3']}:/grp/s[8,4]:" in r.stdout
    r = cli_runner.blosckit("inspect", f"{h5file}:/g/blosc2_2d[0,0]")
    info, _ = _chunk_info(h5file, "/g/blosc2_2d", (0, 0))
    assert r.returncode == 0 and r.stdout.split()[0] == f"{info.byte_offset}+{info.size}"
    for name, want in ((f"{h5file}:/g/blosc2_2d", HDF5_DATASETS["/g/blosc2_2d"][0]),
                       (f"{stores['v2']}:/g/a", V2_DATA),
                       (str(stores["v3"] / "grp" / "s"), SHARD_DATA)):
        out = tmp_path / "out.npy"
        r = cli_runner.blosckit("decompress", "-f", name, out)
        assert r.returncode == 0, r.stderr
        got = np.load(out)
        assert got.dtype == want.dtype and np.array_equal(got, want), name
    r = cli_runner.blosckit("decompress", h5file, tmp_path / "x.npy")
    assert r.returncode == 2 and "name one as" in r.stderr


def test_cli_without_h5py_says_so_in_one_line(h5file):
    code = ("import sys; sys.modules['h5py'] = None; from blosckit.cli import main; "
            f"sys.exit(main(['validate', {str(h5file)!r}]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 3
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "h5py" in r.stderr and "blosckit[hdf5]" in r.stderr


def test_zarr_unreadable_metadata_is_an_error_at_the_array(stores, tmp_path):
    import shutil
    p = tmp_path / "v2.zarr"
    shutil.copytree(stores["v2"], p)
    (p / "g" / "a" / ".zarray").write_text('{"shape": [50, 40], "dtype": "<i8"}')
    problems = blosckit.validate(p)
    assert [(q.location, q.offset, q.path, q.rule) for q in problems] == [
        ("/g/a", 0, "g/a/.zarray", "T-zarr-metadata")]
    assert "chunks" in problems[0].message


def test_zarr_codec_after_blosc_is_a_warning(tmp_path):
    p = tmp_path / "gz.zarr"
    z = zarr.create_array(str(p), shape=(40,), chunks=(10,), dtype="<i4",
                          compressors=[zarr.codecs.BloscCodec(cname="lz4"),
                                       zarr.codecs.GzipCodec()])
    z[:] = np.arange(40, dtype="<i4")
    problems = blosckit.validate(p)
    assert [(q.severity, q.location, q.rule) for q in problems] == [
        ("warning", "/", "T-container-codec")]
    assert "gzip" in problems[0].message


def test_a_cut_hdf5_file_is_a_truncation_at_its_end(tmp_path):
    """Found trying hostile input: h5py refuses a cut file with a message and
    no offset; the superblock says how long the file is, so the cut is
    T-truncated at the file's end, from validate() and the CLI."""
    h5py = pytest.importorskip("h5py")
    hdf5plugin = pytest.importorskip("hdf5plugin")
    for libver in ("earliest", "latest"):              # superblock versions 0 and 3
        p = tmp_path / f"d-{libver}.h5"
        with h5py.File(p, "w", libver=libver) as f:
            f.create_dataset("x", data=np.arange(10000, dtype="<f8").reshape(100, 100),
                             chunks=(30, 30), **hdf5plugin.Blosc(cname="zstd"))
        data = p.read_bytes()
        cut = tmp_path / f"cut-{libver}.h5"
        cut.write_bytes(data[:len(data) * 2 // 3])
        assert blosckit.validate(p) == []
        got = [(q.rule, q.offset, q.path) for q in blosckit.validate(cut)]
        assert got == [("T-truncated", len(data) * 2 // 3, "hdf5")]
        r = subprocess.run([sys.executable, "-m", "blosckit", "validate", str(cut)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 1 and "[T-truncated]" in r.stdout + r.stderr
        assert "Traceback" not in r.stderr
