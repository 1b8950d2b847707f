"""Small MyST notebooks run by the build's own runner (tools/execute_notebooks.py), for the tests of that runner."""
import os
import subprocess
import sys
from pathlib import Path

from jupyter_cache import get_cache
from myst_nb.core.read import myst_nb_reader_plugin

ROOT = Path(__file__).resolve().parents[2]
# The runner in a process of its own: the cache folder, then the pages; its exit status is run()'s.
RUN = "import sys, execute_notebooks as ex; from pathlib import Path; sys.exit(ex.run([Path(p) for p in sys.argv[2:]], sys.argv[1], jobs=1))"


def myst_page(title, *cells):
    """A MyST notebook's text: a kernel, a title, one code cell per item of ``cells``."""
    head = "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n"
    return head + f"# {title}\n\n" + "".join(f"```{{code-cell}} python\n{code}\n```\n\n" for code in cells)


def run_pages(cache, pages, env=None):
    """Run ``pages`` (paths) into the notebook cache at ``cache``, as make html does; the finished process."""
    return subprocess.run([sys.executable, "-c", RUN, str(cache), *map(str, pages)], cwd=ROOT / "tools",
                          env=env or os.environ, capture_output=True, text=True, timeout=600)


def outputs(cache, page):
    """The outputs of ``page``'s code cells, read back from the cache."""
    _key, nb = get_cache(str(cache)).merge_match_into_notebook(myst_nb_reader_plugin(str(page)))
    return [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]
