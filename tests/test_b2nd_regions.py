"""Region and whole reads of b2nd arrays through the native block kernel:
regions against python-blosc2's ``NDArray[...]`` on 1 to 4 dimensions with
edge chunks and blocks, the blocks a region decodes (counted, and shown by
damaging one it must not touch), threads, and errors that are the Python
reader's."""
from __future__ import annotations

import math
import re
import struct
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blosckit
from blosckit.frame import b2nd as b2nd_module
from helpers import LONG
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")

CASES = [  # shape, chunks, blocks: every one with edge chunks and edge blocks
    ((53,), (20,), (6,)),
    ((37, 41), (16, 12), (5, 7)),
    ((13, 11, 9), (6, 5, 4), (4, 2, 3)),
    ((7, 6, 5, 9), (3, 4, 2, 5), (2, 3, 1, 3)),
]


def _case(shape, chunks, blocks, codec=blosc2.Codec.ZSTD, filters=None):
    a = np.arange(math.prod(shape), dtype="<i4").reshape(shape) * 3 - 7
    cparams = {"codec": codec, "clevel": 5}
    if filters is not None:
        cparams["filters"] = filters
    arr = blosc2.asarray(a, chunks=chunks, blocks=blocks, cparams=cparams)
    return a, arr, bytes(arr.to_cframe())


_BUILT = [_case(*c) for c in CASES]


def _key(shape):
    """A NumPy basic index: integers, slices with steps of either sign, an
    ellipsis."""
    def one(n):
        return st.one_of(st.integers(-n, n - 1),
                         st.builds(slice, st.integers(-n - 2, n + 2) | st.none(),
                                   st.integers(-n - 2, n + 2) | st.none(),
                                   st.sampled_from([None, 1, 2, 3, -1, -3])))
    full = st.tuples(*[one(n) for n in shape])
    return st.one_of(full, full.map(lambda k: (Ellipsis,) + k[1:]),
                     full.map(lambda k: k[:1] + (Ellipsis,)))


def _theirs(arr, key):
    """python-blosc2's region; where it takes no such key (negative steps),
    its whole array indexed by NumPy."""
    try:
        return np.asarray(arr[key])
    except Exception:      # noqa: BLE001 -- python-blosc2 refuses some steps
        return np.asarray(arr[...])[key]


