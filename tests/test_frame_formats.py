"""The fast paths of the frame reader against the declarations they derive
from (formats/frame.py): on headers built from random field values, and on
those bytes mutated, the flat layouts and the derived parsers read what
construct reads and refuse what construct refuses."""
from __future__ import annotations

import construct as cs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from blosckit.frame import read as reader
from blosckit.formats import ConstMismatch
from blosckit.formats import frame as ff
from helpers import strip

u8 = st.integers(0, 255)


@st.composite
def headers(draw, layout):
    """A header of ``layout`` from random field values, built by construct."""
    con = ff.FRAME_HEADERS[layout]
    obj = {}
    for sub in con.subcons:
        inner = sub.subcon.subcon if isinstance(sub.subcon, cs.Renamed) else sub.subcon
        name = sub.name
        if isinstance(inner, cs.Const):
            continue
        if name in ("general_flags", "codec_flags", "other_flags", "frame_type",
                    "filter_flags", "has_vlmetalayers"):
            raw = draw(u8)
            obj[name] = inner.parse(bytes([raw])) if isinstance(inner, cs.Transformed) else raw
        elif name == "filter_pipeline":
            obj[name] = ff.FilterPipeline.parse(b"\xd8" + bytes(draw(st.lists(u8, min_size=17,
                                                                                max_size=17))))
        else:
            size = inner.sizeof()
            lo, hi = (-(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1) if inner.fmtstr[1] \
                .islower() else (0, (1 << (8 * size)) - 1)
            obj[name] = draw(st.integers(lo, hi))
    return con.build(obj)


@pytest.mark.parametrize("layout", sorted(ff.FRAME_HEADERS))
@given(data=st.data())
def test_flat_and_derived_header_readers_equal_construct(layout, data):
    raw = data.draw(headers(layout))
    con = ff.FRAME_HEADERS[layout]
    parsed = con.parse(raw)
    assert strip(ff.FAST_HEADERS[layout](raw, 0)) == strip(parsed)
    flat = ff.FLAT_HEADERS[layout]
    values = flat.read(raw, 0)
    for path in flat.index:
        want = parsed
        for part in path.split("."):
            want = want[part]
        got = flat.getter(path)(values)
        if isinstance(want, dict):       # a BitStruct: the flat layout gives its raw byte
            assert all(flat.getter(f"{path}.{k}")(values) == v
                       for k, v in strip(want).items()), path
            continue
        assert got == (list(want) if isinstance(want, list) else want), path


@pytest.mark.parametrize("layout", sorted(ff.FRAME_HEADERS))
@given(data=st.data())
def test_flat_layout_refuses_what_construct_refuses(layout, data):
    raw = bytearray(data.draw(headers(layout)))
    pos = data.draw(st.integers(0, len(raw) - 1))
    raw[pos] = data.draw(u8)
    cut = data.draw(st.integers(0, len(raw)))
    raw = bytes(raw[:cut])
    try:
        ff.FRAME_HEADERS[layout].parse(raw)
        construct_ok = True
    except cs.ConstructError:
        construct_ok = False
    try:
        ff.FLAT_HEADERS[layout].read(raw, 0)
        flat_ok = True
    except (ConstMismatch, Exception):
        flat_ok = False
    assert flat_ok == construct_ok


@pytest.mark.parametrize("layout", sorted(ff.FRAME_HEADERS))
@given(data=st.data())
def test_flat_header_build_equals_construct(layout, data):
    """The builder's fast path: the compiled layout builds the bytes
    construct built, from the fields construct parses out of them."""
    raw = data.draw(headers(layout))
    assert ff.FLAT_HEADERS[layout].build(ff.FRAME_HEADERS[layout].parse(raw)) == raw


@given(st.integers(0, (1 << 32) - 1), st.integers(0, 255), st.binary(min_size=16, max_size=16))
def test_trailer_build_equals_construct(trailer_len, fingerprint_type, fingerprint):
    tail = dict(trailer_len=trailer_len, fingerprint_type=fingerprint_type,
                fingerprint=fingerprint)
    assert ff.FAST_TRAILER_TAIL.build(tail) == ff.TrailerTail.build(tail)
    head = dict(version=fingerprint_type)
    assert ff.FAST_TRAILER_HEAD.build(head) == ff.TrailerHead.build(head)


def test_layout_build_refuses_what_construct_refuses():
    from blosckit.formats.layout import BuildError
    raw = ff.FRAME_HEADERS[14].build(dict(
            header_len=0, frame_len=0, general_flags=dict(vl_blocks=0, variable_chunks=0,
                                                          offsets_size=0, version=0),
            frame_type=0, codec_flags=dict(clevel=0, codec=0),
            other_flags=dict(reserved=0, splitmode=0), nbytes=0, cbytes=0, typesize=0,
            blocksize=0, chunksize=0, nthreads_c=0, nthreads_d=0, has_vlmetalayers=0,
            filter_pipeline=dict(nfilters=0, filters=[0] * 6, udcodec=0, compcode_meta=0,
                                 filters_meta=[0] * 6,
                                 other_flags2=dict(reserved=0, use_dict=0), reserved=0)))
    for path, bad in (("nbytes", 1 << 70), ("codec_flags.clevel", 16), ("typesize", -1 << 40),
                      ("filter_pipeline.filters", [0] * 7)):
        values = ff.FRAME_HEADERS[14].parse(raw)
        *up, last = path.split(".")
        place = values
        for key in up:
            place = place[key]
        place[last] = bad
        with pytest.raises(cs.ConstructError):
            ff.FRAME_HEADERS[14].build(values)
        with pytest.raises(BuildError):
            ff.FLAT_HEADERS[14].build(values)


@given(st.dictionaries(st.binary(min_size=1, max_size=31), st.binary(max_size=40), max_size=6),
       st.integers(0, 30))
def test_metalayer_section_build_equals_construct(items, pad):
    from blosckit.frame.build import _section
    section = _section(items, pad, 1)
    m = ff.Metalayers.parse(section)
    index = [dict(name_marker=dict(kind=ff.FIXSTR_KIND, len_name=len(e.name)), name=e.name,
                  offset=e.offset) for e in m.index]
    values = b"".join(ff.MetaValue.build(dict(len_content=len(v), content=v))
                      for v in items.values())
    want = ff.Metalayers.build(dict(idx=m.idx, num_metalayers=len(items), index=index,
                                    num_values=len(items))) + values
    assert section == want
    assert [e.name for e in m.index] == list(items)


names = st.binary(min_size=1, max_size=31).filter(lambda b: b.isascii() and b.isalnum())


@given(st.dictionaries(names.map(bytes.decode), st.binary(max_size=40), max_size=6),
       st.integers(0, 30))
def test_metalayer_walk_equals_the_declaration(items, pad):
    from blosckit.frame.build import _section
    section = _section(items, pad, 1)
    buf = bytes(pad) + section
    fast = reader.read_metalayers(memoryview(buf), pad, len(buf), 0, "m")
    m = ff.Metalayers.parse(buf[pad:])
    slow = {e.name.decode(): ff.MetaValue.parse(buf[e.offset:]).content for e in m.index}
    assert fast == slow == {k: bytes(v) for k, v in items.items()}
    assert list(fast) == list(items)


@given(st.binary(min_size=23, max_size=23))
def test_trailer_tail_flat_equals_construct(raw):
    try:
        parsed = ff.TrailerTail.parse(raw)
    except cs.ConstructError:
        with pytest.raises(ConstMismatch):
            ff.FAST_TRAILER_TAIL.read(raw, 0)
        return
    values = ff.FAST_TRAILER_TAIL.read(raw, 0)
    assert ff.FAST_TRAILER_TAIL.getter("trailer_len")(values) == parsed.trailer_len
