"""Chapter 14, grouped-query attention: which key-value head each query head uses."""
import torch

from ._compare import Case, Text, close, equal, randn
from ._define import exercise


def _repeat_ref(k, n_rep):
    heads = torch.tensor([j // n_rep for j in range(k.shape[1] * n_rep)])  # query head j uses j // n_rep
    return k[:, heads]


def _repeat_cases():
    cases = []
    for h_kv, n_rep in [(1, 4), (2, 2), (3, 1), (2, 3), (4, 2)]:
        k = randn(2, h_kv, 3, 4, seed=h_kv * 10 + n_rep)
        hint = (lambda got, k=k, n=n_rep: Text("hint_repeat_order") if equal(got, k.repeat(1, n, 1, 1)) else None)
        cases.append(Case(f"repeat_kv(k (2, {h_kv}, 3, 4), n_rep={n_rep})", (k, n_rep), _repeat_ref(k, n_rep),
                          close(), hint=hint))
    return cases


exercise(
    "ch14.repeat_kv", kind="bug_hunt", source="https://github.com/onnx/onnx/pull/7274",
    en="Repeat the key-value heads in the order the query heads expect",
    es="Repetir las cabezas de claves y valores en el orden que esperan las cabezas de consultas",
    stub='''\
def repeat_kv(k, n_rep):
    # k (B, h_kv, T, d) -> (B, h_kv * n_rep, T, d)
    return k.repeat(1, n_rep, 1, 1)
''',
    solution='''\
def repeat_kv(k, n_rep):
    return k.repeat_interleave(n_rep, dim=1)      # (B, h_kv, T, d) -> (B, h_kv * n_rep, T, d)
''',
    cases=_repeat_cases,
)


def _gqa_ref(q, k, v):
    n = q.shape[1] // k.shape[1]
    return torch.nn.functional.scaled_dot_product_attention(q, _repeat_ref(k, n), _repeat_ref(v, n))


def _gqa_cases():
    cases = []
    for h, h_kv, T_q, T_k in [(4, 2, 3, 5), (4, 1, 1, 6), (6, 3, 4, 4), (2, 2, 2, 3)]:
        q, k, v = randn(2, h, T_q, 8, seed=h), randn(2, h_kv, T_k, 8, seed=h_kv + 10), randn(2, h_kv, T_k, 5, seed=T_k)
        cases.append(Case(f"gqa_attention(q (2, {h}, {T_q}, 8), k (2, {h_kv}, {T_k}, 8), v (2, {h_kv}, {T_k}, 5))",
                          (q, k, v), _gqa_ref(q, k, v), close()))
    return cases


exercise(
    "ch14.gqa_attention", kind="write",
    en="Grouped-query attention: several query heads share one key-value head",
    es="Atención de consultas agrupadas: varias cabezas de consultas comparten una cabeza de claves y valores",
    stub='''\
def gqa_attention(q, k, v):
    # q (B, h, T_q, d_k), k (B, h_kv, T_k, d_k), v (B, h_kv, T_k, d_v) -> (B, h, T_q, d_v)
    # q head j -> kv head j // (h / h_kv); no mask
    raise NotImplementedError
''',
    solution='''\
def gqa_attention(q, k, v):
    n_rep = q.shape[1] // k.shape[1]                               # h / h_kv
    k = k.repeat_interleave(n_rep, dim=1)                          # (B, h, T_k, d_k)
    v = v.repeat_interleave(n_rep, dim=1)                          # (B, h, T_k, d_v)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])      # (B, h, T_q, T_k)
    return torch.softmax(scores, dim=-1) @ v                       # (B, h, T_q, d_v)
''',
    cases=_gqa_cases,
)
