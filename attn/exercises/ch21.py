"""Chapter 21, linear attention: the recurrent form, and the chunked form with a decay.

Self-contained references (the recurrent loop), so that these checks do not depend on
the chapter's own code.
"""
import torch

from ._compare import Case, Text, close, randn
from ._define import exercise


def _recurrent(q, k, v, alpha=None):
    S = q.new_zeros(*q.shape[:-2], q.shape[-1], v.shape[-1])  # (..., d_k, d_v)
    out = []
    for t in range(q.shape[-2]):
        a = 1.0 if alpha is None else alpha[..., t, None, None]
        S = a * S + k[..., t, :, None] * v[..., t, None, :]      # S_t = alpha_t S_(t-1) + k_t v_t^T
        out.append((S * q[..., t, :, None]).sum(-2))             # o_t = S_t^T q_t
    return torch.stack(out, dim=-2)


def _linear_cases():
    cases = []
    for (B, h, T, d_k, d_v), seed in [((2, 2, 7, 4, 3), 1), ((1, 1, 1, 5, 2), 2), ((1, 3, 12, 2, 6), 3)]:
        q, k, v = randn(B, h, T, d_k, seed=seed), randn(B, h, T, d_k, seed=seed + 1), randn(B, h, T, d_v, seed=seed + 2)
        cases.append(Case(f"linear_attention(q ({B}, {h}, {T}, {d_k}), k ({B}, {h}, {T}, {d_k}), "
                          f"v ({B}, {h}, {T}, {d_v}))", (q, k, v), _recurrent(q, k, v), close()))
    return cases


exercise(
    "ch21.linear_attention", kind="write",
    en="Linear attention as a running sum: the recurrent form",
    es="La atención lineal como suma acumulada: la forma recurrente",
    stub='''\
def linear_attention(q, k, v):
    # q, k (B, h, T, d_k), v (B, h, T, d_v) -> (B, h, T, d_v)
    # S_t = S_(t-1) + k_t v_t^T,  S_0 = 0;  o_t = S_t^T q_t
    raise NotImplementedError
''',
    solution='''\
def linear_attention(q, k, v):
    S = q.new_zeros(*q.shape[:-2], q.shape[-1], v.shape[-1])     # (B, h, d_k, d_v)
    out = []
    for t in range(q.shape[-2]):
        S = S + k[..., t, :, None] * v[..., t, None, :]          # + k_t v_t^T
        out.append((S * q[..., t, :, None]).sum(dim=-2))         # S_t^T q_t: (B, h, d_v)
    return torch.stack(out, dim=-2)                              # (B, h, T, d_v)
''',
    cases=_linear_cases,
)


def _chunked_cases():
    cases = []
    for (T, C, lo), seed in [((8, 4, 1.0), 1), ((10, 4, 0.5), 2), ((7, 3, 0.8), 3), ((1, 4, 0.5), 4), ((9, 9, 0.6), 5)]:
        q, k, v = randn(2, 2, T, 3, seed=seed), randn(2, 2, T, 3, seed=seed + 1), randn(2, 2, T, 2, seed=seed + 2)
        g = torch.Generator().manual_seed(seed + 3)
        alpha = lo + (1 - lo) * torch.rand(2, 2, T, generator=g, dtype=torch.float64)
        label = "alpha = 1" if lo == 1.0 else f"alpha ∈ [{lo}, 1)"
        cases.append(Case(f"chunked_gated_linear(q (2, 2, {T}, 3), k (2, 2, {T}, 3), v (2, 2, {T}, 2), "
                          f"{label}, chunk_size={C})", (q, k, v, alpha, C), _recurrent(q, k, v, alpha), close(),
                          hint=lambda got: Text("hint_decay_mask")))
    return cases


exercise(
    "ch21.chunked_gated_linear", kind="bug_hunt", source="https://github.com/NeuraLegion/shainet/pull/170",
    en="The chunked form with a decay: the intra-chunk mask must decay too",
    es="La forma por bloques con decaimiento: la máscara dentro del bloque también debe decaer",
    stub='''\
def chunked_gated_linear(q, k, v, alpha, chunk_size):
    # q, k (B, h, T, d_k), v (B, h, T, d_v), alpha (B, h, T) in (0, 1]
    # S_t = alpha_t S_(t-1) + k_t v_t^T;  o_t = S_t^T q_t
    S = q.new_zeros(*q.shape[:-2], q.shape[-1], v.shape[-1])            # (B, h, d_k, d_v)
    out = []
    for s in range(0, q.shape[-2], chunk_size):
        qc, kc, vc = (x[..., s:s + chunk_size, :] for x in (q, k, v))   # (B, h, C, d)
        b = torch.log(alpha[..., s:s + chunk_size]).cumsum(dim=-1)      # (B, h, C): ln(alpha_1 ... alpha_i)
        C = qc.shape[-2]
        M = torch.ones(C, C, dtype=torch.bool).tril()                   # (C, C)
        A = (qc @ kc.transpose(-2, -1)).masked_fill(~M, 0.0)            # (B, h, C, C)
        out.append((qc * b.exp()[..., None]) @ S + A @ vc)              # (B, h, C, d_v)
        decay = (b[..., -1:] - b).exp()                                 # (B, h, C): alpha_(j+1) ... alpha_C
        S = b[..., -1, None, None].exp() * S + (kc * decay[..., None]).transpose(-2, -1) @ vc
    return torch.cat(out, dim=-2)                                       # (B, h, T, d_v)
''',
    solution='''\
def chunked_gated_linear(q, k, v, alpha, chunk_size):
    S = q.new_zeros(*q.shape[:-2], q.shape[-1], v.shape[-1])            # (B, h, d_k, d_v)
    out = []
    for s in range(0, q.shape[-2], chunk_size):
        qc, kc, vc = (x[..., s:s + chunk_size, :] for x in (q, k, v))   # (B, h, C, d)
        b = torch.log(alpha[..., s:s + chunk_size]).cumsum(dim=-1)      # (B, h, C): ln(alpha_1 ... alpha_i)
        C = qc.shape[-2]
        M = torch.ones(C, C, dtype=torch.bool).tril()                   # (C, C)
        G = torch.where(M, b[..., :, None] - b[..., None, :], float("-inf")).exp()   # G_ij = alpha_(j+1) ... alpha_i
        A = (qc @ kc.transpose(-2, -1)) * G                             # (B, h, C, C)
        out.append((qc * b.exp()[..., None]) @ S + A @ vc)              # (B, h, C, d_v)
        decay = (b[..., -1:] - b).exp()                                 # (B, h, C): alpha_(j+1) ... alpha_C
        S = b[..., -1, None, None].exp() * S + (kc * decay[..., None]).transpose(-2, -1) @ vc
    return torch.cat(out, dim=-2)                                       # (B, h, T, d_v)
''',
    cases=_chunked_cases,
)
