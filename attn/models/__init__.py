"""The toy models the book trains while it builds, each with its data and its metrics.

- :mod:`attn.models.tiny_lm`: a small causal language model with grouped-query attention,
  RoPE and a KV cache, and the patterns it learns (chapters 13, 14, 18 and 20);
- :mod:`attn.models.seq2seq`: an encoder–decoder that rewrites dates with
  cross-attention (chapter 16);
- :mod:`attn.models.circuits`: an attention-only Transformer that grows an induction
  head, and the scores that find it (chapter 17);
- :mod:`attn.models.two_relations`: the two-head model of chapter 9;
- :mod:`attn.models.recall`: associative recall, softmax against linear attention
  (chapter 21).

They all train with :func:`attn.models.train.fit`, once per build
(:func:`attn.models.train.cached`).
"""
from . import circuits, recall, seq2seq, tiny_lm, train, two_relations

__all__ = ["train", "tiny_lm", "seq2seq", "circuits", "two_relations", "recall"]
