"""Speed and memory of the package's attention against the best PyTorch can do, on the CPU.

Run from the repository root: ``python bench/attention.py`` (several minutes on 2 cores),
or name sections to run only those: ``python bench/attention.py speed memory``.
Each section prints its own table; ``SECTIONS`` at the end of this file lists them.

Setting of ``speed`` and ``memory``: batch B=4, width d=768, h=12 heads (d_head=64),
causal self-attention, float32, under ``torch.inference_mode()``, modules in ``eval()``
mode, biases in every projection, one process; T in {256, 1024, 2048}.

The floor, what a user after speed would pick in PyTorch (both compute the same
function as the package's ``MultiHeadAttention``, with its weights):

* ``torch MHA``: ``torch.nn.MultiheadAttention(768, 12, batch_first=True)`` on its fast
  path: inference mode, ``need_weights=False``, a float causal mask with
  ``is_causal=True`` (the module requires the mask as well as the hint);
* ``torch proj+SDPA``: its projections (``F.linear``) around one call of
  ``F.scaled_dot_product_attention(q, k, v, is_causal=True)``.

``ratio`` is time / time of the fastest of the two (so 1.00 is PyTorch's best).
The package's rows:

* ``attn fused``: ``attn.MultiHeadAttention(768, 768, T, 0.0, 12, qkv_bias=True)``,
  its fast path (``scaled_dot_product_attention`` with ``is_causal=True``);
* ``attn explicit``: the same module with ``return_weights=True`` (scores, mask,
  softmax, weights ``(B, h, T, T)``);
* ``attn wrapper``: ``attn.MultiHeadAttentionWrapper(768, 64, T, 0.0, 12)``, twelve
  ``CausalAttention`` heads, one attention call each (no output projection).

One slower configuration is kept as a reference, marked ``*``: ``nn.MultiheadAttention``
given a boolean causal mask, which sends it down its slow path.

Time: the median of several interleaved runs after one warm-up run, on two clocks: wall
time (``time.perf_counter``), what a user waits, and process CPU time summed over threads
(``time.process_time``), which is steadier when other programs share the cores.

Peak memory (``memory``): ``torch.profiler`` (``profile_memory=True``) records every tensor
allocation and free that PyTorch's CPU allocator makes during one forward call; the events
are replayed in order and the running total's maximum is the peak memory the call added
(inputs and weights not counted). The events come from the profiler's event tree
(``kineto_results.experimental_event_tree()``, a semi-private API of PyTorch 2.13); if
that API is missing the table says ``n/a``. The profiler's own log lines go to
``/dev/null``.
"""
import contextlib
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
import attn  # noqa: E402
from bench import decode, tiled  # noqa: E402

B, D, H = 4, 768, 12
LENGTHS = (256, 1024, 2048)
REPEATS = {256: 10, 1024: 5, 2048: 3}
FLOOR = ("torch MHA", "torch proj+SDPA")  # PyTorch's best: the ratios' denominator
REFERENCE_ONLY = "*"  # marks a slower PyTorch configuration, shown for reference
TOLERANCE = dict(rtol=1e-4, atol=1e-4)  # float32, sums over 768 terms


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


