"""Every id space of the Blosc formats, each declared once.

specs/chunk.md#ids. Other modules (codec registry, builders, describe) look
names and numbers up here and never restate them.
"""
from __future__ import annotations

# Chunk format versions (header byte 0).
VERSIONS = {
    1: "pre-1.0",
    2: "blosc1",
    3: "blosc2-alpha",
    4: "blosc2-beta1",
    5: "blosc2-stable",
    6: "blosc2-vlblocks",
}

# Codec *format* held in bits 5-7 of the chunk flags byte (what the stream
# decoder must be).  lz4 and lz4hc share format 1.
COMPFORMATS = {
    0: "blosclz",
    1: "lz4",
    2: "snappy",      # Blosc1 only; reserved in Blosc2
    3: "zlib",
    4: "zstd",
    5: "lizard",      # retired codec, reserved in Blosc2
    6: "udcodec",     # the real id is in the extended header's udcodec byte
    7: "schunk",      # "defined in the super-chunk": never decodable alone
}
COMPFORMAT_UDCODEC = 6
COMPFORMAT_SCHUNK = 7

# Codec ids as the API, frames and the udcodec byte use them.
CODECS = {
    0: "blosclz",
    1: "lz4",
    2: "lz4hc",
    3: "snappy",      # C-Blosc 1.x id
    4: "zlib",
    5: "zstd",
    32: "ndlz",
    33: "zfp_acc",
    34: "zfp_prec",
    35: "zfp_rate",
    36: "openhtj2k",
    37: "grok",
    38: "openzl",
    39: "j2k",
    40: "htj2k",
}
# The first id that codec format 6 may name in the udcodec byte: ids below
# are the built-in codecs, stored under their own codec format.
FIRST_UDCODEC = 6

# Codec id -> the format code its streams are stored under.
CODEC_FORMAT = {0: 0, 1: 1, 2: 1, 3: 2, 4: 3, 5: 4}

# Filter ids of the extended header's filter slots.
FILTERS = {
    0: "nofilter",
    1: "shuffle",
    2: "bitshuffle",
    3: "delta",
    4: "trunc_prec",
    32: "ndcell",
    33: "ndmean",
    34: "bytedelta_buggy",
    35: "bytedelta",
    36: "int_trunc",
}

# Split modes (API names; C numbers them from 1).
SPLITMODES = {1: "always", 2: "never", 3: "auto", 4: "forward_compat"}

# Special chunk kinds, blosc2_flags bits 4-6.
SPECIALS = {0: None, 1: "zeros", 2: "nan", 3: "value", 4: "uninit"}

SPECIAL_CODES = {name: code for code, name in SPECIALS.items() if name}


def family(version: int) -> str:
    """"Blosc1" or "Blosc2": the library family that writes chunk format
    ``version`` (a known version, see VERSIONS)."""
    return "Blosc2" if VERSIONS[version].startswith("blosc2") else "Blosc1"


def codec_name(code: int) -> str:
    """Name of codec id ``code``; ``codec-<id>`` when the id has no name."""
    return CODECS.get(code, f"codec-{code}")


# Filter ids C-Blosc2 defines no filter for (the others: its own, or the
# range it leaves to user-registered filters, 160 and up); a frame header
# naming one cannot be opened (V14)
C_UNDEFINED_FILTERS = frozenset(range(5, 32)) | frozenset(range(37, 160))


def filter_name(code: int) -> str:
    """Name of filter id ``code``; ``filter-<id>`` when the id has no name."""
    return FILTERS.get(code, f"filter-{code}")


def lookup(table: dict, name: str) -> int:
    """Reverse lookup of ``name`` in one of the tables above (KeyError if absent)."""
    for code, n in table.items():
        if n == name:
            return code
    raise KeyError(name)
