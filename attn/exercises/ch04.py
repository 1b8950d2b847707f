"""Chapter 4, scaling: the width d_k, and what wide scores do to the softmax."""
import math

import torch

from ._compare import Case, Text, close, randn
from ._define import exercise


def _scaled_cases():
    cases = []
    for label, q, k in [("q (8, 16), k (8, 16)", randn(8, 16, seed=1), randn(8, 16, seed=2)),
                        ("q (2, 3, 4), k (2, 5, 4)", randn(2, 3, 4, seed=3), randn(2, 5, 4, seed=4)),
                        ("q (1, 64), k (4, 64)", randn(1, 64, seed=5), randn(4, 64, seed=6))]:
        want = torch.einsum("...id,...jd->...ij", q, k) / math.sqrt(q.shape[-1])
        cases.append(Case(f"scaled_scores({label})", (q, k), want, close(),
                          hint=lambda got, d=q.shape[-1]: Text("hint_scale", d_k=d)))
    return cases


exercise(
    "ch04.scaled_scores", kind="write",
    en="Scores divided by the square root of the width d_k",
    es="Puntuaciones divididas entre la raíz cuadrada de la dimensión d_k",
    stub='''\
def scaled_scores(q, k):
    # q (..., T_q, d_k), k (..., T_k, d_k) -> (..., T_q, T_k)
    # s_ij = q_i . k_j / sqrt(d_k)
    raise NotImplementedError
''',
    solution='''\
def scaled_scores(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])    # (..., T_q, T_k)
''',
    cases=_scaled_cases,
)


def _softmax_ref(x):
    m = x.amax(-1, keepdim=True).clamp(min=torch.finfo(x.dtype).min)
    e = (x - m).exp()
    return e / e.sum(-1, keepdim=True)


def _softmax_cases():
    cases = []
    for label, x in [("x (2, 5), float32", randn(2, 5, seed=1, dtype=torch.float32)),
                     ("100 * x (2, 5), float32",
                      100 * randn(2, 5, seed=2, dtype=torch.float32)),
                     ("x = [1000, 999, 0], float32", torch.tensor([1000.0, 999.0, 0.0])),
                     ("x = [-1000, -1001, -1002], float32", torch.tensor([-1000.0, -1001.0, -1002.0])),
                     ("x = [3, -inf, 1], float32", torch.tensor([3.0, float("-inf"), 1.0]))]:
        cases.append(Case(f"softmax({label})", (x,), _softmax_ref(x.to(torch.float64)), close(atol=1e-6),
                          hint=lambda got: Text("hint_overflow")))
    return cases


exercise(
    "ch04.softmax", kind="bug_hunt", source="https://github.com/NVIDIA/FasterTransformer/issues/43",
    en="A softmax that overflows on large scores",
    es="Una softmax que se desborda con puntuaciones grandes",
    stub='''\
def softmax(x):
    # x (..., N) -> softmax(x) (..., N), dim=-1
    e = torch.exp(x)                              # (..., N)
    return e / e.sum(dim=-1, keepdim=True)        # (..., N)
''',
    solution='''\
def softmax(x):
    # x (..., N) -> softmax(x) (..., N), dim=-1
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))   # (..., N), max e = 1
    return e / e.sum(dim=-1, keepdim=True)            # (..., N)
''',
    cases=_softmax_cases,
)
