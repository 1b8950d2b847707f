r"""The key-value cache: what a decoder keeps from one generation step to the next.

A causal model generates one token at a time. At step :math:`t` the new token's query
needs the keys and values of positions :math:`0 .. t`; those of positions
:math:`0 .. t-1` were already computed at the earlier steps and, because attention is
causal, they have not changed. A :class:`KVCache` stores them, so that each step
projects only the new tokens and appends their keys and values.

Its size for one sequence, for a model with :math:`L` attention layers, :math:`h_{kv}`
key-value heads of dimension :math:`d_{head}`, :math:`T` cached positions and :math:`b`
bytes per number, in bytes:

.. math::

    2 \cdot L \cdot h_{kv} \cdot d_{head} \cdot T \cdot b

(the 2 counts keys and values); :func:`kv_cache_bytes` computes it.
"""
import torch

from .. import _checks

__all__ = ["KVCache", "kv_cache_bytes"]


class KVCache:
    r"""Keys and values of the positions one attention layer has already seen.

    One cache per attention layer and per batch of sequences. It starts empty; a module
    called with ``cache=`` (:class:`attn.MultiHeadAttention`,
    :class:`attn.GroupedQueryAttention`) appends the keys and values of its new tokens
    with :meth:`update` and attends to everything the cache holds. The module checks
    that the cache never holds more than its ``context_length`` positions; the cache
    checks that the new keys and values fit the ones it holds.

    Without a ``capacity`` the cache grows: each :meth:`update` concatenates, which
    allocates a new tensor and copies everything held, a cost that grows with the number
    of cached positions. With a ``capacity`` it allocates room for that many positions at
    its first :meth:`update` and writes every new position in place, as inference engines
    do; the numbers are the same. Either way it keeps copies: changing the tensors passed
    to :meth:`update` afterwards does not change the cache.

    A module accepts as ``cache`` any object with the same two methods, ``update(k, v)``
    (append, return every key and value held) and ``len()`` (positions held).

    Args:
        capacity (int, optional): the most positions the cache will hold; ``None`` (the
            default) for a cache that grows.

    Attributes:
        k (torch.Tensor or None): cached keys ``(B, h_kv, T_cached, d_k)`` (no ``B``
            for an unbatched sequence), or ``None`` while empty; with a capacity, a view
            of the allocated memory.
        v (torch.Tensor or None): cached values ``(B, h_kv, T_cached, d_v)``.

    Example::

        cache = attn.KVCache()            # or attn.KVCache(capacity=context_length)
        y1 = mha(x[:, :5], cache=cache)   # positions 0..4; len(cache) == 5
        y2 = mha(x[:, 5:6], cache=cache)  # position 5 attends to 0..5
    """

    def __init__(self, capacity=None):
        self.capacity = None if capacity is None else _checks.positive_int("capacity", capacity)
        self.k = self.v = None
        self._k_buf = self._v_buf = None  # with a capacity: (B, h_kv, capacity, d)

    @classmethod
    def from_tensors(cls, k, v, capacity=None):
        """A cache that holds copies of ``k`` ``(B, h_kv, T, d_k)`` and ``v`` ``(B, h_kv, T, d_v)``.

        The same as ``KVCache(capacity)`` followed by ``update(k, v)`` (checked as it is):
        e.g. to start decoding from keys and values computed elsewhere.
        """
        cache = cls(capacity)
        cache.update(k, v)
        return cache

    def __len__(self):
        """Number of cached positions, ``T_cached`` (0 while empty)."""
        return 0 if self.k is None else self.k.size(-2)

    def __repr__(self):
        if self.k is None:
            return "KVCache(empty)"
        *B, h, T, d = self.k.shape
        batch = f"B={B[0]}, " if B else ""
        room = "" if self.capacity is None else f"capacity={self.capacity}, "
        return f"KVCache({batch}h_kv={h}, T={T}, d_head={d}, {room}{self.nbytes} bytes)"

    @property
    def nbytes(self):
        """Bytes held by the keys and values, ``B * h_kv * T * (d_k + d_v) * b``.

        ``T`` is the number of cached positions, or the ``capacity`` when there is one:
        the memory allocated, used or not. For a model's caches without a capacity, the
        sum of their ``nbytes`` is :func:`kv_cache_bytes`.
        """
        k, v = (self.k, self.v) if self._k_buf is None else (self._k_buf, self._v_buf)
        if k is None:
            return 0
        return k.numel() * k.element_size() + v.numel() * v.element_size()

    def reset(self):
        """Empty the cache (start a new sequence); with a capacity, keep the memory."""
        self.k = None
        self.v = None

    def update(self, k, v):
        """Append the new tokens' keys and values; return everything cached.

        Args:
            k (torch.Tensor): keys of the new tokens ``(B, h_kv, T_new, d_k)``, or
                ``(h_kv, T_new, d_k)`` for one unbatched sequence.
            v (torch.Tensor): their values ``(B, h_kv, T_new, d_v)``; ``d_v`` may differ
                from ``d_k`` (:class:`attn.MultiHeadLatentAttention` caches values of
                width 0).

        Returns:
            tuple: ``(k_all, v_all)``, ``(B, h_kv, T_cached + T_new, d_k)`` and
            ``(B, h_kv, T_cached + T_new, d_v)``: the cached positions first, then the new
            ones. They are the cache's own tensors (``k_all is cache.k``): read them, do
            not change them.

        Raises:
            ValueError: when ``k`` and ``v`` differ in shape but for the last axis, when
                their batch size, number of heads or head dimensions differ from what the
                cache holds (the cache belongs to another batch or another layer; call
                :meth:`reset` or use a new cache), or when they would take the cache past
                its ``capacity``. The cache is left unchanged.
            TypeError: when ``k`` or ``v`` is not a floating-point tensor, or their
                dtype differs from the cache's.
        """
        if self.k is None:
            _check_first(k, v)
        elif not (isinstance(k, torch.Tensor) and isinstance(v, torch.Tensor) and k.shape[:-1] == v.shape[:-1]
                  and k.shape[:-2] == self.k.shape[:-2] and k.shape[-1] == self.k.shape[-1]
                  and v.shape[-1] == self.v.shape[-1] and k.dtype == v.dtype == self.k.dtype):
            _check_first(k, v)
            _check_same_layer("cache", self.k, k)  # raises ValueError | TypeError
            _check_same_layer("cache", self.v, v)
        if self.capacity is not None:  # KVCache(capacity=...): _write, in place
            return self._write(k, v)
        self.k = k.clone() if self.k is None else torch.cat([self.k, k], dim=-2)  # -> (B, h_kv, T_cached + T_new, d_k)
        self.v = v.clone() if self.v is None else torch.cat([self.v, v], dim=-2)  # -> (B, h_kv, T_cached + T_new, d_v)
        return self.k, self.v

    def _write(self, k, v):
        """:meth:`update` with a capacity, on checked ``k`` and ``v``: write positions ``P .. P + T - 1``."""
        P, T = len(self), k.size(-2)  # P = T_cached
        if P + T > self.capacity:
            raise ValueError(f"cache holds {P} positions and the new keys add T_new={T}: {P + T} positions, "
                             f"more than its capacity={self.capacity}")
        if P == 0 and not (_fits(self._k_buf, k) and _fits(self._v_buf, v)):  # P = 0: _k_buf, _v_buf <- zeros
            self._k_buf = k.new_zeros(*k.shape[:-2], self.capacity, k.size(-1))  # (B, h_kv, capacity, d_k)
            self._v_buf = v.new_zeros(*v.shape[:-2], self.capacity, v.size(-1))  # (B, h_kv, capacity, d_v)
        self._k_buf[..., P:P + T, :] = k  # copies T rows; torch.cat: P + T
        self._v_buf[..., P:P + T, :] = v
        self.k, self.v = self._k_buf[..., :P + T, :], self._v_buf[..., :P + T, :]  # views: (B, h_kv, P + T, d)
        return self.k, self.v


