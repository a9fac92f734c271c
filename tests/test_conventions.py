"""python-blosc2's conventions accepted by blosckit: Codec / Filter /
SplitMode members where a name goes, cparams dicts (or CParams), and
decompress(dst=), each compared with python-blosc2 itself."""
from __future__ import annotations

import subprocess
import sys

import pytest

from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")

import blosckit                     # noqa: E402

DATA = np.linspace(0, 100, 30_000)

CPARAMS = [
    {},
    dict(codec=blosc2.Codec.LZ4, clevel=3, filters=[blosc2.Filter.BITSHUFFLE],
         splitmode=blosc2.SplitMode.ALWAYS_SPLIT),
    dict(codec=blosc2.Codec.ZSTD, filters=[blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA]),
    dict(codec=blosc2.Codec.BLOSCLZ, filters=[blosc2.Filter.TRUNC_PREC, blosc2.Filter.SHUFFLE],
         filters_meta=[20, 0], blocksize=16384, typesize=8),
    dict(codec=blosc2.Codec.ZSTD, clevel=9, use_dict=True),
    dict(codec=blosc2.Codec.ZLIB, typesize=4, splitmode=blosc2.SplitMode.NEVER_SPLIT,
         filters=[blosc2.Filter.DELTA, blosc2.Filter.NOFILTER, blosc2.Filter.SHUFFLE],
         filters_meta=[0, 0, 0]),
    # ids as python-blosc2 also takes them
    dict(codec=1, filters=[2], filters_meta=[0], splitmode=blosc2.SplitMode.AUTO_SPLIT),
]


@pytest.mark.parametrize("cparams", CPARAMS, ids=range(len(CPARAMS)))
def test_cparams_dict_is_python_blosc2(cparams):
    # C-Blosc2 stores blocks in the order its threads finish them: one thread
    cparams = {**cparams, "nthreads": 1}
    assert blosckit.compress(DATA, cparams=cparams) == blosc2.compress2(DATA, cparams=cparams)


def test_cparams_dataclass_is_python_blosc2():
    cp = blosc2.CParams(codec=blosc2.Codec.LZ4HC, clevel=6, typesize=4, nthreads=1,
                        filters=[blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA],
                        filters_meta=[0, 0])
    got = blosckit.compress(DATA, cparams=cp)
    ref = blosc2.compress2(DATA, cparams=cp)
    # LZ4 1.9.4 here, 1.10 in C-Blosc2: the header but cbytes must match
    assert got[:12] == ref[:12] and got[16:32] == ref[16:32]
    assert blosckit.decompress(got) == DATA.tobytes()


def test_cparams_refuses_what_it_cannot_honour():
    with pytest.raises(ValueError, match="not both"):
        blosckit.compress(DATA, cparams={}, clevel=9)
    with pytest.raises(ValueError, match="codec_meta"):
        blosckit.compress(DATA, cparams=dict(codec_meta=3))
    with pytest.raises(ValueError, match="unknown field"):
        blosckit.compress(DATA, cparams=dict(shuffle=1))
    with pytest.raises(ValueError, match="codec"):
        blosckit.compress(DATA, cparams=dict(codec=blosc2.Codec.NDLZ))
    with pytest.raises(TypeError):
        blosckit.compress(DATA, cparams=[("clevel", 1)])


def test_members_wherever_names_go():
    got = blosckit.compress(DATA, typesize=8, codec=blosc2.Codec.ZSTD, clevel=5,
                            filters=[blosc2.Filter.SHUFFLE, (blosc2.Filter.DELTA, 0)],
                            splitmode=blosc2.SplitMode.FORWARD_COMPAT_SPLIT)
    assert got == blosckit.compress(DATA, typesize=8, codec="zstd", clevel=5,
                                    filters=["shuffle", ("delta", 0)],
                                    splitmode="forward_compat")
    assert got == blosc2.compress2(DATA, codec=blosc2.Codec.ZSTD, clevel=5, typesize=8,
                                   nthreads=1, filters=[blosc2.Filter.SHUFFLE,
                                                        blosc2.Filter.DELTA],
                                   filters_meta=[0, 0],
                                   splitmode=blosc2.SplitMode.FORWARD_COMPAT_SPLIT)
    # a bare member, the six-slot layout, and frames
    assert blosckit.compress(DATA, filters=blosc2.Filter.BITSHUFFLE) == \
        blosckit.compress(DATA, filters="bitshuffle")
    six = (blosc2.Filter.NOFILTER,) * 5 + (blosc2.Filter.SHUFFLE,)
    assert blosckit.compress(DATA, filters=six) == \
        blosckit.compress(DATA, filters=(None,) * 5 + ("shuffle",))
    frame = blosckit.compress_frame(DATA, chunksize=80_000, typesize=8,
                                    codec=blosc2.Codec.LZ4, filters=[blosc2.Filter.SHUFFLE])
    schunk = blosc2.schunk_from_cframe(frame)
    assert schunk[:] == DATA.tobytes()
    assert blosckit.open_frame(frame).codec == "lz4"
    with pytest.raises(ValueError, match="filter"):
        blosckit.compress(DATA, filters=[blosc2.Filter.INT_TRUNC])


def test_decompress_into_dst_like_python_blosc2():
    chunk = blosc2.compress2(DATA, typesize=8)
    ours, theirs = np.empty_like(DATA), np.empty_like(DATA)
    assert blosckit.decompress(chunk, dst=ours) is None
    assert blosc2.decompress2(chunk, dst=theirs) is None
    np.testing.assert_array_equal(ours, theirs)
    buf = bytearray(DATA.nbytes + 10)
    blosckit.decompress(chunk, dst=buf)
    assert bytes(buf[:DATA.nbytes]) == DATA.tobytes()
    with pytest.raises(ValueError):
        blosckit.decompress(chunk, dst=bytearray(100))
    with pytest.raises(blosckit.FormatError):
        blosckit.decompress(chunk, dst=buf, max_nbytes=1000)


def test_blosc2_numcodecs_and_zarr_not_imported_by_blosckit():
    code = ("import sys, blosckit; blosckit.compress(b'x' * 1000); "
            "print(sorted(m for m in ('blosc2', 'numcodecs', 'zarr') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("module, missing, extra", [("blosckit.numcodecs", "numcodecs", "numcodecs"),
                                                    ("blosckit.zarr", "zarr", "zarr")])
def test_missing_extra_named(module, missing, extra):
    code = (f"import sys; sys.modules[{missing!r}] = None\n"
            f"try:\n    import {module}\nexcept ImportError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert f"blosckit[{extra}]" in out
