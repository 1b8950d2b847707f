"""Shared test settings: a small, deterministic hypothesis profile (fast on 2 cores)."""
import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "attn",
    max_examples=15,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "attn"))