@contextlib.contextmanager
def stderr_to_devnull():
    """Send file descriptor 2 to ``/dev/null`` for a while.

    The profiler's C++ side logs ``profiler_start``/``profiler_stop`` lines there, out of
    reach of ``contextlib.redirect_stderr`` (which only swaps ``sys.stderr``).
    """
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def peak_bytes(fn):
    """Peak bytes allocated by PyTorch on the CPU during ``fn()`` (see module docstring)."""
    try:
        from torch._C._profiler import _EventType
        from torch.profiler import ProfilerActivity, profile

        with stderr_to_devnull(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
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


def torch_twin(mha):
    """``torch.nn.MultiheadAttention`` with the weights of ``mha`` (the same function)."""
    ref = torch.nn.MultiheadAttention(D, H, bias=True, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        ref.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        ref.out_proj.weight.copy_(mha.out_proj.weight)
        ref.out_proj.bias.copy_(mha.out_proj.bias)
    return ref.eval()


def proj_sdpa(x, ref):
    """The projections of ``ref`` around ``F.scaled_dot_product_attention(is_causal=True)``."""
    b, t, d = x.shape
    qkv = F.linear(x, ref.in_proj_weight, ref.in_proj_bias)  # (B, T, d) -> (B, T, 3d)
    q, k, v = qkv.view(b, t, 3, H, d // H).permute(2, 0, 3, 1, 4)  # -> 3 x (B, h, T, d_head)
    z = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, h, T, d_head)
    z = z.transpose(1, 2).reshape(b, t, d)  # (B, h, T, d_head) -> (B, T, d)
    return F.linear(z, ref.out_proj.weight, ref.out_proj.bias)


def cases(T):
    """The calls compared at length ``T``, by row name, after checking they agree."""
    torch.manual_seed(0)
    x = torch.randn(B, T, D)  # (B, T, d)
    mha = attn.MultiHeadAttention(
        d_in=D, d_out=D, context_length=T, dropout=0.0, num_heads=H, qkv_bias=True
    ).eval()
    wrapper = attn.MultiHeadAttentionWrapper(
        d_in=D, d_out=D // H, context_length=T, dropout=0.0, num_heads=H
    ).eval()
    ref = torch_twin(mha)
    blocked = torch.ones(T, T, dtype=torch.bool).triu(1)  # torch's convention: True = masked
    float_mask = torch.zeros(T, T).masked_fill(blocked, float("-inf"))
    calls = {
        "torch MHA": lambda: ref(x, x, x, attn_mask=float_mask, is_causal=True, need_weights=False)[0],
        "torch proj+SDPA": lambda: proj_sdpa(x, ref),
        "attn fused": lambda: mha(x),
        "attn explicit": lambda: mha(x, return_weights=True),
        "attn wrapper": lambda: wrapper(x),
        f"torch MHA bool mask{REFERENCE_ONLY}": lambda: ref(x, x, x, attn_mask=blocked, need_weights=False)[0],
    }
    with torch.inference_mode():
        fused = mha(x)
        for name in (*FLOOR, f"torch MHA bool mask{REFERENCE_ONLY}"):
            torch.testing.assert_close(calls[name](), fused, **TOLERANCE, msg=lambda m, n=name: f"{n}: {m}")
    return calls


def header():
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, B={B}, d={D}, h={H}, "
          "causal, float32, CPU, inference mode")


def speed():
    """Forward time of each row, as a ratio to PyTorch's best (``FLOOR``)."""
    print("\nspeed: forward time; ratio = time / fastest of the floor rows (PyTorch's best)")
    header()
    for T in LENGTHS:
        calls = cases(T)
        with torch.inference_mode():
            wall, cpu = median_times(calls, REPEATS[T])
        best, best_cpu = min(wall[n] for n in FLOOR), min(cpu[n] for n in FLOOR)
        print(f"\n  T={T}  (median of {REPEATS[T]} runs; every output within rtol={TOLERANCE['rtol']}, "
              f"atol={TOLERANCE['atol']} of attn fused)")
        print(f"  {'':22s} {'wall ms':>10s} {'ratio':>7s} {'cpu ms':>10s} {'ratio':>7s}")
        for name in calls:
            w, c = wall[name], cpu[name]
            print(f"  {name:22s} {w * 1e3:10.1f} {w / best:7.2f} {c * 1e3:10.1f} {c / best_cpu:7.2f}")
    print(f"\n  {REFERENCE_ONLY} a slower PyTorch configuration, for reference only: a boolean mask "
          "sends nn.MultiheadAttention down its slow path.")


def memory():
    """Peak memory one forward call adds: the fused paths against the explicit one."""
    rows = ("torch proj+SDPA", "attn fused", "attn explicit")
    print("\nmemory: peak MiB added by one forward call (torch.profiler allocation events);")
    print(f"ratio = peak / peak of {rows[0]}")
    header()
    print(f"  {'T':>6s} " + " ".join(f"{name:>16s} {'ratio':>6s}" for name in rows))
    for T in LENGTHS:
        calls = cases(T)
        with torch.inference_mode():
            peaks = {name: peak_bytes(calls[name]) for name in rows}
        base = peaks[rows[0]]
        cells = []
        for name in rows:
            peak = peaks[name]
            ratio = "n/a" if peak is None or not base else f"{peak / base:.1f}"
            cells.append(f"{'n/a' if peak is None else f'{peak / 2**20:.1f}':>16s} {ratio:>6s}")
        print(f"  {T:6d} " + " ".join(cells))


# The sections, in order: each prints its own table. A benchmark in another file of
# bench/ joins by adding its function here (``python bench/attention.py NAME`` runs one).
SECTIONS = {
    "speed": speed,
    "memory": memory,
    "tiled": tiled.main,  # attention in tiles (bench/tiled.py)
    "decode": decode.main,  # greedy decoding with and without the KV cache (bench/decode.py)
}


def main(names):
    """Run the sections named (all by default); return False when a section's target was MISSED."""
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        sys.exit(f"unknown section(s) {unknown}; choose from {list(SECTIONS)}")
    results = [SECTIONS[name]() for name in names or SECTIONS]  # None: a section without a target
    return all(r is not False for r in results)


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv[1:]) else 1)  # a MISSED target fails the run