def _fits(buffer, x):
    """Whether ``buffer`` ``(..., capacity, d)`` can hold positions shaped like ``x`` ``(..., T, d)``."""
    return (buffer is not None and buffer.shape[:-2] == x.shape[:-2] and buffer.size(-1) == x.size(-1)
            and buffer.dtype == x.dtype and buffer.device == x.device)


def _check_first(k, v):
    """``k`` ``(B, h_kv, T_new, d_k)`` and ``v`` ``(B, h_kv, T_new, d_v)`` (or no ``B``), floating point, one dtype."""
    _checks.tensor("k", k, floating=True)
    _checks.tensor("v", v, floating=True)
    if k.dim() not in (3, 4) or k.shape[:-1] != v.shape[:-1]:
        raise ValueError(
            "k and v must have shapes (B, h_kv, T_new, d_k) and (B, h_kv, T_new, d_v) (or "
            f"(h_kv, T_new, d) for one unbatched sequence), got k {tuple(k.shape)} and v {tuple(v.shape)}"
        )
    if k.dtype != v.dtype:
        raise TypeError(f"k and v must have the same dtype, got {k.dtype} and {v.dtype}")


def _check_same_layer(name, cached, new):
    """New keys ``(B, h_kv, T_new, d_head)`` (or ``(h_kv, T_new, d_head)``) must fit the
    cached ones: same batch size, number of key-value heads, head dimension and dtype."""
    if new.dim() != cached.dim():
        raise ValueError(
            f"{name} holds keys of shape {tuple(cached.shape)}, but the new keys have shape "
            f"{tuple(new.shape)}: batched and unbatched inputs cannot share a cache"
        )
    for axis, what in ((-4, "batch size B"), (-3, "number of key-value heads h_kv"), (-1, "head_dim")):
        if new.dim() >= -axis and new.shape[axis] != cached.shape[axis]:
            raise ValueError(
                f"{name} holds {what}={cached.shape[axis]}, but the new keys have "
                f"{what}={new.shape[axis]} (cached keys {tuple(cached.shape)}, new keys "
                f"{tuple(new.shape)}); use one KVCache per layer and per batch, or reset() it"
            )
    if new.dtype != cached.dtype:
        raise TypeError(f"{name} holds dtype {cached.dtype}, but the new keys have dtype {new.dtype}")


