"""Chapter 1, why attention: the hard and the soft lookup."""
import torch

from ._compare import Case, close, randn
from ._define import exercise

KEYS = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.7, 0.7]], dtype=torch.float64)
VALUES = torch.tensor([[10.0], [20.0], [30.0], [40.0]], dtype=torch.float64)
QUERY = torch.tensor([0.9, 0.3], dtype=torch.float64)


def _soft(query, keys, values, beta):
    s = [beta * float(sum(q * k for q, k in zip(query.tolist(), key))) for key in keys.tolist()]
    m = max(s)
    e = [torch.tensor(x - m, dtype=torch.float64).exp() for x in s]
    total = sum(e)
    return sum((w / total) * v for w, v in zip(e, values))  # sum_j alpha_j v_j


def _soft_cases():
    cases = []
    for beta in (1.0, 0.0, 10.0, 1000.0):
        cases.append(Case(f"soft_lookup(query (2,), keys (4, 2), values (4, 1), beta={beta:g})",
                          (QUERY, KEYS, VALUES), _soft(QUERY, KEYS, VALUES, beta), close(atol=1e-6),
                          kwargs={"beta": beta}))
    q, k, v = randn(5, seed=1), randn(7, 5, seed=2), randn(7, 3, seed=3)
    cases.append(Case("soft_lookup(query (5,), keys (7, 5), values (7, 3))",
                      (q, k, v), _soft(q, k, v, 1.0), close(atol=1e-6)))
    cases.append(Case("soft_lookup(query (5,), keys (1, 5), values (1, 3))", (q, k[:1], v[:1]), v[0], close(atol=1e-6)))
    return cases


exercise(
    "ch01.soft_lookup", kind="write",
    en="The soft lookup: a softmax-weighted average of the values",
    es="La búsqueda suave: una media de los valores ponderada con la softmax",
    stub='''\
def soft_lookup(query, keys, values, beta=1.0):
    # query (d,), keys (N, d), values (N, d_v) -> (d_v,)
    # s_j = beta * (k_j . q);  o = sum_j softmax(s)_j v_j
    raise NotImplementedError
''',
    solution='''\
def soft_lookup(query, keys, values, beta=1.0):
    # query (d,), keys (N, d), values (N, d_v) -> (d_v,)
    scores = beta * (keys @ query)                # (N, d) @ (d,) -> (N,)
    weights = torch.softmax(scores, dim=0)        # (N,), sum = 1
    return weights @ values                       # (N,) @ (N, d_v) -> (d_v,)
''',
    cases=_soft_cases,
)


def _hard_cases():
    q, k, v = randn(5, seed=4), randn(9, 5, seed=5), randn(9, 2, seed=6)
    return [
        Case("hard_lookup(query (2,), keys (4, 2), values (4, 1))", (QUERY, KEYS, VALUES), VALUES[0], close()),
        Case("hard_lookup(query (5,), keys (9, 5), values (9, 2))",
             (q, k, v), v[int(max(range(9), key=lambda j: float(k[j] @ q)))], close()),
        Case("hard_lookup(-query (2,), keys (4, 2), values (4, 1))", (-QUERY, KEYS, VALUES), VALUES[2], close()),
    ]


exercise(
    "ch01.hard_lookup", kind="write",
    en="The hard lookup: the value of the best-scoring key",
    es="La búsqueda estricta: el valor de la clave con mayor puntuación",
    stub='''\
def hard_lookup(query, keys, values):
    # query (d,), keys (N, d), values (N, d_v) -> (d_v,)
    # values[argmax_j (k_j . q)]
    raise NotImplementedError
''',
    solution='''\
def hard_lookup(query, keys, values):
    # query (d,), keys (N, d), values (N, d_v) -> (d_v,)
    scores = keys @ query                         # (N,)
    return values[scores.argmax()]                # (d_v,)
''',
    cases=_hard_cases,
)
