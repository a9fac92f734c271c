"""Coverage-guided fuzzing of blosckit with atheris (libFuzzer).

    pip install atheris
    python tests/fuzz/atheris_targets.py decompress CORPUS_DIR -max_total_time=60
    python tests/fuzz/atheris_targets.py open_frame CORPUS_DIR -max_total_time=60
    python tests/fuzz/atheris_targets.py validate CORPUS_DIR -max_total_time=60

Seed CORPUS_DIR with ``blosckit corpus CORPUS_DIR --count 500``.  The only
allowed outcome of any input is data or a FormatError (validate: never an
exception); anything else is a finding.  For the native library under
sanitizers, build it as tests/sanitize_run.py does (``-fsanitize=address,
undefined``) and run this script with that build first on the path.
"""
from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    import blosckit

CAP = 1 << 24          # bytes a hostile header may make a target allocate


def target_decompress(blob: bytes) -> None:
    try:
        blosckit.decompress(blob, max_nbytes=CAP)
    except blosckit.FormatError:
        pass


def target_open_frame(blob: bytes) -> None:
    try:
        with blosckit.open_frame(blob) as f:
            if f.nbytes <= CAP:
                f.decompress()
            f.vlmetalayers
    except blosckit.FormatError:
        pass


def target_validate(blob: bytes) -> None:
    for p in blosckit.validate(blob):
        assert 0 <= p.offset <= len(blob) and p.rule, p


TARGETS = {"decompress": target_decompress, "open_frame": target_open_frame,
           "validate": target_validate}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(TARGETS)}}} [libFuzzer args]")
    fn = TARGETS[sys.argv.pop(1)]
    atheris.Setup(sys.argv, lambda data: fn(bytes(data)))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
