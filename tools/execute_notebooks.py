"""Execute the chapters' notebooks side by side into the notebook cache, before Sphinx.

``make html`` (and ``pdf``, ``epub``) runs this first: ``python tools/execute_notebooks.py``.
myst-nb's cache mode (``conf.py``: ``nb_execution_mode = "cache"``) runs a page's
notebook when Sphinx reads it, one page after another; this script runs the notebooks
that are not in the cache yet in a pool of processes (``BOOK_JOBS``, default: every
core), with the same reader, working directory, timeout and cache as myst-nb, so Sphinx
then finds each of them in the cache and runs no code. A notebook whose code has not
changed since its last run is not run again (the cache is keyed on the code cells).

On Linux each kernel is forked from one process that has imported what every notebook
imports (``tools/kernel_forks.py``), which spares each about 3 s.

One line per notebook as it finishes; the first error stops the build with the
notebook's traceback. ``BOOK_CELL_TIMEOUT`` (seconds, as in ``conf.py``) stops a cell
that hangs.
"""
import contextlib
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn
from jupyter_cache.executors.utils import single_nb_execution
from jupyter_client.manager import AsyncKernelManager
from myst_nb.core.read import is_myst_markdown_notebook, myst_nb_reader_plugin

import kernel_forks

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CACHE = ROOT / "_build" / ".jupyter_cache"  # conf.py's nb_execution_cache_path
READ_DATA = {"name": "myst_nb_md", "type": "plugin"}  # the reader myst-nb stages with
# The kernel's own log (not the cells' output): ipykernel warns "Kernel is running over
# TCP without encryption" at every start, on a connection that never leaves this machine.
KERNEL_ARGS = ["--IPKernelApp.log_level=ERROR"]


def notebooks():
    """The pages that are notebooks (MyST text with a kernel), the likely longest first.

    Those that train a model (``train(`` in the text) first, then the longest files, so
    that no core waits at the end on one long notebook started last.
    """
    pages = [p for p in sorted(DOCS.rglob("*.md")) if "_build" not in p.parts and "auto_examples" not in p.parts]
    texts = {p: p.read_text("utf8") for p in pages}
    found = [p for p in pages if is_myst_markdown_notebook(texts[p])]
    return sorted(found, key=lambda p: ("train(" in texts[p], len(texts[p])), reverse=True)


class ForkedKernelManager(AsyncKernelManager):
    """A kernel forked from the zygote (tools/kernel_forks.py), started through its launcher."""

    def format_kernel_cmd(self, extra_arguments=None):
        return kernel_forks.kernel_command(os.path.realpath(self.connection_file), extra_arguments or [])


def _execute(path):
    """Run one notebook in its own folder, as myst-nb does; ``(path, nb, seconds, error)``."""
    nb = myst_nb_reader_plugin(str(path))
    timeout = int(os.environ.get("BOOK_CELL_TIMEOUT", "-1"))
    forked = {"kernel_manager_class": ForkedKernelManager} if kernel_forks.ADDRESS in os.environ else {}
    result = single_nb_execution(
        nb, cwd=str(path.parent), allow_errors=False, timeout=timeout, meta_override=True, extra_arguments=KERNEL_ARGS,
        **forked,
    )
    return path, nb, result.time, result.exc_string if result.err is not None else None


def warm_matplotlib():
    """Build matplotlib's font cache here, once, before any kernel imports matplotlib.

    On a machine where it does not exist yet (a fresh clone, CI, ``MPLCONFIGDIR`` empty)
    matplotlib builds it on first import and says so on stderr ("Matplotlib is building the
    font cache"): in a kernel, that line lands in the page whose notebook imported it first.
    Built here, the line goes to the build's log; the kernels inherit the same folder.
    """
    import matplotlib.font_manager  # noqa: F401


def run(todo, cache_path=CACHE, jobs=None):
    """Execute the notebooks ``todo`` side by side into the cache at ``cache_path``; 0 or 1."""
    cache = get_cache(str(cache_path))
    jobs = min(jobs or int(os.environ.get("BOOK_JOBS", "0")) or os.cpu_count() or 1, len(todo))
    # Each kernel gets its share of the cores (torch reads OMP_NUM_THREADS when it starts):
    # two notebooks that each use every core spin-wait on each other's threads; chapter
    # 17's training takes 14 s of CPU on one thread, 68 s on two beside another notebook.
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // jobs)))
    warm_matplotlib()
    print(f"notebooks: running {len(todo)} in {jobs} processes", flush=True)
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if kernel_forks.available():
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="book-kernels-"))
            zygote = kernel_forks.start(os.path.join(folder, "zygote"))
            stack.callback(os.environ.pop, kernel_forks.ADDRESS)
            stack.callback(zygote.wait)
            stack.callback(zygote.stdin.close)  # (run before wait: last in, first out)
        code = _run_pool(todo, cache, jobs)
    if code == 0:
        print(f"notebooks: {len(todo)} run in {time.perf_counter() - start:.1f} s", flush=True)
    return code


def _run_pool(todo, cache, jobs):
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for n, (path, nb, seconds, error) in enumerate(pool.imap_unordered(_execute, todo), 1):
            name = path.relative_to(DOCS) if path.is_relative_to(DOCS) else path
            if error is not None:
                print(f"notebooks: {name} failed\n{error}", file=sys.stderr, flush=True)
                pool.terminate()
                return 1
            stage = cache.add_nb_to_project(str(path), read_data=READ_DATA)
            bundle = CacheBundleIn(nb, stage.uri, data={"execution_seconds": seconds})
            cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
            print(f"notebooks: [{n}/{len(todo)}] {name} ran in {seconds:.1f} s", flush=True)
    return 0


def main():
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    os.environ.setdefault("ATTN_WEIGHTS_DIR", str(ROOT / "_build" / "weights"))  # as conf.py
    cache = get_cache(str(CACHE))
    todo = []
    for path in notebooks():
        try:
            _pk, cached = cache.merge_match_into_notebook(myst_nb_reader_plugin(str(path)))
        except KeyError:
            todo.append(path)
            continue
        if any(out.get("name") == "stderr" for cell in cached.cells for out in cell.get("outputs", [])):
            # Run where matplotlib had no font cache yet (warm_matplotlib): run again, and touch
            # the page so that Sphinx reads its new outputs.
            todo.append(path)
            os.utime(path)
    if not todo:
        print("notebooks: all in the cache, none to run")
        return 0
    return run(todo)

if __name__ == "__main__":
    sys.exit(main())
