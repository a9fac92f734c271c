"""Default chunk and block shapes of a b2nd array, picked the way
python-blosc2 (4.x) picks them for an array it is given without shapes.

specs/frame.md#default-shapes gives the rules.  The block comes from the
CPU's caches (a quarter of L2 on x86-64), the chunk from the last-level
cache; both are then laid over the array from its last dimension, snapped
to divisors of the extents.  For the codecs and filters blosckit writes the
choice does not depend on the codec, the level or the filters: only on the
shape, the item size and the caches.  The caches are read from the same
places python-blosc2 reads them, so both tools pick the same shapes on the
same machine.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import json
import math
import platform
import subprocess
from pathlib import Path
from typing import Callable, NamedTuple, Sequence

from ..chunk.plan import MAX_BUFFERSIZE

__all__ = ["CacheSizes", "FALLBACK_CACHES", "host_caches", "default_shapes"]

KIB, MIB = 1 << 10, 1 << 20

BASE_BLOCK = 32 * KIB           # python-blosc2's block before the cache floor
MIN_CHUNK = 4 * MIB             # the smallest default chunk
MAX_SPAN = 64 * MIB             # 32 blocks make a chunk only below this size
BLOCKS_PER_CHUNK = 32           # the chunk when the caches say nothing better
OPERANDS = 4                    # python-blosc2 keeps 3 operands and a result in L3
BIG_L2 = 2 * MIB                # x86-64 L2 from which blocks follow L1 instead


class CacheSizes(NamedTuple):
    """The CPU cache sizes the defaults are made from, in bytes."""
    l1_data: int
    l2: int
    l3: int


# python-blosc2's values for a cache it cannot read
FALLBACK_CACHES = CacheSizes(32 * KIB, 256 * KIB, 1 * MIB)

SYS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")
_SYS_UNITS = {"K": KIB, "M": MIB, "G": 1 << 30}
_LSCPU_UNITS = {"KiB": KIB, "MiB": MIB, "GiB": 1 << 30}


# ---------------------------------------------------------------------------
# The caches
# ---------------------------------------------------------------------------

@functools.cache
def host_caches() -> CacheSizes:
    """This machine's caches as python-blosc2 reads them (each level it
    cannot read keeps :data:`FALLBACK_CACHES`' value).

    Linux: ``/sys/devices/system/cpu/cpu0/cache/index{0,2,3}/size`` (taken as
    L1 data, L2 and L3, by index as python-blosc2 does), else ``lscpu --json``
    (a level's size divided by its instances).  macOS: the performance
    cores' ``hw.perflevel0.*`` sysctl values.  Elsewhere (Windows included,
    where python-blosc2 asks ``GetLogicalProcessorInformationEx``) the
    fallback values.
    """
    system = platform.system()
    if system == "Linux":
        return read_caches(linux_cache, (0, 2, 3))
    if system == "Darwin":
        return read_caches(darwin_cache, (1, 2, 3))
    return FALLBACK_CACHES


def read_caches(read: Callable[[int], int | None], levels: Sequence[int]) -> CacheSizes:
    """The three cache sizes ``read`` gives for ``levels`` (L1 data, L2,
    L3), each None replaced by the fallback value."""
    got = (read(level) for level in levels)
    return CacheSizes(*(FALLBACK_CACHES[i] if size is None else size
                        for i, size in enumerate(got)))


def linux_cache(index: int, root: Path = SYS_CACHE) -> int | None:
    """Bytes of the cache at sysfs ``index`` of cpu0 (``lscpu`` when sysfs
    has no such entry), None when neither says."""
    try:
        text = (root / f"index{index}" / "size").read_text()
    except FileNotFoundError:
        return lscpu_cache(index)
    except OSError:
        return None
    # python-blosc2 reads only sizes written with a K, M or G suffix
    unit = _SYS_UNITS.get(text[-2:-1]) if text.endswith("\n") else None
    try:
        return None if unit is None else int(text[:-2]) * unit
    except ValueError:
        return None


def lscpu_cache(index: int, text: str | None = None) -> int | None:
    """Bytes of one instance of the cache python-blosc2 asks ``lscpu`` for
    at ``index`` (0 is L1 data, else the level), from ``text`` (the output
    of ``lscpu --json``; run when None).  None when it does not say."""
    if text is None:
        text = _lscpu_json()
        if text is None:
            return None
    name = f"L{'1d' if index == 0 else index} cache:"
    try:
        for entry in json.loads(text)["lscpu"]:
            if entry["field"] == name:
                # "48 KiB (2 instances)"
                size, instances = entry["data"].split(" (")
                number, unit = size.split()
                return int(number) * _LSCPU_UNITS[unit] // int(instances.split()[0])
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, ZeroDivisionError):
        return None
    return None


@functools.cache
def _lscpu_json() -> str | None:
    try:
        done = subprocess.run(["lscpu", "--json"], capture_output=True, text=True,
                              check=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout


def darwin_cache(level: int) -> int | None:
    """Bytes of the performance cores' cache at ``level`` (1 is L1 data)
    from macOS's sysctl, None when it has no such value."""
    name = "hw.perflevel0." + ("l1dcachesize" if level == 1 else f"l{level}cachesize")
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        value, width = ctypes.c_uint64(0), ctypes.c_size_t(8)
        failed = libc.sysctlbyname(name.encode("ascii"), ctypes.byref(value),
                                   ctypes.byref(width), None, 0)
    except (OSError, AttributeError):
        return None
    return value.value if failed == 0 and value.value > 0 else None


