"""Chapter 13, the KV cache: attention of new queries over cached keys, and the cache's size."""
import math

import torch

from ._compare import Case, Text, close, randn, scalar
from ._define import exercise
from .. import functional as AF
from ..cache.kv_cache import kv_cache_bytes as _kv_cache_bytes


def _decode_ref(q, k, v):
    T_q, T_k = q.shape[-2], k.shape[-2]
    keep = AF.causal_mask(T_q, T_k, align="bottom_right")
    s = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~keep, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def _decode_cases():
    cases = []
    for T_q, T_k, seed in [(1, 6, 1), (3, 7, 2), (5, 5, 3), (1, 1, 4), (2, 2, 5)]:
        q, k, v = randn(2, T_q, 4, seed=seed), randn(2, T_k, 4, seed=seed + 10), randn(2, T_k, 3, seed=seed + 20)
        cases.append(Case(f"decode_attention(q (2, {T_q}, 4), k (2, {T_k}, 4), v (2, {T_k}, 3))", (q, k, v),
                          _decode_ref(q, k, v), close(),
                          hint=(lambda got: Text("hint_mask_only_with_cache")) if T_q == T_k else None))
    return cases


exercise(
    "ch13.decode_attention", kind="bug_hunt", source="https://github.com/meta-pytorch/torchtune/issues/959",
    en="Attention with and without a cache must give the same answer",
    es="La atención con caché y sin ella debe dar el mismo resultado",
    stub='''\
def decode_attention(q, k, v):
    # q (..., T_q, d), k (..., T_k, d), v (..., T_k, d_v), T_k >= T_q; queries = last T_q positions
    T_q, T_k = q.shape[-2], k.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])           # (..., T_q, T_k)
    if T_k > T_q:                                                       # T_k - T_q > 0: cache
        mask = torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q)   # (T_q, T_k)
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v                            # (..., T_q, d_v)
''',
    solution='''\
def decode_attention(q, k, v):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])           # (..., T_q, T_k)
    mask = torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q)       # (T_q, T_k)
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v                            # (..., T_q, d_v)
''',
    cases=_decode_cases,
)


def _bytes_cases():
    cases = []
    for args, kw in [((32, 8, 128, 4096), {}), ((2, 4, 16, 10), {"batch": 3}),
                     ((1, 1, 64, 1), {"bytes_per_element": 4}), ((80, 8, 128, 32768), {"batch": 2})]:
        call = ", ".join([f"{n}={a}" for n, a in zip(("num_layers", "num_kv_heads", "head_dim", "seq_len"), args)]
                         + [f"{n}={a}" for n, a in kw.items()])
        cases.append(Case(f"kv_cache_bytes({call})", args, _kv_cache_bytes(*args, **kw), scalar(), kwargs=kw))
    return cases


exercise(
    "ch13.kv_cache_bytes", kind="write",
    en="How many bytes the KV cache of a whole model holds",
    es="Cuántos bytes ocupa la caché KV de un modelo entero",
    stub='''\
def kv_cache_bytes(num_layers, num_kv_heads, head_dim, seq_len, batch=1, bytes_per_element=2):
    # -> int: 2 (k, v) * L * h_kv * d_head * T * B * b
    raise NotImplementedError
''',
    solution='''\
def kv_cache_bytes(num_layers, num_kv_heads, head_dim, seq_len, batch=1, bytes_per_element=2):
    # 2 (k, v) * L * h_kv * d_head * T * B * b
    return 2 * num_layers * num_kv_heads * head_dim * seq_len * batch * bytes_per_element
''',
    cases=_bytes_cases,
)
