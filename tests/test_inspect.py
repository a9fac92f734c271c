"""The inspector's nodes, read through the declarations, agree with the bytes:
every integer leaf re-read at its offset gives its value, bit fields sit in
their byte, and the tree covers header, bstarts, dictionary and streams; for
frames (python-blosc2's), every node lies in the input, chunks sit where the
offsets index says, and damaged frames show what reads before raising."""
from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest

import blosckit
from blosckit.tools.inspect import Node, chunk_nodes, frame_nodes
from helpers import small_chunks
from oracles import oracle

CHUNKS = small_chunks()
_INT = {1: "<B", 4: "<i", 8: "<q"}


@pytest.mark.parametrize("name", sorted(CHUNKS))
def test_every_leaf_matches_its_bytes(name):
    chunk = CHUNKS[name]
    nodes = list(chunk_nodes(chunk))
    assert nodes[0].path == "chunk" and nodes[0].size == len(chunk)
    for n in nodes:
        assert 0 <= n.offset <= len(chunk), n
        if n.bit is not None:
            first, width = n.bit
            assert n.value == (chunk[n.offset] >> first) & ((1 << width) - 1), n
        elif isinstance(n.value, int) and n.size in _INT:
            fmt = _INT[n.size]
            if n.path.endswith((".flags", "blosc2_flags", "blosc2_flags2")) or fmt == "<B":
                fmt = "<B"
            got = struct.unpack_from(fmt, chunk, n.offset)[0]
            if fmt == "<B" and n.value < 0:
                got -= 256
            assert got == n.value, n


@pytest.mark.parametrize("name", sorted(CHUNKS))
def test_the_tree_reaches_every_block(name):
    chunk = CHUNKS[name]
    c = blosckit.parse_chunk(chunk)
    paths = [n.path for n in chunk_nodes(chunk)]
    assert len([p for p in paths if p.startswith("chunk.bstarts[")]) == len(c.bstarts)
    if c.dict is not None:
        assert "chunk.dict.dsize" in paths and "chunk.dict.dict" in paths
    if c.bstarts and not c.lazy:
        for j in range(len(c.bstarts)):
            assert f"chunk.blocks[{j}]" in paths
        if not c.vlblocks:
            assert any(p.startswith("chunk.blocks[0].streams[0].csize") for p in paths)


def test_damaged_streams_stop_the_tree_with_a_format_error():
    chunk = bytearray(CHUNKS["lz4-shuffle"])
    b = blosckit.parse_chunk(chunk).bstarts[1]
    chunk[b:b + 4] = struct.pack("<i", 1 << 30)
    seen = []
    with pytest.raises(blosckit.FormatError) as e:
        for n in chunk_nodes(bytes(chunk)):
            seen.append(n.path)
    assert "chunk.blocks[0]" in seen          # what came before was shown
    # the reader's own error: B4 at the csize field whose payload runs past the end
    assert (e.value.rule, e.value.offset, e.value.path) == \
        ("B4", b, "chunk.blocks[1].streams[0].csize")
    with pytest.raises(blosckit.FormatError) as d:
        blosckit.decompress(bytes(chunk))
    assert (d.value.rule, d.value.offset, d.value.path) == \
        (e.value.rule, e.value.offset, e.value.path)
    first = next(p for p in blosckit.validate(bytes(chunk)) if p.severity == "error")
    assert (first.rule, first.offset, first.path) == (e.value.rule, e.value.offset, e.value.path)


