"""Chapter 19, latent attention: scores straight from the latent, and the cache it needs."""
import math

from ._compare import Case, close, randn, scalar
from ._define import exercise
from ..layers.latent import latent_cache_bytes as _latent_cache_bytes


def _absorbed_ref(q, c, W_uk):
    k = c @ W_uk.T                                      # decompress: (..., T_k, d_h)
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def _absorbed_cases():
    cases = []
    for qs, cs, d_c, seed in [((2, 3, 8), (2, 5, 4), 4, 1), ((1, 2, 1, 6), (1, 2, 7, 3), 3, 2), ((4, 16), (6, 2), 2, 3)]:
        q, c, W = randn(*qs, seed=seed), randn(*cs, seed=seed + 1), randn(qs[-1], d_c, seed=seed + 2)
        cases.append(Case(f"absorbed_scores(q {qs}, c {cs}, W_uk ({qs[-1]}, {d_c}))", (q, c, W),
                          _absorbed_ref(q, c, W), close()))
    return cases


exercise(
    "ch19.absorbed_scores", kind="write",
    en="Scores from the cached latent, without decompressing the keys",
    es="Puntuaciones a partir del vector latente en caché, sin descomprimir las claves",
    stub='''\
def absorbed_scores(q, c, W_uk):
    # q (..., T_q, d_h), c (..., T_k, d_c), W_uk (d_h, d_c); k = c W_uk^T
    # -> (..., T_q, T_k) = q k^T / sqrt(d_h) = (q W_uk) c^T / sqrt(d_h)
    raise NotImplementedError
''',
    solution='''\
def absorbed_scores(q, c, W_uk):
    q_c = q @ W_uk                                                 # (..., T_q, d_c)
    return q_c @ c.transpose(-2, -1) / math.sqrt(q.shape[-1])      # (..., T_q, T_k)
''',
    cases=_absorbed_cases,
)


def _bytes_cases():
    cases = []
    for args, kw in [((61, 512, 4096), {"rope_head_dim": 64}), ((2, 8, 10), {}),
                     ((4, 16, 3), {"rope_head_dim": 4, "batch": 2, "bytes_per_element": 4})]:
        call = ", ".join([f"{n}={a}" for n, a in zip(("num_layers", "kv_latent_dim", "seq_len"), args)]
                         + [f"{n}={a}" for n, a in kw.items()])
        cases.append(Case(f"latent_cache_bytes({call})", args, _latent_cache_bytes(*args, **kw), scalar(), kwargs=kw))
    return cases


exercise(
    "ch19.latent_cache_bytes", kind="write",
    en="How many bytes a latent cache holds",
    es="Cuántos bytes ocupa una caché latente",
    stub='''\
def latent_cache_bytes(num_layers, kv_latent_dim, seq_len, rope_head_dim=0, batch=1, bytes_per_element=2):
    # -> int: L * (d_c + d_r) * T * B * b
    raise NotImplementedError
''',
    solution='''\
def latent_cache_bytes(num_layers, kv_latent_dim, seq_len, rope_head_dim=0, batch=1, bytes_per_element=2):
    # L * (d_c + d_r) * T * B * b
    return num_layers * (kv_latent_dim + rope_head_dim) * seq_len * batch * bytes_per_element
''',
    cases=_bytes_cases,
)
