"""Property tests: random data / typesize / codec / filters / blocksize
compressed by C-Blosc2 (python-blosc2) decode through blosckit to the data.
max_examples comes from the hypothesis profile in conftest.py."""
from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import blosckit

from helpers import CODECS, SPLITMODES, b2_compress, b2_decompress, dataset
from oracles import oracle

np = oracle("numpy")
oracle("blosc2")


# At most two real filters: C-Blosc2 3.3.5 mis-writes pipelines of three or
# more (see test_chunk.test_blosc2_grid).
FILTER_NAMES = ("shuffle", "bitshuffle", "delta", "bytedelta")
pipelines = st.lists(st.sampled_from(FILTER_NAMES), max_size=2)


@st.composite
def chunks(draw):
    ts = draw(st.sampled_from([1, 2, 3, 4, 7, 8, 12, 16, 17, 33, 255]))
    nitems = draw(st.integers(0, 3000))
    tail = draw(st.integers(0, ts - 1))
    kind = draw(st.sampled_from(["binary", "random", "small", "runs", "arange", "linspace",
                                 "zeros"]))
    n = nitems * ts + tail
    if kind == "binary":     # hypothesis-shrinkable bytes for small sizes
        n = min(n, 1500)
        data = draw(st.binary(min_size=n, max_size=n))
    elif kind == "small":    # few distinct values: compressible but not trivial
        seed = draw(st.integers(0, 2**32 - 1))
        data = np.random.default_rng(seed).integers(0, 4, n, dtype=np.uint8).tobytes()
    else:
        data = dataset(kind, n, ts, seed=draw(st.integers(0, 2**16)))
    codec = draw(st.sampled_from(CODECS))
    filters = draw(pipelines)
    bs = draw(st.sampled_from([0, 1, 2, 8, 37, 64])) * ts
    split = draw(st.sampled_from(SPLITMODES))
    clevel = draw(st.integers(0, 9))
    chunk = b2_compress(bytearray(data), typesize=ts, codec=codec, filters=filters,
                        blocksize=bs, splitmode=split, clevel=clevel)
    # C-Blosc2 3.3.5 bug: an explicit blocksize above nbytes is clamped to
    # nbytes even when that is not a multiple of typesize; the chunk is then
    # split into streams that miss the last bytes (rule B3) or holds a
    # rounded-down block.  Nobody can read those; blosckit refuses them.
    assume(not (bs > len(data) and len(data) % ts))
    return data, chunk, ts, filters


def _expected(data, chunk, ts, filters):
    oracle = b2_decompress(chunk)
    if "delta" in filters and oracle is not None and oracle != data:
        # C-Blosc2's delta encoder leaves the tail of a leftover block unwritten
        nbytes = len(data)
        bs = int.from_bytes(chunk[8:12], "little")
        assert oracle[:nbytes - nbytes % bs] == data[:nbytes - nbytes % bs]
        return oracle
    assume(oracle == data)   # C-Blosc2 wrote a chunk it cannot read back
    return data


@settings(deadline=None)
@given(chunks())
def test_decompress_equals_data(case):
    data, chunk, ts, filters = case
    expected = _expected(data, chunk, ts, filters)
    assert blosckit.decompress(chunk) == expected
    out = bytearray(len(expected) + 3)
    assert blosckit.decompress_into(chunk, out) == len(expected)
    assert out[:len(expected)] == expected


@settings(deadline=None)
@given(chunks(), st.data())
def test_getitem_equals_slicing(case, data):
    d, chunk, ts, filters = case
    expected = _expected(d, chunk, ts, filters)
    nitems = len(expected) // ts
    start = data.draw(st.integers(0, nitems))
    n = data.draw(st.integers(0, nitems - start))
    assert blosckit.getitem(chunk, start, n) == expected[start * ts:(start + n) * ts]


@settings(deadline=None)
@given(chunks())
def test_threads_agree(case):
    data, chunk, ts, filters = case

    def outcome(n):
        # C-Blosc2 writes some chunks nobody can read (an explicit blocksize
        # above nbytes): then every thread count must refuse them alike
        try:
            return blosckit.decompress(chunk, nthreads=n)
        except blosckit.FormatError as e:
            return type(e), e.offset, e.path, e.rule

    one = outcome(1)
    assert outcome(2) == one
    assert outcome(5) == one


@settings(deadline=None)
@given(chunks())
def test_parse_matches_sizes(case):
    data, chunk, ts, filters = case
    c = blosckit.parse_chunk(chunk)
    assert (c.nbytes, c.cbytes, c.blocksize) == blosckit.chunk_sizes(chunk)
    assert c.nbytes == len(data) and c.cbytes == len(chunk) and c.typesize == ts


def test_c_blosc2_clamped_blocksize_not_multiple_of_typesize():
    """The C-Blosc2 writer bug excluded above: blosc2 'succeeds' with bytes
    it never wrote, blosckit refuses the chunk with rule B3."""
    data = b"\xd9" * 33
    chunk = b2_compress(bytearray(data), typesize=4, codec="lz4", filters=[],
                        blocksize=148, splitmode="always")
    assert int.from_bytes(chunk[8:12], "little") == 33
    with pytest.raises(blosckit.FormatError) as ei:
        blosckit.decompress(chunk)
    assert ei.value.rule == "B3" and ei.value.offset == 8
