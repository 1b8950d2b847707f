"""Chapter 12, cost and tiling: the log-sum-exp and merging partial attention."""
import math

import torch

from ._compare import Case, Text, close, randn
from ._define import exercise
from ..ops.tiled import merge_partial_attention


def _with_lse(q, k, v):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    lse = torch.logsumexp(s, dim=-1)
    return torch.exp(s - lse[..., None]) @ v, lse


def _lse_cases():
    names = ("output", "lse")
    return [Case(f"attention_lse({label})", (q, k, v), _with_lse(q.double(), k.double(), v.double()),
                 close(names=names, atol=1e-4), hint=lambda got: Text("hint_overflow"))
            for label, q, k, v in [
                ("q (3, 4), k (5, 4), v (5, 2)", randn(3, 4, seed=1), randn(5, 4, seed=2), randn(5, 2, seed=3)),
                ("q (2, 2, 1, 8), k (2, 2, 6, 8), v (2, 2, 6, 3)", randn(2, 2, 1, 8, seed=4),
                 randn(2, 2, 6, 8, seed=5), randn(2, 2, 6, 3, seed=6)),
                ("100 * q (2, 4), k (3, 4), v (3, 4), float32", 100 * randn(2, 4, seed=7, dtype=torch.float32),
                 randn(3, 4, seed=8, dtype=torch.float32), randn(3, 4, seed=9, dtype=torch.float32))]]


exercise(
    "ch12.attention_lse", kind="write",
    en="Attention that also returns the log-sum-exp of each row",
    es="Una atención que devuelve también el logaritmo de la suma de exponenciales de cada fila",
    stub='''\
def attention_lse(q, k, v):
    # q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v)
    # -> (o (..., T_q, d_v), lse (..., T_q)),  lse_i = ln sum_j exp(q_i . k_j / sqrt(d_k))
    raise NotImplementedError
''',
    solution='''\
def attention_lse(q, k, v):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])      # (..., T_q, T_k)
    lse = torch.logsumexp(s, dim=-1)                          # (..., T_q)
    return torch.softmax(s, dim=-1) @ v, lse                  # (..., T_q, d_v), (..., T_q)
''',
    cases=_lse_cases,
)


def _part(q, k, v):
    return _with_lse(q, k, v)


def _merge_cases():
    cases = []
    names = ("o", "lse")
    for label, scale, dtype, seed in [("q (2, 3, 4), k (2, 5 + 3, 4)", 1.0, torch.float64, 10),
                                      ("100 * q (3, 8), k (4 + 6, 8), float32", 100.0, torch.float32, 20),
                                      ("1000 * q (2, 4), k (5 + 2, 4), float64", 1000.0, torch.float64, 30)]:
        q = scale * randn(*([2, 3, 4] if seed == 10 else [3, 8] if seed == 20 else [2, 4]), seed=seed, dtype=dtype)
        T1, T2 = (5, 3) if seed == 10 else (4, 6) if seed == 20 else (5, 2)
        k = randn(*q.shape[:-2], T1 + T2, q.shape[-1], seed=seed + 1, dtype=dtype)
        v = randn(*q.shape[:-2], T1 + T2, 3, seed=seed + 2, dtype=dtype)
        o1, l1 = _part(q, k[..., :T1, :], v[..., :T1, :])
        o2, l2 = _part(q, k[..., T1:, :], v[..., T1:, :])
        want = merge_partial_attention([o1, o2], [l1, l2])
        cases.append(Case(f"merge_partial(o1, lse1, o2, lse2) [{label}]", (o1, l1, o2, l2), want,
                          close(names=names, atol=1e-4 if dtype == torch.float32 else 1e-6),
                          hint=lambda got: Text("hint_lse_overflow")))
    o1, o2 = randn(2, 3, seed=42, dtype=torch.float32), randn(2, 3, seed=43, dtype=torch.float32)
    l1, l2 = torch.tensor([0.0, 5.0]), torch.tensor([120.0, 5.0])
    cases.append(Case("merge_partial(o1, lse1 = [0, 5], o2, lse2 = [120, 5]), float32", (o1, l1, o2, l2),
                      merge_partial_attention([o1, o2], [l1, l2]), close(names=names, atol=1e-5),
                      hint=lambda got: Text("hint_lse_overflow")))
    o1, l1 = randn(2, 3, seed=40), torch.tensor([float("-inf"), 0.5], dtype=torch.float64)
    o1[0] = 0.0
    o2, l2 = randn(2, 3, seed=41), torch.tensor([1.5, -0.5], dtype=torch.float64)
    cases.append(Case("merge_partial(o1, lse1 = [-inf, 0.5], o2, lse2 = [1.5, -0.5])", (o1, l1, o2, l2),
                      merge_partial_attention([o1, o2], [l1, l2]), close(names=names)))
    return cases


exercise(
    "ch12.merge_partial", kind="bug_hunt", source="https://github.com/zhuzilin/ring-flash-attention/pull/30",
    en="Merge attention over two parts of the keys without overflowing",
    es="Combinar la atención sobre dos partes de las claves sin desbordamiento",
    stub='''\
def merge_partial(o1, lse1, o2, lse2):
    # o_p (..., T_q, d_v), lse_p (..., T_q) -> (o, lse) of p = 1, 2
    lse = lse1 + torch.log(1 + torch.exp(lse2 - lse1))              # (..., T_q)
    o = torch.exp(lse1 - lse)[..., None] * o1 + torch.exp(lse2 - lse)[..., None] * o2
    return o, lse
''',
    solution='''\
def merge_partial(o1, lse1, o2, lse2):
    lse = torch.logaddexp(lse1, lse2)                               # (..., T_q): ln(e^lse1 + e^lse2)
    o = torch.exp(lse1 - lse)[..., None] * o1 + torch.exp(lse2 - lse)[..., None] * o2
    return o, lse                                                   # (..., T_q, d_v), (..., T_q)
''',
    cases=_merge_cases,
)
