"""Property tests of the chunk builder: whatever blosckit compresses, C-Blosc2
decompresses to the same bytes."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from blosckit import compress

from oracles import oracle

blosc2 = oracle("blosc2")

_FILTERS = st.sampled_from([(), ("shuffle",), ("bitshuffle",), ("delta", "shuffle"),
                            ("shuffle", "bytedelta"), (None,) * 5 + ("shuffle",)])


@st.composite
def _data(draw):
    typesize = draw(st.sampled_from([1, 2, 4, 8, 16, 17, 300]))
    kind = draw(st.sampled_from(["bytes", "repeat", "items"]))
    if kind == "bytes":
        data = draw(st.binary(max_size=5000))
    elif kind == "repeat":
        data = draw(st.binary(min_size=1, max_size=40)) * draw(st.integers(1, 3000))
    else:
        n = draw(st.integers(0, 3000))
        step = draw(st.integers(0, 5))
        data = b"".join((i * step).to_bytes(8, "little")[:typesize % 9 or 1]
                        for i in range(n // 4))
    return typesize, data


@settings(max_examples=50, deadline=None)
@given(_data(), st.sampled_from(["blosclz", "lz4", "lz4hc", "zlib", "zstd"]),
       st.integers(0, 9), _FILTERS,
       st.sampled_from(["forward_compat", "always", "never", "auto"]),
       st.sampled_from([0, 1, 3]), st.integers(1, 3), st.booleans())
def test_blosc2_reads_back(td, codec, clevel, filters, splitmode, bmul, nthreads, use_dict):
    typesize, data = td
    if "bytedelta" in filters and typesize > 255:
        filters = ("shuffle",)
    blocksize = typesize * 64 * bmul
    if use_dict and codec not in ("zstd", "lz4", "lz4hc"):
        use_dict = False
    chunk = compress(data, typesize=typesize, codec=codec, clevel=clevel, filters=filters,
                     splitmode=splitmode, blocksize=blocksize, nthreads=nthreads,
                     dict=use_dict)
    assert blosc2.decompress2(chunk) == data


@settings(max_examples=50, deadline=None)
@given(_data(), st.sampled_from(["blosclz", "lz4", "zlib", "zstd"]), st.integers(0, 9),
       st.sampled_from([(), ("shuffle",), ("bitshuffle",)]))
def test_blosc1_reads_back(td, codec, clevel, filters):
    typesize, data = td
    if typesize > 255:
        typesize = 255
    chunk = compress(data, typesize=typesize, codec=codec, clevel=clevel, filters=filters,
                     format="blosc1")
    blosc = oracle("blosc")
    assert blosc.decompress(chunk) == data