def test_flag_bits_0_and_2_together_mean_the_extended_header():
    blosc2_chunk = CHUNKS["lz4-shuffle"]
    meaning = {n.path: n.meaning for n in chunk_nodes(blosc2_chunk)}
    assert blosckit.parse_chunk(blosc2_chunk).version >= 3
    assert "extended header" in meaning["chunk.header.flags.shuffle"]
    assert "extended header" in meaning["chunk.header.flags.bitshuffle"]
    assert "shuffle" in [meaning[f"chunk.header.extended.filters[{k}]"] for k in range(6)]
    blosc1 = {n.path: n.meaning for n in chunk_nodes(CHUNKS["blosc1-lz4"])}
    assert blosc1["chunk.header.flags.shuffle"] == "byte shuffle"
    assert blosc1["chunk.header.flags.bitshuffle"] == ""
    assert blosc1["chunk.header.flags.compformat"] == "lz4"


def test_nodes_built_the_old_way_still_work():
    n = Node("chunk", 0, 16, None, "doc")
    assert n.bit is None and n.meaning == ""


# ---------------------------------------------------------------------------
# Frames written by python-blosc2
# ---------------------------------------------------------------------------

blosc2 = oracle("blosc2")
np = oracle("numpy")

_BE = {1: "B", 2: "H", 4: "I", 8: "Q"}


def _schunk(urlpath=None, *, special=True) -> "blosc2.SChunk":
    data = np.arange(3000, dtype="<i4").tobytes()
    s = blosc2.SChunk(chunksize=4000, data=data, meta={"m1": [1, 2, 3], "raw": b"ab"},
                      cparams=blosc2.CParams(typesize=4, codec=blosc2.Codec.LZ4,
                                             filters=[blosc2.Filter.SHUFFLE], nthreads=1),
                      urlpath=None if urlpath is None else str(urlpath),
                      contiguous=urlpath is None, mode="w")
    if special:
        s.update_special(1, blosc2.SpecialValue.ZERO)
    s.vlmeta["note"] = "hello"
    s.vlmeta["conf"] = {"a": 1, "b": [1.5, "x"]}
    return s


@pytest.fixture(scope="module")
def schunk_frame() -> bytes:
    return _schunk().to_cframe()


@pytest.fixture(scope="module")
def b2nd_frame() -> bytes:
    a = np.arange(20 * 30, dtype="<f8").reshape(20, 30)
    return blosc2.asarray(a, chunks=(10, 15), blocks=(5, 5)).to_cframe()


