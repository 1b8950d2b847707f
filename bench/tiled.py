"""Time and peak memory of attention in tiles against the fused and the explicit paths.

Run from the repository root: ``python bench/tiled.py`` (a few minutes on 2 cores);
``python bench/attention.py`` runs it as its last section.

Setting: one sequence (B=1), h=4 heads of d_head=64, float32, no mask, on the CPU,
under ``torch.no_grad()``; for T in {512, 1024, 2048, 4096}:

* ``fused``: ``attn.functional.scaled_dot_product_attention(q, k, v)``, one call to
  ``torch.nn.functional.scaled_dot_product_attention`` (the reference);
* ``tiled``: ``attn.functional.tiled_attention(q, k, v, block_size=128)``, plain
  PyTorch, one block of 128 keys at a time;
* ``explicit``: ``attn.functional.scaled_dot_product_attention(q, k, v,
  return_weights=True)``: scores, softmax and weights of shape ``(B, h, T, T)``.

Time: median wall time of a few interleaved calls after a warm-up, in this process;
``ratio`` is time / time of ``fused``.

Peak memory: each call runs in a fresh Python process (one per path and length), which
creates its inputs, then reads the resident set size (``VmRSS`` in ``/proc/self/status``),
resets the kernel's high-water mark of that process (``/proc/self/clear_refs``), makes the
call and reads the high-water mark again (``VmHWM``): the difference is the memory the
call added at its peak, inputs not counted. ``resource.getrusage(RUSAGE_SELF).ru_maxrss``
reports the same high-water mark but is never lowered, and a fresh process starts with
its parent's resident size (it is inherited across fork and exec), so a call smaller than
the parent would read as zero. The child runs with ``MALLOC_MMAP_THRESHOLD_`` fixed, so
that large blocks freed by one call are returned to the system before the next.
Linux only.
"""
import os
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
import attn.functional as AF  # noqa: E402
from attn import measure  # noqa: E402

H, D_HEAD, BLOCK = 4, 64, 128
LENGTHS = (512, 1024, 2048, 4096)
REPEATS = {512: 7, 1024: 5, 2048: 3, 4096: 3}
TARGET = 8  # at T=4096, explicit peak / tiled peak must be at least this

PATHS = measure.PATHS


def inputs(T, heads=H, d_head=D_HEAD, seed=0):
    """Random ``q, k, v`` of shape ``(1, heads, T, d_head)``, float32."""
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(1, heads, T, d_head, generator=g) for _ in range(3)]  # (B, h, T, d_head)


def times_ms(T, repeats, heads=H, d_head=D_HEAD, block=BLOCK, paths=tuple(PATHS)):
    """Median wall time in ms of each path at length ``T`` (:func:`attn.measure.times_ms`)."""
    return measure.times_ms(T, repeats, heads, d_head, block, paths, clock=time.perf_counter)


def peak_mib(cases, heads=H, d_head=D_HEAD, block=BLOCK):
    """Peak memory in MiB of each ``(path, T)`` call, in a fresh process (:func:`attn.measure.peak_mib`)."""
    return measure.peak_mib(cases, heads, d_head, block)


def main():
    print(f"\nattention in tiles: torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"B=1, h={H}, d_head={D_HEAD}, block_size={BLOCK}, float32, no mask, CPU")
    with torch.no_grad():
        q, k, v = inputs(1000)
        diff = (AF.tiled_attention(q, k, v, block_size=BLOCK) - AF.scaled_dot_product_attention(q, k, v))
        print(f"max |tiled - fused| at T=1000: {diff.abs().max().item():.1e}")
    print(f"  {'T':>5s} {'':9s} {'wall ms':>9s} {'ratio':>6s} {'peak MiB':>9s} {'ratio':>6s}")
    peaks = {}
    for T in LENGTHS:
        ms = times_ms(T, REPEATS[T])
        for name in PATHS:  # one fresh process per call
            peaks.update(peak_mib([(name, T)]))
        for name in PATHS:
            mem = peaks[name, T]
            print(f"  {T:5d} {name:9s} {ms[name]:9.1f} {ms[name] / ms['fused']:6.2f} "
                  f"{mem:9.1f} {mem / max(peaks['fused', T], 1e-3):6.1f}")
    ratio = peaks["explicit", 4096] / peaks["tiled", 4096]
    verdict = "ok" if ratio >= TARGET else "MISSED"
    print(f"at T=4096, explicit / tiled peak memory = {ratio:.1f} (target >= {TARGET}: {verdict})")
    return verdict == "ok"


if __name__ == "__main__":
    sys.exit(0 if main() else 1)  # a MISSED target fails the run
