"""Chapter 5, causal attention: the causal mask and the padding mask."""
import torch

from ._compare import Case, Text, equal, mask
from ._define import exercise
from .. import functional as AF


def _causal_hint(T_q, T_k, want):
    def hint(got):
        if equal(got, torch.ones(T_q, T_k, dtype=torch.bool).tril()) and T_q != T_k:
            return Text("hint_top_left", T_q=T_q, T_k=T_k)
        if equal(got, ~want) or equal(got, torch.ones(T_q, T_k, dtype=torch.bool).triu(T_k - T_q + 1)):
            return Text("hint_inverted")
        return None
    return hint


def _causal_cases():
    cases = []
    for T_q, T_k in [(4, 4), (1, 1), (3, 7), (1, 7), (6, 6), (2, 9)]:
        want = AF.causal_mask(T_q, T_k, align="bottom_right")
        cases.append(Case(f"causal_mask(T_q={T_q}, T_k={T_k})", (T_q, T_k), want, mask(),
                          hint=_causal_hint(T_q, T_k, want)))
    return cases


exercise(
    "ch05.causal_mask", kind="bug_hunt", source="https://github.com/pytorch/pytorch/issues/103082",
    en="The causal mask of queries that follow cached keys",
    es="La máscara causal de consultas que siguen a claves en caché",
    stub='''\
def causal_mask(T_q, T_k):
    # (T_q, T_k) bool
    return torch.ones(T_q, T_k, dtype=torch.bool).tril()
''',
    solution='''\
def causal_mask(T_q, T_k):
    # (T_q, T_k) bool, p_i = i + T_k - T_q
    i = torch.arange(T_q)[:, None] + (T_k - T_q)  # (T_q, 1)
    j = torch.arange(T_k)[None, :]                # (1, T_k)
    return j <= i                                 # (T_q, T_k)
''',
    cases=_causal_cases,
)


def _padding_cases():
    cases = []
    for lengths, T in [([3, 1, 4], 4), ([0, 2], 5), ([5], 5), ([1, 1], 1)]:
        lengths = torch.tensor(lengths)
        cases.append(Case(f"padding_mask(lengths=torch.tensor({lengths.tolist()}), T={T})", (lengths, T),
                          AF.padding_mask(lengths, T), mask("batch")))
    return cases


exercise(
    "ch05.padding_mask", kind="write",
    en="The padding mask of a batch padded on the right",
    es="La máscara de relleno de un lote rellenado por la derecha",
    stub='''\
def padding_mask(lengths, T):
    # lengths (B,) int64 -> (B, T) bool, mask[b, t] = t < lengths[b]
    raise NotImplementedError
''',
    solution='''\
def padding_mask(lengths, T):
    positions = torch.arange(T)                   # (T,)
    return positions[None, :] < lengths[:, None]  # (1, T) < (B, 1) -> (B, T)
''',
    cases=_padding_cases,
)
