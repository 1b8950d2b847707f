"""Chapter 6, multi-head attention: heads from columns, and rows that see no key."""
import torch

from ._compare import Case, Text, close, equal, randn
from ._define import exercise
from .. import functional as AF


def _split_hint(x, h):
    def hint(got):
        B, T, d = x.shape
        if equal(got, x.reshape(B, h, T, d // h)):
            return Text("hint_view_no_transpose", d_head=d // h)
        return None
    return hint


def _split_cases():
    cases = []
    for shape, h in [((2, 3, 8), 2), ((1, 5, 12), 3), ((2, 4, 6), 1), ((2, 4, 6), 6), ((3, 1, 4), 2)]:
        x = torch.arange(shape[0] * shape[1] * shape[2], dtype=torch.float64).reshape(shape)
        cases.append(Case(f"split_heads(x {shape}, num_heads={h})", (x, h), AF.split_heads(x, h), close(),
                          hint=_split_hint(x, h)))
    return cases


exercise(
    "ch06.split_heads", kind="bug_hunt", source="https://github.com/hyunwoongko/transformer/issues/15",
    en="Split a projection into heads: reshape, then swap two axes",
    es="Dividir una proyección en cabezas: cambiar la forma y después intercambiar dos ejes",
    stub='''\
def split_heads(x, num_heads):
    # x (B, T, d) -> (B, h, T, d_head)
    B, T, d = x.shape
    return x.view(B, num_heads, T, d // num_heads)
''',
    solution='''\
def split_heads(x, num_heads):
    B, T, d = x.shape
    x = x.view(B, T, num_heads, d // num_heads)   # (B, T, d) -> (B, T, h, d_head)
    return x.transpose(1, 2)                      # (B, T, h, d_head) -> (B, h, T, d_head)
''',
    cases=_split_cases,
)


def _masked_softmax(scores, m):
    m = m.expand(scores.shape)
    x = scores.masked_fill(~m, float("-inf"))
    top = x.amax(-1, keepdim=True)
    e = torch.where(m, (x - torch.where(torch.isinf(top), 0.0, top)).exp(), 0.0)
    total = e.sum(-1, keepdim=True)
    return torch.where(total > 0, e / torch.where(total > 0, total, 1.0), 0.0)  # empty row: 0


def _masked_cases():
    s = randn(2, 4, 5, seed=1)
    m = torch.rand(2, 4, 5, generator=torch.Generator().manual_seed(2)) > 0.4
    m[0, 1] = False                                # a row with every key hidden
    m[1, 3] = False
    pad = torch.tensor([[True, True, False, False, False], [False] * 5])[:, None, :]   # (2, 1, 5)
    full = torch.ones(2, 4, 5, dtype=torch.bool)
    hint = lambda got: Text("hint_empty_row")  # noqa: E731
    return [
        Case("masked_softmax(scores (2, 4, 5), mask = torch.ones(2, 4, 5, dtype=torch.bool))", (s, full | ~full),
             _masked_softmax(s, full), close()),
        Case("masked_softmax(scores (2, 4, 5), mask (2, 4, 5), mask[0, 1] = mask[1, 3] = False)", (s, m),
             _masked_softmax(s, m), close(), hint=hint),
        Case("masked_softmax(scores (2, 4, 5), mask (2, 1, 5), mask[1] = False)", (s, pad),
             _masked_softmax(s, pad), close(), hint=hint),
    ]


exercise(
    "ch06.masked_softmax", kind="bug_hunt", source="https://github.com/pytorch/pytorch/pull/131060",
    en="Masked softmax: a row with every key hidden gets zero weights, not NaN",
    es="La softmax con máscara: una fila con todas las claves ocultas recibe pesos nulos, no NaN",
    stub='''\
def masked_softmax(scores, mask):
    # scores (..., T_q, T_k), mask: bool, (..., T_q, T_k) or (B, 1, T_k)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
''',
    solution='''\
def masked_softmax(scores, mask):
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)   # softmax(-inf, ..., -inf) = NaN
    return weights.nan_to_num(0.0)                                               # NaN -> 0
''',
    cases=_masked_cases,
)
