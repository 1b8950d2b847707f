r"""Sinusoidal positional encoding (Vaswani et al., 2017), added to the embeddings.

.. math::

    PE_{(pos, 2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right), \qquad
    PE_{(pos, 2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)
"""
import math

import torch
import torch.nn as nn

from .. import _checks

__all__ = ["PositionalEncoding", "sinusoidal_table"]


def sinusoidal_table(max_len, d_model):
    """The sinusoidal table ``PE`` of shape ``(max_len, d_model)`` (float32).

    Even columns hold sines, odd columns cosines, of ``pos / 10000**(2i / d_model)``.
    An odd ``d_model`` is allowed: the last column is a sine.

    Args:
        max_len (int): number of positions.
        d_model (int): embedding width.

    Returns:
        torch.Tensor: ``(max_len, d_model)``.
    """
    max_len = _checks.positive_int("max_len", max_len)
    d_model = _checks.positive_int("d_model", d_model)
    pe = torch.zeros(max_len, d_model)
    pos = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)  # (max_len,) -> (max_len, 1)
    div = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float) * (-math.log(10000.0) / d_model)
    )  # (ceil(d_model / 2),)
    pe[:, 0::2] = torch.sin(pos * div)  # (max_len, 1) * (ceil(d/2),) -> (max_len, ceil(d/2))
    pe[:, 1::2] = torch.cos(pos * div[: d_model // 2])  # -> (max_len, floor(d/2))
    return pe


class PositionalEncoding(nn.Module):
    r"""Adds the sinusoidal positional encoding, then dropout: ``dropout(x + PE[:T])``.

    Args:
        d_model (int): embedding width.
        max_len (int): longest sequence accepted.
        dropout (float): dropout probability after the sum, in ``[0, 1)``.

    Attributes:
        pe (torch.Tensor): buffer ``(max_len, d_model)``, the table of
            :func:`sinusoidal_table` (no trainable parameters).

    Shape:
        - input ``x``: ``(T, d_model)`` or ``(B, T, d_model)``, ``T <= max_len``
        - output: same shape as ``x``
    """

    def __init__(self, d_model, max_len=5000, dropout=0.1):
        super().__init__()
        self.d_model = _checks.positive_int("d_model", d_model)
        self.max_len = _checks.positive_int("max_len", max_len)
        self.dropout = nn.Dropout(_checks.probability("dropout", dropout))
        self.register_buffer("pe", sinusoidal_table(max_len, d_model))

    def forward(self, x):
        """Add ``pe[:T]`` to every sequence of ``x``.

        Args:
            x (torch.Tensor): ``(T, d_model)`` or ``(B, T, d_model)``.

        Returns:
            torch.Tensor: same shape as ``x``.
        """
        _checks.sequence("x", x, self.d_model, self.max_len, d_name="d_model")
        T = x.size(-2)
        return self.dropout(x + self.pe[:T])  # (..., T, d_model) + (T, d_model)
