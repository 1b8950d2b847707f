"""The running example of Raschka's chapter 3: "Your journey starts with one step".

Raschka, *Build a Large Language Model (From Scratch)*, Manning 2024, section 3.3.

Call it as ``attn.journey()``, the one spelling the book and the examples use.
"""
import torch

__all__ = ["journey"]

_TOKENS = ("Your", "journey", "starts", "with", "one", "step")
_INPUTS = (
    (0.43, 0.15, 0.89),  # Your
    (0.55, 0.87, 0.66),  # journey  (x^2)
    (0.57, 0.85, 0.64),  # starts   (x^3)
    (0.22, 0.58, 0.33),  # with
    (0.77, 0.25, 0.10),  # one
    (0.05, 0.80, 0.55),  # step
)


def journey():
    """The six tokens and their three-dimensional embeddings, as Raschka gives them.

    Returns:
        tuple: ``(tokens, inputs)`` where ``tokens`` is the list
        ``["Your", "journey", "starts", "with", "one", "step"]`` and ``inputs`` a new
        float32 tensor of shape ``(6, 3)``, row ``i`` embedding ``tokens[i]``.
    """
    return list(_TOKENS), torch.tensor(_INPUTS)
