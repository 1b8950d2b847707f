"""Pictures of attention: the book's heatmaps (:mod:`attn.viz.plot`) and diagrams of the
mechanism drawn from the shapes of real tensors (:mod:`attn.viz.diagrams`).

Both import matplotlib and numpy inside their functions: ``import attn`` needs only
PyTorch, and ``pip install attn[plot]`` adds what drawing needs.
"""
from . import diagrams, plot

__all__ = ["plot", "diagrams"]
