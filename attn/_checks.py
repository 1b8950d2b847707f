"""Input checks shared by the package.

Every check raises ``TypeError`` (wrong kind of object or dtype) or ``ValueError``
(right kind, wrong value or shape) with a message that names the argument, what was
given and what was expected. They never use ``assert``, so they also run under
``python -O``.

Where they run: at the door, once. :func:`door` makes a public method or function check
its arguments only when it is the outermost checked call; a layer called from inside a
checked call (a model's block, a block's attention) skips its checks and runs at once.
:class:`checked` marks code that has validated its inputs itself.
"""
import collections.abc
import contextvars
import functools
import numbers

import torch

_inside = contextvars.ContextVar("attn_checked", default=False)  # True inside a checked call


class checked:
    """Context manager: calls made inside it skip their checks (the caller made them).

    Example::

        with _checks.checked():  # the inputs were validated when the request came in
            y = model.blocks[0](x, cache=cache, positions=pos, mask=mask)
    """

    def __enter__(self):
        self._token = _inside.set(True)
        return self

    def __exit__(self, *exc):
        _inside.reset(self._token)
        return False


def inside():
    """Whether the caller runs inside a checked call or :class:`checked` (its inputs are checked)."""
    return _inside.get()


def door(check):
    """Decorator: ``check(*args, **kwargs)`` runs before the function, at the outermost call only.

    The decorated function is a door: called from outside the package it runs ``check``
    on its own arguments, then its body inside :class:`checked`, so that every checked
    call its body makes (a layer called as a module, ``self.attn(...)``) skips its
    checks. ``check`` is looked up by name at each call, as a call written in the body
    would be.
    """
    name = check.__name__

    def decorate(f):
        @functools.wraps(f)
        def inner(*args, **kwargs):
            if _inside.get():  # called from inside a checked call: checked already
                return f(*args, **kwargs)
            check.__globals__.get(name, check)(*args, **kwargs)
            token = _inside.set(True)
            try:
                return f(*args, **kwargs)
            finally:
                _inside.reset(token)
        return inner
    return decorate


def tensor(name, x, *, floating=False):
    """Check that ``x`` is a ``torch.Tensor`` (of floating dtype when ``floating``)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if floating and not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    return x


def positive_int(name, value):
    """Check that ``value`` is an ``int`` greater than zero (``bool`` is refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value}")
    return int(value)


def non_negative_int(name, value):
    """Check that ``value`` is an ``int`` of at least zero (``bool`` is refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < 0:
        raise ValueError(f"{name} must be an int >= 0, got {value}")
    return int(value)


def probability(name, p):
    """Check that ``p`` is a real number in ``[0, 1)`` (a dropout probability)."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"{name} must be a float in [0, 1), got {type(p).__name__} ({p!r})")
    if not 0.0 <= p < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {p}")
    return float(p)


