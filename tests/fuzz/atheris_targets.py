"""Coverage-guided fuzzing of blosckit with atheris (libFuzzer).

    pip install atheris
    blosckit corpus CORPUS_DIR --count 500
    python tests/fuzz/atheris_targets.py decompress CORPUS_DIR -max_total_time=60
    python tests/fuzz/atheris_targets.py open_frame CORPUS_DIR -max_total_time=60
    python tests/fuzz/atheris_targets.py validate CORPUS_DIR -max_total_time=60
    python tests/fuzz/atheris_targets.py salvage CORPUS_DIR -max_total_time=60
    python tests/fuzz/atheris_targets.py readers CORPUS_DIR -max_total_time=60

``--sanitize`` (before the target) first builds blosckit's native library
with ``-fsanitize=address`` into a temporary directory
(``tests/sanitize_build.py``, as ``tests/test_sanitizers.py`` does) and runs
the fuzzer on that build with atheris's ASan runtime preloaded (it carries
libFuzzer's coverage hooks, so the fuzzer stays coverage-guided): a memory
error in the C code then stops the run with a sanitizer report.  It exits
with the reason when the compiler cannot build sanitized code.  The
``manifest.json`` a corpus directory holds is not an input; libFuzzer reads
it anyway, which does no harm.

The only allowed outcome of any input is data or a FormatError (validate:
never an exception; salvage: FormatError or an output validate finds no
error in); anything else is a finding, saved by libFuzzer as
``crash-<sha1>`` in the working directory.  ``readers`` runs every reader
and tool of blosckit on the input (:func:`blosckit.testing.readers.every_reader`:
the frame and array readers, validate, inspect, scan, salvage), each under
an address-space bound of what the input's header and ``max_nbytes``
allow (not under ``--sanitize``: AddressSanitizer's shadow memory and an
address-space limit do not mix), and fails on any slip.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

CAP = 1 << 24          # bytes a hostile header may make a target allocate
TARGETS = ("decompress", "open_frame", "validate", "salvage", "readers")
SANITIZED = "BLOSCKIT_SANITIZED_BUILD"      # set in the re-executed process


def target_decompress(blob: bytes) -> None:
    import blosckit
    try:
        blosckit.decompress(blob, max_nbytes=CAP)
    except blosckit.FormatError:
        pass


def target_open_frame(blob: bytes) -> None:
    import blosckit
    try:
        with blosckit.open_frame(blob) as f:
            f.vlmetalayers
            f.decompress(max_nbytes=CAP)
            if f.b2nd is not None:
                f.b2nd.read(max_nbytes=CAP)
    except blosckit.FormatError:
        pass


def target_validate(blob: bytes) -> None:
    import blosckit
    for p in blosckit.validate(blob):
        assert 0 <= p.offset <= len(blob) and p.rule, p


def target_salvage(blob: bytes) -> None:
    import blosckit
    try:
        out, _ = blosckit.salvage(blob)
    except blosckit.FormatError:
        return
    errors = [p for p in blosckit.validate(out) if p.severity == "error"]
    assert not errors, errors


def target_readers(blob: bytes) -> None:
    from blosckit.testing.readers import every_reader
    slips = every_reader(blob, max_nbytes=CAP, bound_memory=SANITIZED not in os.environ).slips
    assert not slips, slips


def _sanitized_exec(argv: list[str]) -> None:
    """Build the instrumented copy and replace this process with the same
    command run on it (never returns)."""
    tests = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(tests))
    import atheris
    from sanitize_build import SAN_FLAGS, build, environment, probe
    tmp = Path(tempfile.mkdtemp(prefix="blosckit-asan-"))
    why = probe(tmp)
    if why is not None:
        sys.exit(f"--sanitize: no usable sanitizers here: {why}")
    # atheris's ASan runtime carries libFuzzer's coverage hooks: preloading
    # the compiler's instead would blind the fuzzer.  It has no UBSan
    # handlers, so AddressSanitizer only (tests/test_sanitizers.py runs both).
    runtime = Path(atheris.path()) / "asan_with_fuzzer.so"
    flags = [f.replace("address,undefined", "address") for f in SAN_FLAGS
             if "sanitize-recover=undefined" not in f]
    pkg = build(tmp, flags, link_runtime=False)
    env = environment(pkg, runtime=str(runtime))
    env[SANITIZED] = str(pkg)
    print(f"--sanitize: instrumented build in {pkg}", file=sys.stderr)
    os.execve(sys.executable, [sys.executable, __file__, *argv], env)


def main() -> None:
    argv = sys.argv[1:]
    sanitize = "--sanitize" in argv
    argv = [a for a in argv if a != "--sanitize"]
    if not argv or argv[0] not in TARGETS:
        sys.exit(f"usage: {sys.argv[0]} [--sanitize] {{{','.join(TARGETS)}}} "
                 "[CORPUS_DIR] [libFuzzer options]")
    if sanitize and SANITIZED not in os.environ:
        _sanitized_exec(argv)
    import atheris
    with atheris.instrument_imports():
        import blosckit
    if SANITIZED in os.environ:
        # the run must really use the instrumented library
        native = Path(sys.modules["blosckit.native._native"].__file__).resolve()
        assert native.parent == (Path(os.environ[SANITIZED]) / "blosckit" / "native").resolve(), \
            native
        print(f"sanitized native library: {native}", file=sys.stderr)
    del blosckit
    fn = globals()[f"target_{argv[0]}"]
    atheris.Setup([sys.argv[0], *argv[1:]], lambda data: fn(bytes(data)))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
