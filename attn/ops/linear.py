r"""Linear attention and its gated, error-correcting descendants, in three equal forms.

Causal attention without the softmax, :math:`o_t = \sum_{i \le t} (q_t^\top k_i)\, v_i`,
is a running sum: :math:`o_t = S_t^\top q_t` with the state
:math:`S_t = S_{t-1} + k_t v_t^\top` of shape ``(d_k, d_v)`` (Katharopoulos et al.,
2020). The delta rule (Schlag et al., 2021) writes into the state only the error of
what it already returns for :math:`k_t`; the gated delta rule (Yang et al., 2025) first
decays the state by :math:`\alpha_t`. Every function here computes its recurrence in one
of three forms, equal up to rounding (tested):

- ``"recurrent"``: the loop over tokens, one state update per token;
- ``"parallel"``: the whole sequence as one masked ``(T, T)`` product; for the delta
  rules, with the WY (UT-transform) form of Yang et al. (2024);
- ``"chunked"``: the parallel form inside chunks of ``chunk_size`` tokens, the state
  carried from chunk to chunk.

Nothing is scaled, normalised or passed through a feature map inside: the caller does
that to ``q`` and ``k`` first.
"""
import torch

from .. import _checks

__all__ = ["linear_attention", "delta_rule", "gated_delta_rule"]


def _chunk(q, k, v, g, beta, S):
    r"""One chunk of C tokens in the parallel form, from the state ``S`` before it.

    ``g`` ``(B, h, C)``: :math:`\log \gamma_t`, the decay accumulated inside the chunk
    (None: no decay); ``beta`` ``(B, h, C)`` (None: linear attention, no delta rule).
    Returns the chunk's outputs ``(B, h, C, d_v)`` and the state after it.
    """
    C = q.size(-2)
    seen = torch.ones(C, C, dtype=torch.bool, device=q.device).tril()  # (C, C): i <= t
    if g is None:
        decay, gamma = seen.to(q.dtype), q.new_ones(q.shape[:-1] + (1,))  # M; gamma_t = 1
    else:
        decay = (g[..., :, None] - g[..., None, :]).masked_fill(~seen, float("-inf")).exp()  # (B, h, C, C): gamma_t / gamma_i, i <= t
        gamma = g.exp()[..., None]  # (B, h, C, 1): gamma_t
    u = v  # (B, h, C, d_v): U = V
    if beta is not None:  # U = T diag(beta) V - W S, T = (I + A)^-1
        b = beta[..., None]  # (B, h, C, 1)
        A = (b * (k @ k.mT) * decay).tril(-1)  # (B, h, C, C): beta_t gamma_t/gamma_i k_t.k_i, i < t
        eye = torch.eye(C, dtype=q.dtype, device=q.device)
        T_ = torch.linalg.solve_triangular(eye + A, eye, upper=False, unitriangular=True)  # (I + A)^-1
        w = T_ @ (b * gamma * k)  # (B, h, C, d_k): W = T diag(beta gamma) K
        u = T_ @ (b * v) - w @ S  # (B, h, C, d_v): U = T diag(beta) V - W S
    o = gamma * (q @ S) + (q @ k.mT * decay) @ u  # (B, h, C, d_v): diag(gamma) Q S + (Q K^T * Gamma) U
    S = gamma[..., -1:, :] * S + k.mT @ (decay[..., -1, :, None] * u)  # (B, h, d_k, d_v)
    return o, S


def _recurrent(q, k, v, alpha, beta, S):
    """The loop: one state update per token; returns ``(B, h, T, d_v)`` and the last state."""
    out = []
    for t in range(q.size(-2)):
        q_t, k_t, v_t = q[..., t, :], k[..., t, :], v[..., t, :]  # (B, h, d_k), (B, h, d_k), (B, h, d_v)
        if alpha is not None:
            S = alpha[..., t, None, None] * S  # S <- alpha_t S
        if beta is not None:
            v_t = beta[..., t, None] * (v_t - (S.mT @ k_t[..., None])[..., 0])  # beta_t (v_t - S^T k_t)
        S = S + k_t[..., :, None] * v_t[..., None, :]  # (B, h, d_k, d_v): S + k_t v_t^T
        out.append((S.mT @ q_t[..., None])[..., 0])  # (B, h, d_v): o_t = S_t^T q_t
    return torch.stack(out, dim=-2), S  # (B, h, T, d_v)


def _run(q, k, v, alpha, beta, form, chunk_size, initial_state, return_state):
    """Run one recurrence in the given form (arguments already checked)."""
    B, h, T, d_k = q.shape
    S = q.new_zeros(B, h, d_k, v.size(-1)) if initial_state is None else initial_state
    if form == "recurrent":
        o, S = _recurrent(q, k, v, alpha, beta, S)
    else:
        C = T if form == "parallel" else chunk_size
        outs = []
        for s in range(0, T, C):  # the last chunk may be shorter
            g = None if alpha is None else alpha[..., s:s + C].log().cumsum(-1)  # (B, h, C): log gamma_t
            b = None if beta is None else beta[..., s:s + C]
            o, S = _chunk(q[..., s:s + C, :], k[..., s:s + C, :], v[..., s:s + C, :], g, b, S)
            outs.append(o)
        o = torch.cat(outs, dim=-2)  # (B, h, T, d_v)
    return (o, S) if return_state else o