@pytest.fixture(scope="module")
def sframe(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("inspect") / "s.b2frame"
    _schunk(path, special=False)
    return path


def _frames(schunk_frame, b2nd_frame):
    return {"schunk": schunk_frame, "b2nd": b2nd_frame}


def _by_path(nodes):
    return {n.path: n for n in nodes}


def test_every_frame_node_lies_inside_the_input_and_is_json(schunk_frame, b2nd_frame):
    for name, frame in _frames(schunk_frame, b2nd_frame).items():
        nodes = list(frame_nodes(frame, chunk=0))
        assert nodes[0].path == "frame" and nodes[0].size == len(frame)
        for n in nodes:
            assert n.path.startswith("frame"), n
            assert 0 <= n.offset and n.offset + n.size <= len(frame), (name, n)
            json.dumps(n._asdict())


def test_sframe_nodes_lie_in_the_index_file_or_their_chunk_file(sframe):
    index = (sframe / "chunks.b2frame").read_bytes()
    with blosckit.open_frame(sframe) as f:
        files = [(sframe / f"{o:08X}.chunk").read_bytes() for o in f.offsets]
    nodes = list(frame_nodes(sframe, chunk=1))
    assert nodes[0].path == "frame" and nodes[0].size == len(index)
    for n in nodes:
        json.dumps(n._asdict())
        m = re.match(r"frame\.chunks\[(\d+)\]", n.path)
        within = files[int(m.group(1))] if m else index
        assert 0 <= n.offset and n.offset + n.size <= len(within), n
    summaries = [n for n in nodes if re.fullmatch(r"frame\.chunks\[\d+\]", n.path)]
    assert [(n.offset, n.size) for n in summaries] == [(0, len(b)) for b in files]
    assert all("chunk file" in n.doc for n in summaries)
    _check_leaves([n for n in nodes if n.path.startswith("frame.chunks[1].")], files[1],
                  "little")
    paths = [n.path for n in nodes]
    assert "frame.header.frame_type" in paths
    assert _by_path(nodes)["frame.header.frame_type"].meaning == "sparse"


def _check_leaves(nodes, buf: bytes, order: str) -> int:
    """Every bit field and integer leaf equals the stored bytes: ``order``
    "big" for the frame's msgpack integers, "little" for chunk fields."""
    seen = 0
    for n in nodes:
        if n.bit is not None:
            first, width = n.bit
            assert n.value == (buf[n.offset] >> first) & ((1 << width) - 1), n
            seen += 1
        elif isinstance(n.value, int) and n.size in _BE:
            raw = buf[n.offset:n.offset + n.size]
            assert int.from_bytes(raw, order, signed=n.value < 0) == n.value, n
            seen += 1
    return seen


def test_fixed_header_leaves_are_the_stored_big_endian_integers(schunk_frame, b2nd_frame):
    for frame in _frames(schunk_frame, b2nd_frame).values():
        nodes = list(frame_nodes(frame))
        header = [n for n in nodes if n.path.startswith("frame.header.")]
        assert _check_leaves(header, frame, "big") >= 30
        n = _by_path(nodes)
        with blosckit.open_frame(frame) as f:
            assert n["frame.header.header_len"].value == f.header_len
            assert n["frame.header.typesize"].value == f.typesize
            assert n["frame.header.cbytes"].value == f.cbytes
            assert struct.unpack_from(">q", frame, n["frame.header.nbytes"].offset)[0] == f.nbytes
        # the metalayers and the trailer are msgpack too
        rest = [n for n in nodes if n.path.startswith(("frame.metalayers", "frame.trailer"))]
        assert _check_leaves(rest, frame, "big") >= 10


def test_chunk_nodes_sit_where_the_offsets_index_says(schunk_frame, b2nd_frame):
    for frame in _frames(schunk_frame, b2nd_frame).values():
        with blosckit.open_frame(frame) as f:
            offsets, header_len, index_at = f.offsets, f.header_len, f.index_span[0]
            stored = {i: f.chunk(i) for i, o in enumerate(offsets) if isinstance(o, int)}
        nodes = _by_path(frame_nodes(frame))
        for i, o in enumerate(offsets):
            n = nodes[f"frame.chunks[{i}]"]
            if isinstance(o, int):
                assert (n.offset, n.size) == (header_len + o, len(stored[i]))
                assert frame[n.offset:n.offset + n.size] == stored[i]
            else:
                assert (n.offset, n.size) == (index_at, 0)
                assert n.meaning == f"special: {o} (no bytes stored)"


def test_chunk_expansion_is_the_chunk_relocated(schunk_frame):
    with blosckit.open_frame(schunk_frame) as f:
        start, view = f.chunk_view(2)
        stored = bytes(view)
    nodes = list(frame_nodes(schunk_frame, chunk=2))
    k = [n.path for n in nodes].index("frame.chunks[2]")
    summary, inner = nodes[k], []
    for n in nodes[k + 1:]:
        if not n.path.startswith("frame.chunks[2]."):
            break
        inner.append(n)
    assert summary.offset == start and summary.size == len(stored)
    own = list(chunk_nodes(stored))[1:]
    assert [n.path for n in inner] == ["frame.chunks[2]" + n.path[len("chunk"):] for n in own]
    assert [n.offset - start for n in inner] == [n.offset for n in own]
    assert [(n.value, n.meaning) for n in inner] == [(n.value, n.meaning) for n in own]
    assert _check_leaves(inner, schunk_frame, "little") >= 12
    # without chunk=N, one node per chunk
    assert not any(n.path.startswith("frame.chunks[2].") for n in frame_nodes(schunk_frame))


def test_an_index_out_of_range_is_refused(schunk_frame):
    with pytest.raises(IndexError):
        list(frame_nodes(schunk_frame, chunk=3))


def test_meanings_name_codecs_filters_and_kinds(schunk_frame):
    n = _by_path(frame_nodes(schunk_frame))
    assert n["frame"].doc.startswith("Blosc2 contiguous frame, format version 2")
    assert n["frame.header.codec_flags.codec"].meaning == "lz4"
    assert n["frame.header.filter_pipeline.udcodec"].meaning == "lz4"
    slots = [n[f"frame.header.filter_pipeline.filters[{k}]"].meaning for k in range(6)]
    assert "shuffle" in slots
    assert n["frame.header.general_flags.version"].meaning == "frame format version 2"
    assert n["frame.header.frame_type"].meaning == "contiguous"
    assert n["frame.header.has_vlmetalayers"].meaning == "true"
    assert n["frame.header.other_flags.splitmode"].meaning in ("always", "never", "auto",
                                                              "forward_compat")
    assert n["frame.trailer.fingerprint_type"].meaning == "none"
    summary = n["frame.chunks[0]"].meaning
    assert summary.startswith("nbytes 4000, cbytes ") and summary.endswith("lz4, shuffle")
    assert n["frame.offsets[1]"].meaning == "special: zeros"
    assert n["frame.offsets[1]"].value < 0
    assert n["frame.offsets[0]"].meaning == f"chunk at byte {n['frame.header.header_len'].value}" \
        " of the frame"


def test_offsets_entries_are_the_index(schunk_frame):
    with blosckit.open_frame(schunk_frame) as f:
        raw = list(f.entries)
        start, end = f.index_span
    nodes = [n for n in frame_nodes(schunk_frame) if re.fullmatch(r"frame\.offsets\[\d+\]", n.path)]
    assert [n.value for n in nodes] == raw
    for n in nodes:
        assert start <= n.offset and n.offset + n.size <= end
        if n.size == 8:               # a memcpyed index: the entries are stored raw
            assert struct.unpack_from("<q", schunk_frame, n.offset)[0] == n.value
        else:
            assert n.offset == start and "decoded" in n.doc


def test_metalayer_values_are_decoded_where_they_are(schunk_frame):
    nodes = _by_path(frame_nodes(schunk_frame))
    with blosckit.open_frame(schunk_frame) as f:
        meta, vlraw = f.metalayers, f.vlmetalayers_raw
    m1, raw = nodes["frame.metalayers['m1']"], nodes["frame.metalayers['raw']"]
    assert m1.value == [1, 2, 3] and raw.value == b"ab".hex()
    for name, n in (("m1", m1), ("raw", raw)):
        assert schunk_frame[n.offset:n.offset + n.size] == meta[name]
    note = nodes["frame.trailer.vlmetalayers['note']"]
    conf = nodes["frame.trailer.vlmetalayers['conf']"]
    assert note.value == "hello" and conf.value == {"a": 1, "b": [1.5, "x"]}
    assert schunk_frame[note.offset:note.offset + note.size] == vlraw["note"]
    assert nodes["frame.metalayers.index[0].name"].value == "m1"
    assert nodes["frame.trailer.vlmetalayers.num_metalayers"].value == 2


def test_b2nd_fields_and_chunk_grid(b2nd_frame):
    nodes = _by_path(frame_nodes(b2nd_frame))
    root = "frame.metalayers['b2nd']"
    assert nodes[f"{root}.shape"].value == [20, 30]
    assert nodes[f"{root}.chunkshape"].value == [10, 15]
    assert nodes[f"{root}.blockshape"].value == [5, 5]
    assert nodes[f"{root}.dtype"].value == "<f8"
    grid = nodes[f"{root}.chunk_grid"]
    assert grid.value == [2, 2] and grid.meaning == "4 chunks"
    # every field sits at its own bytes: the extents big-endian behind their
    # msgpack markers, the dtype string last
    for k, width, marker in (("shape", 8, 0xD3), ("chunkshape", 4, 0xD2),
                             ("blockshape", 4, 0xD2)):
        for d, want in enumerate(nodes[f"{root}.{k}"].value):
            item = nodes[f"{root}.{k}[{d}].value"]
            assert item.size == width and item.value == want
            assert b2nd_frame[item.offset - 1] == marker
            assert int.from_bytes(b2nd_frame[item.offset:item.offset + width], "big") == want
    s = nodes[f"{root}.dtype.dtype"]
    assert b2nd_frame[s.offset:s.offset + s.size] == b"<f8"
    value = nodes[root]
    assert s.offset + s.size == value.offset + value.size


# -- damaged frames

def _until_error(src, **kw):
    seen = []
    with pytest.raises(blosckit.FormatError) as e:
        for n in frame_nodes(src, **kw):
            seen.append(n)
    return [n.path for n in seen], e.value


def test_a_truncated_frame_shows_its_header_then_raises(schunk_frame):
    cut = schunk_frame[:500]
    paths, err = _until_error(cut)
    assert paths[0] == "frame" and "frame.header.typesize" in paths
    assert "frame.metalayers['m1']" in paths
    assert err.path.startswith("frame") and err.offset <= len(cut)


def test_a_corrupt_index_shows_header_and_metalayers_then_raises(schunk_frame):
    with blosckit.open_frame(schunk_frame) as f:
        start = f.index_span[0]
    bad = bytearray(schunk_frame)
    bad[start + 12:start + 16] = struct.pack("<i", 1 << 30)      # the index chunk's cbytes
    paths, err = _until_error(bytes(bad))
    assert "frame.header.filter_pipeline.reserved" in paths
    assert "frame.metalayers['raw']" in paths
    assert not any(p.startswith("frame.chunks") for p in paths)
    assert err.path.startswith("frame.offsets") and start <= err.offset < len(bad)
    # an index whose header reads but whose body does not: stops at the chunks
    bad = bytearray(schunk_frame)
    bad[start] = 99                                              # its chunk version
    paths, err = _until_error(bytes(bad))
    assert paths[-1] == "frame.chunks"
    assert err.path == "frame.offsets.header.version" and err.offset == start


def test_a_header_that_does_not_parse_raises_at_once(schunk_frame):
    bad = bytearray(schunk_frame)
    bad[1] = 0                                                   # the magic's marker
    paths, err = _until_error(bytes(bad))
    assert paths == [] and err.path == "frame.header.magic_marker" and err.offset == 1


def test_a_damaged_chunk_stops_its_expansion_with_frame_offsets(schunk_frame):
    with blosckit.open_frame(schunk_frame) as f:
        start, view = f.chunk_view(2)
        c = blosckit.parse_chunk(view)
    bad = bytearray(schunk_frame)
    b = start + c.bstarts[0]
    bad[b:b + 4] = struct.pack("<i", 1 << 20)                    # a stream's csize
    paths, err = _until_error(bytes(bad), chunk=2)
    assert "frame.chunks[2].header.cbytes" in paths
    assert err.path.startswith("frame.chunks[2].blocks[0].streams[0]")
    assert start <= err.offset <= start + c.cbytes


def test_a_damaged_vlmetalayer_raises_with_its_path(schunk_frame):
    nodes = _by_path(frame_nodes(schunk_frame))
    note = nodes["frame.trailer.vlmetalayers['note']"]
    bad = bytearray(schunk_frame)
    bad[note.offset + 4:note.offset + 8] = struct.pack("<i", 1 << 20)   # its chunk's nbytes
    paths, err = _until_error(bytes(bad))
    assert "frame.trailer.vlmetalayers.num_values" in paths
    assert err.path.startswith("frame.trailer.vlmetalayers['note']")
    assert note.offset <= err.offset < note.offset + note.size