def flag(name, value):
    """Check that ``value`` is a ``bool``."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__} ({value!r})")
    return value


def sizes(**named):
    """Check that every named value is a positive ``int``; return them, in order, as ints.

    One call checks all of a constructor's sizes, e.g.
    ``d_in, d_out = sizes(d_in=d_in, d_out=d_out)``.
    """
    return tuple(positive_int(name, value) for name, value in named.items())


def flags(**named):
    """Check that every named value is a ``bool`` (one call for all of a constructor's flags)."""
    for name, value in named.items():
        flag(name, value)


def divisible(name, value, divisor_name, divisor):
    """Check that ``value`` is a multiple of ``divisor``."""
    if value % divisor != 0:
        raise ValueError(
            f"{name} must be divisible by {divisor_name}, got {name}={value} and "
            f"{divisor_name}={divisor} (remainder {value % divisor})"
        )


def sequence(name, x, d_in, context_length=None, *, d_name="d_in", dtype=None):
    """Check a sequence input ``x`` of shape ``(T, d_in)`` or ``(B, T, d_in)``.

    With ``dtype`` given, ``x`` must have that dtype (the module's weights' dtype).
    Returns ``(x3, unbatched)`` where ``x3`` has shape ``(B, T, d_in)`` (a view with
    ``B = 1`` for unbatched input) and ``unbatched`` says whether a batch axis was added.
    """
    tensor(name, x, floating=True)
    if dtype is not None and x.dtype != dtype:
        raise TypeError(
            f"{name} must have dtype {dtype} like the module's weights, got {x.dtype} "
            f"(convert one of them, e.g. {name}.to({dtype}) or module.to({x.dtype}))"
        )
    if x.dim() not in (2, 3):
        raise ValueError(
            f"{name} must have shape (T, {d_name}) or (B, T, {d_name}), "
            f"got {x.dim()} dimensions with shape {tuple(x.shape)}"
        )
    if x.size(-1) != d_in:
        raise ValueError(
            f"{name} must have last dimension {d_name}={d_in}, got shape {tuple(x.shape)}"
        )
    if context_length is not None and x.size(-2) > context_length:
        raise ValueError(
            f"{name} has T={x.size(-2)} tokens, more than context_length={context_length}"
        )
    if x.numel() == 0:
        raise ValueError(f"{name} must hold at least one token (T >= 1, B >= 1), got shape {tuple(x.shape)}")
    unbatched = x.dim() == 2
    if unbatched:
        x = x.unsqueeze(0)  # (T, d_in) -> (1, T, d_in)
    return x, unbatched


def dtype_of(module):
    """The dtype of a module's parameters: that of its query projection ``W_query``."""
    w = module.W_query  # an nn.Linear, or an nn.Parameter (SelfAttentionV1)
    return (w if isinstance(w, torch.Tensor) else w.weight).dtype


def forward_inputs(module, x, return_weights=False, key_padding_mask=None, cache=None, positions=None,
                   mask=None):
    """Check the inputs of an attention module's ``forward`` in one call.

    ``x`` must be ``(T, module.d_in)`` or ``(B, T, module.d_in)`` with the dtype of the
    module's parameters and ``T <= module.context_length`` (when the module has one);
    ``return_weights`` a bool; ``key_padding_mask`` (optional) a bool mask of shape
    ``(B, T)`` (``(T,)`` or ``(1, T)`` for unbatched ``x``), ``True`` = real token;
    ``cache`` (optional) a KV cache (see :func:`kv_cache`), for a causal module, without
    ``key_padding_mask``, holding at most ``context_length - T`` positions. Whether the
    cache's keys fit the module's (batch size, heads, head dimension, dtype) is the
    cache's own check, in its ``update``. ``positions`` (optional): int64 ``(B, T)`` or
    ``(T,)`` in ``[0, context_length)``; ``mask`` (optional): bool, broadcastable to
    ``(B, h, T, T_cached + T)``, not with ``key_padding_mask``.
    """
    context_length = getattr(module, "context_length", None)
    sequence("x", x, module.d_in, context_length, dtype=dtype_of(module))
    flag("return_weights", return_weights)
    P, T = 0, x.size(-2)
    if cache is not None:
        if not getattr(module, "causal", True):
            raise ValueError("cache needs a causal module (causal=True): with causal=False "
                             "earlier positions would attend to the new tokens")
        if key_padding_mask is not None:
            raise ValueError("key_padding_mask cannot be combined with cache: pass the "
                             "sequences' real tokens only, one cache per batch, or a mask")
        P = kv_cache("cache", cache, T, context_length)
    if positions is not None:
        position_ids("positions", positions, x.shape[:-1], context_length)
    if mask is not None:
        if key_padding_mask is not None:
            raise ValueError("mask and key_padding_mask cannot both be given: mask replaces the "
                             "causal and padding masks (fold the padding into it)")
        bool_mask("mask", mask, (*x.shape[:-2], module.num_heads, T, P + T))
    if key_padding_mask is None:
        return
    B = 1 if x.dim() == 2 else x.size(0)
    if x.dim() == 2 and isinstance(key_padding_mask, torch.Tensor) and key_padding_mask.dim() == 1:
        key_padding_mask = key_padding_mask.unsqueeze(0)  # (T,) -> (1, T)
    padding("key_padding_mask", key_padding_mask, B, T)


def position_ids(name, positions, shape, context_length):
    """Check positions: int64, of shape ``shape`` ``(B, T)`` or its last axis ``(T,)``, in ``[0, context_length)``."""
    tensor(name, positions)
    if positions.dtype != torch.long:
        raise TypeError(f"{name} must hold int64 positions, got dtype {positions.dtype}")
    shape = tuple(shape)
    if tuple(positions.shape) not in (shape, shape[-1:]):
        raise ValueError(f"{name} must have shape {shape} or {shape[-1:]}, got shape {tuple(positions.shape)}")
    if positions.min() < 0 or positions.max() >= context_length:
        raise ValueError(f"{name} must lie in [0, context_length={context_length}), got values "
                         f"from {int(positions.min())} to {int(positions.max())}")
    return positions


def gated_inputs(module, x, keep, x_key=None, x_value=None):
    """Check the inputs of a layer whose heads can be switched off (``attn.models.circuits.AttentionLayer``).

    ``x`` ``(B, T, module.d_model)`` with the dtype of the module's parameters, ``keep``
    a floating-point tensor ``(module.num_heads,)``; ``x_key`` and ``x_value`` (optional)
    shaped like ``x``.
    """
    sequence("x", x, module.d_model, d_name="d_model", dtype=dtype_of(module))
    if x.dim() != 3:
        raise ValueError(f"x must have shape (B, T, d_model={module.d_model}), got shape {tuple(x.shape)}")
    tensor("keep", keep, floating=True)
    if tuple(keep.shape) != (module.num_heads,):
        raise ValueError(f"keep must have shape (num_heads,) = ({module.num_heads},), got shape {tuple(keep.shape)}")
    for name, other in (("x_key", x_key), ("x_value", x_value)):
        if other is not None:
            tensor(name, other, floating=True)
            if other.shape != x.shape or other.dtype != x.dtype:
                raise ValueError(f"{name} must have the shape and dtype of x, {tuple(x.shape)} {x.dtype}, "
                                 f"got {tuple(other.shape)} {other.dtype}")


def kv_cache(name, cache, T_new, context_length):
    """Check a KV cache passed to a module, before its ``T_new`` new tokens go in.

    A cache is an :class:`attn.KVCache` or any object built like it: a method
    ``update(k, v)`` that appends the new keys and values and returns all of them, and
    ``len(cache)``, the number of positions it holds. (A dict or a set has an ``update``
    too, which does something else: both are refused.) ``len(cache) + T_new`` may not
    exceed ``context_length``.

    Returns:
        int: ``len(cache)``, the number of cached positions.
    """
    kind = type(cache)
    if (isinstance(cache, (collections.abc.Mapping, collections.abc.Set))
            or not callable(getattr(kind, "update", None)) or not callable(getattr(kind, "__len__", None))):
        raise TypeError(f"{name} must be an attn.KVCache or None (an object with update(k, v) and "
                        f"len()), got {kind.__name__}")
    P = len(cache)
    if P + T_new > context_length:
        raise ValueError(
            f"{name} holds {P} positions and x adds T_new={T_new}: {P + T_new} positions, "
            f"more than context_length={context_length}"
        )
    return P


def optional_real(name, value):
    """Check an optional real number (a scale factor): ``None`` or a real number; returns it as float or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a float or None, got {type(value).__name__}")
    return float(value)


def attention(q, k, v, mask=None, *, is_causal=False, scale=None, dropout_p=0.0,
              return_weights=False):
    """Check the arguments of scaled dot-product attention in one call.

    ``q`` ``(..., T_q, d_k)``, ``k`` ``(..., T_k, d_k)``, ``v`` ``(..., T_k, d_v)``
    (floating point); ``mask`` bool or float, broadcastable to ``(..., T_q, T_k)``; ``is_causal``
    and ``return_weights`` bools; ``scale`` None or a real number; ``dropout_p`` a
    probability.

    Returns:
        tuple: ``(scale, dropout_p)`` as ``float or None`` and ``float``.
    """
    for name, t in (("q", q), ("k", k), ("v", v)):
        tensor(name, t, floating=True)
        if t.dim() < 2:
            raise ValueError(
                f"{name} must have at least 2 dimensions (..., T, d), got shape {tuple(t.shape)}"
            )
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must have the same dtype, got {q.dtype}, {k.dtype} and {v.dtype} "
                        f"(convert them, e.g. k.to(q.dtype))")
    if q.size(-1) == 0:
        raise ValueError(f"q and k must have d_k >= 1 features, got q shape {tuple(q.shape)}")
    if k.size(-1) != q.size(-1):
        raise ValueError(
            f"k must have last dimension d_k={q.size(-1)} like q, got k shape {tuple(k.shape)} "
            f"and q shape {tuple(q.shape)}"
        )
    if v.size(-2) != k.size(-2):
        raise ValueError(
            f"v must have T_k={k.size(-2)} rows like k, got v shape {tuple(v.shape)} "
            f"and k shape {tuple(k.shape)}"
        )
    try:
        batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"q, k and v must have batch dimensions (...) that broadcast, got shapes "
            f"{tuple(q.shape)}, {tuple(k.shape)} and {tuple(v.shape)}"
        ) from None
    flag("is_causal", is_causal)
    flag("return_weights", return_weights)
    if mask is not None:
        bool_mask("mask", mask, (*batch, q.size(-2), k.size(-2)), floating=True)
    return optional_real("scale", scale), probability("dropout_p", dropout_p)


def seq_first(query, key, value, d_model, dtype, return_weights=False):
    """Check the sequence-first inputs ``[seq, batch, d_model]`` of the ``einsum`` module."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        tensor(name, t, floating=True)
        if t.dim() != 3 or t.size(-1) != d_model:
            raise ValueError(
                f"{name} must have shape [seq, batch, d_model={d_model}], got {list(t.shape)}"
            )
        if t.dtype != dtype:
            raise TypeError(
                f"{name} must have dtype {dtype} like the module's weights, got {t.dtype}"
            )
    if key.shape != value.shape or key.size(1) != query.size(1):
        raise ValueError(
            f"key and value must have shape [seq_k, batch={query.size(1)}, d_model], got "
            f"key {list(key.shape)} and value {list(value.shape)}"
        )
    flag("return_weights", return_weights)


def bool_mask(name, mask, target_shape, *, floating=False):
    """Check a boolean mask (or, with ``floating``, a float one) that must broadcast to
    ``target_shape``."""
    tensor(name, mask)
    if mask.dtype != torch.bool and not (floating and mask.is_floating_point()):
        also = " or a floating-point tensor (added to the scores)" if floating else ""
        raise TypeError(
            f"{name} must be a torch.bool tensor (True = may attend){also}, got dtype {mask.dtype}"
        )
    target_shape = tuple(target_shape)
    try:
        shape = torch.broadcast_shapes(mask.shape, target_shape)
    except RuntimeError:
        shape = None
    if shape != target_shape:
        raise ValueError(
            f"{name} must broadcast to shape {target_shape}, got shape {tuple(mask.shape)}"
        )
    return mask


def padding(name, key_padding_mask, B, T):
    """Check a key-padding mask of shape ``(B, T)``, True = real token."""
    tensor(name, key_padding_mask)
    if key_padding_mask.dtype != torch.bool:
        raise TypeError(
            f"{name} must be a torch.bool tensor (True = real token), "
            f"got dtype {key_padding_mask.dtype}"
        )
    if tuple(key_padding_mask.shape) != (B, T):
        raise ValueError(
            f"{name} must have shape (B, T) = {(B, T)}, got shape {tuple(key_padding_mask.shape)}"
        )
    return key_padding_mask


def token_ids(name, tokens, vocab_size, max_len):
    """Check integer token ids of shape ``(T,)`` or ``(B, T)``, ``T <= max_len``, in ``[0, vocab_size)``."""
    tensor(name, tokens)
    if tokens.dtype.is_floating_point or tokens.dtype.is_complex or tokens.dtype == torch.bool:
        raise TypeError(f"{name} must be an integer tensor of ids, got dtype {tokens.dtype}")
    if tokens.dim() not in (1, 2):
        raise ValueError(f"{name} must have shape (T,) or (B, T), got shape {tuple(tokens.shape)}")
    if tokens.numel() == 0:
        raise ValueError(f"{name} must hold at least one id (T >= 1, B >= 1), got shape {tuple(tokens.shape)}")
    if tokens.size(-1) > max_len:
        raise ValueError(f"{name} has T={tokens.size(-1)} ids, more than context_length={max_len}")
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab_size):
        raise ValueError(
            f"{name} must lie in [0, vocab_size={vocab_size}), got values in "
            f"[{int(tokens.min())}, {int(tokens.max())}]"
        )
    return tokens


