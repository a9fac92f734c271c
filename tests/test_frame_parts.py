"""frame_parts: frames taken apart and built again, field by field.

The round trip runs on frames python-blosc2 wrote (and C-Blosc2's compat
and crash files, the fuzz findings): nothing changed, the same bytes, and
the composer lays out every section itself (nothing kept verbatim).  Each
lie is written exactly as asked (read back through the declarations'
layouts), the reader refuses it with the rule that names it, validate
reports that rule at the same offset, and check=True refuses it naming
the field.  An honest change (a vlmetalayer, a metalayer of the same
size) is read by python-blosc2.
"""
from __future__ import annotations

import functools
import os
import re
import struct
import tempfile
from pathlib import Path

import pytest

import blosckit
from blosckit.formats import frame as ff
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")
import msgpack                      # noqa: E402 -- python-blosc2 depends on it

DATA = Path(__file__).parent / "data"
H = ff.HEADER


# ---------------------------------------------------------------------------
# Frames python-blosc2 writes
# ---------------------------------------------------------------------------

def _cframe(sc) -> bytes:
    return bytes(sc.to_cframe())


@functools.cache
def frames() -> dict[str, bytes]:
    out = {}
    sc = blosc2.SChunk(chunksize=4000, data=np.arange(2500, dtype="<i4"),
                       cparams=blosc2.CParams(typesize=4), meta={"m": 1, "ab": [1, 2]})
    sc.vlmeta["note"] = "hello"
    out["plain-meta-vlmeta"] = _cframe(sc)
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4))
    for n in (1000, 500, 1000):
        sc.append_data(np.arange(n, dtype="<i4"))
    out["variable-size"] = _cframe(sc)
    for kind in ("ZERO", "NAN", "UNINIT"):
        sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4))
        sc.fill_special(2500, getattr(blosc2.SpecialValue, kind))
        out[f"special-{kind.lower()}"] = _cframe(sc)
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=4))
    sc.fill_special(2500, blosc2.SpecialValue.VALUE, value=np.int32(7))
    out["special-value"] = _cframe(sc)
    out["empty"] = _cframe(blosc2.SChunk(chunksize=4000))
    a = blosc2.asarray(np.arange(60 * 70, dtype="<i4").reshape(60, 70), chunks=(20, 32),
                       blocks=(8, 16))
    a.schunk.vlmeta["note"] = "an array"
    out["b2nd-vlmeta"] = _cframe(a.schunk)
    for edit in ("delete", "update", "insert"):
        out[f"{edit}-chunk-in-file"] = _edited_file(edit)
    return out


