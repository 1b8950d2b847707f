"""Chapter 10, common mistakes: mask conventions and joining heads back."""
import torch

from ._compare import Case, Text, close, randn
from ._define import exercise
from .. import functional as AF


def _causal_ref(s):
    T = s.shape[-1]
    keep = torch.ones(T, T, dtype=torch.bool).tril()
    e = torch.where(keep, (s - s.masked_fill(~keep, float("-inf")).amax(-1, keepdim=True)).exp(), 0.0)
    return e / e.sum(-1, keepdim=True)


def _causal_cases():
    return [Case(f"causal_weights(scores {tuple(s.shape)})".replace(",)", ")"), (s,), _causal_ref(s), close(),
                 hint=lambda got: Text("hint_mask_convention"))
            for s in (randn(4, 4, seed=1, dtype=torch.float32), randn(2, 3, 5, 5, seed=2, dtype=torch.float32),
                      randn(1, 1, seed=3, dtype=torch.float32))][::-1]


exercise(
    "ch10.causal_weights", kind="bug_hunt", source="https://github.com/harvard-edge/cs249r_book/pull/1785",
    en="Two mask conventions in one pipeline: additive against 1/0",
    es="Dos convenios de máscara en el mismo código: aditiva frente a 1/0",
    stub='''\
def causal_weights(scores):
    # scores (..., T, T) -> w (..., T, T), w[i, j] = 0 for j > i
    T = scores.shape[-1]
    future = torch.ones(T, T, dtype=torch.bool).triu(1)                # (T, T)
    mask = torch.zeros(T, T).masked_fill(future, float("-inf"))        # 0 = keep, -inf = hide
    # mask: 1 = keep, 0 = hide
    scores = scores + (1 - mask) * -1e9                                # (..., T, T)
    return torch.softmax(scores, dim=-1)
''',
    solution='''\
def causal_weights(scores):
    T = scores.shape[-1]
    mask = torch.ones(T, T).tril()                                     # 1 = keep, 0 = hide
    scores = scores + (1 - mask) * -1e9                                # (..., T, T)
    return torch.softmax(scores, dim=-1)
''',
    cases=_causal_cases,
)


def _merge_cases():
    cases = []
    for shape in ((2, 3, 4, 2), (1, 1, 5, 3), (2, 4, 1, 2)):
        x = torch.arange(shape[0] * shape[1] * shape[2] * shape[3], dtype=torch.float64).reshape(shape)
        cases.append(Case(f"merge_heads(x {shape})", (x,), AF.merge_heads(x), close()))
    x = randn(2, 2, 3, 4, seed=4).transpose(2, 3)  # (2, 2, 4, 3), not contiguous
    cases.append(Case("merge_heads(x (2, 2, 4, 3) = y.transpose(2, 3))", (x,), AF.merge_heads(x), close()))
    return cases


exercise(
    "ch10.merge_heads", kind="write",
    en="Join the heads back: swap the axes back, then reshape",
    es="Volver a unir las cabezas: intercambiar de nuevo los ejes y después cambiar la forma",
    stub='''\
def merge_heads(x):
    # x (B, h, T, d_head) -> (B, T, h * d_head), head i in columns i*d_head:(i+1)*d_head
    raise NotImplementedError
''',
    solution='''\
def merge_heads(x):
    B, h, T, d_head = x.shape
    x = x.transpose(1, 2).contiguous()            # (B, h, T, d_head) -> (B, T, h, d_head)
    return x.view(B, T, h * d_head)               # -> (B, T, h * d_head)
''',
    cases=_merge_cases,
)