def cross_inputs(module, x, context, context_padding_mask=None, return_weights=False, cache=None):
    """Check the inputs of a cross-attention ``forward`` in one call.

    ``x`` ``(B, T_q, module.d_in)`` and ``context`` ``(B, T_ctx, module.d_context)``
    (both unbatched, ``(T, d)``, or both batched, with the same ``B``), with the dtype of
    the module's parameters; ``context_padding_mask`` (optional) a bool mask of shape
    ``(B, T_ctx)`` (``(T_ctx,)`` for unbatched inputs), ``True`` = real token;
    ``return_weights`` a bool; ``cache`` (optional) an :class:`attn.KVCache`, empty or
    holding the keys of a context of the same length.
    """
    dtype = dtype_of(module)
    sequence("x", x, module.d_in, dtype=dtype)
    sequence("context", context, module.d_context, d_name="d_context", dtype=dtype)
    if x.dim() != context.dim() or (x.dim() == 3 and x.size(0) != context.size(0)):
        raise ValueError(
            f"x and context must both be batched with the same B, or both unbatched, got x "
            f"shape {tuple(x.shape)} and context shape {tuple(context.shape)}"
        )
    flag("return_weights", return_weights)
    if cache is not None:
        kv_cache("cache", cache, 0, float("inf"))
        k = getattr(cache, "k", None)
        if len(cache) and not (isinstance(k, torch.Tensor) and k.shape[:-3] == context.shape[:-2]
                               and k.size(-2) == context.size(-2)):
            raise ValueError(f"cache must hold the keys of this context, (B, h, T_ctx={context.size(-2)}, "
                             f"d_head), got {None if k is None else tuple(k.shape)}: one cache per context")
    if context_padding_mask is None:
        return
    B, T = (1, context.size(0)) if context.dim() == 2 else (context.size(0), context.size(1))
    m = context_padding_mask
    if context.dim() == 2 and isinstance(m, torch.Tensor) and m.dim() == 1:
        m = m.unsqueeze(0)  # (T_ctx,) -> (1, T_ctx)
    padding("context_padding_mask", m, B, T)


