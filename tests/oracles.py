"""The independent libraries the tests compare blosckit with, and what a
missing one means.

``oracle("blosc2")`` returns the imported module.  When it cannot be
imported, the test (or, called at module level, the whole module) is
skipped with a reason that names the library; under
``BLOSCKIT_REQUIRE_ORACLES=1`` (set by ``.ci/run``) it fails instead, so a
run whose oracles vanished cannot pass.  Every test module asks for its
oracles here, never with ``pytest.importorskip``.

Imported as ``from oracles import oracle`` (``tests/`` is on sys.path).
"""
from __future__ import annotations

import importlib
import os
import platform
import sys
from types import ModuleType

import pytest

REQUIRE = "BLOSCKIT_REQUIRE_ORACLES"

# import name -> what it is, in the words of a skip or failure message
ORACLES = {
    "blosc2": "python-blosc2 (C-Blosc2)",
    "blosc": "python-blosc (C-Blosc 1.x)",
    "h5py": "h5py (HDF5)",
    "hdf5plugin": "hdf5plugin (the HDF5 Blosc and Blosc2 filters)",
    "zarr": "zarr",
    "dask.array": "dask (dask.array.from_zarr)",
    "numcodecs": "numcodecs (zarr's Blosc codec)",
    "imagecodecs": "imagecodecs (its Blosc2 codec)",
    "numpy": "numpy",
    "atheris": "atheris (the coverage-guided fuzzer of the fuzz extra)",
}


# command-line tools of the long tier (Debian packages that .ci/run installs)
# -> what they are, in the words of a skip or failure message
TOOLS = {
    "clang": "clang (Debian clang)",
    "x86_64-w64-mingw32-gcc": "MinGW-w64 GCC (Debian gcc-mingw-w64-x86-64)",
    "wine": "wine (Debian wine64), to run the Windows build",
    "aarch64-linux-gnu-gcc": "aarch64 cross GCC (Debian gcc-aarch64-linux-gnu)",
    "qemu-aarch64": "qemu-user (Debian qemu-user), to run the aarch64 build",
}


def tool(name: str) -> str:
    """The path of command ``name``; skip, or fail under
    ``BLOSCKIT_REQUIRE_ORACLES=1``, when it is not on PATH."""
    import shutil
    path = shutil.which(name)
    if path is None:
        if os.environ.get(REQUIRE) == "1":
            pytest.fail(f"{TOOLS[name]} is not on PATH; {REQUIRE}=1 makes a missing tool an "
                        "error", pytrace=False)
        pytest.skip(f"{TOOLS[name]} is not on PATH: the checks that need it are skipped "
                    f"({REQUIRE}=1 makes this an error)")
    return path


def atheris_ships_here() -> bool:
    """Whether the ``fuzz`` extra installs atheris on this interpreter
    (pyproject: wheels for Linux x86-64 and CPython up to 3.12 only)."""
    return (sys.platform == "linux" and platform.machine() == "x86_64"
            and sys.version_info < (3, 13))


def required(name: str) -> bool:
    """Whether a missing ``name`` fails the run rather than skipping."""
    if os.environ.get(REQUIRE) != "1":
        return False
    return name != "atheris" or atheris_ships_here()


def _fail_if_required(name: str, error: ImportError) -> None:
    if required(name):
        pytest.fail(f"oracle {ORACLES[name]} is not importable ({error}); {REQUIRE}=1 makes a "
                    "missing oracle an error", pytrace=False)


def oracle(name: str) -> ModuleType:
    """The module ``name``, imported; skip, or fail under
    ``BLOSCKIT_REQUIRE_ORACLES=1``, when it cannot be imported."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        _fail_if_required(name, e)
        pytest.skip(f"oracle {ORACLES[name]} is not importable ({e}): the tests that compare "
                    f"with it are skipped ({REQUIRE}=1 makes this an error)",
                    allow_module_level=True)


def available(name: str) -> ModuleType | None:
    """The module ``name``, or None when it cannot be imported: for shared
    data that leaves out what a missing oracle would have written (the
    tests that need that part call :func:`oracle`).  Under
    ``BLOSCKIT_REQUIRE_ORACLES=1`` a missing one fails as in :func:`oracle`."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        _fail_if_required(name, e)
        return None
