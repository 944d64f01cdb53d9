"""Test-suite settings shared by every test file.

Hypothesis runs derandomized: each run of the suite draws the same examples,
so a CI failure reproduces locally and a green run stays green.  Set
HYPOTHESIS_PROFILE=explore to draw fresh examples while hunting bugs.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
