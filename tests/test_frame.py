"""Frames: reading what python-blosc2 writes, and hostile frames.

Every frame python-blosc2 writes reads with identical data and metadata
(the wider corpus, HDF5 included, is tests/test_frame_read.py); damaged frames
raise only FormatError, with an offset inside the frame and a ``frame`` path,
and an error inside a chunk names the chunk's place in the frame."""
from __future__ import annotations

import struct

import pytest

import blosckit
from blosckit import open_frame
from helpers import check_format_error
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")


def _schunk_frame(nchunks=4, chunk_items=1000, codec=blosc2.Codec.LZ4, meta=None,
                  vlmeta=None, zeros_last=False) -> tuple[bytes, list[bytes]]:
    sc = blosc2.SChunk(chunksize=chunk_items * 4,
                       cparams=blosc2.CParams(typesize=4, codec=codec, clevel=5),
                       meta=meta or {})
    chunks = []
    for i in range(nchunks):
        a = (np.zeros(chunk_items, dtype="<i4") if zeros_last and i == nchunks - 1
             else np.arange(i * chunk_items, (i + 1) * chunk_items, dtype="<i4"))
        sc.append_data(a)
        chunks.append(a.tobytes())
    for k, val in (vlmeta or {}).items():
        sc.vlmeta[k] = val
    return bytes(sc.to_cframe()), chunks


def test_reads_a_python_blosc2_frame():
    fr, chunks = _schunk_frame(meta={"m1": b"\x01\x02", "m2": [1, 2, 3]},
                               vlmeta={"v": {"a": 1}}, zeros_last=True)
    f = open_frame(fr)
    assert (f.nchunks, f.typesize, f.chunksize, f.codec) == (4, 4, 4000, "lz4")
    assert f.filters == [("shuffle", 0)]
    assert f.offsets[-1] == "zeros" and all(isinstance(o, int) for o in f.offsets[:-1])
    assert [f.decompress_chunk(i) for i in range(4)] == chunks
    assert f.decompress() == b"".join(chunks)
    import msgpack
    assert {k: msgpack.unpackb(v) for k, v in f.metalayers.items()} == {
        "m1": b"\x01\x02", "m2": [1, 2, 3]}
    assert list(f.metalayers) == ["m1", "m2"]
    assert {k: msgpack.unpackb(v) for k, v in f.vlmetalayers.items()} == {"v": {"a": 1}}
    # a special offset comes back as the equivalent special chunk
    assert blosckit.decompress(f.chunk(3)) == chunks[3]
    assert blosckit.parse_chunk(f.chunk(0)).nbytes == 4000


def test_frame_files_are_mapped_and_closed(tmp_path):
    data = np.arange(10_000, dtype="<i4")
    path = tmp_path / "a.b2frame"
    blosc2.SChunk(chunksize=8000, data=data, cparams=blosc2.CParams(typesize=4),
                  urlpath=str(path), contiguous=True, mode="w")
    with open_frame(path) as f:
        assert f.decompress() == data.tobytes()
    with open_frame(str(path)) as f:
        assert f.nchunks == 5


def test_sparse_frame_directory(tmp_path):
    data = np.arange(10_000, dtype="<i4")
    path = tmp_path / "s.b2frame"
    blosc2.SChunk(chunksize=8000, data=data, cparams=blosc2.CParams(typesize=4),
                  urlpath=str(path), contiguous=False, mode="w")
    f = open_frame(path)
    assert f.offsets == [0, 1, 2, 3, 4] and f.decompress() == data.tobytes()
    (path / "00000002.chunk").unlink()
    with pytest.raises(blosckit.FormatError) as e:
        f.decompress_chunk(2)
    assert e.value.rule == "F-sframe" and e.value.path == "frame.chunks[2]"


@pytest.mark.parametrize("shape,chunks,blocks", [((10,), (4,), (2,)), ((7, 9), (4, 4), (2, 3)),
                                                 ((5, 6, 7), (3, 4, 5), (2, 2, 3))])
def test_b2nd_array_reads_in_c_order(shape, chunks, blocks):
    a = np.arange(int(np.prod(shape)), dtype="<f8").reshape(shape)
    f = open_frame(blosc2.asarray(a, chunks=chunks, blocks=blocks).to_cframe())
    b = f.b2nd
    assert (b.shape, b.chunkshape, b.blockshape, b.dtype) == (shape, chunks, blocks, "<f8")
    assert b.read() == a.tobytes()


