"""The packaging traps of the developers' guide, checked on the files themselves
(and, where a build is cheap enough, on what the build produces)."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from oracles import oracle

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "blosckit"


def pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_cffi_is_a_build_requirement():
    assert any(r.startswith("cffi") for r in pyproject()["build-system"]["requires"])


def test_cffi_modules_is_a_file_path():
    text = (ROOT / "setup.py").read_text()
    assert '"blosckit/native/build_native.py:ffibuilder"' in text
    assert (PKG / "native" / "build_native.py").is_file()


def test_build_script_stays_out_of_the_wheel():
    text = (ROOT / "setup.py").read_text()
    assert '("blosckit.native", "build_native")' in text


def test_wheel_is_tagged_abi3_like_its_module():
    text = (ROOT / "setup.py").read_text()
    assert re.search(r'"py_limited_api":\s*"cp311"', text)


def test_sdist_carries_sources_tests_and_data():
    manifest = (ROOT / "MANIFEST.in").read_text()
    for line in ("graft blosckit/native/src", "graft tests", "graft specs", "graft samples"):
        assert re.search(rf"^{re.escape(line)}$", manifest, re.M), line
    assert "LICENSE" in manifest
    assert list((PKG / "native" / "src").glob("*.c"))
    assert list((PKG / "native" / "src").glob("*.h"))


def test_package_layout():
    p = pyproject()
    assert "package-dir" not in p["tool"]["setuptools"]
    # every package folder is listed (a missing one would be absent from the wheel)
    folders = {".".join(d.relative_to(ROOT).parts) for d in [PKG, *PKG.rglob("*")]
               if (d / "__init__.py").is_file()}
    assert set(p["tool"]["setuptools"]["packages"]) == folders
    assert {"blosckit.formats", "blosckit.native", "blosckit.codecs", "blosckit.chunk",
            "blosckit.frame", "blosckit.tools", "blosckit.testing", "blosckit.cli"} <= folders
    assert p["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]
    # nothing at the top that pytest or Python would take for a package
    assert not (ROOT / "__init__.py").exists()
    assert not (ROOT / "conftest.py").exists()
    assert not (ROOT / "tests" / "__init__.py").exists()
    assert (PKG / "py.typed").exists() and (ROOT / "LICENSE").exists()


def test_requires_python_matches_the_test_extra():
    # python-blosc2 4.14 (the oracle in the test extra) needs Python 3.11
    assert pyproject()["project"]["requires-python"] == ">=3.11"


def test_build_and_test_modules_are_not_importable():
    with pytest.raises(ImportError):
        import blosckit.setup  # noqa: F401
    with pytest.raises(ImportError):
        import blosckit.tests  # noqa: F401


def test_public_api_names():
    import blosckit
    for name in ("FormatError", "UnsupportedError", "decompress", "decompress_into", "getitem",
                 "chunk_sizes", "compress", "compress_special", "compress_vlblocks",
                 "build_chunk", "shuffle", "unshuffle", "bitshuffle", "bitunshuffle",
                 "parse_chunk"):
        assert name in blosckit.__all__ and callable(getattr(blosckit, name))
    assert issubclass(blosckit.UnsupportedError, blosckit.FormatError)
    assert issubclass(blosckit.FormatError, ValueError)


def test_readme_python_examples_run(tmp_path, monkeypatch):
    oracle("blosc2")
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)          # the examples write files
    for k, code in enumerate(blocks):
        exec(compile(code, f"README block {k}", "exec"), {})