def kv_cache_bytes(num_layers, num_kv_heads, head_dim, seq_len, *, batch=1, bytes_per_element=2,
                   window=None):
    r"""Bytes that the KV caches of a whole model hold.

    Each of the :math:`L` attention layers keeps a key and a value of :math:`d_{head}`
    numbers per key-value head and per cached position:

    .. math::

        2 \cdot L \cdot h_{kv} \cdot d_{head} \cdot T \cdot b \cdot B \quad \text{bytes},

    the 2 for keys and values. With a sliding window of :math:`w` positions (see
    :func:`attn.ops.bias.sliding_window_mask`) a layer keeps only the last :math:`w`
    positions: :math:`T` becomes :math:`\min(T, w)`. For the caches of a model that has
    read ``seq_len`` positions, it equals the sum of their :attr:`KVCache.nbytes`.

    Args:
        num_layers (int): attention layers :math:`L`, one cache each.
        num_kv_heads (int): key-value heads per layer, :math:`h_{kv}`
            (``num_heads`` for multi-head attention).
        head_dim (int): dimension of one head, :math:`d_{head}`.
        seq_len (int): positions read so far, :math:`T`.
        batch (int): sequences :math:`B`, each with its own cache. Default: 1.
        bytes_per_element (int): bytes per number, :math:`b`: 2 for 16-bit numbers
            (the default), 4 for float32.
        window (int or None): sliding window :math:`w`; ``None`` (the default) keeps
            every position.

    Returns:
        int: the size in bytes.

    Raises:
        TypeError: when an argument is not an ``int`` (``window`` may be ``None``).
        ValueError: when an argument is not positive (``seq_len`` may be 0).

    Example::

        >>> attn.kv_cache_bytes(32, 8, 128, 8192)  # Llama-3-8B-like, 16-bit, one sequence
        1073741824
    """
    L, h_kv, d, B, b = _checks.sizes(num_layers=num_layers, num_kv_heads=num_kv_heads,
                                     head_dim=head_dim, batch=batch,
                                     bytes_per_element=bytes_per_element)
    T = _checks.non_negative_int("seq_len", seq_len)
    if window is not None:
        T = min(T, _checks.positive_int("window", window))  # min(T, w)
    return 2 * L * h_kv * d * T * b * B
