"""cffi build script for blosckit.native._native.

setuptools runs this as ``blosckit/native/build_native.py:ffibuilder`` from
the project root; ``python blosckit/native/build_native.py`` builds the module
in place (the .so lands beside this file, so ``import blosckit.native._native``
works from a checkout).
"""
import glob
import os
import re
import sys

import cffi

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))   # the project root
SRC_DIR = os.path.join(HERE, "src")


def _rel(path):
    """Path relative to the project root (some setuptools/cffi versions reject absolute ones)."""
    return os.path.relpath(path, ROOT).replace(os.sep, "/")


def _read(name):
    with open(os.path.join(SRC_DIR, name), encoding="utf-8") as f:
        return f.read()


# The cdef: the format facts' #define lines of the generated header (so
# Python reads them as lib.BK_...), then the API header itself, one
# declaration of every prototype, which uses them by name.
LAYOUT_DEFINES = "\n".join(
    line for line in _read("blosckit_layout.h").splitlines() if re.match(r"#define BK_\w+ ", line))
CDEF = LAYOUT_DEFINES + "\n" + _read("blosckit_api.h")

SOURCES = sorted(glob.glob(os.path.join(SRC_DIR, "*.c")))

# setuptools compiles with MSVC on Windows (C11 for _Static_assert; threads
# from the Windows API, bk_threads.h), else with GCC or Clang (POSIX threads)
if sys.platform == "win32":
    COMPILE_ARGS, LINK_ARGS = ["/O2", "/std:c11"], []
else:
    COMPILE_ARGS = ["-O3", "-std=gnu99", "-fno-strict-aliasing", "-pthread"]
    LINK_ARGS = ["-pthread"]


def make_builder(sources):
    builder = cffi.FFI()
    builder.cdef(CDEF)
    builder.set_source(
        "blosckit.native._native",
        '#include "blosckit_native.h"',
        sources=sources,
        include_dirs=[SRC_DIR],
        extra_compile_args=COMPILE_ARGS,
        # BLOSCKIT_NO_SIMD=1 builds the portable path only (what non-x86 gets)
        define_macros=[("BK_NO_SIMD", "1")] if os.environ.get("BLOSCKIT_NO_SIMD") else [],
        extra_link_args=LINK_ARGS,
    )
    return builder


# setuptools (cffi_modules) compiles from the project root: relative sources.
ffibuilder = make_builder([_rel(p) for p in SOURCES])

if __name__ == "__main__":
    import shutil
    import tempfile

    # In-place build: cffi compiles inside tmpdir, so give it absolute sources.
    tmp = tempfile.mkdtemp(prefix="blosckit-native-")
    try:
        so = make_builder(SOURCES).compile(tmpdir=tmp, verbose=False)
        for old in glob.glob(os.path.join(HERE, "_native*.so")) + glob.glob(
                os.path.join(HERE, "_native*.pyd")):
            os.remove(old)
        shutil.copy2(so, os.path.join(HERE, os.path.basename(so)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