# ---------------------------------------------------------------------------
# The shapes
# ---------------------------------------------------------------------------

def default_shapes(shape: Sequence[int], itemsize: int, *,
                   chunkshape: Sequence[int] | None = None,
                   blockshape: Sequence[int] | None = None,
                   caches: CacheSizes | None = None
                   ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(chunkshape, blockshape)`` for an array of ``shape`` (items) and
    ``itemsize``-byte items: the ones given, and python-blosc2's choice for
    each one left None.  ``caches`` (bytes) default to :func:`host_caches`.

    One departure, where python-blosc2 throws the caller's choice away:
    given only a block shape, python-blosc2 keeps its size but lays it out
    afresh; here it is kept as given and the chunk is chosen around it.
    An array without items (a 0 extent) gets its shape as chunk and
    block shape, as python-blosc2 gives it."""
    shape = tuple(shape)
    if chunkshape is not None and blockshape is not None:
        return tuple(chunkshape), tuple(blockshape)
    given = chunkshape if chunkshape is not None else blockshape
    if 0 in shape or (given is not None and (len(given) != len(shape) or 0 in given)):
        # nothing to lay out (no items), or a given shape the b2nd rules
        # refuse (they name the extent at fault): one shape for both
        both = tuple(shape if given is None else given)
        return both, both
    caches = host_caches() if caches is None else caches
    if blockshape is None:
        block_items = max(BASE_BLOCK, _block_floor(caches), itemsize) // itemsize
        blocks = _partition(block_items, shape if chunkshape is None else chunkshape)
    else:
        blocks = list(blockshape)
    if chunkshape is not None:
        return tuple(chunkshape), tuple(blocks)
    blocksize = math.prod(blocks) * itemsize
    chunksize = _chunk_bytes(blocksize, caches) // blocksize * blocksize
    chunks = _partition(chunksize // itemsize, shape, blocks)
    # snapping to divisors of the extents may break "whole blocks per
    # chunk": round up to whole blocks again, never past the array
    chunks = [min(s, -(-c // b) * b) for s, c, b in zip(shape, chunks, blocks)]
    return tuple(chunks), tuple(blocks)


def _block_floor(caches: CacheSizes) -> int:
    """The smallest default block (bytes) for this CPU's caches."""
    if platform.machine() == "x86_64":
        # x86-64 with a big L2 prefers blocks of a few L1s; else a quarter
        # of L2, to hold several operands at once
        return caches.l1_data * 4 if caches.l2 >= BIG_L2 else caches.l2 // OPERANDS
    return caches.l1_data


def _chunk_bytes(blocksize: int, caches: CacheSizes) -> int:
    """The default chunk size (bytes) for blocks of ``blocksize`` bytes:
    a share of L3, at least a share of L2 and ``MIN_CHUNK``, at most the
    largest chunk, at least one block."""
    size = blocksize * BLOCKS_PER_CHUNK if blocksize * BLOCKS_PER_CHUNK < MAX_SPAN else blocksize
    if caches.l3 > 0 and caches.l3 > caches.l2:
        size = caches.l3            # an L3 not above L2 is a misreading: ignored
    size //= OPERANDS
    if caches.l2 > size:
        size = caches.l2 if platform.system() == "Darwin" else max(caches.l2 // OPERANDS, size)
    return max(blocksize, min(max(size, MIN_CHUNK), MAX_BUFFERSIZE))


def _partition(items: int, extents: Sequence[int], least: Sequence[int] | None = None
               ) -> list[int]:
    """A sub-shape of ``extents`` holding about ``items`` items, filled from
    the last dimension: each dimension takes its whole extent while the
    items last, the first one that does not fit takes what is left (snapped
    down to a divisor of its extent when one is within a factor of 2), the
    ones before it 1.  ``least`` gives each dimension's smallest extent."""
    out = [1] * len(extents)
    left = items
    for d in reversed(range(len(extents))):
        if left <= 1:
            break
        size, floor = extents[d], (1 if least is None else least[d])
        if max(size, floor) <= left:
            take = size
        else:
            take = max(left, floor)
            if size % take:
                snapped = _divisor_at_most(size, take)
                if take // 2 < snapped < take * 2:
                    take = snapped
        out[d] = take
        left //= take
    return out


def _divisor_at_most(n: int, limit: int) -> int:
    """The largest divisor of ``n`` (> 0) that is at most ``limit`` (1 when
    ``limit`` < 1)."""
    if limit >= n:
        return n
    if limit < 1:
        return 1
    root = math.isqrt(n)
    if limit > root:
        # a divisor above the square root is n // k for a small divisor k:
        # the smallest k with n // k <= limit gives the largest such one
        for k in range(-(-n // limit), root + 1):
            if n % k == 0:
                return n // k
        limit = root
    for d in range(limit, 0, -1):
        if n % d == 0:
            return d
    return 1
