"""Chapter 16, cross-attention: queries from one sequence, keys and values from another."""
import math

import torch

from ._compare import Case, close, mask, randn
from ._define import exercise


def _cross_ref(x, memory, W_q, W_k, W_v):
    q, k, v = x @ W_q, memory @ W_k, memory @ W_v
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return torch.softmax(s, dim=-1) @ v


def _cross_cases():
    cases = []
    for (B, T_q, T_k, d_x, d_m, d_k, d_v), seed in [((2, 3, 5, 4, 6, 4, 2), 1), ((1, 1, 7, 3, 3, 8, 3), 2),
                                                     ((2, 6, 2, 5, 4, 2, 5), 3)]:
        x, memory = randn(B, T_q, d_x, seed=seed), randn(B, T_k, d_m, seed=seed + 1)
        W = (randn(d_x, d_k, seed=seed + 2), randn(d_m, d_k, seed=seed + 3), randn(d_m, d_v, seed=seed + 4))
        cases.append(Case(f"cross_attention(x ({B}, {T_q}, {d_x}), memory ({B}, {T_k}, {d_m}), "
                          f"W_q ({d_x}, {d_k}), W_k ({d_m}, {d_k}), W_v ({d_m}, {d_v}))",
                          (x, memory, *W), _cross_ref(x, memory, *W), close()))
    return cases


exercise(
    "ch16.cross_attention", kind="write",
    en="Cross-attention: the decoder asks, the encoder's memory answers",
    es="Atención cruzada: el decodificador pregunta y la memoria del codificador responde",
    stub='''\
def cross_attention(x, memory, W_q, W_k, W_v):
    # x (B, T_q, d_x), memory (B, T_k, d_m), W_q (d_x, d_k), W_k (d_m, d_k), W_v (d_m, d_v)
    # -> (B, T_q, d_v);  q = x W_q, k = memory W_k, v = memory W_v, no mask
    raise NotImplementedError
''',
    solution='''\
def cross_attention(x, memory, W_q, W_k, W_v):
    q = x @ W_q                                                  # (B, T_q, d_k)
    k, v = memory @ W_k, memory @ W_v                            # (B, T_k, d_k), (B, T_k, d_v)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])    # (B, T_q, T_k)
    return torch.softmax(scores, dim=-1) @ v                     # (B, T_q, d_v)
''',
    cases=_cross_cases,
)


def _mask_ref(T_q, lengths, T_k):
    return (torch.arange(T_k)[None, None, :] < lengths[:, None, None]).expand(len(lengths), T_q, T_k)


def _mask_cases():
    return [Case(f"cross_mask(T_q={T_q}, memory_lengths=torch.tensor({lengths}), T_k={T_k})",
                 (T_q, torch.tensor(lengths), T_k), _mask_ref(T_q, torch.tensor(lengths), T_k), mask())
            for T_q, lengths, T_k in [(3, [5, 2], 5), (4, [4], 4), (1, [3, 1, 2], 3), (5, [2, 2], 3)]]


exercise(
    "ch16.cross_mask", kind="write",
    en="The mask of cross-attention over a padded memory",
    es="La máscara de la atención cruzada sobre una memoria con relleno",
    stub='''\
def cross_mask(T_q, memory_lengths, T_k):
    # memory_lengths (B,) int64 -> (B, T_q, T_k) bool
    raise NotImplementedError
''',
    solution='''\
def cross_mask(T_q, memory_lengths, T_k):
    real = torch.arange(T_k)[None, :] < memory_lengths[:, None]  # (B, T_k)
    return real[:, None, :].expand(-1, T_q, -1)                  # (B, T_q, T_k)
''',
    cases=_mask_cases,
)
