"""Forward time and peak memory of the package's attention against PyTorch's, on the CPU.

Run from the repository root: ``python bench/attention.py`` (a few minutes on 2 cores).

Setting: batch B=4, width d=768, h=12 heads (d_head=64), causal self-attention,
``torch.no_grad()``, modules in ``eval()`` mode, float32, one process.

Timed, for T in {256, 1024, 2048}:

* ``wrapper``: ``attn.MultiHeadAttentionWrapper(768, 64, T, 0.0, 12)``, twelve
  ``CausalAttention`` heads, each on its own ``scaled_dot_product_attention`` call;
* ``mha fused``: ``attn.MultiHeadAttention(768, 768, T, 0.0, 12, qkv_bias=True)``, the
  fast path (``torch.nn.functional.scaled_dot_product_attention(..., is_causal=True)``);
* ``mha explicit``: the same module with ``return_weights=True`` (scores, mask,
  softmax, weights ``(B, h, T, T)``);
* ``torch mask``: ``torch.nn.MultiheadAttention(768, 12, batch_first=True)`` with a
  boolean causal ``attn_mask`` and ``need_weights=False``;
* ``torch is_causal``: the same with ``is_causal=True`` as a hint next to the mask
  (``nn.MultiheadAttention`` requires the mask as well).

Both use biases in the input and output projections. Each time is the median of
several interleaved runs after one warm-up run; ``ratio`` is time / time of the fastest of the two
``torch`` rows (the reference). Two clocks: wall time (``time.perf_counter``), what a
user waits, and process CPU time summed over threads (``time.process_time``), which is
steadier when other programs share the cores.

Peak memory: measured with ``torch.profiler`` (``profile_memory=True``). Every tensor
allocation and free made by PyTorch's CPU allocator during one forward call is recorded
with its time stamp; the events are replayed in order and the running total's maximum
is the peak memory the call added on top of what existed before it (inputs and weights
are not counted). The script reads the allocation events from the profiler's event
tree (``kineto_results.experimental_event_tree()``, a semi-private API of PyTorch
2.13); if that API is missing it prints ``n/a``.
"""
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import attn  # noqa: E402
import attn.functional as AF  # noqa: E402
from bench import tiled  # noqa: E402

B, D, H = 4, 768, 12
LENGTHS = (256, 1024, 2048)
REPEATS = {256: 10, 1024: 5, 2048: 3}


def median_times(cases, repeats):
    """Median wall time and median process CPU time, in seconds, of each ``fn()`` in
    ``cases``, after one warm-up call.

    The runs are interleaved (one run of every case per round), so that a slow spell of
    the machine affects every case alike instead of one of them.
    """
    wall = {name: [] for name in cases}
    cpu = {name: [] for name in cases}
    for fn in cases.values():
        fn()
    for _ in range(repeats):
        for name, fn in cases.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            cpu[name].append(time.process_time() - start_cpu)
            wall[name].append(time.perf_counter() - start)
    return (
        {name: statistics.median(ts) for name, ts in wall.items()},
        {name: statistics.median(ts) for name, ts in cpu.items()},
    )


def peak_bytes(fn):
    """Peak bytes allocated by PyTorch on the CPU during ``fn()`` (see module docstring)."""
    try:
        from torch._C._profiler import _EventType
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            fn()
        events = []
        stack = list(prof.profiler.kineto_results.experimental_event_tree())
        while stack:
            node = stack.pop()
            if node.tag == _EventType.Allocation:
                events.append((node.start_time_ns, node.extra_fields.alloc_size))
            stack.extend(node.children)
    except (ImportError, AttributeError, RuntimeError):
        return None
    current = peak = 0
    for _, size in sorted(events):
        current += size
        peak = max(peak, current)
    return peak


def torch_reference(mha):
    """``torch.nn.MultiheadAttention`` with the weights of ``mha`` (same function)."""
    ref = torch.nn.MultiheadAttention(D, H, bias=True, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        ref.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        ref.out_proj.weight.copy_(mha.out_proj.weight)
        ref.out_proj.bias.copy_(mha.out_proj.bias)
    return ref.eval()


def bench(T):
    torch.manual_seed(0)
    x = torch.randn(B, T, D)
    wrapper = attn.MultiHeadAttentionWrapper(D, D // H, T, 0.0, H).eval()
    mha = attn.MultiHeadAttention(D, D, T, 0.0, H, qkv_bias=True).eval()
    ref = torch_reference(mha)
    not_allowed = ~AF.causal_mask(T)  # torch's bool attn_mask: True = may NOT attend
    cases = {
        "wrapper": lambda: wrapper(x),
        "mha fused": lambda: mha(x),
        "mha explicit": lambda: mha(x, return_weights=True),
        "torch mask": lambda: ref(x, x, x, attn_mask=not_allowed, need_weights=False),
        "torch is_causal": lambda: ref(x, x, x, attn_mask=not_allowed, need_weights=False, is_causal=True),
    }
    with torch.no_grad():
        # same function: the fused path agrees with torch before anything is timed
        diff = (mha(x) - cases["torch mask"]()[0]).abs().max().item()
        times, cpu_times = median_times(cases, REPEATS[T])
        fused_peak = peak_bytes(cases["mha fused"])
        explicit_peak = peak_bytes(cases["mha explicit"])
    return times, cpu_times, diff, fused_peak, explicit_peak


def mib(n):
    return "n/a" if n is None else f"{n / 2**20:9.1f}"


def main():
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, B={B}, d={D}, h={H}, float32, CPU")
    memory = []
    for T in LENGTHS:
        times, cpu_times, diff, fused_peak, explicit_peak = bench(T)
        best = min(times["torch mask"], times["torch is_causal"])
        best_cpu = min(cpu_times["torch mask"], cpu_times["torch is_causal"])
        print(f"\nT={T}  (median of {REPEATS[T]} runs; max |mha fused - torch| = {diff:.1e})")
        print(f"  {'':16s} {'wall ms':>10s} {'ratio':>7s} {'cpu ms':>10s} {'ratio':>7s}")
        for name, seconds in times.items():
            c = cpu_times[name]
            print(f"  {name:16s} {seconds * 1e3:10.1f} {seconds / best:7.2f} {c * 1e3:10.1f} {c / best_cpu:7.2f}")
        memory.append((T, fused_peak, explicit_peak))
    print("\npeak memory added by one forward call, MiB (torch.profiler allocation events)")
    print(f"  {'T':>6s} {'fused':>9s} {'explicit':>9s} {'ratio':>7s}")
    for T, fused_peak, explicit_peak in memory:
        ratio = "n/a" if not fused_peak or explicit_peak is None else f"{explicit_peak / fused_peak:7.1f}"
        print(f"  {T:6d} {mib(fused_peak)} {mib(explicit_peak)} {ratio:>7s}")


if __name__ == "__main__":
    main()
    tiled.main()  # attention in tiles (bench/tiled.py)
