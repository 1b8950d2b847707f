r"""A tiny encoder–decoder that rewrites dates, small enough to train while the book builds.

The encoder reads a date written ``DD/MM/YYYY`` (self-attention over all its tokens);
the decoder writes it as ``YYYY-MM-DD``, one token at a time (causal self-attention over
what it has written, then :class:`attn.CrossAttention` over the encoder's output). Each
digit of the output copies one digit of the input, so the alignment the cross-attention
should learn can be checked by eye: the decoder's ``i``-th digit must look at
``ALIGNMENT[i]`` in the source.

:func:`date_batch` draws the task, :func:`train` trains a :class:`Seq2Seq`,
:func:`alignment_accuracy` measures how often the largest cross-attention weight falls on
the aligned source token, :func:`exact_match` how often the whole rewritten date is right.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from .. import _checks
from .train import cached, fit
from ..layers.cross_attention import CrossAttention
from ..cache.kv_cache import KVCache
from ..layers.multihead import MultiHeadAttention

__all__ = [
    "SYMBOLS", "BOS", "ALIGNMENT", "Seq2Seq", "date_batch", "encode", "decode",
    "train", "cross_weights", "alignment_accuracy", "exact_match",
]

SYMBOLS = "0123456789/-"  # token id i is SYMBOLS[i]
BOS = len(SYMBOLS)  # the decoder's start token, id 12
SRC_LEN = TGT_LEN = 10  # "24/11/2026" -> "2026-11-24"
# ALIGNMENT[i]: the source position the i-th output token copies (None for the dashes).
ALIGNMENT = (6, 7, 8, 9, None, 3, 4, None, 0, 1)


def encode(text):
    """Token ids ``(len(text),)`` of a string over :data:`SYMBOLS`."""
    if not isinstance(text, str) or any(c not in SYMBOLS for c in text):
        raise ValueError(f"text must be a str over the symbols {SYMBOLS!r}, got {text!r}")
    return torch.tensor([SYMBOLS.index(c) for c in text])


def decode(ids):
    """The string of token ids (``BOS`` is written ``^``)."""
    return "".join(SYMBOLS[i] if i < BOS else "^" for i in ids.tolist())


def date_batch(batch_size, generator=None):
    """``batch_size`` random dates, as the pair ``(src, tgt)`` of id tensors ``(B, 10)``.

    Days ``01``–``28``, months ``01``–``12``, years ``1000``–``2999``; ``src`` is
    ``DD/MM/YYYY`` and ``tgt`` is ``YYYY-MM-DD``.
    """
    _checks.positive_int("batch_size", batch_size)
    d = torch.randint(1, 29, (batch_size,), generator=generator)
    m = torch.randint(1, 13, (batch_size,), generator=generator)
    y = torch.randint(1000, 3000, (batch_size,), generator=generator)
    src = [encode(f"{a:02d}/{b:02d}/{c:04d}") for a, b, c in zip(d.tolist(), m.tolist(), y.tolist())]
    tgt = [encode(f"{c:04d}-{b:02d}-{a:02d}") for a, b, c in zip(d.tolist(), m.tolist(), y.tolist())]
    return torch.stack(src), torch.stack(tgt)  # (B, 10), (B, 10)


def _check_forward(model, src, tgt_in, *, return_weights=False):
    """The checks of :meth:`Seq2Seq.forward`."""
    V = len(SYMBOLS) + 1
    _checks.token_ids("src", src, V, model.max_len)
    _checks.token_ids("tgt_in", tgt_in, V, model.max_len)
    if src.dim() != 2 or tgt_in.dim() != 2 or src.size(0) != tgt_in.size(0):
        raise ValueError(f"src and tgt_in must have shape (B, T) with the same B, got "
                         f"{tuple(src.shape)} and {tuple(tgt_in.shape)}")
    _checks.flag("return_weights", return_weights)


def _check_generate(model, src):
    """The checks of :meth:`Seq2Seq.generate`."""
    _checks.token_ids("src", src, len(SYMBOLS) + 1, model.max_len)
    if src.dim() != 2:
        raise ValueError(f"src must have shape (B, T_src), got {tuple(src.shape)}")


class Seq2Seq(nn.Module):
    r"""A one-layer encoder and a one-layer decoder joined by cross-attention.

    Encoder: :math:`H = E + \operatorname{MHA}(E)`, then :math:`H + \operatorname{MLP}(H)`
    (no causal mask). Decoder: :math:`Y + \operatorname{MHA}_{causal}(Y)`, then
    :math:`+ \operatorname{CrossAttention}(\cdot, H)`, then :math:`+ \operatorname{MLP}`,
    then a readout to one score per token. Pre-norm (a layer norm before each sub-layer);
    learned position embeddings.

    Args:
        d_model (int): width of every embedding and of the residual streams.
        num_heads (int): heads of every attention layer.
        max_len (int): the most positions of the source and of the target.
        cross_causal (bool): put a causal mask on the cross-attention: decoder position
            ``i`` reads source positions ``0 .. i`` only. An attribute, so that it can also
            be switched on after training.

    Attributes:
        tok_emb (nn.Embedding): token embeddings, shared by source and target.
        src_pos, tgt_pos (nn.Embedding): position embeddings of source and target.
        enc_attn (attn.MultiHeadAttention): the encoder's self-attention.
        dec_attn (attn.MultiHeadAttention): the decoder's causal self-attention.
        cross (attn.CrossAttention): the decoder reads the encoder's output.
        head (nn.Sequential): layer norm and readout ``d_model -> 13``.
    """

    def __init__(self, d_model=32, num_heads=1, max_len=16, *, cross_causal=False):
        super().__init__()
        d, self.max_len = _checks.sizes(d_model=d_model, max_len=max_len)
        self.cross_causal = _checks.flag("cross_causal", cross_causal)
        V = len(SYMBOLS) + 1
        self.tok_emb = nn.Embedding(V, d)
        self.src_pos = nn.Embedding(max_len, d)
        self.tgt_pos = nn.Embedding(max_len, d)
        self.enc_ln = nn.LayerNorm(d)
        self.enc_attn = MultiHeadAttention(d, d, max_len, 0.0, num_heads, causal=False)
        self.enc_mlp = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.dec_ln1 = nn.LayerNorm(d)
        self.dec_attn = MultiHeadAttention(d, d, max_len, 0.0, num_heads, causal=True)
        self.dec_ln2 = nn.LayerNorm(d)
        self.cross = CrossAttention(d, d, d, num_heads)
        self.dec_mlp = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.head = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, V))

    def extra_repr(self):
        """``cross_causal=True`` or ``False``: what ``print(model)`` shows beside the layers."""
        return f"cross_causal={self.cross_causal}"  # in the key of attn/models/train.py

    @_checks.door(_check_forward)
    def forward(self, src, tgt_in, *, return_weights=False):
        """Scores of the next target token at each decoder position.

        Args:
            src (torch.Tensor): source ids ``(B, T_src)``.
            tgt_in (torch.Tensor): decoder input ids ``(B, T_tgt)`` (``BOS`` then the
                target shifted right).
            return_weights (bool): also return the cross-attention weights.

        Returns:
            torch.Tensor or tuple: logits ``(B, T_tgt, 13)``, or ``(logits, weights)``
            with ``weights`` ``(B, h, T_tgt, T_src)``.
        """
        return self._decode(self._encode(src), tgt_in, return_weights=return_weights)

    def _encode(self, src):
        """The encoder: source ids ``(B, T_src)`` -> ``h`` ``(B, T_src, d)``."""
        h = self.tok_emb(src) + self.src_pos.weight[: src.size(1)]  # (B, T_src, d)
        h = h + self.enc_attn(self.enc_ln(h))  # (B, T_src, d), causal=False
        return h + self.enc_mlp(h)  # (B, T_src, d)

    def _decode(self, h, tgt_in, memory=None, return_weights=False):
        """The decoder: ids ``(B, T_tgt)`` read the encoder's ``h`` -> logits ``(B, T_tgt, 13)``.

        ``memory``: an :class:`attn.KVCache` for the cross-attention's keys and values
        of ``h``, computed at the first call and read at the next ones.
        """
        y = self.tok_emb(tgt_in) + self.tgt_pos.weight[: tgt_in.size(1)]  # (B, T_tgt, d)
        y = y + self.dec_attn(self.dec_ln1(y))  # (B, T_tgt, d), causal=True
        c, w = self._cross(self.dec_ln2(y), h, memory)  # (B, T_tgt, d), (B, h, T_tgt, T_src)
        y = y + c
        y = y + self.dec_mlp(y)  # (B, T_tgt, d)
        logits = self.head(y)  # (B, T_tgt, 13)
        return (logits, w) if return_weights else logits

    def _cross(self, y, h, memory=None):
        """Cross-attention of ``y`` ``(B, T_tgt, d)`` over ``h`` ``(B, T_src, d)``, with its weights."""
        if not self.cross_causal:
            return self.cross(y, h, cache=memory, return_weights=True)
        B, T_src = h.shape[:2]
        rows = [self.cross(y[:, i:i + 1], h, return_weights=True,  # query i: keys 0 .. i
                           context_padding_mask=(torch.arange(T_src, device=h.device) <= i).expand(B, T_src))
                for i in range(y.size(1))]
        return torch.cat([c for c, _ in rows], 1), torch.cat([w for _, w in rows], 2)  # (B, T_tgt, d), (B, h, T_tgt, T_src)

    @torch.no_grad()
    @_checks.door(_check_generate)
    def generate(self, src):
        """Greedy decoding of ``TGT_LEN`` tokens for source ids ``src`` ``(B, T_src)``.

        The encoder runs once, and the cross-attention projects its output to keys and
        values once (``memory``); each step runs the decoder on the tokens written so far.
        """
        h, memory = self._encode(src), KVCache()  # (B, T_src, d); memory: K, V of h
        out = torch.full((src.size(0), 1), BOS, device=src.device)  # (B, 1)
        for _ in range(TGT_LEN):
            nxt = self._decode(h, out, memory)[:, -1].argmax(-1, keepdim=True)  # (B, 1)
            out = torch.cat([out, nxt], dim=1)  # (B, t) -> (B, t + 1)
        return out[:, 1:]  # (B, TGT_LEN)


def _shift(tgt):
    return torch.cat([torch.full((tgt.size(0), 1), BOS, device=tgt.device), tgt[:, :-1]], dim=1)  # (B, T) -> (B, T)


@cached()
def train(model, steps=400, batch_size=64, lr=3e-3, seed=0):
    """Train ``model`` on random dates with Adam and cross-entropy (teacher forcing).

    Returns:
        list[float]: the loss at every step.
    """
    if not isinstance(model, Seq2Seq):
        raise TypeError(f"model must be an attn.models.seq2seq.Seq2Seq, got {type(model).__name__}")
    _checks.positive_int("steps", steps)
    _checks.positive_int("batch_size", batch_size)
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    device = model.tok_emb.weight.device

    def loss(m, g):
        src, tgt = (t.to(device) for t in date_batch(batch_size, g))  # (B, 10), on the model's device
        logits = m(src, _shift(tgt))  # (B, T, 13)
        return F.cross_entropy(logits.flatten(0, 1), tgt.flatten())  # (B T, 13) against (B T,)

    return fit(model, loss, steps, opt, generator=g)


def _check_pair(model, src, tgt):
    if not isinstance(model, Seq2Seq):
        raise TypeError(f"model must be an attn.models.seq2seq.Seq2Seq, got {type(model).__name__}")
    for name, t in (("src", src), ("tgt", tgt)):
        _checks.token_ids(name, t, BOS, model.max_len)
        if t.dim() != 2 or t.size(1) != SRC_LEN:
            raise ValueError(f"{name} must have shape (B, {SRC_LEN}) (see date_batch), got {tuple(t.shape)}")
    if src.size(0) != tgt.size(0):
        raise ValueError(f"src and tgt must have the same B, got {src.size(0)} and {tgt.size(0)}")


@torch.no_grad()
def cross_weights(model, src, tgt):
    """Cross-attention weights ``(B, h, 10, 10)`` with the target fed by teacher forcing.

    Args:
        model (Seq2Seq): the model.
        src, tgt (torch.Tensor): ids ``(B, 10)``, as :func:`date_batch` gives them.
    """
    _check_pair(model, src, tgt)
    with _checks.checked():  # src and tgt checked above
        return model(src, _shift(tgt), return_weights=True)[1]


def alignment_accuracy(model, src, tgt):
    """Share of digit steps whose largest cross-attention weight (mean over heads) falls
    on the aligned source token :data:`ALIGNMENT`; a float in ``[0, 1]``."""
    w = cross_weights(model, src, tgt).mean(1)  # checks the inputs  # (B, h, T_tgt, T_src) -> (B, T_tgt, T_src)
    steps = [i for i, a in enumerate(ALIGNMENT) if a is not None]
    want = torch.tensor([ALIGNMENT[i] for i in steps], device=w.device)  # (8,)
    return (w[:, steps].argmax(-1) == want).float().mean().item()


def exact_match(model, src, tgt):
    """Share of dates that greedy decoding rewrites exactly; a float in ``[0, 1]``."""
    _check_pair(model, src, tgt)
    return (model.generate(src) == tgt).all(-1).float().mean().item()
