"""The native block loop's thread pool (parallel.c), seen from Python.

* Chunks compressed and decompressed with nthreads=2 from several Python
  threads at once (one call holds the pool, the others start threads of
  their own) are python-blosc2's bytes and decode to the data.
* With the pool turned off (every call starting its own threads) the bytes
  are the same.
* A forked child, whose pool threads did not survive the fork, still
  compresses with nthreads=2 (it would hang waiting for them otherwise).
"""
import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import blosckit
from blosckit import native as N
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")

CODECS = ("zstd", "lz4", "blosclz")


def _data(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    n = 1 << 18
    return (np.arange(n, dtype=np.int32) + rng.integers(0, 64, n, dtype=np.int32)).tobytes()


def _reference(data: bytes, codec: str) -> bytes:
    return blosc2.compress2(data, typesize=4, clevel=5, codec=getattr(blosc2.Codec, codec.upper()),
                            filters=[blosc2.Filter.SHUFFLE], filters_meta=[0],
                            splitmode=blosc2.SplitMode.FORWARD_COMPAT_SPLIT, blocksize=32768,
                            nthreads=1)


def _round_trip(data: bytes, codec: str) -> bytes:
    chunk = blosckit.compress(data, typesize=4, codec=codec, clevel=5, blocksize=32768,
                              nthreads=2)
    assert blosckit.decompress(chunk, nthreads=2) == data
    return chunk


@pytest.mark.parametrize("codec", CODECS)
def test_concurrent_callers_get_the_reference_bytes(codec):
    inputs = [_data(seed) for seed in range(8)]
    expected = [_reference(d, codec) for d in inputs]
    with ThreadPoolExecutor(4) as ex:
        for _ in range(3):
            got = list(ex.map(lambda d: _round_trip(d, codec), inputs))
            assert got == expected


def test_without_the_pool_the_bytes_are_the_same():
    data = _data(99)
    expected = _reference(data, "zstd")
    N._lib.bk_test_use_pool(0)
    try:
        assert _round_trip(data, "zstd") == expected
    finally:
        N._lib.bk_test_use_pool(1)
    assert _round_trip(data, "zstd") == expected


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_forked_child_compresses_on_two_threads():
    data = _data(7)
    expected = _reference(data, "zstd")
    assert _round_trip(data, "zstd") == expected     # the pool's thread is up
    pid = os.fork()
    if pid == 0:
        try:
            ok = _round_trip(data, "zstd") == expected
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    # a child stuck on the parent's vanished pool thread would never exit
    for _ in range(600):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung on two threads")
    assert os.waitstatus_to_exitcode(status) == 0
