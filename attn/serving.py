r"""A small serving engine: continuous batching over paged blocks, prefix caching, speculative decoding.

:class:`Engine` serves many requests to one :class:`attn.models.tiny_lm.TinyLM` at once, as Orca
(Yu et al., 2022) and vLLM (Kwon et al., 2023) do. Each :meth:`Engine.step` is one
forward pass over the packed new tokens of every running request, prefill chunks and
decode tokens together (:math:`N` tokens in all), each at its own positions. The keys
and values live in one pool per layer of ``num_blocks`` blocks of ``block_size``
positions; a :class:`BlockManager` hands the blocks out (a free list, reference counts,
one block table per request) and finds full blocks already computed for the same prefix
(vLLM's automatic prefix caching). A request joins as soon as the pool can hold it and
leaves when it is done, so no slot waits for the longest request of a batch.

:func:`speculative_generate` lets a small draft model guess ``k`` tokens (a chain, or a
tree of ``branches`` chains) and the target check them all in one pass with
:func:`attn.functional.tree_mask` (Leviathan et al., 2023; Chen et al., 2023; Miao et
al., 2024). Both write exactly the tokens of greedy decoding, :meth:`TinyLM.generate`.
"""
import collections
import hashlib

import torch

from . import _checks
from . import functional as AF
from .cache.kv_cache import KVCache
from .models.tiny_lm import TinyLM

__all__ = ["BlockManager", "Engine", "speculative_generate", "static_batching"]


