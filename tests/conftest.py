"""Hypothesis profiles: ``ci`` (default: fast, derandomized) and ``long``
(select with ``--hypothesis-profile=long`` for deep runs); compiled
modules kept for the run's child interpreters."""
import os
import sys

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, derandomize=True, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "long", max_examples=3000, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("BLOSCKIT_HYPOTHESIS_PROFILE", "ci"))

# Hundreds of tests start a child interpreter (the CLI, the oracles); with
# PYTHONDONTWRITEBYTECODE each would compile blosckit (and these test
# modules) from source again.  The run keeps bytecode in __pycache__ as
# Python does by default.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