def _edited_file(edit: str) -> bytes:
    """A contiguous frame file edited in place by python-blosc2: a deleted
    or replaced chunk's bytes stay in the chunks section."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "f.b2frame")
        sc = blosc2.SChunk(chunksize=4000, data=np.arange(5000, dtype="<i4"), urlpath=path,
                           contiguous=True, mode="w",
                           cparams=blosc2.CParams(typesize=4, codec=blosc2.Codec.ZSTD))
        other = blosc2.compress2(np.ones(1000, "<i4").tobytes(), typesize=4)
        if edit == "delete":
            sc.delete_chunk(0)
        elif edit == "update":
            sc.update_chunk(1, other)
        else:
            sc.insert_chunk(0, other)
        del sc
        with open(path, "rb") as fh:
            return fh.read()


# Sections the composer lays out otherwise than python-blosc2, kept verbatim:
# after delete_chunk, C-Blosc2 compresses the offsets index as a compressed
# stream where compress_index (as every append) stores it raw (memcpyed)
VERBATIM = {"delete-chunk-in-file": {"index"}}

DATA_FRAMES = sorted((DATA / "c-blosc2-compat").glob("*.b2frame")) + \
    sorted((DATA / "c-blosc2-crashes").glob("*.b2frame")) + \
    sorted((DATA / "fuzz-found").glob("*.b2frame"))


@pytest.mark.parametrize("name", sorted(frames()))
def test_round_trip_of_python_blosc2_frames(name):
    fr = frames()[name]
    p = blosckit.frame_parts(fr)
    assert p.build() == fr
    assert p.verbatim == VERBATIM.get(name, set())     # composed, not copied
    assert p.computed().build() == fr   # every size computed: the same
    assert b"".join(p.chunks) == fr[p.header["header_len"]:][:p.header["cbytes"]]


def test_bytes_no_entry_points_at_stay_a_piece_of_their_own():
    """A deleted chunk's bytes (C-Blosc2 leaves them in the file): a piece
    no offset names, kept in its place."""
    for name in ("delete-chunk-in-file",):
        p = blosckit.frame_parts(frames()[name])
        starts = [sum(len(c) for c in p.chunks[:k]) for k in range(len(p.chunks))]
        named = [k for k, at in enumerate(starts) if at in p.offsets]
        assert len(named) == len([o for o in p.offsets if o >= 0]) == len(p.chunks) - 1, name
        orphan, = set(range(len(p.chunks))) - set(named)
        assert blosckit.chunk_sizes(p.chunks[orphan])[1] == len(p.chunks[orphan])


@pytest.mark.parametrize("path", DATA_FRAMES, ids=lambda p: p.name)
def test_round_trip_of_the_frames_in_tests_data(path):
    fr = path.read_bytes()
    try:
        p = blosckit.frame_parts(path)
    except blosckit.FormatError:
        with pytest.raises(blosckit.FormatError):
            blosckit.open_frame(fr)     # refused by the reader itself
        return
    assert p.build(check=False) == fr
    assert blosckit.frame_parts(fr).build(check=False) == fr


def test_header_holds_every_field_of_its_declaration():
    for layout in (14, 13, 12, 11):
        fr = blosckit.build_frame([blosckit.compress(bytes(4000), typesize=4)],
                                  metalayers={"m": b"\x01"} if layout != 11 else None,
                                  layout=layout)
        p = blosckit.frame_parts(fr)
        assert p.layout == layout

        def flat(d, prefix=""):
            for k, v in d.items():
                if isinstance(v, dict):
                    yield from flat(v, f"{prefix}{k}.")
                else:
                    yield prefix + k
        lay = ff.FLAT_HEADERS[layout]
        declared = {name for name in lay.fields
                    if not name.endswith("marker") and name not in ("fixarray", "magic")
                    and not any(other.startswith(name + ".") for other in lay.fields)}
        assert set(flat(p.header)) == declared
        assert p.build() == fr


def test_a_sparse_frame_directory_is_refused(tmp_path):
    blosckit.to_sframe(frames()["plain-meta-vlmeta"], tmp_path / "s")
    with pytest.raises(ValueError, match="sparse"):
        blosckit.frame_parts(tmp_path / "s")


# ---------------------------------------------------------------------------
# Lies: written as asked, refused with the rule that names them
# ---------------------------------------------------------------------------

def _read_all(fr: bytes) -> None:
    with blosckit.open_frame(fr) as f:
        f.decompress()
        f.metalayers
        f.vlmetalayers


def _header(fr, name):
    return H.get(fr, name, 0)


def _tail(fr, name):
    return ff.FAST_TRAILER_TAIL.get(fr, name, len(fr) - ff.LEN_TRAILER_TAIL)


def _entries(fr) -> list[int]:
    at = _header(fr, "header_len") + _header(fr, "cbytes")
    raw = blosckit.decompress(fr[at:at + blosckit.chunk_sizes(fr[at:])[1]])
    return list(struct.unpack(f"<{len(raw) // 8}q", raw))


def _meta_len(fr, name: bytes) -> int:
    sec = ff.Metalayers.parse(fr[ff.LEN_FIXED[14]:])
    e = next(e for e in sec.index if e.name == name)
    return ff.FAST_VALUE_HEAD.get(fr, "len_content", e.offset)


def _vlmeta_len(fr, name: bytes) -> int:
    start = len(fr) - _tail(fr, "trailer_len")
    sec = ff.Metalayers.parse(fr[start + ff.LEN_TRAILER_HEAD:])
    e = next(e for e in sec.index if e.name == name)
    return ff.FAST_VALUE_HEAD.get(fr, "len_content", start + e.offset)


def _set(d, **kw):
    d.update(kw)


# name -> (frame, edit of the parts, what the output must hold, rule, path
# of the refusal); ``edit`` works on frame_parts(frame).computed() when the
# name ends in "+computed" (a lie in one field, the sizes around it true)
LIES = {
    "frame_len longer": ("plain-meta-vlmeta",
                         lambda p: _set(p.header, frame_len=p.header["frame_len"] + 7),
                         lambda fr, p: _header(fr, "frame_len") == len(fr) + 7,
                         "F-frame-len", "frame.header.frame_len"),
    "frame_len shorter": ("plain-meta-vlmeta",
                          lambda p: _set(p.header, frame_len=p.header["frame_len"] - 7),
                          lambda fr, p: _header(fr, "frame_len") == len(fr) - 7,
                          "F-frame-len", "frame.header.frame_len"),
    "header_len past the frame": (
        "plain-meta-vlmeta", lambda p: _set(p.header, header_len=p.header["frame_len"] + 1),
        lambda fr, p: _header(fr, "header_len") == len(fr) + 1,
        "F-header-len", "frame.header.header_len"),
    "header_len inside the fixed part": (
        "plain-meta-vlmeta", lambda p: _set(p.header, header_len=-3),
        lambda fr, p: _header(fr, "header_len") == -3, "F-header-len", "frame.header.header_len"),
    "nbytes of more chunks": (
        "plain-meta-vlmeta", lambda p: _set(p.header, nbytes=p.header["nbytes"] * 2),
        lambda fr, p: _header(fr, "nbytes") == 20000, "F-index", "frame.header.nbytes"),
    "nbytes negative": ("plain-meta-vlmeta", lambda p: _set(p.header, nbytes=-1),
                        lambda fr, p: _header(fr, "nbytes") == -1, "F-sizes",
                        "frame.header.nbytes"),
    "nbytes of variable-size chunks": (
        "variable-size", lambda p: _set(p.header, nbytes=p.header["nbytes"] + 4),
        lambda fr, p: _header(fr, "nbytes") == 10004, "F-nbytes", "frame.header.nbytes"),
    "nchunks: an index entry more+computed": (
        "plain-meta-vlmeta", lambda p: p.offsets.append(0),
        lambda fr, p: len(_entries(fr)) == 4 and _header(fr, "nbytes") == 10000,
        "F-index", "frame.header.nbytes"),
    "negative offset with stray bits": (
        "plain-meta-vlmeta", lambda p: p.offsets.__setitem__(1, -5),
        lambda fr, p: _entries(fr)[1] == -5, "F-special-bits", "frame.offsets[1]"),
    "negative offset of no kind": (
        "plain-meta-vlmeta", lambda p: p.offsets.__setitem__(1, -(1 << 63)),
        lambda fr, p: _entries(fr)[1] == -(1 << 63), "F-special", "frame.offsets[1]"),
    "offset past the chunks section": (
        "plain-meta-vlmeta", lambda p: p.offsets.__setitem__(1, _header(frames()[
            "plain-meta-vlmeta"], "cbytes") + 10),
        lambda fr, p: _entries(fr)[1] == _header(fr, "cbytes") + 10, "F-offset",
        "frame.offsets[1]"),
    "full-size entry at the short last chunk": (
        "plain-meta-vlmeta", lambda p: p.offsets.__setitem__(0, p.offsets[2]),
        lambda fr, p: _entries(fr)[0] == _entries(fr)[2], "F-chunk",
        "frame.chunks[0].header.nbytes"),
    "trailer_len pointing into the index": (
        "plain-meta-vlmeta", lambda p: _set(p.trailer, trailer_len=p.trailer["trailer_len"] + 8),
        lambda fr, p: _tail(fr, "trailer_len") == p.trailer["trailer_len"], "F-trailer",
        "frame.trailer.marker"),
    "trailer_len past the frame": (
        "plain-meta-vlmeta", lambda p: _set(p.trailer, trailer_len=1 << 20),
        lambda fr, p: _tail(fr, "trailer_len") == 1 << 20, "F-trailer",
        "frame.trailer.trailer_len"),
    "metalayer value longer than stored": (
        "plain-meta-vlmeta", lambda p: p.meta_index["lengths"].update(m=100),
        lambda fr, p: _meta_len(fr, b"m") == 100, "F-meta", "frame.metalayers['m'].content"),
    "vlmetalayer value shorter than its chunk": (
        "plain-meta-vlmeta", lambda p: p.vlmeta_index["lengths"].update(note=20),
        lambda fr, p: _vlmeta_len(fr, b"note") == 20, "F-vlmeta",
        "frame.trailer.vlmetalayers['note'].header.cbytes"),
    "vlmetalayer value longer than the trailer": (
        "plain-meta-vlmeta", lambda p: p.vlmeta_index["lengths"].update(note=1000),
        lambda fr, p: _vlmeta_len(fr, b"note") == 1000, "F-meta",
        "frame.trailer.vlmetalayers['note'].content"),
}


def _lie(name: str):
    frame, edit, _, _, _ = LIES[name]
    p = blosckit.frame_parts(frames()[frame])
    if name.endswith("+computed"):
        p = p.computed()
    edit(p)
    return p


@pytest.mark.parametrize("name", sorted(LIES))
def test_check_false_writes_the_lie_and_the_reader_names_it(name):
    _, _, holds, rule, path = LIES[name]
    p = _lie(name)
    fr = p.build(check=False)
    assert holds(fr, p)
    with pytest.raises(blosckit.FormatError) as e:
        _read_all(fr)
    assert (e.value.rule, e.value.path) == (rule, path)
    errors = [(q.rule, q.offset) for q in blosckit.validate(fr) if q.severity == "error"]
    assert (rule, e.value.offset) in errors


@pytest.mark.parametrize("name", sorted(LIES))
def test_check_true_refuses_the_lie_naming_the_field(name):
    _, _, _, rule, path = LIES[name]
    with pytest.raises(ValueError, match=fr"^{re.escape(path)}: .*\[{rule}\]"):
        _lie(name).build()


def test_a_lie_in_one_field_keeps_every_other_byte():
    fr = frames()["plain-meta-vlmeta"]
    p = blosckit.frame_parts(fr)
    p.header["nthreads_c"] = -7
    out = p.build(check=False)
    at = H.offset("nthreads_c")
    assert out[:at] == fr[:at] and out[at + 2:] == fr[at + 2:]
    assert _header(out, "nthreads_c") == -7


@pytest.mark.parametrize("kind,data", [(2, bytes(range(16))), (3, b"\xff" * 16),
                                       (9, bytes(16)), (0, b"\x01" * 16)])
def test_a_fingerprint_of_any_kind(kind, data):
    """Written as asked; readers ignore it (python-blosc2 too), validate
    warns about a kind that is none of 0..3 and bytes under kind 0."""
    p = blosckit.frame_parts(frames()["plain-meta-vlmeta"])
    p.trailer.update(fingerprint_type=kind, fingerprint=data)
    fr = p.build()                      # no reader refuses it
    assert (_tail(fr, "fingerprint_type"), _tail(fr, "fingerprint")) == (kind, data)
    _read_all(fr)
    assert blosc2.schunk_from_cframe(fr)[:] == np.arange(2500, dtype="<i4").tobytes()
    warned = [(q.rule, q.severity) for q in blosckit.validate(fr)]
    assert warned == ([] if kind in (1, 2, 3) else [("F-fingerprint", "warning")])


def test_values_no_field_holds_are_refused_even_unchecked():
    p = blosckit.frame_parts(frames()["plain-meta-vlmeta"])
    p.header["nbytes"] = 1 << 70
    with pytest.raises(ValueError, match="header"):
        p.build(check=False)
    p = blosckit.frame_parts(frames()["plain-meta-vlmeta"])
    p.trailer["fingerprint"] = b"short"
    with pytest.raises(ValueError, match="fingerprint"):
        p.build(check=False)
    p = blosckit.frame_parts(frames()["plain-meta-vlmeta"])
    p.meta_index["offsets"]["m"] = 1 << 31             # an int32
    with pytest.raises(ValueError, match="metalayers"):
        p.build(check=False)
    p = blosckit.frame_parts(frames()["plain-meta-vlmeta"])
    p.metalayers["x" * 32] = b"\xc0"
    with pytest.raises(ValueError, match="1..31 bytes"):
        p.build(check=False)


def test_check_false_takes_what_the_builders_refuse():
    """An empty metalayer name and more than 16 metalayers (C-Blosc2 never
    writes either): written; the reader reads the first, refuses the second."""
    p = blosckit.frame_parts(frames()["plain-meta-vlmeta"]).computed()
    p.metalayers[""] = b"\xc0"
    with pytest.raises(ValueError, match="1..31"):
        p.build()
    fr = p.build(check=False)
    assert blosckit.open_frame(fr).metalayers[""] == b"\xc0"
    p.metalayers.update({f"k{i}": b"\xc0" for i in range(16)})
    fr = p.build(check=False)
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(fr)
    assert e.value.rule == "F-meta"


# ---------------------------------------------------------------------------
# Honest changes, read by python-blosc2
# ---------------------------------------------------------------------------

def test_python_blosc2_reads_a_frame_whose_vlmetalayer_changed():
    fr = frames()["plain-meta-vlmeta"]
    p = blosckit.frame_parts(fr).computed()
    # the stored value is a chunk of msgpack, as python-blosc2 stores it:
    # let python-blosc2 store it in a frame and take it from there
    donor = blosc2.SChunk(chunksize=8)
    donor.vlmeta["note"] = "a much longer note " * 4
    donor.vlmeta["extra"] = [1, 2, 3]
    stored = blosckit.frame_parts(_cframe(donor)).vlmetalayers
    p.vlmetalayers["note"] = stored["note"]
    p.vlmetalayers["extra"] = stored["extra"]
    out = p.build()
    sc = blosc2.schunk_from_cframe(out)
    assert sc.vlmeta["note"] == "a much longer note " * 4
    assert sc.vlmeta["extra"] == [1, 2, 3]
    assert sc[:] == np.arange(2500, dtype="<i4").tobytes()
    assert sc.meta["ab"] == [1, 2]
    assert blosckit.validate(out) == []


def test_python_blosc2_reads_a_frame_given_its_first_vlmetalayer():
    fr = frames()["special-zero"]
    p = blosckit.frame_parts(fr).computed()
    donor = blosc2.SChunk(chunksize=8)
    donor.vlmeta["k"] = "v"
    p.vlmetalayers.update(blosckit.frame_parts(_cframe(donor)).vlmetalayers)
    out = p.build()
    assert _header(out, "has_vlmetalayers") == 0xC3
    sc = blosc2.schunk_from_cframe(out)
    assert sc.vlmeta["k"] == "v" and sc[:] == bytes(10000)


def test_a_same_size_metalayer_update_is_python_blosc2s(tmp_path):
    """The metalayer update C-Blosc2 allows (same size): the bytes
    python-blosc2 writes updating the file in place."""
    path = tmp_path / "m.b2frame"
    path.write_bytes(frames()["plain-meta-vlmeta"])
    p = blosckit.frame_parts(path)
    p.metalayers["ab"] = msgpack.packb([3, 4])
    sc = blosc2.open(str(path), mode="a")
    sc.meta["ab"] = [3, 4]
    del sc
    theirs = path.read_bytes()
    # C-Blosc2 writes its context's thread counts into a header it rewrites
    # (advisory fields): the composer writes those it is given
    for name in ("nthreads_c", "nthreads_d"):
        p.header[name] = _header(theirs, name)
    out = p.build()
    assert out == theirs
    assert blosc2.schunk_from_cframe(out).meta["ab"] == [3, 4]


def test_python_blosc2_reads_a_frame_whose_chunk_was_replaced():
    """Chunks and offsets are the caller's: a chunk of another size
    replaced, the offsets after it moved by hand."""
    fr = frames()["plain-meta-vlmeta"]
    p = blosckit.frame_parts(fr).computed()
    new = blosc2.compress2(np.full(1000, 9, "<i4").tobytes(), typesize=4, clevel=0)
    grow = len(new) - len(p.chunks[1])
    p.chunks[1] = new
    p.offsets = [p.offsets[0], p.offsets[1], p.offsets[2] + grow]
    out = p.build()
    want = np.arange(2500, dtype="<i4")
    want[1000:2000] = 9
    assert blosc2.schunk_from_cframe(out)[:] == want.tobytes()


# ---------------------------------------------------------------------------
# The lie- mutations and the seed corpus
# ---------------------------------------------------------------------------

def test_each_lie_mutation_is_refused_with_its_rule():
    """Over python-blosc2's frames and drawn picks: every frame a lie-
    mutation makes gets its rule from validate, at the offset the reader
    raises (a warning: the reader reads it)."""
    import random
    from blosckit.formats.rules import RULES
    from blosckit.testing import mutations as mut
    assert len(mut.LIES) >= 12
    for name, rule in mut.LIES.items():
        made = 0
        for fname, fr in frames().items():
            for seed in range(6):
                r = random.Random(seed)
                out = mut.apply(name, fr, mut.first if seed == 0 else
                                (lambda o, r=r: r.choice(list(o))))
                if out is None:
                    continue
                made += 1
                found = [(q.rule, q.offset) for q in blosckit.validate(out)
                         if q.severity == RULES[rule].severity]
                assert rule in {r for r, _ in found}, (name, fname, seed, found)
                if RULES[rule].severity == "error":
                    with pytest.raises(blosckit.FormatError) as e:
                        _read_all(out)
                    assert (e.value.rule, e.value.offset) in found, (name, fname, seed)
                else:
                    _read_all(out)
        assert made, name


def test_the_corpus_holds_each_lie_with_its_verdict(tmp_path):
    """``blosckit corpus`` (write_corpus): a frame per lie, its manifest
    entry naming the rule; validate reports that rule, and the reader's
    rejection recorded is that rule's."""
    import json
    oracle("hypothesis")
    from blosckit.testing import mutations as mut
    from blosckit.testing.fuzz import write_corpus
    write_corpus(tmp_path, 60, seed=3)
    entries = json.loads((tmp_path / "manifest.json").read_text())["entries"]
    lies = [e for e in entries if "lie" in e]
    assert len(lies) >= 8
    for e in lies:
        name = e["made_by"].split(".", 1)[1]
        assert e["lie"]["rule"] == mut.LIES[name]
        problems = blosckit.validate((tmp_path / e["file"]).read_bytes())
        assert e["lie"]["rule"] in {(q.rule) for q in problems
                                    if q.severity == e["lie"]["severity"]}, e
        if e["lie"]["severity"] == "error":
            assert e["expect"]["reject"]["rule"] == e["lie"]["rule"], e


