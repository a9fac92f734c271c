"""The native layer beyond this machine's compiler: the C sources build
without a warning for Linux x86-64 (GCC, Clang), Linux aarch64 (a cross
GCC), and Windows x64 (MinGW-w64 GCC, and the same with MSVC's
predefined ``_MSC_VER`` so that the MSVC branches of bk_port.h and cpu.c
compile: Interlocked atomics, ``_BitScanForward64``, the CPUID probe), and
``tests/c/port_check.c`` linked with them runs right on each: natively,
under wine, or under qemu-aarch64.  It checks what differs between those
targets: the vector levels against the scalar path, the bit scan in
BloscLZ, the thread pool, and the thread-exit release of kept state
(pthread keys, or FLS on Windows).

MSVC itself does not run here: ``_MSC_VER`` under MinGW's headers stands
in for it (an MSVC build is what the cibuildwheel Windows job does).
Long tier: each build takes seconds and wine starts slowly.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from blosckit import native
from oracles import tool

pytestmark = pytest.mark.long

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "blosckit" / "native" / "src"
CHECK = Path(__file__).resolve().parent / "c" / "port_check.c"
WARN = ["-O2", "-Wall", "-Wextra", "-Werror", f"-I{SRC}"]

# name -> (compiler, extra flags, runner or None for native, executable suffix)
TARGETS = {
    "linux-x86_64-gcc": ("gcc", ["-std=gnu99", "-pthread"], None, ""),
    "linux-x86_64-clang": ("clang", ["-std=gnu99", "-pthread"], None, ""),
    "linux-aarch64-gcc": ("aarch64-linux-gnu-gcc", ["-std=gnu99", "-pthread", "-static"],
                          "qemu-aarch64", ""),
    "windows-x64-mingw": ("x86_64-w64-mingw32-gcc", ["-std=gnu11", "-static"], "wine", ".exe"),
    # MSVC's branches: _MSC_VER set by hand; MinGW's inline CRT helpers then
    # come out as definitions in every object (hence allow-multiple), and
    # GCC wants the xsave target for _xgetbv, which MSVC does not
    "windows-x64-msvc-branches": ("x86_64-w64-mingw32-gcc",
                                  ["-std=gnu11", "-static", "-D_MSC_VER=1930", "-mxsave",
                                   "-Wl,--allow-multiple-definition"], "wine", ".exe"),
}


@pytest.mark.parametrize("target", list(TARGETS))
def test_port_check_builds_and_runs(target, tmp_path):
    cc, flags, runner, suffix = TARGETS[target]
    cc_path = tool(cc) if cc != "gcc" else "gcc"
    run_with = [tool(runner)] if runner else []
    exe = tmp_path / f"port_check{suffix}"
    sources = sorted(str(p) for p in SRC.glob("*.c"))
    build = subprocess.run([cc_path, *WARN, *flags, str(CHECK), *sources, "-o", str(exe)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-4000:]
    # a warning fails the build (-Werror); none may hide in the output
    assert "warning" not in build.stderr, build.stderr[-4000:]
    env = {"WINEDEBUG": "-all", "WINEPREFIX": str(tmp_path / "wine"), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([*run_with, str(exe)], capture_output=True, text=True, timeout=300,
                         env=env if runner == "wine" else None)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    lines = run.stdout.splitlines()
    assert lines[-1] == "port_check: ok", run.stdout
    assert any(ln.startswith("kept state: 4 contexts made") for ln in lines), run.stdout
    # the vector paths ran where the target has them: on x86 (wine runs on
    # this CPU) the levels this machine's build offers, on aarch64 none
    best = int(next(ln for ln in lines if ln.startswith("shuffles:")).rsplit(" ", 1)[1])
    assert best == (0 if "aarch64" in target else len(native.available_simd_levels()) - 1), \
        run.stdout
