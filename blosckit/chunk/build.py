"""The low-level chunk builder: a chunk composed from parts that are already
encoded (header fields, streams, bstarts, a dictionary), valid or not.

Every structure is built through its declaration in
:mod:`blosckit.formats.chunk`; ``check=False`` writes lies too, for fuzzing.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..formats import build as _build
from ..formats import chunk as fc
from .read import parse_chunk

__all__ = ["build_chunk"]


_HEADER_FIELDS = ("version", "versionlz", "flags", "typesize", "nbytes", "blocksize")
_EXT_FIELDS = ("filters", "udcodec", "compcode_meta", "filters_meta", "blosc2_flags2",
               "blosc2_flags")
_EXT_FIELDS_ALPHA = ("filters", "reserved1", "filters_meta", "reserved2", "blosc2_flags")
# bit-field bytes a caller may give as a dict/Container or as the raw byte
_BITS = {"flags": fc.ChunkFlags, "blosc2_flags": fc.Blosc2Flags,
         "blosc2_flags2": fc.Blosc2Flags2}


def _as_dict(obj) -> dict:
    return {k: v for k, v in dict(obj).items() if not str(k).startswith("_")}


def _require(d: dict, names: Sequence[str], where: str) -> None:
    """ValueError naming the first field of ``names`` that ``d`` lacks."""
    for name in names:
        if name not in d:
            raise ValueError(f"build_chunk: {where}.{name} is missing")


def _bits(name: str, value) -> dict:
    """A bit-field byte as the dict its declaration builds from."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value <= 255:
            raise ValueError(f"build_chunk: {name} byte {value} is outside 0..255")
        return _as_dict(_BITS[name].parse(bytes((value,))))
    return _as_dict(value)


def _header_dict(header) -> dict:
    """The caller's header as plain dicts, every field present (cbytes may be None)."""
    hdr = _as_dict(header)
    _require(hdr, _HEADER_FIELDS, "header")
    hdr["flags"] = _bits("flags", hdr["flags"])
    hdr.setdefault("cbytes", None)
    ext = hdr.get("extended")
    if ext is None:
        hdr["extended"] = None
        return hdr
    ext = _as_dict(ext)
    alpha = hdr["version"] in fc.EXTENDED_HEADERS
    _require(ext, _EXT_FIELDS_ALPHA if alpha else _EXT_FIELDS, "header.extended")
    for key in ("blosc2_flags", "blosc2_flags2"):
        if key in ext:
            ext[key] = _bits(key, ext[key])
    hdr["extended"] = ext
    return hdr


def _with_lying_length(con, obj: dict, length_field: str, true_len: int,
                       path: str, **context) -> bytes:
    """``con`` built with ``length_field`` set to the payload's real length
    (so the declaration lays the structure out), then that field built again
    from its own subcon with the caller's value -- which may lie."""
    stated = obj[length_field]
    real = _build(con, {**obj, length_field: true_len}, path, **context)
    if stated == true_len:
        return real
    field = _build(getattr(con, length_field), stated, f"{path}.{length_field}")
    return field + real[len(field):]     # the length field comes first in each struct


def _stream_bytes(stream, version: int, check: bool) -> bytes:
    """One stream through the ``Stream`` declaration; raw bytes become a
    stream whose csize is their length.  With ``check=False`` a csize that
    disagrees with the cdata given is written as stated."""
    if isinstance(stream, (bytes, bytearray, memoryview)):
        data = bytes(stream)
        s: dict[str, Any] = {"csize": len(data), "token": None, "cdata": data}
    else:
        s = _as_dict(stream)
        _require(s, ("csize",), "stream")
        s.setdefault("token", None)
        s.setdefault("cdata", None)
    if s["csize"] < 0 and version >= 4 and s["token"] is None:
        s["token"] = fc.TOKEN_RUN
    if s["cdata"] is not None:
        s["cdata"] = bytes(s["cdata"])
    path = "chunk.blocks[].streams[]"
    cdata = s["cdata"]
    if check:
        if s["csize"] > 0 and cdata is None:
            raise ValueError(f"stream with csize {s['csize']} needs cdata")
        if cdata is not None and len(cdata) != max(s["csize"], 0):
            raise ValueError(f"stream csize {s['csize']} but {len(cdata)} bytes of cdata "
                             "(check=False writes it anyway)")
    elif s["csize"] > 0 and (cdata is None or len(cdata) != s["csize"]):
        # a csize that lies about its payload: the declaration lays out the
        # payload given, then the csize field is built with the stated value
        return _with_lying_length(fc.Stream, {**s, "cdata": cdata or b""}, "csize",
                                  len(cdata or b""), path, version=version)
    elif s["csize"] <= 0 and cdata:
        # zero or run csize with payload bytes after it: written as given
        return _build(fc.Stream, {**s, "cdata": None}, path, version=version) + cdata
    return _build(fc.Stream, s, path, version=version)


def _vlblock_bytes(block) -> bytes:
    """One VL block through the ``VLBlock`` declaration (its size is free)."""
    if isinstance(block, (bytes, bytearray, memoryview)):
        b: dict[str, Any] = {"size": len(block), "payload": bytes(block)}
    else:
        b = _as_dict(block)
        _require(b, ("size", "payload"), "block")
        b["payload"] = bytes(b["payload"])
    return _build(fc.VLBlock, b, "chunk.blocks[]", len_payload=len(b["payload"]))


