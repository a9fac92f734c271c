"""Messages a person can act on: files that are not Blosc chunks, named to
the library and the CLI, made by the tools that write them (h5py, zarr,
NumPy, python-blosc2)."""
from __future__ import annotations

import json

import pytest

import blosckit
from blosckit.formats import frame as ff
from blosckit.formats import signatures
import cli_runner
from oracles import oracle

np = oracle("numpy")


def _only_version_error(problems, words: str) -> None:
    """One problem, T-version at offset 0, naming ``words``: an input of
    unknown version has no layout, so nothing else is reported of it."""
    assert [(p.rule, p.offset) for p in problems] == [("T-version", 0)], problems
    assert words in problems[0].message, problems[0].message


def test_the_frame_signature_sits_where_every_header_layout_puts_it():
    for n, layout in ff.FLAT_HEADERS.items():
        assert layout.offset("magic") == signatures.FRAME_MAGIC_AT, n


def test_an_hdf5_file_is_named(tmp_path):
    h5py = oracle("h5py")
    path = tmp_path / "d.h5"
    with h5py.File(path, "w") as f:
        f["a"] = np.arange(1000)
    _only_version_error(blosckit.validate(path.read_bytes()), "HDF5 file")
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.decompress(path.read_bytes())
    assert e.value.rule == "T-version" and "HDF5" in str(e.value)


def test_an_hdf5_file_with_a_user_block_is_named(tmp_path):
    h5py = oracle("h5py")
    path = tmp_path / "u.h5"
    with h5py.File(path, "w", userblock_size=1024) as f:
        f["a"] = np.arange(10)
    _only_version_error(blosckit.validate(path.read_bytes()), "HDF5 file")


def test_zarr_metadata_is_named(tmp_path):
    zarr = oracle("zarr")
    zarr.create_array(store=str(tmp_path / "z.zarr"), shape=(100,), chunks=(10,),
                      dtype="i4", zarr_format=2)
    meta = (tmp_path / "z.zarr" / ".zarray").read_bytes()
    assert json.loads(meta)["zarr_format"] == 2
    _only_version_error(blosckit.validate(meta), "zarr metadata")


def test_a_npy_file_is_named(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.arange(10))
    _only_version_error(blosckit.validate(path.read_bytes()), ".npy")


def test_a_frame_given_as_a_chunk_points_to_open_frame():
    blosc2 = oracle("blosc2")
    frame = bytes(blosc2.SChunk(chunksize=4000, data=np.arange(3000, dtype="<i4"))
                  .to_cframe())
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.decompress(frame)
    assert e.value.rule == "T-version" and "open_frame" in str(e.value)


def test_junk_is_not_described_as_anything():
    assert signatures.looks_like(bytes(range(200, 256)) * 3) is None
    assert signatures.looks_like(b"") is None


def test_a_sparse_frame_index_named_alone_points_to_its_directory(tmp_path):
    blosc2 = oracle("blosc2")
    urlpath = tmp_path / "s.b2frame"
    blosc2.SChunk(chunksize=4000, data=np.arange(3000, dtype="<i4"),
                  urlpath=str(urlpath), contiguous=False)
    index = urlpath / ff.SFRAME_INDEX
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(index)
    assert e.value.rule == "F-type" and "open its directory" in str(e.value)
    r = cli_runner.blosckit("validate", index)
    assert r.returncode == 1 and "open its directory" in r.stdout + r.stderr
    assert cli_runner.blosckit("validate", urlpath).returncode == 0


def test_the_cli_names_an_hdf5_file_in_one_line(tmp_path):
    h5py = oracle("h5py")
    path = tmp_path / "d.h5"
    with h5py.File(path, "w") as f:
        f["a"] = np.arange(1000)
    r = cli_runner.blosckit("validate", path)
    assert r.returncode == 1
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if "HDF5" in ln]
    assert len(lines) == 1 and "H3" not in r.stdout + r.stderr


def _python_blosc2_frame() -> bytes:
    blosc2 = oracle("blosc2")
    return bytes(blosc2.SChunk(chunksize=40_000, data=np.arange(30_000, dtype="<i4"),
                               cparams=blosc2.CParams(typesize=4)).to_cframe())


def test_a_truncation_is_said_in_plain_words():
    cut = _python_blosc2_frame()[:50]
    (p,) = blosckit.validate(cut)
    assert (p.rule, p.offset, p.path) == ("T-truncated", 50, "frame.header.typesize")
    assert p.message == ("the input ends at byte 50, inside frame.header.typesize "
                         "(4 bytes needed, 2 there)")
    assert "stream read" not in p.message


def test_a_frame_len_past_a_whole_frame_is_the_field_not_a_truncation():
    """A frame that ends with its whole trailer is whole: a frame_len larger
    than the input is that field's fault (F-frame-len, at the field), while
    the same input cut short is T-truncated where it ends."""
    frame = _python_blosc2_frame()
    at = ff.HEADER.offset("frame_len")
    bad = bytearray(frame)
    bad[at:at + 8] = (len(frame) + 100).to_bytes(8, "big")
    (p,) = blosckit.validate(bytes(bad))
    assert (p.rule, p.offset, p.path) == ("F-frame-len", at, "frame.header.frame_len")
    assert p.message == f"the header says {len(frame) + 100} bytes, the input has {len(frame)}"
    cut = frame[:len(frame) - 10]
    (p,) = blosckit.validate(cut)
    assert (p.rule, p.offset, p.path) == ("T-truncated", len(cut), "frame.trailer")
    assert p.message == (f"the input ends at byte {len(cut)}, inside frame.trailer "
                         f"(frame_len says the frame is {len(frame)} bytes)")


