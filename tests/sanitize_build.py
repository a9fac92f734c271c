"""Building blosckit's native library under AddressSanitizer and
UndefinedBehaviorSanitizer, for ``tests/test_sanitizers.py`` and the atheris
harness (``tests/fuzz/atheris_targets.py --sanitize``).

An instrumented copy of ``blosckit.native._native`` is built from the same
sources and cdef (``blosckit/native/build_native.py``'s ``make_builder``)
into a directory, next to a copy of the ``blosckit`` package; a Python
process runs it with :func:`environment` (the interpreter is not
instrumented, so it gets the compiler's ASan runtime through ``LD_PRELOAD``).
"""
from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sysconfig

ROOT = pathlib.Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SAN_FLAGS = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
             "-fno-sanitize-recover=undefined", "-O1", "-g"]
# what a sanitizer (or a crash under one) writes to stderr
REPORT = re.compile(r"AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|"
                    r"runtime error:|==\d+==ERROR|SUMMARY: |DEADLYSIGNAL")

PROBE = r"""
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    char *volatile p = malloc(8);
    memset(p, 1, 8);
    int r = p[argc > 1 ? 8 : 7] - 1;   /* one past the end when given an argument */
    free(p);
    return r;
}
"""


def compiler() -> str:
    return (sysconfig.get_config_var("CC") or "cc").split()[0]


def asan_runtime(cc: str) -> str | None:
    """Path of the compiler's shared ASan runtime (gcc: libasan.so; clang:
    libclang_rt.asan-x86_64.so), or None."""
    for name in ("libasan.so", "libclang_rt.asan-x86_64.so"):
        try:
            out = subprocess.run([cc, f"-print-file-name={name}"], capture_output=True,
                                 text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None
        if out and os.path.isabs(out) and os.path.exists(out):
            return os.path.realpath(out)
    return None


def probe(tmp: pathlib.Path) -> str | None:
    """None when the compiler builds a sanitized program that runs clean and
    catches a heap overflow; else why not."""
    cc = shutil.which(compiler())
    if cc is None:
        return f"no C compiler ({compiler()!r} not found)"
    src, exe = tmp / "probe.c", tmp / "probe"
    src.write_text(PROBE)
    try:
        r = subprocess.run([cc, *SAN_FLAGS, str(src), "-o", str(exe)], capture_output=True,
                           text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        return f"{cc} could not run: {e}"
    if r.returncode != 0:
        return f"{cc} cannot build with {' '.join(SAN_FLAGS[:1])}: {r.stderr.strip()[-300:]}"
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    clean = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
    if clean.returncode != 0:
        return (f"a sanitized program does not run here (exit {clean.returncode}): "
                f"{clean.stderr.strip()[-300:]}")
    bad = subprocess.run([str(exe), "x"], capture_output=True, text=True, env=env, timeout=60)
    if bad.returncode == 0 or "heap-buffer-overflow" not in bad.stderr:
        return "AddressSanitizer does not report a heap overflow here"
    if asan_runtime(cc) is None:
        return f"{cc} has no shared ASan runtime to LD_PRELOAD into python"
    return None


def build(tmp: pathlib.Path, flags: list[str] | None = None,
          link_runtime: bool = True) -> pathlib.Path:
    """The blosckit package copied into tmp/pkg with a native module built
    with ``flags`` (default :data:`SAN_FLAGS`); returns tmp/pkg.  Without
    ``link_runtime`` the module does not name the compiler's sanitizer
    runtime: the process must preload one (atheris's, for coverage)."""
    flags = SAN_FLAGS if flags is None else flags
    spec = importlib.util.spec_from_file_location(
        "_bk_build_native", ROOT / "blosckit" / "native" / "build_native.py")
    bn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bn)
    builder = bn.make_builder(bn.SOURCES)
    # make_builder's own arguments, its -O level replaced by the sanitizer flags
    module, source, ext, kw = builder._assigned_source
    kw = dict(kw)
    kw["extra_compile_args"] = [a for a in kw.get("extra_compile_args", [])
                                if not a.startswith("-O")] + flags
    kw["extra_link_args"] = list(kw.get("extra_link_args", [])) + (flags if link_runtime else [])
    builder._assigned_source = (module, source, ext, kw)
    so = pathlib.Path(builder.compile(tmpdir=str(tmp / "build"), verbose=False))
    pkg = tmp / "pkg"
    shutil.copytree(ROOT / "blosckit", pkg / "blosckit",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__", "src"))
    shutil.copy2(so, pkg / "blosckit" / "native" / so.name)
    return pkg


def environment(pkg: pathlib.Path, *extra_path: pathlib.Path,
                runtime: str | None = None) -> dict[str, str]:
    """The environment of a process that runs the instrumented copy in
    ``pkg`` (from :func:`build`), preloading ``runtime`` (default: the
    compiler's ASan runtime)."""
    env = dict(os.environ)
    env.update(
        LD_PRELOAD=runtime or asan_runtime(shutil.which(compiler())) or "",
        # CPython leaks by design; a failed huge malloc is a MemoryError, not a report
        ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1",
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
        # every Python object through malloc: ASan redzones around them too
        PYTHONMALLOC="malloc",
        PYTHONPATH=os.pathsep.join(str(p) for p in (pkg, *extra_path)),
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env

