r"""A paged KV cache: keys and values in fixed-size blocks of a shared pool.

A contiguous cache gives each sequence one array of positions. An engine that serves
many requests does not know how long each will grow, so a contiguous cache must reserve
room for the longest possible sequence, and most of that room stays empty. PagedAttention
(Kwon et al., 2023, the vLLM engine) stores the cache the way an operating system stores
memory pages: one **pool** of ``num_blocks`` blocks of ``block_size`` positions, and for
every sequence a **block table**, the list of the blocks that hold its positions, in
order. Position :math:`p` of a sequence lives in slot :math:`p \bmod s` of block
``table[p // s]`` (:math:`s` the block size). A sequence takes a new block only when its
last one is full, so at most :math:`s - 1` slots per sequence stay empty; a finished
sequence gives its blocks back to the pool.

:class:`PagedKVCache` has the interface of :class:`attn.KVCache` (``update`` and
``len``), so it plugs into any module that takes ``cache=``.
"""
import math

import torch

from .. import _checks

__all__ = ["PagedKVCache"]


class _Pool:
    """The blocks that several caches share: their storage and the list of free blocks.

    The storage is allocated at the first ``update``, when the number of heads, the head
    dimensions, the dtype and the device are known: ``k`` ``(num_blocks, h_kv, s, d_k)``,
    ``v`` ``(num_blocks, h_kv, s, d_v)``.
    """

    def __init__(self, num_blocks, block_size):
        self.num_blocks, self.block_size = num_blocks, block_size
        self.k = self.v = None
        self.free = list(range(num_blocks))  # block ids, lowest first

    def allocate(self, k, v):
        """Allocate the storage for keys and values shaped like ``k`` and ``v`` (new tokens)."""
        h, d_k, d_v = k.size(-3), k.size(-1), v.size(-1)
        self.k = k.new_zeros(self.num_blocks, h, self.block_size, d_k)  # (N, h_kv, s, d_k)
        self.v = v.new_zeros(self.num_blocks, h, self.block_size, d_v)  # (N, h_kv, s, d_v)