@pytest.mark.parametrize("leave", [
    "offsets", "trailer", "header", "header.general_flags", "header.codec_flags",
    "header.other_flags", "header.filter_pipeline", "header.typesize", "header.blocksize",
    "header.chunksize", "header.frame_type", "header.nthreads_c", "trailer.version",
    "trailer.fingerprint", "trailer.fingerprint_type"])
def test_any_field_left_none_is_what_the_builder_writes(leave):
    """A field (or a whole part) set to None comes back as the builder
    writes it for the stored chunks: on a frame the builder made, the same
    bytes, which python-blosc2 reads."""
    a = np.arange(3000, dtype="<i4")
    fr = blosckit.compress_frame(a, chunksize=4000, codec="lz4", typesize=4,
                                 metalayers={"m": msgpack.packb(1)},
                                 vlmetalayers={"v": msgpack.packb(2)})
    parts = blosckit.frame_parts(fr)
    where, _, name = leave.partition(".")
    if name:
        getattr(parts, where)[name] = None
    else:
        setattr(parts, where, None)
    out = parts.build()
    assert out == fr
    assert blosc2.schunk_from_cframe(out)[:] == a.tobytes()


def test_none_parts_of_a_frame_without_chunks_and_bad_entries():
    parts = blosckit.frame_parts(blosckit.build_frame([]))
    parts.header = parts.trailer = parts.offsets = None
    assert parts.build() == blosckit.build_frame([])
    data = bytes(range(250)) * 16
    parts = blosckit.frame_parts(blosckit.compress_frame(data, chunksize=1000))
    parts.offsets[1] = None
    with pytest.raises(ValueError, match=r"offsets\[1\]"):
        parts.build()
    # chunks the builder refuses leave nothing to compute a field from
    parts = blosckit.frame_parts(blosckit.compress_frame(data, chunksize=1000))
    parts.chunks = [c[:-1] for c in parts.chunks]
    parts.header["typesize"] = None
    with pytest.raises(ValueError, match="cannot be computed"):
        parts.build(check=False)


def test_an_open_frame_is_taken_apart_as_its_bytes(tmp_path):
    fr = blosckit.compress_frame(bytes(range(250)) * 16, chunksize=1000)
    (tmp_path / "a.b2frame").write_bytes(fr)
    assert blosckit.frame_parts(blosckit.open_frame(fr)).build() == fr
    with blosckit.open_frame(tmp_path / "a.b2frame") as f:
        assert blosckit.frame_parts(f).build() == fr
    blosckit.to_sframe(fr, tmp_path / "s.b2frame")
    with blosckit.open_frame(tmp_path / "s.b2frame") as f, \
            pytest.raises(ValueError, match="sparse frame directory"):
        blosckit.frame_parts(f)
