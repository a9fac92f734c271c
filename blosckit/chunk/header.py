"""Chunk headers as the encoders write them, built from a plan through the
declarations in :mod:`blosckit.formats.chunk`."""
from __future__ import annotations

from .plan import Plan
from ..formats import chunk as fc
from ..formats import enums

__all__ = ["SPECIAL_KINDS", "CODEC_STREAM_VERSION", "flags", "blosc2_flags", "header"]

CODEC_STREAM_VERSION = 1                     # versionlz of every built-in codec
SPECIAL_KINDS = {name: code for code, name in enums.SPECIALS.items() if name}


def flags(plan: Plan, memcpyed: bool) -> dict:
    """The flags byte (``memcpyed``: the data is stored raw).  A Blosc2
    chunk planned raw keeps no codec format, split or delta bit; in Blosc2
    chunks bits 0 and 2 together mark the extended header."""
    names = {enums.FILTERS[f] for f in plan.slots if f}
    full = plan.fmt == "blosc1" or not plan.memcpyed
    return {
        "compformat": plan.codec.compformat if full else 0,
        "dont_split": (not plan.split) if full else False,
        "delta": "delta" in names and full,
        "bitshuffle": plan.fmt == "blosc2" or "bitshuffle" in names,
        "memcpyed": memcpyed,
        "shuffle": plan.fmt == "blosc2" or "shuffle" in names,
    }


def blosc2_flags(special: int = 0, use_dict: bool = False) -> dict:
    """The extended header's flags byte."""
    return {"instrumented": False, "special": special, "lazy": False, "unimplemented": False,
            "big_endian": False, "use_dict": use_dict}


def header(plan: Plan, cbytes: int, *, memcpyed: bool, special: int = 0,
           use_dict: bool = False) -> bytes:
    """The header of a chunk of ``cbytes`` bytes (header included) written
    by ``plan``; ``special`` is a special kind's code."""
    hdr = {
        "version": plan.version,
        "versionlz": CODEC_STREAM_VERSION,
        "flags": flags(plan, memcpyed),
        "typesize": plan.typesize,
        "nbytes": plan.nbytes,
        "blocksize": plan.header_blocksize,
        "cbytes": cbytes,
        "extended": None,
    }
    if plan.fmt == "blosc2":
        hdr["extended"] = {
            "filters": plan.slots, "udcodec": plan.codec.code, "compcode_meta": 0,
            "filters_meta": plan.metas,
            "blosc2_flags2": {"reserved": 0, "vl_blocks": plan.vl_blocks},
            "blosc2_flags": blosc2_flags(special, use_dict),
        }
    return fc.pack_header(hdr)
