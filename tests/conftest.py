"""Hypothesis profiles: ``ci`` (default: fast, derandomized) and ``long``
(select with ``--hypothesis-profile=long`` for deep runs)."""
import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, derandomize=True, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "long", max_examples=3000, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("BLOSCKIT_HYPOTHESIS_PROFILE", "ci"))
