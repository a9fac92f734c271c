"""Write the synthetic old-writer fixtures in tests/data/blosckit-synthetic/.

Each case is a chunk as an old Blosc writer laid it out (format versions 1
to 4), written byte by byte with ``struct`` -- no blosckit code -- plus a
JSON sidecar: producer, chunk format version, codec, filters, typesize,
blocksize, nbytes, the sha256 of the decoded data and why the case exists.

Deterministic: ``python tests/data/make_fixtures.py`` rewrites identical
files (streams are raw, zero, run-length, CPython zlib or python-lz4 block
streams; the lz4 bytes depend on the lz4 library only through the encoder,
any decoder reads them).  Fixtures are write-once: add cases, do not change
existing ones.
"""
from __future__ import annotations

import hashlib
import json
import pathlib
import struct
import sys
import zlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent / "blosckit-synthetic"

FILTER_IDS = {"shuffle": 1, "bitshuffle": 2, "delta": 3}
CODEC_FORMATS = {"blosclz": 0, "lz4": 1, "zlib": 3, "zstd": 4}


# -- data and forward filters ------------------------------------------------

def data_for(nbytes: int, typesize: int, seed: int) -> bytes:
    """Items i holding i * 2654435761 mod 2**64 (low typesize bytes) plus a
    few slow-changing bytes: compressible, every byte position different."""
    n = nbytes // typesize + 1
    i = np.arange(n, dtype=np.uint64)
    v = (i * np.uint64(2654435761) + np.uint64(seed)) >> np.uint64(7)
    raw = v.astype("<u8").view(np.uint8).reshape(n, 8)
    mat = np.zeros((n, typesize), dtype=np.uint8)
    mat[:, :min(8, typesize)] = raw[:, :min(8, typesize)]
    if typesize > 8:
        mat[:, 8:] = (np.arange(n) // 3 % 251).astype(np.uint8)[:, None]
    return mat.tobytes()[:nbytes]


def shuffle(block: bytes, ts: int) -> bytes:
    n = len(block) // ts * ts
    if ts <= 1 or n == 0:
        return block
    return np.frombuffer(block[:n], np.uint8).reshape(-1, ts).T.tobytes() + block[n:]


def bitshuffle_v2(block: bytes, ts: int) -> bytes:
    """C-Blosc 1.x bitshuffle of one block: whole 8-item groups transformed
    and the bsize % ts tail copied when the item count is a multiple of 8,
    else the whole block copied as is."""
    nitems = len(block) // ts
    if nitems % 8 or len(block) < ts:
        return block
    n = nitems * ts
    a = np.frombuffer(block[:n], np.uint8).reshape(nitems, ts)
    bits = np.unpackbits(a, axis=1, bitorder="little")
    return np.packbits(bits.T, axis=1, bitorder="little").tobytes() + block[n:]


# -- streams -------------------------------------------------------------------

def raw(payload: bytes) -> bytes:
    return struct.pack("<i", len(payload)) + payload


def zlib_s(payload: bytes) -> bytes:
    c = zlib.compress(payload, 6)
    return raw(payload) if len(c) >= len(payload) else struct.pack("<i", len(c)) + c


def lz4_s(payload: bytes) -> bytes:
    import lz4.block
    c = lz4.block.compress(payload, mode="default", store_size=False)
    return raw(payload) if len(c) >= len(payload) else struct.pack("<i", len(c)) + c


def run(byte: int, token: bool) -> bytes:
    return struct.pack("<i", -byte) + (b"\x01" if token else b"")


def zeros() -> bytes:
    return struct.pack("<i", 0)


STREAMS = {"raw": raw, "zlib": zlib_s, "lz4": lz4_s}


# -- chunk assembly -------------------------------------------------------------

def assemble(header: bytes, blocks: list[list[bytes]]) -> bytes:
    start = len(header) + 4 * len(blocks)
    bstarts, body = [], bytearray()
    for streams in blocks:
        bstarts.append(start + len(body))
        for s in streams:
            body += s
    out = bytearray(header) + struct.pack(f"<{len(blocks)}i", *bstarts) + body
    struct.pack_into("<i", out, 12, len(out))
    return bytes(out)


def header16(version, flags, ts, nbytes, bs) -> bytes:
    return struct.pack("<BBBBiii", version, 1, flags, ts, nbytes, bs, 0)


def blosc1_chunk(data, *, version, ts, bs, filt, codec, stream, split):
    """A version 1/2 chunk: filters in the flags byte, 0x10 clear (as Blosc <
    1.11 wrote them), split into typesize streams when ``split``."""
    flags = CODEC_FORMATS[codec] << 5
    if filt == "shuffle":
        flags |= 0x01
    elif filt == "bitshuffle":
        flags |= 0x04
    blocks = []
    for j in range(0, len(data), bs):
        b = data[j:j + bs]
        if filt == "shuffle" and ts > 1:
            b = shuffle(b, ts)
        elif filt == "bitshuffle":
            b = bitshuffle_v2(b, ts)
        n = ts if split and len(b) == bs else 1
        q = len(b) // n
        blocks.append([STREAMS[stream](b[k * q:(k + 1) * q]) for k in range(n)])
    return assemble(header16(version, flags, ts, len(data), bs), blocks)


CASES = []


def case(name, why, **meta):
    def deco(fn):
        CASES.append((name, why, meta, fn))
        return fn
    return deco


def _b1(name, why, *, version=2, ts, bs, nbytes, filt, stream="raw", split=False, seed=0):
    codec = "blosclz" if stream == "raw" else stream
    filters = [[filt, 0]] if filt and not (filt == "shuffle" and ts == 1) else []

    @case(name, why, version=version, codec=codec, filters=filters, typesize=ts,
          blocksize=bs)
    def make():
        data = data_for(nbytes, ts, seed)
        return data, blosc1_chunk(data, version=version, ts=ts, bs=bs, filt=filt,
                                  codec=codec, stream=stream, split=split)


_b1("v2-ts17-legacy-nosplit",
    "typesize 17 > 16: Blosc < 1.11 wrote one stream per block with 0x10 clear; the "
    "legacy rule says no split, C-Blosc2 reads 17 streams",
    ts=17, bs=17 * 200, nbytes=17 * 200 * 3 + 17 * 5 + 3, filt="shuffle")
_b1("v2-ts32-legacy-nosplit", "typesize 32 > 16 with 0x10 clear: not split (legacy rule)",
    ts=32, bs=32 * 150, nbytes=32 * 150 * 2 + 32 * 7, filt="shuffle", stream="zlib")
_b1("v2-ts255-legacy-nosplit", "typesize 255 with 0x10 clear: not split (legacy rule)",
    ts=255, bs=255 * 130, nbytes=255 * 130 * 2 + 255 * 3 + 100, filt="shuffle", stream="lz4")
_b1("v2-ts8-smallblock-nosplit",
    "blocksize / typesize = 100 < 128 with 0x10 clear: not split (legacy rule)",
    ts=8, bs=800, nbytes=800 * 4 + 13, filt="shuffle", stream="lz4")
_b1("v2-ts4-legacy-split",
    "typesize 4, blocksize / typesize = 1024 >= 128, 0x10 clear: split into 4 streams "
    "per full block, one for the leftover block", ts=4, bs=4096, nbytes=4096 * 3 + 4 * 77 + 1,
    filt="shuffle", stream="zlib", split=True)
_b1("v2-ts16-legacy-split-lz4", "typesize 16 at the split limit: 16 streams per block",
    ts=16, bs=16 * 128, nbytes=16 * 128 * 3 + 40, filt="shuffle", stream="lz4", split=True)
_b1("v2-bitshuffle-tail-ts4",
    "version-2 bitshuffle, 83 items per block (not a multiple of 8): C-Blosc 1.x stores "
    "the block unshuffled; leftover block of 24 items + 2 bytes: transformed + tail copied",
    ts=4, bs=4 * 83, nbytes=4 * 83 * 3 + 4 * 24 + 2, filt="bitshuffle")
_b1("v2-bitshuffle-tail-ts8",
    "version-2 bitshuffle, 160 items per block (transformed, split into 8 streams by the "
    "legacy rule), leftover of 13 items + 5 bytes (copied as is)", ts=8, bs=8 * 160,
    nbytes=8 * 160 * 2 + 8 * 13 + 5, filt="bitshuffle", stream="zlib", split=True)
_b1("v2-bitshuffle-ts17-blocktail",
    "version-2 bitshuffle with typesize 17 and 8*k items: every block transformed",
    ts=17, bs=17 * 64, nbytes=17 * 64 * 2 + 17 * 16 + 9, filt="bitshuffle", stream="lz4")
_b1("v1-ts4-split", "version 1 (pre-1.0 writer): read with Blosc1 semantics, split by the "
    "legacy rule", version=1, ts=4, bs=1024, nbytes=1024 * 3 + 100, filt="shuffle",
    split=True)
_b1("v1-ts2-noshuffle-zlib", "version 1, no filter, zlib streams, one stream per block",
    version=1, ts=2, bs=200, nbytes=200 * 5 + 51, filt=None, stream="zlib")


def extended_chunk(data, *, version, ts, bs, slots, metas, codec, block_streams):
    """Version 3 (5 filter slots + reserved bytes) or 4 (6 slots) header."""
    flags = 0x05 | 0x10 | (CODEC_FORMATS[codec] << 5)
    if version == 3:
        ext = struct.pack("<5B3s5B2sB", *slots[:5], b"\0\0\0", *metas[:5], b"\0\0", 0)
    else:
        ext = struct.pack("<6BBB6BBB", *slots, 0, 0, *metas, 0, 0)
    hdr = header16(version, flags, ts, len(data), bs) + ext
    return assemble(hdr, block_streams)


def _runs_data(ts, bs, nblocks, tail, seed):
    """Blocks alternating real data, a byte run and zeros, as bytes; the
    block kinds are returned beside."""
    parts, kinds = [], []
    for j in range(nblocks):
        k = ("data", "run", "zeros")[j % 3]
        if k == "data":
            parts.append(data_for(bs, ts, seed + j))
        elif k == "run":
            parts.append(bytes([0x30 + j]) * bs)
        else:
            parts.append(bytes(bs))
        kinds.append(k)
    parts.append(data_for(tail, ts, seed + 99))
    kinds.append("data")
    return parts, kinds


def _ext_case(name, why, *, version, ts, bs, nblocks, tail, codec, stream, token):
    slots = [1, 0, 0, 0, 0, 0] if version == 3 else [0, 0, 0, 0, 0, 1]
    filters = [["shuffle", 0]]

    @case(name, why, version=version, codec=codec, filters=filters, typesize=ts,
          blocksize=bs)
    def make():
        parts, kinds = _runs_data(ts, bs, nblocks, tail, 7)
        blocks = []
        for p, k in zip(parts, kinds):
            if k == "run":
                # a run block survives shuffling unchanged
                blocks.append([run(p[0], token)])
            elif k == "zeros":
                blocks.append([zeros()])
            else:
                blocks.append([STREAMS[stream](shuffle(p, ts))])
        data = b"".join(parts)
        return data, extended_chunk(data, version=version, ts=ts, bs=bs, slots=slots,
                                    metas=[0] * 6, codec=codec, block_streams=blocks)


_ext_case("v3-alpha-runs-no-token",
          "version 3 (alpha): 5-slot extended header, shuffle in slot 0; negative csize "
          "runs have no token byte before version 4; csize 0 zero blocks",
          version=3, ts=4, bs=512, nblocks=6, tail=4 * 30 + 2, codec="zlib", stream="zlib",
          token=False)
_ext_case("v3-alpha-raw", "version 3 with raw streams and typesize 8",
          version=3, ts=8, bs=1024, nblocks=4, tail=8 * 3, codec="blosclz", stream="raw",
          token=False)
_ext_case("v4-beta-runs-token",
          "version 4 (beta1): 6-slot extended header, shuffle in slot 5; negative csize runs "
          "followed by token 0x01; zero blocks", version=4, ts=4, bs=512, nblocks=6,
          tail=4 * 30 + 2, codec="lz4", stream="lz4", token=True)
_ext_case("v4-beta-ts2-raw", "version 4 with raw streams, typesize 2, run and zero blocks",
          version=4, ts=2, bs=300, nblocks=5, tail=11, codec="blosclz", stream="raw",
          token=True)


def main(out: pathlib.Path = OUT) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for name, why, meta, fn in CASES:
        data, chunk = fn()
        (out / f"{name}.bin").write_bytes(chunk)
        side = dict(producer="blosckit-synthetic", case=name, why=why, nbytes=len(data),
                    cbytes=len(chunk), sha256=hashlib.sha256(data).hexdigest(), **meta)
        (out / f"{name}.json").write_text(json.dumps(side, indent=2, sort_keys=True) + "\n")
        names.append(name)
    return names


if __name__ == "__main__":
    print("\n".join(main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)))
