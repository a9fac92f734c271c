"""The oracles cannot vanish silently: without one, the tests that compare
with it are skipped with a reason that names it, and under
``BLOSCKIT_REQUIRE_ORACLES=1`` (``.ci/run``) the run fails.  Proved on real
test modules run in a child pytest where the library cannot be imported."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from oracles import ORACLES, REQUIRE, oracle

ROOT = Path(__file__).resolve().parent.parent

# A python-blosc2 test module and python-blosc/python-blosc2 tests of a
# module that needs neither at import.
BLOSC2_MODULE = "tests/test_frame_build.py"
PARAMS = "tests/test_compress_params.py"
BLOSC_TEST = f"{PARAMS}::test_c_blosc1_refuses_a_delta_chunk_and_reads_the_plain_one"
BLOSC2_TEST = f"{PARAMS}::test_compat_chunk_reads_back_in_c_blosc2"
NO_ORACLE_TEST = f"{PARAMS}::test_blosc1_refuses_delta"


@pytest.mark.parametrize("name", sorted(set(ORACLES) - {"atheris"}))
def test_each_oracle(name):
    """One line per oracle in every run: passed, or skipped naming it
    (atheris, a tool of the fuzz extra, is asked for by its own tier)."""
    assert oracle(name).__name__ == name


def _start(blocked: str, require: bool, *args: str) -> subprocess.Popen:
    """pytest in a child in which ``import blocked`` raises ImportError
    (its sys.modules entry is None)."""
    code = (f"import sys; sys.modules[{blocked!r}] = None\n"
            "import pytest\n"
            "sys.exit(pytest.main(sys.argv[1:]))\n")
    env = {k: v for k, v in os.environ.items() if k != REQUIRE}
    if require:
        env[REQUIRE] = "1"
    # the modules run here need neither conftest.py (hypothesis profiles)
    # nor hypothesis's plugin: without them a session starts twice as fast
    return subprocess.Popen([sys.executable, "-c", code, "-p", "no:cacheprovider",
                             "-p", "no:hypothesispytest", "--noconftest", "-q", "-rs", *args],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[int, str]]:
    """The child sessions, run at once (each is mostly start-up)."""
    started = {
        "blosc2 required": _start("blosc2", True, BLOSC2_MODULE),
        "blosc2 missing": _start("blosc2", False, BLOSC2_MODULE, NO_ORACLE_TEST),
        "blosc missing": _start("blosc", False, BLOSC_TEST, BLOSC2_TEST),
    }
    return {k: (p.wait(timeout=600), p.stdout.read()) for k, p in started.items()}


def test_a_missing_oracle_fails_the_run_when_required(runs):
    code, out = runs["blosc2 required"]
    assert code != 0 and "error" in out.splitlines()[-1], out
    assert f"oracle {ORACLES['blosc2']} is not importable" in out and \
        f"{REQUIRE}=1 makes a missing oracle an error" in out, out


def test_a_missing_oracle_skips_its_tests_with_the_reason(runs):
    code, out = runs["blosc2 missing"]
    assert code == 0, out
    # the whole python-blosc2 module is one skip; the test that needs no oracle runs
    assert out.splitlines()[-1].startswith("1 passed, 1 skipped"), out
    assert f"oracle {ORACLES['blosc2']} is not importable" in out, out


def test_tests_of_one_oracle_do_not_need_the_other(runs):
    """Without python-blosc, a python-blosc2 test still runs."""
    code, out = runs["blosc missing"]
    assert code == 0, out
    assert out.splitlines()[-1].startswith("1 passed, 1 skipped"), out
    assert f"oracle {ORACLES['blosc']} is not importable" in out, out
