"""Chapter 2, simplified self-attention: scores and weights without trainable weights."""
from ._compare import Case, close, randn
from ._define import exercise
from ..data import journey


def _dots(x):
    T = x.shape[-2]
    out = x.new_zeros(*x.shape[:-2], T, T)
    for i in range(T):
        for j in range(T):
            out[..., i, j] = (x[..., i, :] * x[..., j, :]).sum(-1)  # x_i . x_j
    return out


def _scores_cases():
    x = journey()[1].to(dtype=randn(1).dtype)
    b = randn(2, 4, 5, seed=7)
    return [
        Case("scores(x (6, 3) = journey()[1])", (x,), _dots(x), close()),
        Case("scores(x (2, 4, 5))", (b,), _dots(b), close()),
        Case("scores(x (1, 3))", (b[0, :1, :3],), _dots(b[0, :1, :3]), close()),
    ]


exercise(
    "ch02.scores", kind="write",
    en="All attention scores at once: every token against every token",
    es="Todas las puntuaciones de atención a la vez: cada token con cada token",
    stub='''\
def scores(x):
    # x (..., T, d) -> (..., T, T);  scores[i, j] = x_i . x_j
    raise NotImplementedError
''',
    solution='''\
def scores(x):
    # x (..., T, d) -> (..., T, T)
    return x @ x.transpose(-2, -1)                # (..., T, d) @ (..., d, T) -> (..., T, T)
''',
    cases=_scores_cases,
)


def _simplified(x):
    s = _dots(x)
    w = (s - s.amax(-1, keepdim=True)).exp()
    w = w / w.sum(-1, keepdim=True)  # softmax over j
    return w @ x, w


def _simplified_cases():
    x = journey()[1].to(dtype=randn(1).dtype)
    b = randn(2, 5, 4, seed=8)
    names = ("context", "weights")
    return [
        Case("simplified_attention(x (6, 3) = journey()[1])", (x,), _simplified(x),
             close(names=names)),
        Case("simplified_attention(x (2, 5, 4))", (b,), _simplified(b), close(names=names)),
        Case("simplified_attention(x (1, 4))", (b[0, :1],), _simplified(b[0, :1]), close(names=names)),
    ]


exercise(
    "ch02.simplified_attention", kind="write",
    en="Simplified self-attention: weights and context vectors of every token",
    es="Autoatención simplificada: pesos y vectores de contexto de todos los tokens",
    stub='''\
def simplified_attention(x):
    # x (..., T, d) -> (context (..., T, d), weights (..., T, T))
    # weights = softmax_j(x_i . x_j);  context = weights @ x
    raise NotImplementedError
''',
    solution='''\
def simplified_attention(x):
    # x (..., T, d) -> (context (..., T, d), weights (..., T, T))
    weights = torch.softmax(x @ x.transpose(-2, -1), dim=-1)   # (..., T, T)
    return weights @ x, weights                                 # (..., T, d), (..., T, T)
''',
    cases=_simplified_cases,
)
