"""Caches for the tests: any object with ``update(k, v)`` and ``len()`` is a cache."""
import torch


class ListCache:
    """A cache built like KVCache, from lists of chunks: the modules take any such object."""

    def __init__(self):
        self.ks, self.vs = [], []

    def __len__(self):
        return sum(k.size(-2) for k in self.ks)

    def update(self, k, v):
        self.ks.append(k.clone())
        self.vs.append(v.clone())
        return torch.cat(self.ks, dim=-2), torch.cat(self.vs, dim=-2)
