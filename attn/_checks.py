"""Input checks shared by the package.

Every check raises ``TypeError`` (wrong kind of object or dtype) or ``ValueError``
(right kind, wrong value or shape) with a message that names the argument, what was
given and what was expected. They never use ``assert``, so they also run under
``python -O``.
"""
import numbers

import torch


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
    unbatched = x.dim() == 2
    if unbatched:
        x = x.unsqueeze(0)  # (T, d_in) -> (1, T, d_in)
    return x, unbatched


def bool_mask(name, mask, target_shape):
    """Check a boolean mask that must broadcast to ``target_shape``."""
    tensor(name, mask)
    if mask.dtype != torch.bool:
        raise TypeError(
            f"{name} must be a torch.bool tensor (True = may attend), got dtype {mask.dtype}"
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