def _dict_bytes(dictionary, check: bool) -> bytes:
    """The dictionary section: bytes (dsize = their length) or a mapping with
    ``dsize`` and ``dict`` (``check=False`` lets dsize lie)."""
    d: dict[str, Any]
    if isinstance(dictionary, (bytes, bytearray, memoryview)):
        d = {"dsize": len(dictionary), "dict": bytes(dictionary)}
    else:
        d = _as_dict(dictionary)
        _require(d, ("dsize", "dict"), "dict")
        d["dict"] = bytes(d["dict"])
    if d["dsize"] == len(d["dict"]):
        return _build(fc.DictSection, d, "chunk.dict")
    if check:
        raise ValueError(f"dict dsize {d['dsize']} but {len(d['dict'])} bytes "
                         "(check=False writes it anyway)")
    return _with_lying_length(fc.DictSection, d, "dsize", len(d["dict"]), "chunk.dict")


def _body_blocks(streams, version: int, vl: bool, check: bool) -> tuple[list[bytes], int]:
    """Each block's bytes and the number of bstarts (0 for a raw chunk's data)."""
    if isinstance(streams, (bytes, bytearray, memoryview)):
        return [bytes(streams)], 0
    blocks = []
    for blk in streams:
        if vl:
            blocks.append(_vlblock_bytes(blk))
        elif isinstance(blk, (bytes, bytearray, memoryview)):
            blocks.append(_stream_bytes(blk, version, check))
        else:
            blocks.append(b"".join(_stream_bytes(s, version, check) for s in blk))
    return blocks, len(blocks)


def _place(blocks: list[bytes], bstarts, first: int, check: bool) -> tuple[list[int], bytes]:
    """Block offsets and the streams section starting at byte ``first``.

    Without ``bstarts`` the blocks are packed in order.  With them each block
    is written at its bstart when that lies in ``first .. first + total`` (the
    total length of the blocks: gaps are zero bytes).  A bstart elsewhere
    (inside the header, negative, far past the data) raises ValueError with
    ``check``; without, the bstart is written as given and the block's bytes
    follow the placed ones, so the output never grows beyond twice the data.
    """
    if bstarts is None:
        offsets, pos = [], first
        for b in blocks:
            offsets.append(pos)
            pos += len(b)
        return offsets, b"".join(blocks)
    offsets = [int(x) for x in bstarts]
    if len(offsets) != len(blocks):
        raise ValueError(f"{len(offsets)} bstarts for {len(blocks)} blocks")
    total = sum(len(b) for b in blocks)
    inside = [first <= o <= first + total for o in offsets]
    if check and not all(inside):
        bad = offsets[inside.index(False)]
        raise ValueError(f"bstart {bad} is outside the streams section "
                         f"{first}..{first + total} (check=False writes it anyway)")
    end = max([first] + [o + len(b) for o, b, ok in zip(offsets, blocks, inside) if ok and b])
    area = bytearray(end - first)
    for o, b, ok in zip(offsets, blocks, inside):
        if ok:
            area[o - first:o - first + len(b)] = b
    area += b"".join(b for b, ok in zip(blocks, inside) if not ok)
    return offsets, bytes(area)


def build_chunk(header, streams: Sequence, *, dict=None,
                bstarts: Sequence[int] | None = None, check: bool = True) -> bytes:
    """Compose a chunk from parts that are already encoded.

    ``header``: a Container or dict of the fields of ``formats.chunk.Header``
    (``cbytes`` may be None or absent: it is then the result's length in
    bytes; ``extended`` None or absent: a 16-byte header; the bit-field bytes
    may be dicts or raw ints).  A missing field raises ValueError naming it.
    ``streams``: per block, a list of streams (dicts/Containers with
    ``csize``, ``token``, ``cdata``, or raw bytes); for a VL-block chunk one
    ``{"size", "payload"}`` per block; for a raw (memcpyed) chunk the data
    itself as bytes.  ``bstarts``: explicit block offsets (bytes from the
    chunk start) in any order; each block is written at its offset and gaps
    are zero bytes.  ``dict``: the dictionary section, as its bytes or as
    ``{"dsize", "dict"}``.

    ``check=True`` (default) refuses inconsistent parts and verifies that the
    result parses (:func:`blosckit.parse_chunk`).  ``check=False`` writes what
    it is given, invalid chunks included, for fuzzing: bstarts anywhere (a
    block whose bstart is outside its section follows the others), a csize or
    dsize that disagrees with its bytes, any cbytes/nbytes.  Every structure
    is still built by its declaration in :mod:`blosckit.formats.chunk`, so a
    value a field cannot hold (typesize 256) is a ValueError in both modes.
    """
    hdr = _header_dict(header)
    version = hdr["version"]
    ext = hdr["extended"]
    vl = bool(ext and isinstance(ext.get("blosc2_flags2"), Mapping)
              and ext["blosc2_flags2"].get("vl_blocks"))
    auto_cbytes = hdr["cbytes"] is None
    head_len = len(_build(fc.Header, {**hdr, "cbytes": 0}, "chunk.header"))
    blocks, nbstarts = _body_blocks(streams, version, vl, check)
    dict_part = b"" if dict is None else _dict_bytes(dict, check)
    first = head_len + fc.LEN_BSTART * nbstarts + len(dict_part)
    if nbstarts:
        offsets, body = _place(blocks, bstarts, first, check)
    elif bstarts:
        raise ValueError("a raw (memcpyed or special) chunk has no bstarts")
    else:
        offsets, body = [], b"".join(blocks)      # a raw chunk's data, as given
    if auto_cbytes:
        hdr["cbytes"] = first + len(body)
    out = b"".join([_build(fc.Header, hdr, "chunk.header"),
                    _build(fc.Bstarts, offsets, "chunk.bstarts", num_blocks=nbstarts),
                    dict_part, body])
    if check:
        parse_chunk(out)
    return out