def test_a_damaged_header_nbytes_is_named_as_such():
    frame = bytearray(_python_blosc2_frame())
    at = ff.HEADER.offset("nbytes")
    frame[at + 3] ^= 0x10
    (p,) = blosckit.validate(bytes(frame))
    assert (p.rule, p.offset, p.path) == ("F-index", at, "frame.header.nbytes")
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(bytes(frame)).decompress()
    assert (e.value.offset, e.value.path) == (at, "frame.header.nbytes")


def test_a_zeroed_chunk_header_is_said_to_be_one():
    frame = bytearray(_python_blosc2_frame())
    f = blosckit.open_frame(bytes(frame))
    start = f.header_len + f.offsets[1]
    frame[start:start + 32] = bytes(32)
    errors = [p for p in blosckit.validate(bytes(frame)) if p.severity == "error"]
    assert errors[0].rule == "F-chunk" and "damaged or zeroed" in errors[0].message
    assert errors[0].path == "frame.chunks[1].header.cbytes"


def test_a_metalayer_name_twice_is_an_error():
    """Held-out fuzzing finding: a second metalayer renamed to the first's
    name (same length).  blosckit's dict kept one and validate said
    nothing; python-blosc2 lists both names."""
    blosc2 = oracle("blosc2")
    sc = blosc2.SChunk(chunksize=4000, data=np.arange(1000, dtype="<i4"),
                       meta={"aa": 1, "bb": 2}, cparams=blosc2.CParams(typesize=4))
    frame = bytes(sc.to_cframe())
    assert frame.count(b"\xa2bb") == 1
    blob = frame.replace(b"\xa2bb", b"\xa2aa")
    errors = [(p.rule, p.path) for p in blosckit.validate(blob) if p.severity == "error"]
    assert errors == [("F-meta", "frame.metalayers.index[1].name")]
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(blob).metalayers
    assert e.value.rule == "F-meta"


def test_info_counts_stored_special_chunks(tmp_path):
    """A frame python-blosc2 filled with a repeated value (special chunks of
    kind value are stored, not special offsets): info said "none"."""
    blosc2 = oracle("blosc2")
    path = tmp_path / "v.b2frame"
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4), urlpath=str(path),
                       mode="w")
    sc.fill_special(3000, blosc2.SpecialValue.VALUE, value=np.int32(7))
    del sc
    r = cli_runner.blosckit("info", "--json", path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[0])["special_chunks"] == {"value": 3}


def test_an_object_npy_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "o.npy"
    np.save(path, np.array([1, "a", None], dtype=object))
    r = cli_runner.blosckit("compress", path, tmp_path / "o.b2nd")
    assert r.returncode == 1 and "--typesize" not in r.stderr
    assert "[T-npy]" in r.stderr and "fixed-size dtype" in r.stderr


def test_inspect_shows_the_header_of_a_chunk_it_stops_at(tmp_path):
    """A chunk cut short: the reader stops at its header (T-truncated);
    inspect shows what it read before the stop, then the error (it printed
    only the error)."""
    blosc2 = oracle("blosc2")
    chunk = blosc2.compress2(bytes(range(256)) * 100, typesize=4)
    path = tmp_path / "cut.bin"
    path.write_bytes(chunk[:200])
    r = cli_runner.blosckit("inspect", path)
    assert r.returncode == 1 and "[T-truncated]" in r.stderr
    assert "the input ends at byte 200, inside chunk (cbytes says the chunk is" in r.stderr
    assert "version = 5" in r.stdout and "cbytes" in r.stdout


def test_a_damaged_header_cbytes_is_named_as_such():
    """A flipped byte of the frame header's cbytes was reported at its
    offset but under the path frame.header.nbytes (F-sizes' declared field)."""
    frame = bytearray(_python_blosc2_frame())
    at = ff.HEADER.offset("cbytes")
    frame[at + 1] ^= 0x5A
    (p,) = [p for p in blosckit.validate(bytes(frame)) if p.severity == "error"]
    assert (p.rule, p.offset, p.path) == ("F-sizes", at, "frame.header.cbytes")


def test_a_constant_that_differs_is_said_in_the_format_s_words():
    """construct's "parsing expected b'\\xce' but parsed b'\\xed'" became the
    message of every damaged marker; now the byte found and the one that
    belongs there.  A python-blosc2 frame whose trailer-length marker is
    damaged."""
    blosc2 = oracle("blosc2")
    np = oracle("numpy")
    frame = bytearray(blosc2.SChunk(chunksize=400, data=np.arange(300, dtype="<i4"),
                                    cparams=blosc2.CParams(typesize=4)).to_cframe())
    at = len(frame) - blosckit.formats.frame.LEN_TRAILER_TAIL
    frame[at] = 0xED
    problems = [p for p in blosckit.validate(bytes(frame)) if p.rule == "F-trailer"]
    assert [(p.offset, p.message) for p in problems] == \
        [(at, "byte 0xed where byte 0xce belongs")]
    assert "parsing expected" not in str(blosckit.salvage(bytes(frame))[1])