def _touched(shape, chunks, blocks, key) -> set[tuple[int, int]]:
    """The (chunk, block) pairs holding the region's items (indexes in the
    chunk grid and in the chunk's block grid, C order), by brute force
    over its items."""
    idx = np.indices(shape).reshape(len(shape), *shape)
    picked = [i[key].reshape(-1) for i in idx]
    grid = [-(-s // c) for s, c in zip(shape, chunks)]
    bgrid = [-(-c // b) for c, b in zip(chunks, blocks)]
    pairs = set()
    for point in zip(*picked):
        c = tuple(p // k for p, k in zip(point, chunks))
        b = tuple((p % k) // b for p, k, b in zip(point, chunks, blocks))
        pairs.add((int(np.ravel_multi_index(c, grid)), int(np.ravel_multi_index(b, bgrid))))
    return pairs


def _touched_blocks(shape, chunks, blocks, key) -> int:
    return len(_touched(shape, chunks, blocks, key))


@pytest.mark.parametrize("n", range(len(CASES)))
@settings(max_examples=300 if LONG else 25, deadline=None)
@given(data=st.data())
def test_regions_are_python_blosc2s_and_decode_only_their_blocks(n, data):
    shape, chunks, blocks = CASES[n]
    a, arr, frame = _BUILT[n]
    key = data.draw(_key(shape))
    b = blosckit.open_frame(frame).b2nd
    got = b[key]
    want = _theirs(arr, key)
    assert got.shape == want.shape and got.dtype == want.dtype and (got == want).all(), key
    assert (want == a[key]).all()
    if want.size:
        assert b.blocks_decoded == _touched_blocks(shape, chunks, blocks, key), key
    else:
        assert b.blocks_decoded == 0
    # the same blocks shared among threads (started even for these small
    # regions), into the same items
    t = blosckit.open_frame(frame).b2nd
    with mock.patch.object(b2nd_module, "_BYTES_PER_THREAD", 1):
        threaded = t.region(key, nthreads=3)
    assert threaded.shape == want.shape and (threaded == want).all(), key
    assert t.blocks_decoded == b.blocks_decoded


@pytest.mark.parametrize("n", range(len(CASES)))
@pytest.mark.parametrize("nthreads", [1, 2, 3])
def test_whole_reads_are_python_blosc2s(n, nthreads):
    a, arr, frame = _BUILT[n]
    b = blosckit.open_frame(frame).b2nd
    want = arr[...]
    assert (b.array(nthreads=nthreads) == want).all()
    assert b.read(nthreads=nthreads) == want.tobytes()
    assert b"".join(b.iter_read(nthreads=nthreads)) == want.tobytes()
    # every block of every chunk, once per read: the padding blocks of edge
    # chunks too (a damaged one fails the read, as it fails the chunk)
    chunks, blocks = CASES[n][1:]
    nchunks = math.prod(-(-s // c) for s, c in zip(a.shape, chunks))
    nblocks = math.prod(-(-c // k) for c, k in zip(chunks, blocks))
    assert b.blocks_decoded == 3 * nchunks * nblocks


def test_big_blocks_threads_and_blocks_decoded_straight_into_place():
    """Blocks spanning whole rows (decoded in place) and blocks that are
    not, at 1 and 2 threads, with enough data for the threads to start."""
    a = np.random.default_rng(1).random((300, 700))
    for chunks, blocks in (((100, 700), (20, 700)), ((128, 256), (32, 64))):
        arr = blosc2.asarray(a, chunks=chunks, blocks=blocks)
        b = blosckit.open_frame(bytes(arr.to_cframe())).b2nd
        for nthreads in (1, 2):
            assert (b.array(nthreads=nthreads) == arr[...]).all()
        assert (b[17:250, 3:600] == arr[17:250, 3:600]).all()
        assert (b.region((slice(17, 250), slice(3, 600)), nthreads=2) ==
                arr[17:250, 3:600]).all()
    with pytest.raises(ValueError):
        b.region((slice(0, 2),), nthreads=0)


@pytest.mark.parametrize("codec, filters", [
    (blosc2.Codec.LZ4, [blosc2.Filter.BITSHUFFLE]),
    (blosc2.Codec.BLOSCLZ, [blosc2.Filter.NOFILTER]),
    (blosc2.Codec.ZLIB, [blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA]),
    (blosc2.Codec.ZSTD, [blosc2.Filter.DELTA]),      # read by the Python reader
])
def test_codecs_and_filters(codec, filters):
    shape, chunks, blocks = CASES[2]
    a, arr, frame = _case(shape, chunks, blocks, codec, filters)
    b = blosckit.open_frame(frame).b2nd
    whole = arr[...]
    assert (b.array() == whole).all() and (whole == a).all()
    # python-blosc2 4.14's own region of a delta array comes out wrong (its
    # blocks refer to block 0, which a region read leaves out): its whole
    # array is the oracle
    key = (slice(2, 9), slice(None, None, 2), 1)
    assert (b[key] == whole[key]).all()


def test_special_and_memcpyed_chunks():
    """Zeros chunks (special entries) are read by the Python reader, stored
    (memcpyed) chunks by the kernel without decoding."""
    z = blosc2.zeros((37, 41), dtype="<f8", chunks=(16, 12), blocks=(5, 7))
    b = blosckit.open_frame(bytes(z.to_cframe())).b2nd
    assert (b.array() == 0).all() and (b[3:30, 5] == 0).all()
    a = np.arange(37 * 41, dtype="<u2").reshape(37, 41)
    frame = blosckit.compress_b2nd(a, chunkshape=(16, 12), blockshape=(5, 7), clevel=0)
    b = blosckit.open_frame(frame).b2nd
    assert (b.array() == a).all() and (b[3:30, 5:9] == a[3:30, 5:9]).all()
    assert (blosc2.ndarray_from_cframe(frame)[...] == a).all()


def _damaged(frame: bytes, ci: int, block: int) -> bytes:
    """The frame with chunk ``ci``'s block ``block`` made undecodable: the
    csize of its first stream claims more bytes than the chunk holds."""
    f = blosckit.open_frame(frame)
    e, view = f.locate(ci)
    bstart, = struct.unpack_from("<i", view, 32 + 4 * block)
    out = bytearray(frame)
    struct.pack_into("<i", out, e.start + bstart, 0x7FFFFFF0)
    return bytes(out)


def test_an_untouched_damaged_block_is_never_decoded():
    shape, chunks, blocks = (40, 30), (20, 30), (5, 10)
    a, arr, frame = _case(shape, chunks, blocks)
    bad = _damaged(frame, 1, 11)          # chunk 1 (rows 20..39), block rows 35..39, cols 20..29
    b = blosckit.open_frame(bad).b2nd
    assert (b[20:35, :] == a[20:35, :]).all()       # every other block of that chunk
    assert (b[20:, :20] == a[20:, :20]).all()
    assert b.blocks_decoded == 3 * 3 + 4 * 2      # block rows x block columns
    with pytest.raises(blosckit.FormatError):
        b[36, 25]


def test_errors_are_the_python_readers():
    """A chunk the kernel cannot decode is read again by the Python reader:
    every read raises what decompressing that chunk raises (offset, path,
    rule), whatever the thread count."""
    shape, chunks, blocks = (40, 30), (20, 30), (5, 10)
    _, _, frame = _case(shape, chunks, blocks)
    f = blosckit.open_frame(_damaged(frame, 1, 4))
    with pytest.raises(blosckit.FormatError) as e:
        f.decompress_chunk(1)
    want = (e.value.offset, e.value.path, e.value.rule)
    b = f.b2nd
    for read in (b.read, b.array, lambda: b.read(nthreads=2), lambda: list(b.iter_read()),
                 lambda: b[21:28, 11:13]):
        with pytest.raises(blosckit.FormatError) as e:
            read()
        assert (e.value.offset, e.value.path, e.value.rule) == want


def test_a_chunk_of_the_wrong_block_size_is_refused_as_before():
    """The kernel takes only padded chunks of the array's blocks: a chunk of
    other blocks is refused by the Python reader's F-b2nd."""
    a = np.arange(64, dtype="<f4").reshape(8, 8)
    frame = blosckit.compress_b2nd(a, chunkshape=(4, 8), blockshape=(2, 8))
    f = blosckit.open_frame(frame)
    chunks = [f.chunk(0), blosckit.compress(a[4:].tobytes(), typesize=4, blocksize=32)]
    from blosckit.formats import b2nd as fb
    meta = fb.build_meta((8, 8), (4, 8), (2, 8), "<f4")
    b = blosckit.open_frame(blosckit.build_frame(chunks, metalayers={"b2nd": meta})).b2nd
    for read in (b.read, b.array, lambda: b[5:7, 1]):
        with pytest.raises(blosckit.FormatError) as e:
            read()
        assert e.value.rule == "F-b2nd"
    assert (b[1:3, 2:5] == a[1:3, 2:5]).all()      # chunk 0 is fine


def _outcome(fn):
    try:
        out = fn()
    except blosckit.FormatError as e:
        return ("error", e.offset, e.path, e.rule)
    return ("ok", out.tobytes() if hasattr(out, "tobytes") else bytes(out))


_HOSTILE = _case((37, 41), (16, 12), (5, 7))[2]
_REGIONS = [(slice(3, 30, 2), slice(5, 40)), (20, slice(None, None, -3))]


@settings(max_examples=400 if LONG else 40, deadline=None)
@given(flips=st.lists(st.tuples(st.integers(0, len(_HOSTILE) - 1), st.integers(0, 7)),
                      min_size=1, max_size=3))
def test_damaged_frames_read_as_the_python_reader_reads_them(flips):
    """Bit flips anywhere in an array frame: the kernel's reads give the
    bytes, or the FormatError (offset, path, rule), that reading chunk by
    chunk with the Python reader gives; a region may read where the
    Python reader, decoding whole chunks, fails in a block the region does
    not touch."""
    from blosckit.frame.b2nd import B2nd
    blob = bytearray(_HOSTILE)
    for pos, bit in flips:
        blob[pos] ^= 1 << bit
    blob = bytes(blob)

    def reads():
        try:
            b = blosckit.open_frame(blob).b2nd
        except blosckit.FormatError:
            return None
        if b is None:
            return None
        return [_outcome(lambda: b.read(max_nbytes=1 << 20)),
                _outcome(lambda: b.read(max_nbytes=1 << 20, nthreads=2)),
                _outcome(lambda: b"".join(b.iter_read())),
                *[_outcome(lambda: b[key]) for key in _REGIONS]]
    ours = reads()
    real = B2nd._native_ready
    B2nd._native_ready = lambda self: False
    try:
        theirs = reads()
    finally:
        B2nd._native_ready = real
    if ours is None or theirs is None:
        assert ours == theirs
        return
    assert ours[:3] == theirs[:3]
    for key, mine, python in zip(_REGIONS, ours[3:], theirs[3:]):
        if mine != python:
            # the Python reader failed in a block the region leaves out; the
            # kernel read the region, or failed in a block it holds
            touched = _touched((37, 41), (16, 12), (5, 7), key)
            assert python[0] == "error" and _block_at(python[2]) not in touched, (mine, python)
            assert mine[0] == "ok" or _block_at(mine[2]) in touched, (mine, python)


def _block_at(path: str) -> tuple[int, int] | None:
    """(chunk, block) of an error's path, None when it names no block."""
    where = re.match(r"frame\.chunks\[(\d+)\]\.blocks\[(\d+)\]", path)
    return (int(where[1]), int(where[2])) if where else None


def test_nthreads_is_checked_as_everywhere():
    b = blosckit.open_frame(_BUILT[1][2]).b2nd
    for read in (b.read, b.array, lambda **kw: list(b.iter_read(**kw))):
        for bad, err in ((0, ValueError), (65, ValueError), (2.0, TypeError), (True, TypeError)):
            with pytest.raises(err):
                read(nthreads=bad)
