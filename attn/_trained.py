"""Training done once per build: a chapter and its gallery script share the weights.

Chapter 16 and its gallery script train the same model with the same arguments, and so
do chapter 17 and its script. When the environment variable ``ATTN_WEIGHTS_DIR`` names a
folder (``make html`` sets it to ``_build/weights``), the first of them saves what the
training left (the weights, the returned losses, the random number generator's state)
and the second loads it instead of training again. Without the variable, a script run
directly trains as written.

The file's name is a hash of everything the result depends on: the package's source,
the PyTorch version, the training function and its arguments, and the model's modules,
parameter shapes and dtypes and, unless the function draws the initial weights itself,
the initial weights.

Every training runs on one PyTorch thread (:func:`one_thread`): the same run gives
slightly different weights with another number of threads, and the book's notebooks run
one thread per process where a reader's script runs one per core.
"""
import functools
import hashlib
import inspect
import os
from pathlib import Path

import torch

ENV = "ATTN_WEIGHTS_DIR"


@functools.cache
def _source_digest():
    """The package's own source code, hashed (a change to it trains again)."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.digest()


def _key(train, model, arguments, draws_init):
    h = hashlib.sha256(_source_digest())
    h.update(f"{torch.__version__} {train.__module__}.{train.__qualname__} {arguments!r} {model!r}".encode())
    for name, t in model.state_dict().items():
        h.update(f"{name} {tuple(t.shape)} {t.dtype}".encode())
        if not draws_init:
            h.update(t.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return h.hexdigest()[:24]


def one_thread(train):
    """Decorate ``train`` to run on one PyTorch thread, the thread count restored after.

    Its result is then the same on any machine, whatever the number of cores.
    """

    @functools.wraps(train)
    def run(*args, **kwargs):
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return train(*args, **kwargs)
        finally:
            torch.set_num_threads(threads)

    return run


def shared(draws_init=False):
    """Decorate ``train(model, ...)`` so that one build runs each training once.

    Args:
        draws_init (bool): the function re-initialises the model's parameters from its
            own seed, so the model's weights before the call do not enter the key.
    """

    def decorate(train):
        signature = inspect.signature(train)

        @functools.wraps(train)
        def run(model, *args, **kwargs):
            folder = os.environ.get(ENV)
            if not folder or not isinstance(model, torch.nn.Module):
                return train(model, *args, **kwargs)  # train checks its own inputs
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
            result = train(model, *args, **kwargs)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # whole file or none
            state = {"state": model.state_dict(), "training": model.training, "rng": torch.get_rng_state()}
            torch.save({**state, "result": result}, tmp)
            os.replace(tmp, path)
            return result

        return run

    return decorate