def linear_inputs(q, k, v, gates, form, chunk_size, initial_state, return_state):
    """Check the arguments of the linear-attention functions of :mod:`attn.ops.linear` in one call.

    ``q``, ``k`` ``(B, h, T, d_k)`` and ``v`` ``(B, h, T, d_v)``, floating point, one
    dtype; ``gates`` a dict of the per-token gates (``beta``, ``alpha``), each ``(B, h, T)``
    of the same dtype, ``alpha`` in ``(0, 1]``; ``form`` one of ``"parallel"``,
    ``"recurrent"``, ``"chunked"``; ``chunk_size`` a positive int; ``initial_state``
    None or ``(B, h, d_k, d_v)``; ``return_state`` a bool.
    """
    tensor("q", q, floating=True)
    if q.dim() != 4 or q.size(-2) == 0 or q.size(-1) == 0:
        raise ValueError(f"q must have shape (B, h, T, d_k) with T, d_k >= 1, got shape {tuple(q.shape)}")
    B, h, T, d_k = q.shape
    named = {"k": k, "v": v, **gates}
    if initial_state is not None:
        named["initial_state"] = initial_state
    for name, x in named.items():
        tensor(name, x, floating=True)
        if x.dtype != q.dtype:
            raise TypeError(f"{name} must have the dtype of q, {q.dtype}, got {x.dtype}")
    if k.shape != q.shape:
        raise ValueError(f"k must have the shape of q, (B, h, T, d_k) = {tuple(q.shape)}, got {tuple(k.shape)}")
    if v.dim() != 4 or v.shape[:3] != q.shape[:3] or v.size(-1) == 0:
        raise ValueError(f"v must have shape (B, h, T, d_v) = ({B}, {h}, {T}, d_v), got {tuple(v.shape)}")
    for name, g in gates.items():
        if tuple(g.shape) != (B, h, T):
            raise ValueError(f"{name} must have shape (B, h, T) = {(B, h, T)}, got {tuple(g.shape)}")
    if "alpha" in gates and not bool(((gates["alpha"] > 0) & (gates["alpha"] <= 1)).all()):
        raise ValueError("alpha must lie in (0, 1] (a decay), got values outside it")
    if initial_state is not None and tuple(initial_state.shape) != (B, h, d_k, v.size(-1)):
        raise ValueError(f"initial_state must have shape (B, h, d_k, d_v) = {(B, h, d_k, v.size(-1))}, "
                         f"got {tuple(initial_state.shape)}")
    if not isinstance(form, str) or form not in ("parallel", "recurrent", "chunked"):
        raise ValueError(f"form must be 'parallel', 'recurrent' or 'chunked', got {form!r}")
    flag("return_state", return_state)
    return positive_int("chunk_size", chunk_size)
