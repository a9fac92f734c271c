"""Building frames: python-blosc2 opens what blosckit builds with the same
data and metadata, and python-blosc2's own frames are rebuilt byte for byte
from their chunks and metadata."""
from __future__ import annotations

import msgpack
import numpy as np
import pytest

import blosckit
from blosckit.frame.build import build_frame, compress_frame
from blosckit.frame.sframe import to_sframe

blosc2 = pytest.importorskip("blosc2")


def _schunk(n, *, codec=blosc2.Codec.LZ4, meta=None, vlmeta=None, zeros_at=(), last=1000):
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4, codec=codec, clevel=5),
                       meta=meta or {})
    for i in range(n):
        items = last if i == n - 1 else 1000
        a = np.zeros(items, "<i4") if i in zeros_at else np.arange(i * 1000, i * 1000 + items,
                                                                   dtype="<i4")
        sc.append_data(a)
    for k, v in (vlmeta or {}).items():
        sc.vlmeta[k] = v
    return sc


def _same_as_oracle(frame: bytes, sc) -> None:
    got = blosc2.schunk_from_cframe(frame)
    assert got.nchunks == sc.nchunks and got[:] == sc[:]
    assert list(got.meta.keys()) == list(sc.meta.keys())
    assert all(got.meta[k] == sc.meta[k] for k in sc.meta.keys())
    assert got.vlmeta[:] == sc.vlmeta[:]


CASES = {
    "plain": dict(n=3),
    "meta+vlmeta+zeros": dict(n=4, meta={"m1": b"\x01\x02", "other": [1, 2, 3]},
                              vlmeta={"v": {"a": 1}, "w": "x" * 300}, zeros_at=(3,)),
    "short-last": dict(n=5, last=10, codec=blosc2.Codec.ZSTD),
    "one": dict(n=1, codec=blosc2.Codec.BLOSCLZ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rebuilds_python_blosc2_frames_byte_for_byte(name):
    sc = _schunk(**CASES[name])
    ref = bytes(sc.to_cframe())
    f = blosckit.open_frame(ref)
    mine = build_frame([f.chunk(i) for i in range(f.nchunks)], metalayers=f.metalayers,
                       vlmetalayers=f.vlmetalayers, clevel=5)
    _same_as_oracle(mine, sc)
    assert mine == ref


def test_an_empty_frame_opens_in_python_blosc2():
    fr = build_frame([], metalayers={"m": msgpack.packb(3)})
    sc = blosc2.schunk_from_cframe(fr)
    assert sc.nchunks == 0 and sc[:] == b"" and sc.meta["m"] == 3
    f = blosckit.open_frame(fr)
    assert f.nchunks == 0 and f.decompress() == b"" and f.offsets == []


def test_build_frame_from_blosckit_chunks_opens_in_python_blosc2():
    data = [np.arange(i * 500, (i + 1) * 500, dtype="<f8") for i in range(6)]
    chunks = [blosckit.compress(a, codec="zstd", filters=("bitshuffle",)) for a in data]
    chunks.append(blosckit.compress_special("zeros", 4000, typesize=8))
    meta = {"m": msgpack.packb({"k": [1, 2]})}
    fr = build_frame(chunks, metalayers=meta, vlmetalayers={"v": msgpack.packb("hello")})
    sc = blosc2.schunk_from_cframe(fr)
    assert sc[:] == b"".join(a.tobytes() for a in data) + bytes(4000)
    assert sc.meta["m"] == {"k": [1, 2]} and sc.vlmeta["v"] == "hello"
    f = blosckit.open_frame(fr)
    assert f.offsets[-1] == "zeros" and f.codec == "zstd" and f.filters == [("bitshuffle", 0)]


def test_lz4hc_is_named_in_the_frame_header():
    chunks = [blosckit.compress(np.arange(1000, dtype="<i4"), codec="lz4hc")]
    assert blosckit.open_frame(build_frame(chunks)).codec == "lz4hc"


def test_compress_frame_and_sframe(tmp_path):
    a = np.linspace(0, 1, 100_000)
    fr = compress_frame(a, chunksize=80_000, codec="zstd",
                        metalayers={"m": msgpack.packb(1)},
                        vlmetalayers={"v": msgpack.packb([1])})
    assert blosckit.open_frame(fr).decompress() == a.tobytes()
    sc = blosc2.schunk_from_cframe(fr)
    assert sc[:] == a.tobytes() and sc.nchunks == 10
    to_sframe(fr, tmp_path / "s.b2frame")
    s = blosc2.open(str(tmp_path / "s.b2frame"))
    assert s[:] == a.tobytes() and s.meta["m"] == 1 and s.vlmeta["v"] == [1]
    g = blosckit.open_frame(tmp_path / "s.b2frame")
    assert g.offsets == list(range(10)) and g.decompress() == a.tobytes()


def test_bad_inputs_are_value_errors():
    c = blosckit.compress(bytes(1000))
    with pytest.raises(ValueError):
        build_frame([c, blosckit.compress(bytes(2000))])     # a middle chunk too long
    with pytest.raises(ValueError):
        build_frame([c[:-1]])
    with pytest.raises(ValueError):
        build_frame([c], metalayers={"x" * 40: b""})
    with pytest.raises(ValueError):
        compress_frame(bytes(100), chunksize=0)


@pytest.mark.parametrize("layout", [14, 13, 12, 11])
def test_older_header_layouts_read_back(layout):
    data = [np.arange(i * 500, (i + 1) * 500, dtype="<i4") for i in range(4)]
    chunks = [blosckit.compress(a, codec="lz4", filters=("bitshuffle",)) for a in data]
    chunks.append(blosckit.compress_special("zeros", 2000, typesize=4))
    meta = {} if layout == 11 else {"m": msgpack.packb("old")}
    fr = build_frame(chunks, metalayers=meta, vlmetalayers={"v": b"x"}, layout=layout)
    assert fr[0] == 0x90 | layout
    f = blosckit.open_frame(fr)
    assert f.layout == layout and f.nchunks == 5
    assert f.decompress() == b"".join(a.tobytes() for a in data) + bytes(2000)
    assert f.metalayers == meta and f.vlmetalayers == {"v": b"x"}
    assert f.filters == [("bitshuffle", 0)] and f.codec == "lz4"
    assert f.offsets[-1] == "zeros"
    if layout == 14:
        assert blosc2.schunk_from_cframe(fr)[:] == f.decompress()
    # a marker of the layout's own fields: the reader names it
    bad = bytearray(fr)
    bad[0x2F] ^= 0xFF                      # the typesize marker in every layout
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(bytes(bad))
    assert (e.value.rule, e.value.offset) == ("F-marker", 0x2F)
    assert e.value.path == "frame.header.typesize_marker"


def test_the_spec_worked_example_is_what_blosckit_builds():
    import pathlib
    import re
    text = (pathlib.Path(__file__).resolve().parent.parent / "specs" / "frame.md").read_text()
    section = text[text.index("## Worked example"):text.index("For comparison")]
    dump = bytes.fromhex("".join(
        " ".join(m.group(1).split()) for m in re.finditer(
            r"^[0-9a-f]{4}  ((?:[0-9a-f]{2} ){0,15}[0-9a-f]{2})", section, re.M)))
    built = compress_frame(np.arange(8, dtype="<i4"), chunksize=16, codec="blosclz",
                           metalayers={"m": msgpack.packb(7)}, vlmetalayers={"v": b"hi"})
    assert dump == built
