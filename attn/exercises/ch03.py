"""Chapter 3, trainable weights: scaled dot-product attention and self-attention."""
import math

import torch

from ._compare import Case, Text, close, near, randn
from ._define import exercise


def _attention(q, k, v):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    w = (s - s.amax(-1, keepdim=True)).exp()
    w = w / w.sum(-1, keepdim=True)
    return w @ v, w


def _attention_hint(q, k):
    def hint(got):
        w = got[1]
        if w.shape != (*q.shape[:-1], k.shape[-2]):
            return None
        if near(w.sum(-1), torch.ones(w.shape[:-1], dtype=torch.float64), 1e-6) is False:
            return Text("hint_softmax_axis")
        return Text("hint_scale", d_k=q.shape[-1])
    return hint


def _attention_cases():
    cases = []
    names = ("context", "weights")
    for label, (q, k, v) in [
        ("q (3, 4), k (5, 4), v (5, 6)", (randn(3, 4, seed=1), randn(5, 4, seed=2), randn(5, 6, seed=3))),
        ("q (2, 2, 4, 8), k (2, 2, 4, 8), v (2, 2, 4, 8)",
         (randn(2, 2, 4, 8, seed=4), randn(2, 2, 4, 8, seed=5), randn(2, 2, 4, 8, seed=6))),
        ("q (1, 3), k (1, 3), v (1, 2)", (randn(1, 3, seed=7), randn(1, 3, seed=8), randn(1, 2, seed=9))),
        ("q (2, 16), k (7, 16), v (7, 3)",
         (randn(2, 16, seed=10), randn(7, 16, seed=11), randn(7, 3, seed=12))),
        ("100 * q (3, 4), k (6, 4), v (6, 2)",
         (100 * randn(3, 4, seed=13), randn(6, 4, seed=14), randn(6, 2, seed=15))),
    ]:
        cases.append(Case(f"attention({label})", (q, k, v), _attention(q, k, v),
                          close(names=names), hint=_attention_hint(q, k)))
    return cases


exercise(
    "ch03.attention", kind="write",
    en="Scaled dot-product attention: context vectors and weights",
    es="Atención de producto escalar escalado: vectores de contexto y pesos",
    stub='''\
def attention(q, k, v):
    # q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v)
    # -> (context (..., T_q, d_v), weights (..., T_q, T_k))
    # weights = softmax_j(q k^T / sqrt(d_k))
    raise NotImplementedError
''',
    solution='''\
def attention(q, k, v):
    # q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v)
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5      # (..., T_q, T_k)
    weights = torch.softmax(scores, dim=-1)                     # (..., T_q, T_k)
    return weights @ v, weights                                 # (..., T_q, d_v), (..., T_q, T_k)
''',
    cases=_attention_cases,
)


def _self_attention(x, W_q, W_k, W_v):
    return _attention(x @ W_q, x @ W_k, x @ W_v)[0]


def _self_attention_cases():
    cases = []
    for label, shapes, seed in [("x (6, 3), W (3, 2)", ((6, 3), (3, 2)), 20),
                                ("x (2, 5, 4), W (4, 3)", ((2, 5, 4), (4, 3)), 30),
                                ("x (1, 4), W (4, 4)", ((1, 4), (4, 4)), 40)]:
        x = randn(*shapes[0], seed=seed)
        Ws = [randn(*shapes[1], seed=seed + i) for i in (1, 2, 3)]
        cases.append(Case("self_attention(" + label.replace('W ', 'W_q = W_k = W_v ') + ")", (x, *Ws), _self_attention(x, *Ws),
                          close()))
    x = randn(5, 3, seed=50)
    W_q, W_k, W_v = randn(3, 4, seed=51), randn(3, 4, seed=52), randn(3, 2, seed=53)
    cases.append(Case("self_attention(x (5, 3), W_q (3, 4), W_k (3, 4), W_v (3, 2))",
                      (x, W_q, W_k, W_v), _self_attention(x, W_q, W_k, W_v), close()))
    return cases


exercise(
    "ch03.self_attention", kind="write",
    en="Self-attention with trainable weights: project, then attend",
    es="Autoatención con pesos entrenables: proyectar y después atender",
    stub='''\
def self_attention(x, W_q, W_k, W_v):
    # x (..., T, d_in), W_q, W_k (d_in, d_k), W_v (d_in, d_v) -> (..., T, d_v)
    # q = x W_q, k = x W_k, v = x W_v;  softmax(q k^T / sqrt(d_k)) v
    raise NotImplementedError
''',
    solution='''\
def self_attention(x, W_q, W_k, W_v):
    q, k, v = x @ W_q, x @ W_k, x @ W_v                         # (..., T, d_k), (..., T, d_k), (..., T, d_v)
    scores = q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5       # (..., T, T)
    return torch.softmax(scores, dim=-1) @ v                    # (..., T, d_v)
''',
    cases=_self_attention_cases,
)
