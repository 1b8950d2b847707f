"""Chapter 7, the sequence-first layout with einsum."""
import math

from ._compare import Case, close, randn
from ._define import exercise


def _scores(q, k):
    qb, kb = q.permute(1, 2, 0, 3), k.permute(1, 2, 0, 3)   # (B, h, T, d)
    s = qb @ kb.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, h, T_q, T_k)
    return s.permute(2, 3, 0, 1)                            # (T_q, T_k, B, h)


def _inputs():
    return [("q (3, 2, 2, 4), k (5, 2, 2, 4)", randn(3, 2, 2, 4, seed=1), randn(5, 2, 2, 4, seed=2)),
            ("q (1, 1, 3, 8), k (4, 1, 3, 8) ", randn(1, 1, 3, 8, seed=3), randn(4, 1, 3, 8, seed=4)),
            ("q (4, 3, 1, 2), k (4, 3, 1, 2)", randn(4, 3, 1, 2, seed=5), randn(4, 3, 1, 2, seed=6))]


exercise(
    "ch07.seq_first_scores", kind="write",
    en="Scores in the sequence-first layout",
    es="Puntuaciones en la disposición con la secuencia primero",
    stub='''\
def seq_first_scores(q, k):
    # q (T_q, B, h, d_k), k (T_k, B, h, d_k) -> (T_q, T_k, B, h)
    # s[i, j, b, h] = q[i, b, h] . k[j, b, h] / sqrt(d_k)
    raise NotImplementedError
''',
    solution='''\
def seq_first_scores(q, k):
    return torch.einsum("ibhd,jbhd->ijbh", q, k) / math.sqrt(q.shape[-1])   # (T_q, T_k, B, h)
''',
    cases=lambda: [Case(f"seq_first_scores({label})", (q, k), _scores(q, k), close())
                   for label, q, k in _inputs()],
)


def _attention(q, k, v):
    w = _scores(q, k).softmax(dim=1)                             # over the keys j
    return (w.permute(2, 3, 0, 1) @ v.permute(1, 2, 0, 3)).permute(2, 0, 1, 3)   # (T_q, B, h, d_v)


def _attention_cases():
    cases = []
    for n, (label, q, k) in enumerate(_inputs()):
        v = randn(k.shape[0], k.shape[1], k.shape[2], 3, seed=10 + n)
        cases.append(Case(f"seq_first_attention({label}, v (T_k, B, h, 3))", (q, k, v), _attention(q, k, v),
                          close()))
    return cases


exercise(
    "ch07.seq_first_attention", kind="write",
    en="Attention in the sequence-first layout: softmax over the key axis",
    es="Atención en la disposición con la secuencia primero: la softmax sobre el eje de las claves",
    stub='''\
def seq_first_attention(q, k, v):
    # q (T_q, B, h, d_k), k (T_k, B, h, d_k), v (T_k, B, h, d_v) -> (T_q, B, h, d_v)
    raise NotImplementedError
''',
    solution='''\
def seq_first_attention(q, k, v):
    s = torch.einsum("ibhd,jbhd->ijbh", q, k) / math.sqrt(q.shape[-1])   # (T_q, T_k, B, h)
    w = s.softmax(dim=1)                                                 # over j
    return torch.einsum("ijbh,jbhd->ibhd", w, v)                         # (T_q, B, h, d_v)
''',
    cases=_attention_cases,
)
