"""Chapter 17, induction heads: the two scores that find a circuit's heads."""
import torch

from ._compare import Case, close, randn
from ._define import exercise
from .. import functional as AF


def _weights(*shape, seed):
    T = shape[-1]
    s = randn(*shape, seed=seed).masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
    return torch.softmax(2 * s, dim=-1)


def _shifted(T, shift):
    w = torch.zeros(T, T, dtype=torch.float64)
    for i in range(T):
        w[i, max(0, i - shift)] = 1.0
    return w


exercise(
    "ch17.previous_token_score", kind="write",
    en="The previous-token score of a head",
    es="La puntuación del token anterior de una cabeza",
    stub='''\
def previous_token_score(weights):
    # weights (..., T, T) -> (...);  mean_(i = 1 .. T-1) w[i, i - 1]
    raise NotImplementedError
''',
    solution='''\
def previous_token_score(weights):
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=-1)   # (..., T-1) -> (...)
''',
    cases=lambda: [Case(f"previous_token_score({label})", (w,), AF.previous_token_score(w), close())
                   for label, w in [("weights (2, 3, 6, 6)", _weights(2, 3, 6, 6, seed=1)),
                                    ("weights (5, 5), w[i, i-1] = 1", _shifted(5, 1)),
                                    ("weights (2, 2)", _weights(2, 2, seed=2))]],
)


exercise(
    "ch17.induction_score", kind="write",
    en="The induction score of a head on a sequence that repeats",
    es="La puntuación de inducción de una cabeza sobre una secuencia que se repite",
    stub='''\
def induction_score(weights, period):
    # weights (..., T, T) -> (...);  mean_(i = p .. T-1) w[i, i - p + 1]
    raise NotImplementedError
''',
    solution='''\
def induction_score(weights, period):
    T = weights.shape[-1]
    i = torch.arange(period, T)                                   # (T - p,)
    return weights[..., i, i - period + 1].mean(dim=-1)           # (..., T - p) -> (...)
''',
    cases=lambda: [Case(f"induction_score({label}, period={p})", (w, p), AF.induction_score(w, p), close())
                   for label, w, p in [("weights (2, 4, 8, 8)", _weights(2, 4, 8, 8, seed=3), 3),
                                       ("weights (7, 7), w[i, i-2] = 1", _shifted(7, 2), 3),
                                       ("weights (6, 6)", _weights(6, 6, seed=4), 1),
                                       ("weights (6, 6)", _weights(6, 6, seed=5), 5)]],
)
