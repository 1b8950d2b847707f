"""Time and peak memory of the three attention paths, as chapter 12 measures them.

The paths, on random ``q, k, v`` of shape ``(1, heads, T, d_head)`` in float32, without
gradients: ``"fused"`` (:func:`attn.functional.scaled_dot_product_attention`),
``"tiled"`` (:func:`attn.functional.tiled_attention`) and ``"explicit"`` (the same
function with ``return_weights=True``, which keeps the ``(T, T)`` scores).
The peak memory of a call is read in a fresh Python process (Linux only): the process's
high-water mark of resident memory, reset just before the call, minus its size then.
"""
import os
import re
import statistics
import subprocess
import sys
import time

import torch

from . import _checks
from .functional import scaled_dot_product_attention, tiled_attention

__all__ = ["times_ms", "peak_mib"]

PATHS = {
    "fused": lambda q, k, v, block: scaled_dot_product_attention(q, k, v),
    "tiled": lambda q, k, v, block: tiled_attention(q, k, v, block_size=block),
    "explicit": lambda q, k, v, block: scaled_dot_product_attention(q, k, v, return_weights=True),
}


def _inputs(T, heads, d_head, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(1, heads, T, d_head, generator=g) for _ in range(3)]  # (B, h, T, d_head)


def _check(heads, d_head, block, paths):
    _checks.sizes(heads=heads, d_head=d_head, block=block)
    for name in paths:
        if name not in PATHS:
            raise ValueError(f"paths must be names among {sorted(PATHS)}, got {name!r}")


def times_ms(T, repeats=3, heads=1, d_head=64, block=128, paths=tuple(PATHS), clock=time.thread_time):
    """Median time in ms of each path at length ``T``, calls interleaved after a warm-up.

    Args:
        T (int): sequence length.
        repeats (int): timed calls of each path; the median is kept.
        heads (int): number of heads :math:`h`.
        d_head (int): width of each head.
        block (int): ``block_size`` of the tiled path.
        paths (tuple): names among ``"fused"``, ``"tiled"``, ``"explicit"``.
        clock (callable): seconds; by default the CPU time of the calling thread, which
            leaves out other programs (run PyTorch on one thread with it).

    Returns:
        dict: ``{path: ms}``.
    """
    _checks.sizes(T=T, repeats=repeats)
    _check(heads, d_head, block, paths)
    q, k, v = _inputs(T, heads, d_head)
    runs = {name: [] for name in paths}
    with torch.no_grad():
        for name in paths:
            PATHS[name](q, k, v, block)
        for _ in range(repeats):
            for name in paths:
                start = clock()
                PATHS[name](q, k, v, block)
                runs[name].append(clock() - start)
    return {name: 1e3 * statistics.median(ts) for name, ts in runs.items()}


def peak_mib(cases, heads=1, d_head=64, block=128):
    """Peak memory in MiB that each ``(path, T)`` call adds, its inputs not counted.

    Args:
        cases (list): ``(path, T)`` pairs, run one after the other in one new process.
        heads (int): number of heads :math:`h`.
        d_head (int): width of each head.
        block (int): ``block_size`` of the tiled path.

    Returns:
        dict: ``{(path, T): MiB}``.
    """
    cases = list(cases)
    _check(heads, d_head, block, [name for name, _ in cases])
    for _, T in cases:
        _checks.positive_int("T", T)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072", "PYTHONPATH": path}
    args = [f"{name}:{T}" for name, T in cases]
    cmd = [sys.executable, "-m", "attn.measure", str(heads), str(d_head), str(block), *args]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    return {(name, int(T)): float(mib) for name, T, mib in (line.split() for line in out.splitlines())}


def _kib(field):
    with open("/proc/self/status") as f:
        return int(re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M)[1])


def _child(heads, d_head, block, cases):
    """In the fresh process: one line ``path T MiB`` per case."""
    torch.set_grad_enabled(False)
    for fn in PATHS.values():  # a first call loads kernels and libraries: not measured
        fn(*_inputs(2 * block, heads, d_head), block)
    for case in cases:
        name, T = case.split(":")
        q, k, v = _inputs(int(T), heads, d_head)
        before = _kib("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # the high-water mark starts again from the current size
        out = PATHS[name](q, k, v, block)
        peak = _kib("VmHWM") - before
        del out
        print(name, T, f"{peak / 1024:.2f}", flush=True)


if __name__ == "__main__":
    _child(*map(int, sys.argv[1:4]), sys.argv[4:])