def test_an_error_inside_a_chunk_names_its_place_in_the_frame():
    fr, _ = _schunk_frame()
    f = open_frame(fr)
    hl = f.header_len
    o1 = f.offsets[1]
    start = hl + o1
    c = blosckit.parse_chunk(f.chunk(1))
    bad = bytearray(fr)
    b0 = start + c.bstarts[0]
    bad[b0:b0 + 4] = struct.pack("<i", 1 << 30)        # a stream that runs away
    g = open_frame(bytes(bad))
    with pytest.raises(blosckit.FormatError) as e:
        g.decompress_chunk(1)
    assert e.value.path.startswith("frame.chunks[1].blocks[0].streams[0]")
    assert e.value.offset == b0 and e.value.rule == "B4"
    assert g.decompress_chunk(0) == f.decompress_chunk(0)


def _outcome(blob):
    try:
        f = open_frame(blob)
        return f.decompress(), f.metalayers, f.vlmetalayers
    except blosckit.FormatError as e:
        check_format_error(e, blob, path_prefix="frame")
        return e


def test_truncated_frames_give_format_errors_at_the_end():
    fr, _ = _schunk_frame(nchunks=2, meta={"m": 1}, vlmeta={"v": 2})
    for n in range(len(fr)):
        res = _outcome(fr[:n])
        assert isinstance(res, blosckit.FormatError), n
        assert res.offset <= n


def test_every_header_byte_mutated():
    fr, chunks = _schunk_frame(nchunks=2, meta={"m": 1}, vlmeta={"v": 2})
    hl = open_frame(fr).header_len
    for pos in range(hl):
        for v in (0, 1, 0x7F, 0x80, 0xFF, fr[pos] ^ 0x01):
            src = bytearray(fr)
            src[pos] = v
            res = _outcome(bytes(src))
            if not isinstance(res, blosckit.FormatError):
                assert len(res[0]) % 4 == 0


def test_trailer_and_index_mutations():
    fr, chunks = _schunk_frame(nchunks=3, vlmeta={"v": 2})
    f = open_frame(fr)
    start = f.header_len + f.cbytes
    for pos in list(range(start, len(fr))):
        for bit in (0, 3, 7):
            src = bytearray(fr)
            src[pos] ^= 1 << bit
            _outcome(bytes(src))


def test_not_a_frame():
    for junk in (b"", b"\x9e", b"\x9ehello", bytes(100), blosckit.compress(bytes(1000))):
        with pytest.raises(blosckit.FormatError) as e:
            open_frame(junk)
        check_format_error(e.value, junk, path_prefix="frame")


def test_chunks_with_another_codec_than_the_header_says():
    from blosckit.frame.build import build_frame
    data = [np.arange(i * 800, (i + 1) * 800, dtype="<i4") for i in range(3)]
    chunks = [blosckit.compress(a, codec=c) for a, c in zip(data, ("zstd", "lz4", "zlib"))]
    fr = build_frame(chunks)
    f = open_frame(fr)
    assert f.codec == "zstd"                              # from the first chunk
    assert f.decompress() == b"".join(a.tobytes() for a in data)
    assert blosc2.schunk_from_cframe(fr)[:] == f.decompress()


def test_opening_never_reads_the_chunks_section(tmp_path):
    fr, chunks = _schunk_frame(nchunks=5, vlmeta={"v": {"k": 1}})
    f = open_frame(fr)
    start, end = f.header_len, f.header_len + f.cbytes
    garbage = bytearray(fr)
    garbage[start:end] = b"\xa5" * (end - start)      # every chunk destroyed
    path = tmp_path / "g.b2frame"
    path.write_bytes(garbage)
    with open_frame(path) as g:                        # opening and metadata still work
        assert g.nchunks == 5 and g.vlmetalayers == f.vlmetalayers
        with pytest.raises(blosckit.FormatError) as e:
            g.decompress_chunk(3)
        assert e.value.path.startswith("frame.chunks[3]") and start <= e.value.offset <= end


def test_truncated_frame_files(tmp_path):
    fr, _ = _schunk_frame(nchunks=3, meta={"m": 1}, vlmeta={"v": 2})
    path = tmp_path / "t.b2frame"
    for n in (0, 1, 50, 100, len(fr) // 2, len(fr) - 1):
        path.write_bytes(fr[:n])
        with pytest.raises(blosckit.FormatError) as e:
            with open_frame(path) as f:
                f.decompress(), f.vlmetalayers
        check_format_error(e.value, fr[:n], path_prefix="frame")
