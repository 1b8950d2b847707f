r"""Rotary position embedding (RoPE; Su et al., 2021), in the "rotate half" convention.

Instead of adding a position vector to the embeddings, RoPE rotates each query and each
key by an angle proportional to its position. The ``head_dim`` coordinates are split into
``head_dim / 2`` pairs ``(x_i, x_{i + head_dim/2})`` (the half-split convention of GPT-NeoX
and Llama) and pair ``i`` at position ``m`` is rotated by the angle
:math:`m\,\theta_i` with :math:`\theta_i = \text{base}^{-2i/\text{head\_dim}}`:

.. math::

    \begin{pmatrix} x'_i \\ x'_{i+d/2} \end{pmatrix} =
    \begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\
                    \sin m\theta_i & \cos m\theta_i \end{pmatrix}
    \begin{pmatrix} x_i \\ x_{i+d/2} \end{pmatrix}

Rotations keep lengths, and the dot product of a query rotated to position ``m`` with a
key rotated to position ``n`` depends on the positions only through ``m - n``.
"""
import numbers

import torch
import torch.nn as nn

from .. import _checks

__all__ = ["RotaryEmbedding", "rotate_half"]


def rotate_half(x):
    """Swap the two halves of the last axis and negate the new first half.

    ``(x1, x2) -> (-x2, x1)``: on each pair ``(x_i, x_{i + d/2})`` it is the rotation by
    90 degrees, so that ``x * cos + rotate_half(x) * sin`` rotates every pair by its angle.

    Args:
        x (torch.Tensor): ``(..., d)`` with ``d`` even.

    Returns:
        torch.Tensor: ``(..., d)``.
    """
    x1, x2 = x.chunk(2, dim=-1)  # (..., d) -> two (..., d/2)
    return torch.cat((-x2, x1), dim=-1)  # -> (..., d)


class RotaryEmbedding(nn.Module):
    r"""Rotates queries or keys by their position: ``x * cos + rotate_half(x) * sin``.

    Pair ``(x_i, x_{i + head_dim/2})`` of the token at position ``p`` is rotated by the
    angle :math:`p\,\theta_i`, :math:`\theta_i = \text{base}^{-2i/\text{head\_dim}}`,
    ``i = 0 .. head_dim/2 - 1`` (GPT-NeoX and Llama's "rotate half" layout). Apply it to
    the queries and the keys of each head, after the projections and before the scores;
    never to the values.

    Args:
        head_dim (int): size of the last axis (one head's dimension); must be even.
        max_len (int): number of positions in the cos/sin tables; ``offset + T`` may not
            exceed it.
        base (float): the base of the frequencies, greater than 1 (10000 in the paper).

    Attributes:
        cos, sin (torch.Tensor): non-persistent buffers ``(max_len, head_dim)``,
            :math:`\cos p\,\theta_i` and :math:`\sin p\,\theta_i` with each frequency
            written twice (once for each half); computed in float64, stored in float32,
            cast to the input's dtype when used.

    Shape:
        - input ``x``: ``(..., T, head_dim)``, e.g. ``(B, num_heads, T, head_dim)``
        - output: same shape as ``x``

    Example::

        >>> rope = RotaryEmbedding(64, max_len=1024)
        >>> q = rope(q)                 # positions 0 .. T-1
        >>> k_new = rope(k_new, offset=T_cache)  # positions continue after a cache
    """

    def __init__(self, head_dim, max_len=4096, base=10000.0):
        super().__init__()
        self.head_dim, self.max_len, self.base = _check_sizes(head_dim, max_len, base)
        i = torch.arange(0, self.head_dim, 2, dtype=torch.float64)  # (head_dim/2,): 0, 2, 4, ...
        theta = self.base ** (-i / self.head_dim)  # (head_dim/2,): base^(-i/head_dim), 1 .. ~1/base
        p = torch.arange(self.max_len, dtype=torch.float64)  # (max_len,)
        angles = torch.outer(p, theta)  # (max_len,) x (head_dim/2,) -> (max_len, head_dim/2)
        angles = torch.cat((angles, angles), dim=-1)  # -> (max_len, head_dim) = [angles, angles]
        self.register_buffer("cos", angles.cos().float(), persistent=False)
        self.register_buffer("sin", angles.sin().float(), persistent=False)

    def forward(self, x, offset=0):
        """Rotate each position ``t`` of ``x`` as position ``offset + t``.

        Args:
            x (torch.Tensor): ``(..., T, head_dim)``, floating point.
            offset (int): position of the first row (the number of tokens already in a
                KV cache); ``offset + T <= max_len``.

        Returns:
            torch.Tensor: same shape and dtype as ``x``.
        """
        self._check(x, offset)
        return self._rotate(x, offset)

    def _rotate(self, x, offset):
        """:meth:`forward` without its checks (attention layers call this one)."""
        T = x.size(-2)
        cos = self.cos[offset : offset + T].to(x.dtype)  # (T, head_dim)
        sin = self.sin[offset : offset + T].to(x.dtype)  # (T, head_dim)
        return x * cos + rotate_half(x) * sin  # (..., T, head_dim) * (T, head_dim)

    def _rotate_at(self, x, pos):
        """Rotate row ``t`` of sequence ``b`` as position ``pos[b, t]``; ``pos`` ``(B, T)`` int64, checked."""
        cos = self.cos[pos].to(x.dtype).unsqueeze(-3)  # (B, T) -> (B, T, head_dim) -> (B, 1, T, head_dim)
        sin = self.sin[pos].to(x.dtype).unsqueeze(-3)  # (B, 1, T, head_dim), broadcast over the heads
        return x * cos + rotate_half(x) * sin  # (B, h, T, head_dim)

    def _check(self, x, offset):
        _checks.tensor("x", x, floating=True)
        if x.dim() < 2 or x.size(-1) != self.head_dim:
            raise ValueError(
                f"x must have shape (..., T, head_dim={self.head_dim}), "
                f"got shape {tuple(x.shape)}"
            )
        if isinstance(offset, bool) or not isinstance(offset, numbers.Integral):
            raise TypeError(f"offset must be an int, got {type(offset).__name__} ({offset!r})")
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset}")
        if offset + x.size(-2) > self.max_len:
            raise ValueError(
                f"offset + T = {offset} + {x.size(-2)} = {offset + x.size(-2)} positions, "
                f"more than max_len={self.max_len}"
            )


def _check_sizes(head_dim, max_len, base):
    """The input checks of :class:`RotaryEmbedding`; returns ``(head_dim, max_len, base)``."""
    head_dim = _checks.positive_int("head_dim", head_dim)
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim must be even (RoPE rotates pairs of coordinates), got {head_dim}")
    max_len = _checks.positive_int("max_len", max_len)
    if isinstance(base, bool) or not isinstance(base, numbers.Real):
        raise TypeError(f"base must be a float, got {type(base).__name__} ({base!r})")
    if not base > 1.0:
        raise ValueError(f"base must be greater than 1, got {base}")
    return head_dim, max_len, float(base)
