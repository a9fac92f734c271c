"""``blosckit.scan.scan``: every chunk and frame inside a blob of junk."""
from __future__ import annotations

import io
import random

import pytest

import blosckit
from blosckit.formats import npy
from blosckit.tools.scan import scan
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")


def _frame() -> bytes:
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4), meta={"m": 1})
    for i in range(4):
        sc.append_data(np.arange(i * 1000, (i + 1) * 1000, dtype="<i4"))
    sc.vlmeta["v"] = 3
    return bytes(sc.to_cframe())


def _junk(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


@pytest.mark.parametrize("seed", range(5))
def test_scan_finds_frames_and_chunks_at_their_offsets(seed):
    fr = _frame()
    c1 = blosc2.compress2(np.arange(3000, dtype="<i8").tobytes(), typesize=8)
    c2 = blosc2.compress2(np.linspace(0, 1, 999).tobytes(), typesize=8,
                          codec=blosc2.Codec.LZ4HC)
    parts, at = [_junk(777, seed), fr, _junk(100, seed + 1), c1, _junk(5, seed + 2), c2,
                 _junk(333, seed + 3), fr], {}
    blob = b""
    for k, p in enumerate(parts):
        if k % 2:
            at[len(blob)] = p
        blob += p
    found = scan(blob)
    assert [(f.offset, f.size) for f in found] == [(o, len(p)) for o, p in at.items()]
    assert [f.kind for f in found] == ["frame", "chunk", "chunk", "frame"]
    assert all(f.error is None for f in found)
    for f in found:
        piece = blob[f.offset:f.offset + f.size]
        if f.kind == "chunk":
            assert f.nbytes == len(blosckit.decompress(piece))
        else:
            assert f.nbytes == blosckit.open_frame(piece).nbytes


def test_a_damaged_frame_is_listed_and_its_chunks_found():
    fr = _frame()
    blob = _junk(64, 9) + fr[:700] + _junk(64, 10)
    found = scan(blob)
    assert found[0].kind == "frame" and found[0].offset == 64 and found[0].error
    # the frame runs to the blob's end (764 bytes after its start), short of its frame_len
    assert "[T-truncated]" in found[0].error
    assert "the input ends at byte 764, inside frame.chunks" in found[0].error
    f = blosckit.open_frame(fr)
    starts = {64 + f.header_len + o for o in f.offsets if isinstance(o, int)}
    inside = {x.offset for x in found[1:] if x.kind == "chunk"}
    assert inside and inside <= starts       # the chunks the cut left whole


def test_a_version_3_chunk_candidate_is_described():
    """Held-out fuzzing finding: a version-3 chunk header (the alpha
    extended layout, which has no udcodec byte) made scan raise
    AttributeError('udcodec') while naming the candidate's codec."""
    blob = bytes.fromhex("030107080400000001000000240000000000a36d2f73") + bytes(200)
    found = scan(blob)
    assert found and found[0].offset == 0 and found[0].kind == "chunk"


def test_junk_alone_gives_nothing_and_never_raises():
    for seed in range(20):
        assert all(f.kind in ("chunk", "frame") for f in scan(_junk(5000, seed)))
    assert scan(b"") == []


@pytest.mark.parametrize("shape,descr", [((3, 4), "<f8"), ((5,), "|u1"), ((), "<i4"),
                                         ((2, 3, 4), ">i2")])
def test_npy_header_is_what_numpy_writes(shape, descr):
    buf = io.BytesIO()
    np.save(buf, np.zeros(shape, dtype=descr))
    head = npy.write_header(descr, shape)
    assert buf.getvalue()[:len(head)] == head
    assert npy.read(buf.getvalue()) == (descr, len(head))


def test_compress_frame_reports_progress():
    seen = []
    data = np.arange(10_000, dtype="<i4").tobytes()
    fr = blosckit.compress_frame(data, chunksize=12_000, typesize=4, progress=seen.append)
    assert seen == [12_000, 12_000, 12_000, 4_000]
    assert blosckit.open_frame(fr).decompress() == data