class BlockManager:
    r"""The blocks of a pool: who holds which, which are free, which hold a known prefix.

    Free blocks wait in a queue in eviction order (a doubly linked list: an
    ``OrderedDict``, so taking the first, appending, and removing one from the middle
    are all :math:`O(1)`). A block held by ``n`` requests has reference count ``n``; it
    goes back to the queue at 0. A full block is named by the hash of its tokens and of
    every token before it, so the same hash means the same keys and values; a released
    block keeps its contents, and a later request with that prefix takes it back
    (:meth:`match`, :meth:`share`), until :meth:`allocate` needs its space.

    Args:
        num_blocks (int): blocks in the pool.
        block_size (int): positions per block, :math:`s`.

    Attributes:
        tables (dict): request id -> list of block ids, the request's block table:
            position :math:`p` is in slot :math:`p \bmod s` of block ``table[p // s]``.
        ref (list of int): reference count of each block.
    """

    def __init__(self, num_blocks, block_size):
        self.num_blocks, self.block_size = num_blocks, block_size
        self.free = collections.OrderedDict.fromkeys(range(num_blocks))  # eviction order, first out first
        self.ref = [0] * num_blocks
        self.hash_of = [None] * num_blocks  # block -> hash of its tokens and all before
        self.cached = {}  # hash -> block
        self.tables, self.hashes = {}, {}  # request -> blocks, hashes of its full blocks

    def num_free(self):
        """Blocks no request holds (some still hold a cached prefix)."""
        return len(self.free)

    def allocate(self, rid):
        """Give request ``rid`` the first free block; its cached contents, if any, are forgotten."""
        b, _ = self.free.popitem(last=False)  # O(1)
        if self.hash_of[b] is not None:  # evicted: its space is needed
            del self.cached[self.hash_of[b]]
            self.hash_of[b] = None
        self.ref[b] = 1
        self.tables.setdefault(rid, []).append(b)
        return b

    def match(self, tokens):
        """The cached blocks of the longest run of full blocks that starts ``tokens``."""
        found, h, s = [], b"", self.block_size
        for i in range(0, len(tokens) - s + 1, s):
            h = _block_hash(h, tokens[i:i + s])
            if h not in self.cached:
                break
            found.append(self.cached[h])
        return found

    def share(self, rid, blocks):
        """Request ``rid`` starts with ``blocks`` (from :meth:`match`): one more reference each."""
        for b in blocks:
            if self.ref[b] == 0:
                del self.free[b]  # O(1): out of the middle of the queue
            self.ref[b] += 1
        self.tables[rid] = list(blocks)
        self.hashes[rid] = [self.hash_of[b] for b in blocks]

    def commit(self, rid, tokens, num_computed):
        """Name the blocks of ``rid`` that the first ``num_computed`` of ``tokens`` have filled."""
        hashes, s = self.hashes.setdefault(rid, []), self.block_size
        for j in range(len(hashes), num_computed // s):
            h = _block_hash(hashes[-1] if hashes else b"", tokens[j * s:(j + 1) * s])
            hashes.append(h)
            b = self.tables[rid][j]
            if self.hash_of[b] is None and h not in self.cached:
                self.hash_of[b], self.cached[h] = h, b

    def release(self, rid):
        """Drop the references of ``rid``; blocks at 0 join the queue, last block first out."""
        for b in reversed(self.tables.pop(rid, [])):
            self.ref[b] -= 1
            if self.ref[b] == 0:
                self.free[b] = None
        self.hashes.pop(rid, None)


def _block_hash(parent, tokens):
    """SHA-256 of the parent block's hash and this block's token ids (bytes)."""
    return hashlib.sha256(parent + repr(tuple(tokens)).encode()).digest()


class _Request:
    """One request's state: its tokens so far and how many have keys and values in the pool."""

    def __init__(self, rid, prompt, max_new_tokens, block_size):
        self.rid, self.tokens, self.T, self.max_new = rid, prompt, len(prompt), max_new_tokens
        self.num_computed = 0  # positions 0 .. num_computed - 1 are in the pool
        self.num_blocks = -(-(self.T + max_new_tokens - 1) // block_size)  # ceil: the last token is never fed

    @property
    def out(self):
        return self.tokens[self.T:]


class _PoolView:
    """One layer's cache for one step: writes the new tokens into their slots, returns the gathered context.

    The pool is ``(num_blocks * s, h_kv, d_head)``; ``slots`` ``(N,)`` is where the new
    tokens go, ``gather`` ``(K,)`` the slots of every scheduled request's positions,
    request after request; ``len`` is ``K - N``, so the mask is ``(N, K)``.
    """

    def __init__(self, k_pool, v_pool, slots, gather):
        self.k_pool, self.v_pool, self.slots, self.gather = k_pool, v_pool, slots, gather

    def __len__(self):
        return self.gather.numel() - self.slots.numel()

    def update(self, k, v):
        self.k_pool[self.slots] = k[0].transpose(0, 1)  # (1, h_kv, N, d) -> (N, h_kv, d)
        self.v_pool[self.slots] = v[0].transpose(0, 1)
        k_all = self.k_pool[self.gather].transpose(0, 1)[None]  # (K, h_kv, d) -> (1, h_kv, K, d)
        v_all = self.v_pool[self.gather].transpose(0, 1)[None]
        return k_all, v_all


class Engine:
    r"""Serve many greedy-decoding requests to one model: continuous batching over paged blocks.

    Requests join with :meth:`add_request`, at any time. Each :meth:`step` admits the
    waiting requests the pool can hold (oldest first; one waits until enough blocks are
    free for all the positions it will ever write), then runs **one** forward pass of
    the model's blocks over the packed new tokens of every running request (at most
    ``token_budget`` of them): the rest of a prompt, or a chunk of it, and the last
    token of a request that is decoding, each at its own positions, attending only to
    its own request's keys through a block-diagonal causal mask. A request whose prompt
    starts with full blocks already in the pool (:class:`BlockManager`) skips them. A
    finished request releases its blocks at once.

    Every request gets exactly the tokens of ``model.generate(prompt[None], max_new_tokens)``.

    Args:
        model (attn.models.tiny_lm.TinyLM): the model (any dtype), used in the mode it is in.
        num_blocks (int): blocks in each layer's pool.
        block_size (int): positions per block, :math:`s`.
        token_budget (int, optional): the most tokens one step packs (vLLM's
            ``max_num_batched_tokens``): longer prompts go in chunks (chunked prefill);
            ``None``: no limit.

    Attributes:
        stats (dict): ``"steps"`` (forward passes), ``"tokens"`` (tokens packed, all
            steps), ``"blocks_in_use"`` (blocks held by running requests),
            ``"prefix_blocks_reused"`` (full prompt blocks found computed and shared).
        manager (BlockManager): the blocks; ``manager.tables`` the block tables.
    """

    def __init__(self, model, *, num_blocks, block_size, token_budget=None):
        if not isinstance(model, TinyLM):
            raise TypeError(f"model must be an attn.models.tiny_lm.TinyLM, got {type(model).__name__}")
        num_blocks, block_size = _checks.sizes(num_blocks=num_blocks, block_size=block_size)
        self.budget = None if token_budget is None else _checks.positive_int("token_budget", token_budget)
        self.model, self.block_size = model, block_size
        self.manager = BlockManager(num_blocks, block_size)
        a, w = model.blocks[0].attn, model.head.weight  # pools: (num_blocks * s, h_kv, d_head)
        shape = (num_blocks * block_size, a.num_kv_heads, a.d_out // a.num_heads)
        self.pools = [(w.new_zeros(shape), w.new_zeros(shape)) for _ in model.blocks]
        self.waiting, self.running, self.done = collections.deque(), [], {}
        self.stats = {"steps": 0, "tokens": 0, "blocks_in_use": 0, "prefix_blocks_reused": 0}
        self._next_id = 0

    def add_request(self, prompt, max_new_tokens):
        """Queue a request; return its id.

        Args:
            prompt (torch.Tensor): int64 ``(T,)``, token ids in ``[0, vocab_size)``.
            max_new_tokens (int): tokens to generate, ``T + max_new_tokens <= context_length``.

        Returns:
            int: the request's id, the key of its tokens in :meth:`step` and :meth:`run`.

        Raises:
            TypeError: when ``prompt`` is not an int64 tensor or ``max_new_tokens`` not an ``int``.
            ValueError: when ``prompt`` is not ``(T,)`` with ``T >= 1`` and ids in the
                vocabulary, ``max_new_tokens < 1``, the request exceeds ``context_length``,
                or its blocks would not fit in the pool even if it were alone.
        """
        r = _check_request(self, prompt, max_new_tokens)
        self.waiting.append(r)
        self._next_id += 1
        return r.rid

    def step(self):
        """One forward pass over every running request; return ``{request id: new token}``.

        Requests that finish a prompt chunk without reaching its end produce no token;
        a request that writes its last token releases its blocks.
        """
        self._admit()
        batch = self._schedule()  # [(request, n new tokens)]
        if not batch:
            return {}
        logits = self._pass(batch)  # (R, V): one row per request that ends its input
        new = {}
        for r, tok in zip([r for r, n in batch if _ends(r, n)], logits.argmax(dim=-1).tolist()):
            r.tokens.append(tok)
            new[r.rid] = tok
        for r, n in batch:
            r.num_computed += n
            self.manager.commit(r.rid, r.tokens, r.num_computed)
            if len(r.out) == r.max_new:
                self.running.remove(r)
                self.manager.release(r.rid)
                self.done[r.rid] = torch.tensor(r.out)
        self.stats["steps"] += 1
        self.stats["tokens"] += sum(n for _, n in batch)
        self.stats["blocks_in_use"] = self.manager.num_blocks - self.manager.num_free()
        return new

    def run(self):
        """:meth:`step` until every request is done; return ``{request id: tokens (max_new_tokens,)}``."""
        while self.waiting or self.running:
            self.step()
        return dict(self.done)

    def _admit(self):
        """Move waiting requests to running while the pool can hold all of their positions."""
        m = self.manager
        while self.waiting:
            r = self.waiting[0]
            hits = m.match(r.tokens[:r.T - 1])  # tokens 0 .. T - 2: token T - 1 runs
            owed = sum(q.num_blocks - len(m.tables.get(q.rid, [])) for q in self.running)
            free = m.num_free() - sum(m.ref[b] == 0 for b in hits) - owed
            if free < r.num_blocks - len(hits):
                return
            m.share(r.rid, hits)
            r.num_computed = len(hits) * self.block_size
            self.stats["prefix_blocks_reused"] += len(hits)
            self.running.append(self.waiting.popleft())

    def _schedule(self):
        """``[(request, n)]``: the next ``n`` tokens of each running request, within the budget."""
        batch, left = [], self.budget
        for r in self.running:
            n = len(r.tokens) - r.num_computed  # rest of the prompt, or 1 when decoding
            n = n if left is None else min(n, left)
            if n > 0:
                batch.append((r, n))
                left = None if left is None else left - n
        return batch

    def _pass(self, batch):
        """One pass of the model's blocks over the packed tokens of ``batch``; logits ``(R, V)``."""
        m, s = self.manager, self.block_size
        idx, pos, slots, gather, q_of, k_of, k_pos, last = [], [], [], [], [], [], [], []
        for i, (r, n) in enumerate(batch):
            c = r.num_computed  # positions c .. c + n - 1
            while len(m.tables.get(r.rid, [])) * s < c + n:
                m.allocate(r.rid)
            table = m.tables[r.rid]  # position p -> slot table[p // s] * s + p % s
            ctx = [table[p // s] * s + p % s for p in range(c + n)]
            idx, pos, slots, gather = idx + r.tokens[c:c + n], pos + list(range(c, c + n)), slots + ctx[c:], gather + ctx
            q_of, k_of, k_pos = q_of + [i] * n, k_of + [i] * (c + n), k_pos + list(range(c + n))
            if _ends(r, n):
                last.append(len(idx) - 1)
        t = lambda x: torch.tensor(x, device=self.model.head.weight.device)  # noqa: E731
        mask = (t(q_of)[:, None] == t(k_of)[None, :]) & (t(k_pos)[None, :] <= t(pos)[:, None])  # (N, K)
        return self._run_blocks(t(idx)[None], t(pos)[None], t(slots), t(gather), mask, last)

    @torch.no_grad()
    def _run_blocks(self, idx, pos, slots, gather, mask, last):
        """Embed ``idx`` ``(1, N)``, run every block once (its hooks fire), read out the rows ``last``.

        ``pos`` ``(1, N)``: positions; ``slots`` ``(N,)`` and ``gather`` ``(K,)``: see
        :class:`_PoolView`; ``mask`` ``(N, K)``: same request and key position <= query's.
        """
        model = self.model
        x = model.tok_emb(idx)  # (1, N) -> (1, N, d_model)
        if model.pos_emb is not None:
            x = x + model.pos_emb(pos)
        with _checks.checked():
            for block, (k_pool, v_pool) in zip(model.blocks, self.pools):
                x = block(x, cache=_PoolView(k_pool, v_pool, slots, gather), positions=pos, mask=mask)
        return model.head(model.ln_f(x[0, last]))  # (R, d_model) -> (R, V)


def _ends(r, n):
    """Whether ``n`` new tokens reach the end of request ``r``'s input (a token comes out)."""
    return r.num_computed + n == len(r.tokens)


def _check_request(engine, prompt, max_new_tokens):
    """The checks of :meth:`Engine.add_request`; returns the new :class:`_Request`."""
    model = engine.model
    _checks.tensor("prompt", prompt)
    if prompt.dtype != torch.long:
        raise TypeError(f"prompt must be an int64 tensor of token ids, got dtype {prompt.dtype}")
    if prompt.dim() != 1:
        raise ValueError(f"prompt must have shape (T,), got shape {tuple(prompt.shape)}")
    if prompt.numel() == 0:
        raise ValueError("prompt must hold at least one token, got shape (0,)")
    _checks.token_ids("prompt", prompt, model.vocab_size, model.context_length)
    _checks.positive_int("max_new_tokens", max_new_tokens)
    T = prompt.numel()
    if T + max_new_tokens > model.context_length:
        raise ValueError(f"prompt has T={T} tokens and max_new_tokens={max_new_tokens}: {T + max_new_tokens} "
                         f"positions, more than context_length={model.context_length}")
    r = _Request(engine._next_id, prompt.tolist(), max_new_tokens, engine.block_size)
    if r.num_blocks > engine.manager.num_blocks:
        raise ValueError(f"the request needs {r.num_blocks} blocks of block_size={engine.block_size} "
                         f"(T + max_new_tokens - 1 = {T + max_new_tokens - 1} positions), more than "
                         f"num_blocks={engine.manager.num_blocks}: it could never run")
    return r


@torch.no_grad()
def speculative_generate(target, draft, prompt, max_new_tokens, *, k=4, branches=1):
    r"""Greedy decoding of ``target``, ``k`` tokens guessed by ``draft`` at a time, checked in one pass.

    Each round the draft proposes a tree: the ``branches`` most likely next tokens, each
    followed by the draft's greedy chain, ``k`` tokens deep (``branches=1``: one chain).
    The target runs once on the tree, every node at position ``P + depth`` and seeing
    only its ancestors (:func:`attn.functional.tree_mask`), keeps the longest path whose
    every token is its own greedy choice, and adds its own next token: ``1 .. k + 1``
    tokens per target pass. The caches keep the accepted path only. The tokens are
    exactly those of ``target.generate(prompt, max_new_tokens)`` (Leviathan et al., 2023;
    Chen et al., 2023; trees: Miao et al., 2024).

    Args:
        target (attn.models.tiny_lm.TinyLM): the model whose greedy tokens come out.
        draft (attn.models.tiny_lm.TinyLM): a smaller model with the same vocabulary.
        prompt (torch.Tensor): int64 ``(1, T)``.
        max_new_tokens (int): tokens to generate; ``T + max_new_tokens`` must not exceed
            either model's ``context_length``.
        k (int): depth of the draft's tree, tokens guessed per branch and round.
        branches (int): first-level alternatives (``<= vocab_size``).

    Returns:
        tuple: ``(tokens, stats)``: ``tokens`` ``(1, T + max_new_tokens)``; ``stats`` a
        dict with ``"target_passes"``, ``"draft_passes"``, ``"proposed"`` (draft tokens
        sent to the target) and ``"accepted"`` (draft tokens kept).

    Raises:
        TypeError: when a model is not a ``TinyLM``, ``prompt`` is not int64, or ``k``,
            ``branches`` or ``max_new_tokens`` is not an ``int``.
        ValueError: when the models' vocabularies differ, ``prompt`` is not ``(1, T)``
            with ids in the vocabulary, a count is not positive, or the tokens would not
            fit in a context.
    """
    _check_speculative(target, draft, prompt, max_new_tokens, k, branches)
    seq, T = prompt[0].tolist(), prompt.size(1)
    caches = target.new_caches(), draft.new_caches()
    stats = {"target_passes": 0, "draft_passes": 0, "proposed": 0, "accepted": 0}
    while len(seq) - T < max_new_tokens:
        depth = min(k, max_new_tokens - (len(seq) - T) - 1)  # room for the target's own token
        tree, parents = _propose(draft, caches[1], seq, depth, branches, stats)
        out = _verify(target, caches[0], seq, tree, parents)
        stats["target_passes"] += 1
        stats["proposed"] += len(tree)
        stats["accepted"] += len(out) - 1
        seq += out[:max_new_tokens - (len(seq) - T)]
    return torch.tensor([seq], device=prompt.device), stats


def _propose(draft, caches, seq, depth, branches, stats):
    """The draft's tree after ``seq``: its tokens and parents (``-1``: the last token of ``seq``)."""
    if depth == 0:
        return [], []
    t = lambda x: torch.tensor([x], device=draft.head.weight.device)  # noqa: E731
    first = draft(t(seq[len(caches[0]):]), caches)[0, -1]  # (V,): after all of seq
    stats["draft_passes"] += 1
    tokens, parents = [], []
    for tok in first.topk(branches).indices.tolist():  # one chain per first-level token
        chain = [KVCache.from_tensors(c.k, c.v) for c in caches]  # the draft's caches, copied
        parent = -1
        for d in range(depth):
            tokens.append(tok)
            parents.append(parent)
            parent = len(tokens) - 1
            if d < depth - 1:
                tok = draft(t([tok]), chain)[0, -1].argmax().item()
                stats["draft_passes"] += 1
    return tokens, parents


def _verify(target, caches, seq, tree, parents):
    """One target pass on the uncached tokens of ``seq`` and the tree; the tokens it accepts.

    The cached prefix is ``P`` positions; the uncached tokens form a chain and the
    tree hangs from its last one. Returns the accepted tree tokens then the target's
    own next token; the caches keep the prefix, the chain and the accepted path.
    """
    P = len(caches[0])
    c = len(seq) - P  # nodes 0 .. c - 1: seq[P:], a chain
    par = list(range(-1, c - 1)) + [c - 1 if p < 0 else c + p for p in parents]  # (N,)
    depth = []
    for p in par:
        depth.append(0 if p < 0 else depth[p] + 1)
    dev = target.head.weight.device
    idx = torch.tensor([seq[P:] + tree], device=dev)  # (1, N)
    pos = P + torch.tensor([depth], device=dev)  # (1, N): P + depth
    mask = AF.tree_mask(torch.tensor(par, device=dev), P)  # (N, P + N)
    greedy = target(idx, caches, position_ids=pos, mask=mask).argmax(dim=-1)[0].tolist()  # (1, N, V) -> (N,)
    path, out = list(range(c)), [greedy[c - 1]]  # path: nodes, out: tokens
    while True:
        child = next((i for i in range(c, len(par)) if par[i] == path[-1] and idx[0, i] == out[-1]), None)
        if child is None:
            break
        path.append(child)
        out.append(greedy[child])
    keep = torch.tensor(list(range(P)) + [P + i for i in path], device=dev)  # (P + len(path),)
    for cache in caches:  # keep = prefix + path
        k, v = cache.k[..., keep, :], cache.v[..., keep, :]  # (B, h_kv, P + len(path), d)
        cache.reset()
        cache.update(k, v)
    return out


def _check_speculative(target, draft, prompt, max_new_tokens, k, branches):
    """The checks of :func:`speculative_generate`, in one call."""
    for name, m in (("target", target), ("draft", draft)):
        if not isinstance(m, TinyLM):
            raise TypeError(f"{name} must be an attn.models.tiny_lm.TinyLM, got {type(m).__name__}")
    if draft.vocab_size != target.vocab_size:
        raise ValueError(f"draft must have the target's vocab_size={target.vocab_size}, got {draft.vocab_size}")
    _checks.positive_int("max_new_tokens", max_new_tokens)
    _checks.positive_int("k", k)
    _checks.positive_int("branches", branches)
    if branches > target.vocab_size:
        raise ValueError(f"branches must be at most vocab_size={target.vocab_size}, got {branches}")
    _checks.tensor("prompt", prompt)
    if prompt.dtype != torch.long:
        raise TypeError(f"prompt must be an int64 tensor of token ids, got dtype {prompt.dtype}")
    if prompt.dim() != 2 or prompt.size(0) != 1:
        raise ValueError(f"prompt must have shape (1, T), got shape {tuple(prompt.shape)}")
    target._check_inputs(prompt, None, extra=max_new_tokens)
    draft._check_inputs(prompt, None, extra=max_new_tokens)


def static_batching(prompt_lengths, max_new_tokens, batch_size):
    """Forward passes and slots of static batching, for comparison with :class:`Engine`.

    The requests go in groups of ``batch_size``, in order; a group's prompts are padded
    to its longest, and the group runs until its longest request is done: one prefill
    pass, then ``max(max_new_tokens) - 1`` decoding passes of one slot per request.

    Args:
        prompt_lengths (list of int): ``T`` of each request.
        max_new_tokens (list of int): tokens each request generates.
        batch_size (int): requests per group.

    Returns:
        dict: ``"steps"`` (forward passes), ``"slots"`` (token slots computed) and
        ``"padded"`` (slots that hold no token of any request).
    """
    if len(prompt_lengths) != len(max_new_tokens):
        raise ValueError(f"prompt_lengths and max_new_tokens must have one entry per request, got "
                         f"{len(prompt_lengths)} and {len(max_new_tokens)}")
    T = [_checks.positive_int("prompt_lengths[i]", n) for n in prompt_lengths]
    M = [_checks.positive_int("max_new_tokens[i]", n) for n in max_new_tokens]
    B = _checks.positive_int("batch_size", batch_size)
    steps = slots = 0
    for i in range(0, len(T), B):
        t, m = T[i:i + B], M[i:i + B]
        steps += max(m)  # prefill + decoding passes
        slots += len(t) * (max(t) + max(m) - 1)  # (B, T_max) + (max(m) - 1) x (B, 1)
    real = sum(T) + sum(M) - len(T)  # every token fed once, the last new token never
    return {"steps": steps, "slots": slots, "padded": slots - real}