def linear_attention(q, k, v, *, form, chunk_size=64, initial_state=None, return_state=False):
    r"""Causal attention without the softmax, as a running sum.

    .. math::

        S_t = S_{t-1} + k_t v_t^\top, \qquad o_t = S_t^\top q_t
        = S_0^\top q_t + \sum_{i \le t} (q_t^\top k_i)\, v_i,

    so that, from :math:`S_0 = 0`, :math:`O = (Q K^\top \odot M)\, V` with :math:`M` the
    causal mask (token :math:`t` included).

    Args:
        q (torch.Tensor): queries ``(B, h, T, d_k)``, scaled or normalised by the caller.
        k (torch.Tensor): keys ``(B, h, T, d_k)``.
        v (torch.Tensor): values ``(B, h, T, d_v)``.
        form (str): ``"parallel"`` (one masked ``(T, T)`` product), ``"recurrent"``
            (a loop over the tokens) or ``"chunked"`` (the parallel form in chunks, the
            state carried between them); the three agree up to rounding.
        chunk_size (int): tokens per chunk for ``form="chunked"``; any ``T`` works, the
            last chunk may be shorter.
        initial_state (torch.Tensor, optional): the state :math:`S_0` ``(B, h, d_k, d_v)``
            to continue from (zeros when None), e.g. the state returned for a prefix.
        return_state (bool): also return the last state :math:`S_T`.

    Returns:
        torch.Tensor or tuple: ``o`` of shape ``(B, h, T, d_v)``, or ``(o, S_T)`` with
        ``S_T`` of shape ``(B, h, d_k, d_v)``.
    """
    _checks.linear_inputs(q, k, v, {}, form, chunk_size, initial_state, return_state)
    return _run(q, k, v, None, None, form, chunk_size, initial_state, return_state)


def delta_rule(q, k, v, beta, *, form, chunk_size=64, initial_state=None, return_state=False):
    r"""The delta rule: a state that writes the error of what it returns.

    .. math::

        S_t = S_{t-1} + \beta_t\, k_t \big(v_t - S_{t-1}^\top k_t\big)^\top,
        \qquad o_t = S_t^\top q_t.

    With a unit-norm key, what the state returns for :math:`k_t`, :math:`S^\top k_t`,
    moves the fraction :math:`\beta_t` of the way to :math:`v_t` (all of it for
    :math:`\beta_t = 1`).

    Args:
        q (torch.Tensor): queries ``(B, h, T, d_k)``, scaled or normalised by the caller.
        k (torch.Tensor): keys ``(B, h, T, d_k)``.
        v (torch.Tensor): values ``(B, h, T, d_v)``.
        beta (torch.Tensor): write strength :math:`\beta_t` ``(B, h, T)``, usually in
            ``[0, 1]``; 0 leaves the state unchanged.
        form (str): ``"parallel"`` (one masked ``(T, T)`` product; for the delta rules, the WY form with a triangular solve), ``"recurrent"``
            (a loop over the tokens) or ``"chunked"`` (the parallel form in chunks, the
            state carried between them); the three agree up to rounding.
        chunk_size (int): tokens per chunk for ``form="chunked"``; any ``T`` works, the
            last chunk may be shorter.
        initial_state (torch.Tensor, optional): the state :math:`S_0` ``(B, h, d_k, d_v)``
            to continue from (zeros when None), e.g. the state returned for a prefix.
        return_state (bool): also return the last state :math:`S_T`.

    Returns:
        torch.Tensor or tuple: ``o`` of shape ``(B, h, T, d_v)``, or ``(o, S_T)`` with
        ``S_T`` of shape ``(B, h, d_k, d_v)``.
    """
    _checks.linear_inputs(q, k, v, {"beta": beta}, form, chunk_size, initial_state, return_state)
    return _run(q, k, v, None, beta, form, chunk_size, initial_state, return_state)


def gated_delta_rule(q, k, v, alpha, beta, *, form, chunk_size=64, initial_state=None,
                     return_state=False):
    r"""The gated delta rule: decay the state, then write the error.

    .. math::

        S_t = \alpha_t S_{t-1} + \beta_t\, k_t \big(v_t - \alpha_t S_{t-1}^\top k_t\big)^\top,
        \qquad o_t = S_t^\top q_t.

    The error is measured against the decayed state (Yang et al., 2025); with
    :math:`\alpha_t = 1` this is :func:`delta_rule`.

    Args:
        q (torch.Tensor): queries ``(B, h, T, d_k)``, scaled or normalised by the caller.
        k (torch.Tensor): keys ``(B, h, T, d_k)``.
        v (torch.Tensor): values ``(B, h, T, d_v)``.
        alpha (torch.Tensor): decay :math:`\alpha_t` ``(B, h, T)``, in ``(0, 1]``; 1
            forgets nothing.
        beta (torch.Tensor): write strength :math:`\beta_t` ``(B, h, T)``, usually in
            ``[0, 1]``; 0 leaves the state unchanged.
        form (str): ``"parallel"`` (one masked ``(T, T)`` product; for the delta rules, the WY form with a triangular solve), ``"recurrent"``
            (a loop over the tokens) or ``"chunked"`` (the parallel form in chunks, the
            state carried between them); the three agree up to rounding.
        chunk_size (int): tokens per chunk for ``form="chunked"``; any ``T`` works, the
            last chunk may be shorter.
        initial_state (torch.Tensor, optional): the state :math:`S_0` ``(B, h, d_k, d_v)``
            to continue from (zeros when None), e.g. the state returned for a prefix.
        return_state (bool): also return the last state :math:`S_T`.

    Returns:
        torch.Tensor or tuple: ``o`` of shape ``(B, h, T, d_v)``, or ``(o, S_T)`` with
        ``S_T`` of shape ``(B, h, d_k, d_v)``.
    """
    _checks.linear_inputs(q, k, v, {"alpha": alpha, "beta": beta}, form, chunk_size,
                          initial_state, return_state)
    return _run(q, k, v, alpha, beta, form, chunk_size, initial_state, return_state)
