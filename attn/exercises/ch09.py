"""Chapter 9, what heads learn: two summaries of a head's attention weights."""
import math

import torch

from ._compare import Case, close, randn
from ._define import exercise


def _rows(*shape, seed):
    return torch.softmax(2 * randn(*shape, seed=seed), dim=-1)


def _onehot():
    w = torch.zeros(3, 4, dtype=torch.float64)
    w[0, 0] = w[1, 0] = w[2, 3] = 1.0
    return w


def _entropy_ref(w):
    out = torch.zeros(w.shape[:-1], dtype=torch.float64)
    flat, res = w.reshape(-1, w.shape[-1]), out.reshape(-1)
    for r in range(flat.shape[0]):
        res[r] = -sum(p * math.log(p) for p in flat[r].tolist() if p > 0)  # 0 log 0 = 0
    return res.reshape(out.shape)


def _entropy_cases():
    return [Case(f"attention_entropy({label})", (w,), _entropy_ref(w), close())
            for label, w in [("weights (2, 5, 5)", _rows(2, 5, 5, seed=1)),
                             ("weights (3, 4), w[0, 0] = w[1, 0] = w[2, 3] = 1", _onehot()),
                             ("weights = torch.full((2, 8), 1/8)", torch.full((2, 8), 1 / 8, dtype=torch.float64)),
                             ("weights (1, 2, 3, 6)", _rows(1, 2, 3, 6, seed=2))]]


exercise(
    "ch09.attention_entropy", kind="write",
    en="How spread out a head looks: the entropy of each row of weights",
    es="Cuánto reparte su atención una cabeza: la entropía de cada fila de pesos",
    stub='''\
def attention_entropy(weights):
    # weights (..., T_q, T_k), sum_j w_ij = 1 -> (..., T_q)
    # H_i = -sum_j w_ij ln w_ij,  0 ln 0 = 0
    raise NotImplementedError
''',
    solution='''\
def attention_entropy(weights):
    terms = weights * torch.log(weights)          # (..., T_q, T_k); 0 * -inf = NaN
    return -terms.nan_to_num(0.0).sum(dim=-1)     # (..., T_q)
''',
    cases=_entropy_cases,
)


def _distance_ref(w):
    T = w.shape[-1]
    i = torch.arange(T, dtype=torch.float64)
    return (w * (i[:, None] - i[None, :]).abs()).sum(-1)  # sum_j w_ij |i - j|


def _distance_cases():
    causal = torch.softmax(randn(2, 6, 6, seed=3).masked_fill(~torch.ones(6, 6, dtype=torch.bool).tril(), -1e9), -1)
    return [Case(f"mean_distance({label})", (w,), _distance_ref(w), close())
            for label, w in [("weights (2, 5, 5)", _rows(2, 5, 5, seed=4)),
                             ("weights (2, 6, 6), tril", causal),
                             ("weights = torch.eye(4)", torch.eye(4, dtype=torch.float64)),
                             ("weights (1, 1)", torch.ones(1, 1, dtype=torch.float64))]]


exercise(
    "ch09.mean_distance", kind="write",
    en="How far back a head looks: the mean distance of each row",
    es="A qué distancia mira una cabeza: la distancia media de cada fila",
    stub='''\
def mean_distance(weights):
    # weights (..., T, T) -> (..., T);  d_i = sum_j w_ij |i - j|
    raise NotImplementedError
''',
    solution='''\
def mean_distance(weights):
    pos = torch.arange(weights.shape[-1])                         # (T,)
    dist = (pos[:, None] - pos[None, :]).abs().to(weights.dtype)  # (T, T): |i - j|
    return (weights * dist).sum(dim=-1)                           # (..., T)
''',
    cases=_distance_cases,
)
