"""Shared test settings: a small, deterministic hypothesis profile (fast on 2 cores).

The tests' tensors are tiny: one PyTorch thread computes them as fast as several, and
on a busy machine much faster (no threads waiting for each other's turn on a core).
Processes the tests start (the book build) keep PyTorch's default.
"""
import os

import torch
from hypothesis import HealthCheck, settings

torch.set_num_threads(1)

settings.register_profile(
    "attn",
    max_examples=15,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "attn"))