class PagedKVCache:
    r"""A KV cache stored in blocks of ``block_size`` positions, taken from a pool of ``num_blocks``.

    It has :class:`attn.KVCache`'s interface: a module called with ``cache=`` appends its
    new tokens' keys and values with :meth:`update` and attends to what it returns; ``len``
    is the number of cached positions. The outputs are the same as with
    :class:`attn.KVCache` (tested). Each sequence of the batch has its own block table;
    :meth:`new_sequence` gives another, empty cache that draws its blocks from the same
    pool (another request served by the same layer), and :meth:`reset` gives a cache's
    blocks back to it.

    Each ``update`` writes the new positions into their slots in place and returns the
    sequence's keys and values gathered from its blocks, in position order. A GPU kernel
    such as vLLM's reads the blocks where they are; PyTorch on the CPU has no such
    kernel, so the gathering is a copy. What paging saves is memory, not time.

    Args:
        num_blocks (int): blocks in the pool, shared by every cache made with
            :meth:`new_sequence` from this one.
        block_size (int): positions per block, :math:`s`.

    Attributes:
        block_tables (list of list of int): for each sequence of the batch (one for an
            unbatched sequence), the ids of its blocks, in position order.

    Example::

        cache = attn.PagedKVCache(num_blocks=64, block_size=16)
        y = mha(x, cache=cache)            # x (B, T, d_in): B block tables of ceil(T / 16) blocks
        other = cache.new_sequence()        # same pool, empty
    """

    def __init__(self, num_blocks, block_size):
        num_blocks, block_size = _checks.sizes(num_blocks=num_blocks, block_size=block_size)
        self._pool = _Pool(num_blocks, block_size)
        self.block_tables = []
        self._batch = None  # the batch shape, () or (B,), set by the first update
        self._len = 0

    def new_sequence(self):
        """An empty cache with its own block tables, drawing blocks from this cache's pool."""
        other = PagedKVCache.__new__(PagedKVCache)
        other._pool, other.block_tables, other._batch, other._len = self._pool, [], None, 0
        return other

    @property
    def num_blocks(self):
        """Blocks in the pool."""
        return self._pool.num_blocks

    @property
    def block_size(self):
        """Positions per block."""
        return self._pool.block_size

    @property
    def free_blocks(self):
        """Blocks of the pool that no cache holds."""
        return len(self._pool.free)

    def __len__(self):
        """Number of cached positions, ``T_cached`` (0 while empty)."""
        return self._len

    def __repr__(self):
        held = sum(map(len, self.block_tables))
        return (f"PagedKVCache(T={self._len}, blocks={held}, block_size={self.block_size}, "
                f"free={self.free_blocks}/{self.num_blocks}, {self.nbytes} bytes)")

    @property
    def nbytes(self):
        r"""Bytes of the blocks this cache holds, keys and values, every slot of each block.

        :math:`n \cdot h_{kv} \cdot s \cdot (d_k + d_v) \cdot b`, with :math:`n` the
        number of blocks held, summed over the sequences of the batch: the used slots plus
        the empty ones at the end of each sequence's last block.
        """
        pool = self._pool
        if pool.k is None:
            return 0
        per_block = (pool.k[0].numel() * pool.k.element_size() + pool.v[0].numel() * pool.v.element_size())
        return sum(map(len, self.block_tables)) * per_block

    def reset(self):
        """Give this cache's blocks back to the pool and empty it (start a new sequence)."""
        for table in self.block_tables:
            self._pool.free.extend(table)
        self._pool.free.sort()
        self.block_tables, self._batch, self._len = [], None, 0

    def update(self, k, v):
        """Write the new tokens' keys and values into their blocks; return everything cached.

        Args:
            k (torch.Tensor): keys of the new tokens ``(B, h_kv, T_new, d_k)``, or
                ``(h_kv, T_new, d_k)`` for one unbatched sequence.
            v (torch.Tensor): their values ``(B, h_kv, T_new, d_v)`` (``d_v`` may differ
                from ``d_k``).

        Returns:
            tuple: ``(k_all, v_all)``, ``(B, h_kv, T_cached + T_new, d_k)`` and
            ``(B, h_kv, T_cached + T_new, d_v)``: the cached positions first, then the new
            ones (copies gathered from the blocks).

        Raises:
            ValueError: when ``k`` and ``v`` do not fit each other or what the pool holds
                (another layer's heads or head dimensions, another batch size), or when
                the pool has too few free blocks; the cache is left unchanged.
            TypeError: when ``k`` or ``v`` is not a floating-point tensor, or their dtype
                or device differs from the pool's.
        """
        self._check(k, v)
        pool, s = self._pool, self._pool.block_size
        if pool.k is None:
            pool.allocate(k, v)
        P, T = self._len, k.size(-2)
        k4, v4 = (k, v) if k.dim() == 4 else (k[None], v[None])  # -> (B, h_kv, T_new, d)
        B = k4.size(0)
        if not self.block_tables:
            self.block_tables = [[] for _ in range(B)]
            self._batch = tuple(k.shape[:-3])
        for table in self.block_tables:  # + ceil((P + T) / s) - len(table) blocks, positions P .. P + T - 1
            table.extend(pool.free.pop(0) for _ in range(math.ceil((P + T) / s) - len(table)))
        tables = torch.tensor(self.block_tables, device=k.device)  # (B, n_blocks)
        p = torch.arange(P, P + T, device=k.device)  # (T_new,) positions
        blocks = tables[:, p // s]  # (B, T_new): block of position p
        pool.k[blocks, :, p % s] = k4.transpose(1, 2)  # pool.k[table[p // s], :, p % s] <- (B, T_new, h_kv, d_k)
        pool.v[blocks, :, p % s] = v4.transpose(1, 2)  # (B, h_kv, T_new, d_v) -> (B, T_new, h_kv, d_v)
        self._len = P + T
        k_all = _gather(pool.k, tables, P + T)  # (B, h_kv, P + T, d_k)
        v_all = _gather(pool.v, tables, P + T)  # (B, h_kv, P + T, d_v)
        return (k_all, v_all) if k.dim() == 4 else (k_all[0], v_all[0])

    def _check(self, k, v):
        """The input checks of :meth:`update`: shapes, the pool's layer, free blocks."""
        _checks.tensor("k", k, floating=True)
        _checks.tensor("v", v, floating=True)
        if k.dim() not in (3, 4) or k.shape[:-1] != v.shape[:-1] or k.dtype != v.dtype:
            raise ValueError(
                "k and v must have shapes (B, h_kv, T_new, d_k) and (B, h_kv, T_new, d_v) (or "
                f"(h_kv, T_new, d) for one unbatched sequence) and one dtype, got k "
                f"{tuple(k.shape)} {k.dtype} and v {tuple(v.shape)} {v.dtype}"
            )
        pool = self._pool
        if pool.k is not None:
            held = (pool.k.size(1), pool.k.size(3), pool.v.size(3))
            given = (k.size(-3), k.size(-1), v.size(-1))
            if held != given:
                raise ValueError(
                    f"cache's pool holds (h_kv, d_k, d_v)={held}, but the new keys and values "
                    f"have {given}: use one pool per layer"
                )
            if (k.dtype, k.device) != (pool.k.dtype, pool.k.device):
                raise TypeError(
                    f"cache's pool holds dtype {pool.k.dtype} on {pool.k.device}, but the new "
                    f"keys have dtype {k.dtype} on {k.device}"
                )
        if self.block_tables and tuple(k.shape[:-3]) != self._batch:
            raise ValueError(
                f"cache holds sequences of batch shape {self._batch}, but the new keys have "
                f"shape {tuple(k.shape)}: use one cache per batch, or reset() it"
            )
        B = k.size(0) if k.dim() == 4 else 1
        have = len(self.block_tables[0]) if self.block_tables else 0
        need = B * (math.ceil((self._len + k.size(-2)) / pool.block_size) - have)
        if need > len(pool.free):
            raise ValueError(
                f"cache's pool is out of blocks: {self._len} + {k.size(-2)} positions for "
                f"{B} sequence(s) need {need} more blocks of block_size={pool.block_size}, "
                f"and {len(pool.free)} of num_blocks={pool.num_blocks} are free; reset() "
                "finished sequences or make num_blocks larger"
            )


def _gather(pool, tables, T):
    """The first ``T`` positions of each sequence: ``pool[tables]`` in position order."""
    B, n = tables.shape
    x = pool[tables]  # (B, n_blocks, h_kv, s, d)
    x = x.transpose(1, 2)  # -> (B, h_kv, n_blocks, s, d)
    return x.reshape(B, x.size(1), n * pool.size(2), x.size(-1))[:, :, :T]  # -> (B, h_kv, T, d)
