"""One training loop for the book's toy models, and the build's cache of what it trained.

Every toy model trains with :func:`fit` (the loss of a fresh batch, backward, an
optimiser step), and every toy model's training function is decorated with
:func:`cached`, which runs it on one PyTorch thread and, during a build, once:

- **One thread.** The same run gives slightly different weights with another number of
  threads, and the book's notebooks run one thread per process where a reader's script
  runs one per core; on one thread the result is the same on any machine.
- **Once per build.** When the environment variable ``ATTN_WEIGHTS_DIR`` names a folder
  (``make html`` sets it to ``_build/weights``), the first call saves what the training
  left (the weights, the result, the random number generator's state) and any later
  call with the same inputs loads it instead of training again: a chapter and its
  gallery script, or two chapters that train the same model, share one training.
  Without the variable, a script run directly trains as written.

The file's name is a hash of everything the result depends on: the package's source,
the PyTorch version, the training function and its arguments (a function passed as an
argument by its code, the values it closes over and the globals it reads), and the
model's modules (their classes and plain attributes), parameter shapes and dtypes and, unless the training function draws
the initial weights itself, the initial weights.
"""
import functools
import hashlib
import inspect
import os
import types
from pathlib import Path

import torch
import torch.nn as nn

from .. import _checks

ENV = "ATTN_WEIGHTS_DIR"


def fit(model, loss, steps, opt, *, generator, decay=False, clip=None, before_step=None):
    """Train ``model`` in place for ``steps`` steps; return the loss of every step.

    A step: ``before_step(step)``; with ``decay``, the learning rate set to its initial
    value times ``1 - step / steps``; ``loss(model, generator)`` on a fresh batch (a
    tuple of losses is trained on their mean); backward; gradients clipped to norm
    ``clip``; one step of ``opt``.

    Args:
        model (nn.Module): trained in place, left in ``eval()`` mode.
        loss (callable): ``loss(model, generator)`` draws a batch with ``generator`` and
            returns a scalar loss tensor, or a tuple of them.
        steps (int): optimisation steps.
        opt (torch.optim.Optimizer): the optimiser over ``model``'s parameters.
        generator (torch.Generator): the random numbers of the batches.
        decay (bool): decay the learning rate linearly to 0.
        clip (float or None): clip the gradients' norm to this value.
        before_step (callable or None): called with the step's index before the step
            (to measure the model as it learns).

    Returns:
        list of float: the loss at each step; for a loss that returns a tuple, a tuple
        of such lists, one per loss.
    """
    _checks.positive_int("steps", steps)
    if not isinstance(opt, torch.optim.Optimizer):
        raise TypeError(f"opt must be a torch.optim.Optimizer, got {type(opt).__name__}")
    start = [group["lr"] for group in opt.param_groups]
    model.train()
    rows = []
    for step in range(steps):
        if before_step is not None:
            before_step(step)
        if decay:
            for group, lr in zip(opt.param_groups, start):
                group["lr"] = lr * (1 - step / steps)
        parts = loss(model, generator)
        opt.zero_grad()
        (sum(parts) / len(parts) if isinstance(parts, tuple) else parts).backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        rows.append(tuple(p.item() for p in parts) if isinstance(parts, tuple) else parts.item())
    model.eval()
    return tuple(map(list, zip(*rows))) if isinstance(rows[0], tuple) else rows


@functools.cache
def _source_digest():
    """The package's own source code, hashed (a change to it trains again)."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return h.digest()


def _describe(value, depth=0):
    """What of an argument enters the key: a function by its code, a value by its repr."""
    if depth > 8:  # a function that reads itself
        return "..."
    d = functools.partial(_describe, depth=depth + 1)
    if isinstance(value, functools.partial):
        return ("partial", d(value.func), d(value.args), d(value.keywords))
    if isinstance(value, types.FunctionType) and not (value.__module__ or "").startswith("attn."):
        code = value.__code__  # the package's own functions are in the source digest
        read = {n: value.__globals__[n] for n in code.co_names if n in value.__globals__}
        cells = [c.cell_contents for c in value.__closure__ or ()]
        return (value.__qualname__, code.co_code, d(code.co_consts), d(cells), d(value.__defaults__), d(read))
    if isinstance(value, types.CodeType):
        return (value.co_code, d(value.co_consts))
    if isinstance(value, (list, tuple)):
        return tuple(d(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, d(v)) for k, v in value.items())
    if isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)):
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', value.__name__)}"
    return repr(value)


def _settings(model):
    """Every module's class and plain attributes: what its ``repr`` may not show (a mixer's ``kind``).

    Not ``training``: :func:`fit` puts the model in training mode whatever mode it came in.
    """
    plain = (str, int, float, bool, tuple, type(None))
    return [(name, f"{type(m).__module__}.{type(m).__qualname__}",
             sorted((k, repr(v)) for k, v in vars(m).items()
                    if not k.startswith("_") and k != "training" and isinstance(v, plain)))
            for name, m in model.named_modules()]


def _key(train, model, arguments, draws_init):
    h = hashlib.sha256(_source_digest())
    h.update(f"{torch.__version__} {train.__module__}.{train.__qualname__} {model!r}".encode())
    h.update(repr(_settings(model)).encode())
    h.update(repr(_describe(arguments)).encode())
    for name, t in model.state_dict().items():
        h.update(f"{name} {tuple(t.shape)} {t.dtype}".encode())
        if not draws_init:
            h.update(t.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return h.hexdigest()[:24]


def _one_thread(train, *args, **kwargs):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return train(*args, **kwargs)
    finally:
        torch.set_num_threads(threads)


def cached(draws_init=False):
    """Decorate ``train(model, ...)``: one PyTorch thread, and one run per build.

    Args:
        draws_init (bool): ``train`` re-initialises the model's parameters from its
            own seed, so the model's weights before the call do not enter the key.
    """

    def decorate(train):
        signature = inspect.signature(train)

        @functools.wraps(train)
        def run(model, *args, **kwargs):
            folder = os.environ.get(ENV)
            if not folder or not isinstance(model, nn.Module):
                return _one_thread(train, model, *args, **kwargs)  # train checks its own inputs
            bound = signature.bind(model, *args, **kwargs)
            bound.apply_defaults()
            arguments = {k: v for k, v in bound.arguments.items() if k != "model"}
            path = Path(folder) / f"{train.__name__}-{_key(train, model, arguments, draws_init)}.pt"
            if path.is_file():
                saved = torch.load(path, weights_only=True)
                model.load_state_dict(saved["state"])
                model.train(saved["training"])
                torch.set_rng_state(saved["rng"])  # as if the training had just run
                return saved["result"]
            result = _one_thread(train, model, *args, **kwargs)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # whole file or none
            state = {"state": model.state_dict(), "training": model.training, "rng": torch.get_rng_state()}
            torch.save({**state, "result": result}, tmp)
            os.replace(tmp, path)
            return result

        return run

    return decorate
