"""Chapter 11, next steps: layer normalisation and the pre-norm block."""
import torch

from ._compare import Case, close, randn
from ._define import exercise


def _ln(x, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)  # biased: divide by d
    return (x - mean) / torch.sqrt(var + eps)


def _ln_cases():
    return [Case(f"layer_norm({label})", (x,), _ln(x, eps) if eps else _ln(x), close(),
                 kwargs={"eps": eps} if eps else None)
            for label, x, eps in [("x (2, 3, 8)", randn(2, 3, 8, seed=1), None),
                                  ("x (4, 2)", randn(4, 2, seed=2), None),
                                  ("x = 1e-3 * x (3, 16), eps=1e-2", 1e-3 * randn(3, 16, seed=3), 1e-2),
                                  ("x (5, 6) + 100", randn(5, 6, seed=4) + 100, None)]]


exercise(
    "ch11.layer_norm", kind="write",
    en="Layer normalisation, without the learned scale and shift",
    es="Normalización de capa, sin la escala ni el desplazamiento aprendidos",
    stub='''\
def layer_norm(x, eps=1e-5):
    # x (..., d) -> (..., d);  (x - mean) / sqrt(var + eps), var = mean((x - mean)^2) over d
    raise NotImplementedError
''',
    solution='''\
def layer_norm(x, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)                       # (..., 1)
    var = x.var(dim=-1, keepdim=True, unbiased=False)         # (..., 1), divided by d
    return (x - mean) / torch.sqrt(var + eps)                 # (..., d)
''',
    cases=_ln_cases,
)


def _block_ref(x, attn, ffn):
    h = x + attn(_ln(x))
    return h + ffn(_ln(h))


def _block_cases():
    cases = []
    for label, x, seed in [("x (2, 4, 6)", randn(2, 4, 6, seed=5), 6), ("x (1, 3)", randn(1, 3, seed=7), 8)]:
        d = x.shape[-1]
        W1, W2 = randn(d, d, seed=seed), randn(d, d, seed=seed + 1)
        attn = lambda z, W=W1: torch.tanh(z @ W)  # noqa: E731
        ffn = lambda z, W=W2: torch.relu(z @ W)  # noqa: E731
        cases.append(Case(f"pre_norm_block({label}, attn = tanh(z W1), ffn = relu(z W2))", (x, attn, ffn),
                          _block_ref(x, attn, ffn), close()))
    return cases


exercise(
    "ch11.pre_norm_block", kind="write",
    en="A pre-norm block: normalise, transform, add the residual, twice",
    es="Un bloque con la normalización delante: normalizar, transformar y sumar el residuo, dos veces",
    stub='''\
def pre_norm_block(x, attn, ffn):
    # x (..., d); attn, ffn: (..., d) -> (..., d); LN(z) = (z - mean) / sqrt(var + 1e-5)
    # h = x + attn(LN(x));  y = h + ffn(LN(h))
    raise NotImplementedError
''',
    solution='''\
def pre_norm_block(x, attn, ffn):
    def ln(z):
        return torch.nn.functional.layer_norm(z, z.shape[-1:])   # (..., d)
    h = x + attn(ln(x))                                          # (..., d)
    return h + ffn(ln(h))                                        # (..., d)
''',
    cases=_block_cases,
)
