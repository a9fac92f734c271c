"""Other libraries' ways of naming the encoder's parameters, turned into
blosckit's: python-blosc2's ``Codec`` / ``Filter`` / ``SplitMode`` members and
its ``CParams`` fields, and numcodecs' (zarr's) Blosc configuration.

blosc2 and numcodecs are never imported here: an enum member is recognised by
its ``name`` attribute.  specs/ecosystem.md gives the mappings.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..formats import enums
from . import stune

__all__ = ["member_name", "codec_name", "splitmode_name", "filters_named", "from_cparams",
           "CPARAMS_DEFAULTS", "NUMCODECS_SHUFFLES", "AUTOSHUFFLE", "blosc1_args"]


def member_name(value: Any) -> Any:
    """The lower-case ``name`` of an enum member (``Codec.ZSTD`` -> "zstd");
    any other value as given, for the caller's own check to judge."""
    name = getattr(value, "name", None)
    if isinstance(value, str) or not isinstance(name, str):
        return value
    return name.lower()


def codec_name(codec: Any) -> Any:
    """A codec name, or a ``blosc2.Codec`` member as its name."""
    return member_name(codec)


def splitmode_name(splitmode: Any) -> Any:
    """A split mode name, or a ``blosc2.SplitMode`` member as blosckit's
    name (``ALWAYS_SPLIT`` -> "always")."""
    name = member_name(splitmode)
    if name is not splitmode and isinstance(name, str) and name.endswith("_split"):
        return name[:-len("_split")]
    return name


def _entry(entry: Any) -> Any:
    """One filter entry with a member (bare or in a ``(member, meta)`` pair)
    replaced by its name."""
    if isinstance(entry, tuple) and len(entry) == 2:
        return (member_name(entry[0]), entry[1])
    return member_name(entry)


def filters_named(filters: Any) -> Any:
    """``compress``'s ``filters`` with ``blosc2.Filter`` members named; the
    structure (bare entry, pair or sequence) is kept for the plan to check."""
    if filters is None or isinstance(filters, str):
        return filters
    if member_name(filters) is not filters:
        return member_name(filters)
    if isinstance(filters, tuple) and len(filters) == 2 and isinstance(filters[1], int) \
            and not isinstance(filters[1], bool) and member_name(filters[0]) is not filters[0]:
        return (member_name(filters[0]), filters[1])
    try:
        return tuple(_entry(e) for e in filters)
    except TypeError:
        return filters


# python-blosc2's CParams defaults (blosc2.cparams_dflts), which compress2
# applies to every field a cparams dict leaves out; nthreads does not change
# the output, so it is 1 here.
CPARAMS_DEFAULTS: dict[str, Any] = dict(
    codec="zstd", codec_meta=0, clevel=5, use_dict=False, typesize=8, nthreads=1,
    blocksize=0, splitmode="auto", filters=(None,) * 5 + ("shuffle",),
    filters_meta=(0,) * 6, tuner=0)


def _cparams_dict(cparams: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(cparams) and not isinstance(cparams, type):
        return {f.name: getattr(cparams, f.name) for f in dataclasses.fields(cparams)}
    if isinstance(cparams, Mapping):
        return dict(cparams)
    raise TypeError(f"cparams must be a dict or a blosc2.CParams, not {type(cparams).__name__}")


def _id_name(value: Any, table: dict[int, str]) -> Any:
    """An int id as its name in ``table`` (python-blosc2 passes ids too)."""
    if isinstance(value, int) and not isinstance(value, bool) and value in table:
        return table[value]
    return value


def _cparams_filters(filters: Any, metas: Any) -> list:
    """CParams' parallel ``filters`` / ``filters_meta`` lists as compress's
    entries (entry i in slot i)."""
    filters, metas = list(filters), list(metas)
    if len(filters) > len(metas):
        raise ValueError("cparams: filters_meta has fewer entries than filters")
    entries: list = []
    for f, meta in zip(filters, metas):
        name = member_name(_id_name(f, enums.FILTERS))
        # python-blosc2 turns bytedelta's meta 0 into the typesize, as a
        # bare "bytedelta" does here
        if name is None or name == "nofilter":
            entries.append(None)
        else:
            entries.append(name if name == "bytedelta" and meta == 0 else (name, meta))
    return entries


def from_cparams(cparams: Any) -> dict[str, Any]:
    """A python-blosc2 ``CParams`` (or a dict of its fields) as the keyword
    arguments of :func:`blosckit.compress`; the fields left out take
    python-blosc2's defaults, as ``blosc2.compress2(src, cparams=...)``
    does.  ValueError for a field blosckit cannot honour."""
    given = _cparams_dict(cparams)
    unknown = set(given) - set(CPARAMS_DEFAULTS)
    if unknown:
        raise ValueError(f"cparams: unknown field(s) {', '.join(sorted(unknown))}")
    p = {**CPARAMS_DEFAULTS, **given}
    if p["codec_meta"]:
        raise ValueError("cparams: codec_meta is for plugin codecs, which blosckit does not "
                         "write")
    if member_name(_id_name(p["tuner"], {0: "stune"})) != "stune":
        raise ValueError("cparams: only the STUNE tuner is supported")
    if "filters_meta" not in given:
        p["filters_meta"] = [0] * len(list(p["filters"]))
    return dict(
        codec=codec_name(_id_name(p["codec"], enums.CODECS)), clevel=p["clevel"],
        typesize=p["typesize"], blocksize=p["blocksize"], dict=p["use_dict"],
        splitmode=splitmode_name(_id_name(p["splitmode"], enums.SPLITMODES)),
        filters=_cparams_filters(p["filters"], p["filters_meta"]), nthreads=p["nthreads"])


# numcodecs' Blosc shuffle constants (zarr v3's "noshuffle" / "shuffle" /
# "bitshuffle" map onto 0 / 1 / 2)
AUTOSHUFFLE = -1
NUMCODECS_SHUFFLES: dict[int, tuple[str, ...]] = {0: (), 1: ("shuffle",), 2: ("bitshuffle",)}


def blosc1_args(cname: str, clevel: int, shuffle: int, blocksize: int, typesize: int | None,
                itemsize: int) -> dict[str, Any]:
    """numcodecs' ``Blosc`` configuration as :func:`blosckit.compress`'s
    arguments, for the chunk C-Blosc 1.x writes under numcodecs.
    ``itemsize`` (bytes) is the input buffer's item size, used when
    ``typesize`` is None.  ValueError for a bad shuffle."""
    ts = itemsize if typesize is None else typesize
    if isinstance(shuffle, bool) or shuffle not in (AUTOSHUFFLE, *NUMCODECS_SHUFFLES):
        raise ValueError(f"shuffle must be -1, 0, 1 or 2, got {shuffle!r}")
    if shuffle == AUTOSHUFFLE:
        # numcodecs picks from the item size before C-Blosc clamps it
        shuffle = 2 if ts == 1 else 1
    if isinstance(ts, int) and ts > stune.MAX_TYPESIZE:
        ts = 1          # C-Blosc 1.x treats items over 255 bytes as bytes
    return dict(typesize=ts, codec=cname, clevel=clevel, filters=NUMCODECS_SHUFFLES[shuffle],
                blocksize=blocksize, format="blosc1")
