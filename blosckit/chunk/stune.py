"""Block sizes and the split decision, as C-Blosc2 3.3 and C-Blosc 1.21 choose them.

Both libraries size a block from the codec, the compression level, the item
size and the split mode; specs/encoder.md#block-size explains the rules.
Everything here is a pure function of its arguments so that the builder, the
strategies and the validator can ask the same question and get one answer.
Codecs are named as in ``formats.enums.CODECS``.
"""
from __future__ import annotations

KIB = 1024
_L1 = 32 * KIB                 # the first-level cache both libraries size for
_MAX_STREAMS = 16              # at most this many streams per block when splitting
MIN_BUFFER_BLOSC2 = 32         # smaller inputs are stored uncompressed (C-Blosc2)
MIN_BUFFER_BLOSC1 = 128        # the same threshold in C-Blosc 1.x
MAX_TYPESIZE = 255             # what the 8-bit typesize field can hold
BLOSC1_MAX_BLOCKSIZE = (2**31 - 1 - MAX_TYPESIZE * 4) // 3

# Codecs that want big blocks ("high compression ratio" codecs), in both libraries.
_HCR = frozenset({"lz4hc", "zlib", "zstd"})

# Level factor applied to the L1-sized starting block (numerator, denominator).
_LEVEL_SCALE = {0: (1, 4), 1: (1, 2), 2: (1, 1), 3: (2, 1), 4: (4, 1), 5: (4, 1),
                6: (8, 1), 7: (8, 1), 8: (8, 1), 9: (8, 1)}

# Split-stream block sizes per level (bytes per stream), C-Blosc2.
_SPLIT_BLOCK_BLOSC2 = {1: 32, 2: 32, 3: 32, 4: 64, 5: 64, 6: 64, 7: 128, 8: 256, 9: 512}


def _level_sized(codec: str, clevel: int) -> int:
    """The starting block size both tuners give an input of at least 32 KiB:
    the L1 size (doubled for the high-ratio codecs) scaled by the level."""
    size = _L1 * (2 if codec in _HCR else 1)
    num, den = _LEVEL_SCALE[clevel]
    size = size * num // den
    if clevel == 9 and codec in _HCR:
        size *= 2
    return size


def split_blosc2(splitmode: str, codec: str, clevel: int, shuffle: bool,
                 typesize: int, blocksize: int) -> bool:
    """Whether C-Blosc2 cuts each block into one stream per byte of the item.

    ``shuffle`` is true when any filter slot holds the byte shuffle.
    """
    if splitmode == "always":
        return True
    if splitmode == "never":
        return False
    fast = codec in ("blosclz", "lz4") or (codec == "zstd" and clevel <= 5)
    return bool(fast and shuffle and typesize <= _MAX_STREAMS
                and blocksize // typesize >= MIN_BUFFER_BLOSC2)


def blocksize_blosc2(nbytes: int, typesize: int, clevel: int, codec: str, shuffle: bool,
                     splitmode: str, user_blocksize: int = 0) -> int:
    """The block size C-Blosc2's automatic tuner picks (``user_blocksize`` 0) or
    keeps (an explicit one, bounded by ``nbytes``).

    ``typesize`` is the caller's item size before C-Blosc2 stores items over
    255 bytes as 1-byte items: the tuner runs before that cap.
    """
    if nbytes < typesize:
        return 1
    split = split_blosc2(splitmode, codec, clevel, shuffle, typesize, nbytes)
    if user_blocksize:
        size = user_blocksize
    else:
        size = _level_sized(codec, clevel) if nbytes >= _L1 else nbytes
        if clevel > 0 and split:
            size = _SPLIT_BLOCK_BLOSC2[clevel] * KIB * typesize
            size = max(min(size, 4 * KIB * KIB), 32 * KIB)
    size = min(size, nbytes)
    if size > typesize:
        size = size // typesize * typesize
    return size


def header_blocksize_blosc2(nbytes: int, blocksize: int, user_blocksize: int) -> int:
    """The value C-Blosc2 writes in the header's blocksize field: the caller's
    explicit block size when one was given (at most ``nbytes``), else the
    tuner's."""
    size = user_blocksize if user_blocksize > 0 else blocksize
    if nbytes > 0 and size > nbytes:
        size = nbytes
    return size


def split_blosc1(splitmode: str, codec: str, typesize: int, blocksize: int) -> bool:
    """Whether C-Blosc 1.x splits blocks into one stream per byte of the item."""
    if splitmode == "always":
        return True
    if splitmode == "never":
        return False
    big_enough = typesize <= _MAX_STREAMS and blocksize // typesize >= MIN_BUFFER_BLOSC1
    if splitmode == "auto":
        return codec in ("blosclz", "snappy") and big_enough
    return codec != "zstd" and big_enough


def blocksize_blosc1(nbytes: int, typesize: int, clevel: int, codec: str,
                     splitmode: str, forced_blocksize: int = 0) -> int:
    """The block size of C-Blosc 1.21 (``forced_blocksize`` is what
    ``blosc_set_blocksize`` set; 0 = automatic).  ``typesize`` is at most 255."""
    if nbytes < typesize:
        return 1
    size = nbytes
    if forced_blocksize:
        size = min(max(forced_blocksize, MIN_BUFFER_BLOSC1), BLOSC1_MAX_BLOCKSIZE)
    elif nbytes >= _L1:
        size = _level_sized(codec, clevel)
    if clevel > 0 and split_blosc1(splitmode, codec, typesize, size):
        size = min(size, 256 * KIB) * typesize
        size = min(max(size, 64 * KIB), KIB * KIB)
    size = min(size, nbytes)
    if size > typesize:
        size = size // typesize * typesize
    return size
