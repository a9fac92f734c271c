"""blosckit.zarr.BloscCodec: zarr v3 arrays (sharded and not) written with
zarr's own BloscCodec read through blosckit's once zarr.config selects it,
and the other way round."""
from __future__ import annotations

import pytest

from oracles import oracle

np = oracle("numpy")
zarr = oracle("zarr")

from zarr.codecs import BloscCodec as ZarrBloscCodec           # noqa: E402
from zarr.registry import get_codec_class                     # noqa: E402

import blosckit.zarr                                          # noqa: E402

SELECT = {"codecs.blosc": "blosckit.zarr.BloscCodec"}

CASES = [
    # (dtype, shape, chunks, shards, codec configuration)
    ("f8", (300, 70), (64, 16), None, dict(cname="zstd", clevel=5, shuffle="shuffle")),
    ("u1", (1000,), (128,), None, dict(cname="lz4", clevel=1, shuffle="bitshuffle")),
    ("i4", (40, 50, 6), (16, 16, 4), (32, 32, 4), dict(cname="blosclz", clevel=9)),
    ("f4", (500, 30), (50, 10), (100, 30), dict(cname="zlib", clevel=3, shuffle="noshuffle",
                                                typesize=4, blocksize=1024)),
    ("u2", (999,), (100,), (300,), dict(cname="lz4hc", clevel=5)),
]


@pytest.fixture
def decode_calls(monkeypatch):
    """Chunks decoded by blosckit's codec, counted."""
    calls = []
    original = blosckit.zarr.BloscCodec._decode_sync

    def counting(self, chunk_bytes, chunk_spec):
        calls.append(len(chunk_bytes))
        return original(self, chunk_bytes, chunk_spec)

    monkeypatch.setattr(blosckit.zarr.BloscCodec, "_decode_sync", counting)
    return calls


def _data(dtype, shape):
    return (np.arange(int(np.prod(shape))) % 1013).astype(dtype).reshape(shape)


def _write(path, dtype, shape, chunks, shards, config, codec_cls):
    data = _data(dtype, shape)
    z = zarr.create_array(str(path), shape=shape, chunks=chunks, shards=shards, dtype=dtype,
                          compressors=codec_cls(**config))
    z[...] = data
    return data


def _inner_chunks(shape, chunks):
    return int(np.prod([-(-s // c) for s, c in zip(shape, chunks)]))


def test_registered_and_selected_through_zarr_config():
    assert get_codec_class("blosc") is ZarrBloscCodec        # zarr's default stays
    with zarr.config.set(SELECT):
        assert get_codec_class("blosc") is blosckit.zarr.BloscCodec
    codec = blosckit.zarr.BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle", typesize=4)
    twin = ZarrBloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle", typesize=4)
    assert codec.to_dict() == twin.to_dict()
    assert blosckit.zarr.BloscCodec.from_dict(twin.to_dict()) == codec


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{'sharded' if c[3] else 'plain'}"
                                             for c in CASES])
def test_zarr_arrays_read_through_blosckit(case, tmp_path, decode_calls):
    dtype, shape, chunks, shards, config = case
    data = _write(tmp_path, dtype, shape, chunks, shards, config, ZarrBloscCodec)
    with zarr.config.set(SELECT):
        back = zarr.open_array(str(tmp_path), mode="r")
        np.testing.assert_array_equal(back[...], data)
    # every inner chunk (shards included) went through blosckit's codec
    assert len(decode_calls) == _inner_chunks(shape, chunks)


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{'sharded' if c[3] else 'plain'}"
                                             for c in CASES])
def test_blosckit_written_arrays_read_by_zarr(case, tmp_path):
    dtype, shape, chunks, shards, config = case
    data = _write(tmp_path / "bk", dtype, shape, chunks, shards, config,
                  blosckit.zarr.BloscCodec)
    back = zarr.open_array(str(tmp_path / "bk"), mode="r")
    # read by zarr's own codec (which sets numcodecs' Blosc single-threaded)
    reader = back.metadata.codecs[-1] if not shards else back.metadata.codecs[0].codecs[-1]
    assert type(reader) is ZarrBloscCodec
    np.testing.assert_array_equal(back[...], data)
    # and the stored chunks are the bytes zarr's own codec writes
    _write(tmp_path / "ref", dtype, shape, chunks, shards, config, ZarrBloscCodec)
    ref_files = sorted(p.relative_to(tmp_path / "ref") for p in (tmp_path / "ref").rglob("c/**/*")
                       if p.is_file())
    assert ref_files
    same = sum((tmp_path / "bk" / f).read_bytes() == (tmp_path / "ref" / f).read_bytes()
               for f in ref_files)
    if config["cname"] != "lz4hc":      # LZ4 1.9.4 here, 1.10 in numcodecs' C-Blosc
        assert same == len(ref_files)
