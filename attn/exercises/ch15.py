"""Chapter 15, positions today: RoPE and sliding windows, with and without a cache."""
import math

import torch

from ._compare import Case, Text, close, equal, mask, randn
from ._define import exercise
from ..ops import bias


def _rope_ref(x, positions, base=10000.0):
    d = x.shape[-1]
    out = x.clone()
    for t, p in enumerate(positions.tolist()):
        for i in range(d // 2):  # pair (i, i + d/2) turns by p * base^(-2i/d)
            a = p * base ** (-2 * i / d)
            x1, x2 = x[..., t, i], x[..., t, i + d // 2]
            out[..., t, i] = x1 * math.cos(a) - x2 * math.sin(a)
            out[..., t, i + d // 2] = x1 * math.sin(a) + x2 * math.cos(a)
    return out


def _rope_cases():
    cases = []
    for label, x, pos, base in [("x (2, 5, 8), positions = torch.arange(5)", randn(2, 5, 8, seed=1), torch.arange(5), None),
                                ("x (1, 2, 3, 6), positions = torch.tensor([7, 3, 0])", randn(1, 2, 3, 6, seed=2),
                                 torch.tensor([7, 3, 0]), None),
                                ("x (4, 16), positions = torch.arange(10, 14), base=500.0", randn(4, 16, seed=3),
                                 torch.arange(10, 14), 500.0),
                                ("x (1, 4), positions = torch.tensor([0])", randn(1, 4, seed=4), torch.tensor([0]), None)]:
        kw = {} if base is None else {"base": base}
        cases.append(Case(f"rope({label})", (x, pos), _rope_ref(x, pos, *( [base] if base else [])), close(),
                          kwargs=kw, hint=lambda got: Text("hint_rope_pairs")))
    return cases


exercise(
    "ch15.rope", kind="bug_hunt", source="https://github.com/raiyanyahya/how-to-train-your-gpt/issues/6",
    en="RoPE in the rotate-half convention: pairs and frequencies that match",
    es="RoPE con el convenio de girar por mitades: pares y frecuencias que se corresponden",
    stub='''\
def rope(x, positions, base=10000.0):
    # x (..., T, d), positions (T,) int64 -> (..., T, d)
    d = x.shape[-1]
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)      # (d/2,): theta_i
    angles = positions[:, None].to(x.dtype) * inv_freq                  # (T, d/2)
    emb = angles.repeat_interleave(2, dim=-1)                           # (T, d)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]                         # (..., T, d/2) each
    rotated = torch.cat((-x2, x1), dim=-1)                              # rotate_half(x)
    return x * emb.cos() + rotated * emb.sin()
''',
    solution='''\
def rope(x, positions, base=10000.0):
    d = x.shape[-1]
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)      # (d/2,): theta_i
    angles = positions[:, None].to(x.dtype) * inv_freq                  # (T, d/2)
    emb = torch.cat((angles, angles), dim=-1)                           # (T, d): pair (i, i + d/2)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]                         # (..., T, d/2) each
    rotated = torch.cat((-x2, x1), dim=-1)                              # rotate_half(x)
    return x * emb.cos() + rotated * emb.sin()
''',
    cases=_rope_cases,
)


def _window_ref(T_q, T_k, window):
    return bias.sliding_window_mask(T_k, window)[T_k - T_q:]  # the last T_q rows of the square mask


def _window_cases():
    cases = []
    for T_q, T_k, w in [(5, 5, 2), (3, 7, 3), (1, 9, 4), (5, 5, 1), (4, 4, 10), (2, 6, 6)]:
        want = _window_ref(T_q, T_k, w)

        def hint(got, T_q=T_q, T_k=T_k, w=w):
            near = [_window_ref(T_q, T_k, x) for x in (w - 1, w + 1) if x >= 1]
            return Text("hint_window_off_by_one", window=w) if any(equal(got, m) for m in near) else None
        cases.append(Case(f"sliding_window_mask(T_q={T_q}, T_k={T_k}, window={w})", (T_q, T_k, w), want, mask(),
                          hint=hint))
    return cases


exercise(
    "ch15.sliding_window_mask", kind="write",
    en="A sliding-window causal mask for queries that follow cached keys",
    es="Una máscara causal de ventana deslizante para consultas que siguen a claves en caché",
    stub='''\
def sliding_window_mask(T_q, T_k, window):
    # (T_q, T_k) bool, p = i + T_k - T_q
    # mask[i, j] = (j <= p) & (p - j < window)
    raise NotImplementedError
''',
    solution='''\
def sliding_window_mask(T_q, T_k, window):
    p = torch.arange(T_q)[:, None] + (T_k - T_q)  # (T_q, 1): p = i + T_k - T_q
    j = torch.arange(T_k)[None, :]                # (1, T_k)
    return (j <= p) & (p - j < window)            # (T_q, T_k)
''',
    cases=_window_cases,
)


def _cache_cases():
    cases = []
    for T, w, n in [(10, 4, 1), (10, 4, 3), (3, 4, 2), (12, 5, 5), (6, 2, 6)]:
        k = randn(2, T, 2, 3, seed=T * 10 + n)
        keep = w + n - 1
        cases.append(Case(f"window_cache(cache_k (2, {T}, 2, 3), window={w}, num_tokens={n})", (k, w, n),
                          k[:, max(0, T - keep):], close(),
                          hint=lambda got, n=n, w=w: Text("hint_cache_cut", T_q=n, window=w)))
    return cases


exercise(
    "ch15.window_cache", kind="bug_hunt", source="https://github.com/rasbt/LLMs-from-scratch/issues/1008",
    en="Trim a sliding-window cache without losing keys the new queries need",
    es="Recortar una caché de ventana deslizante sin perder claves que necesitan las consultas nuevas",
    stub='''\
def window_cache(cache_k, window, num_tokens):
    # cache_k (B, T, h, d): k_0 .. k_(T-1), k_(T-num_tokens) .. k_(T-1) new
    # -> (B, T', h, d): k_j, j >= T - num_tokens - window + 1
    return cache_k[:, -window:, :, :]
''',
    solution='''\
def window_cache(cache_k, window, num_tokens):
    # p_0 = T - num_tokens: k_j, j > p_0 - window
    return cache_k[:, -(window + num_tokens - 1):, :, :]
''',
    cases=_cache_cases,
)
