"""The packaging traps DEVELOPERS.md lists, checked on the files themselves."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")


def pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_cffi_is_a_build_requirement():
    assert any(r.startswith("cffi") for r in pyproject()["build-system"]["requires"])


def test_cffi_modules_is_a_file_path():
    text = (ROOT / "setup.py").read_text()
    assert '"native/build_native.py:ffibuilder"' in text
    assert (ROOT / "native" / "build_native.py").is_file()


def test_build_scripts_stay_out_of_the_wheel():
    text = (ROOT / "setup.py").read_text()
    assert '("blosckit", "setup")' in text and '("blosckit.native", "build_native")' in text


def test_sdist_carries_c_sources_and_headers():
    manifest = (ROOT / "MANIFEST.in").read_text()
    assert re.search(r"^graft native$", manifest, re.M)
    assert list((ROOT / "native" / "src").glob("*.c"))
    assert list((ROOT / "native" / "src").glob("*.h"))


def test_package_layout():
    p = pyproject()
    assert p["tool"]["setuptools"]["package-dir"] == {"blosckit": "."}
    assert set(p["tool"]["setuptools"]["packages"]) == {
        "blosckit", "blosckit.formats", "blosckit.codecs", "blosckit.native"}
    assert p["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]
    assert not (ROOT / "conftest.py").exists()
    assert not (ROOT / "tests" / "__init__.py").exists()
    assert (ROOT / "py.typed").exists() and (ROOT / ".gitignore").exists()


def test_public_api_names():
    import blosckit
    for name in ("FormatError", "UnsupportedError", "decompress", "decompress_into", "getitem",
                 "chunk_sizes", "compress", "compress_special", "compress_vlblocks",
                 "build_chunk", "shuffle", "unshuffle", "bitshuffle", "bitunshuffle",
                 "parse_chunk"):
        assert name in blosckit.__all__ and callable(getattr(blosckit, name))
    assert issubclass(blosckit.UnsupportedError, blosckit.FormatError)
    assert issubclass(blosckit.FormatError, ValueError)
