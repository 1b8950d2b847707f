"""The built site stands alone: no CDN at read time, nothing stray in the site.

A local Sphinx extension (``extensions`` in ``conf.py``).  Its hook covers what
myst-nb's settings cannot say.  (Mathematics needs no script at all:
``book_math`` writes it as MathML.)
"""

from pathlib import Path

import myst_nb
import myst_nb.sphinx_ext
from sphinx.errors import ExtensionError

# The myst-nb releases whose private ``OUTPUT_FOLDER`` this module was checked against.
MYST_NB_CHECKED = ("1.4.",)


def executed_notebooks_out_of_the_site(app, config):
    """Write myst-nb's executed notebooks next to the execution cache, not in the site.

    Why: myst-nb writes each executed notebook and its figures to
    ``<outdir>/../jupyter_execute``, which for ``_build/html/en`` lies inside the
    published site.  It has no setting for this folder, only the module constant
    ``myst_nb.sphinx_ext.OUTPUT_FOLDER`` (read when the builder starts; an absolute
    path wins in its ``Path.joinpath``).  The constant is private, so this runs
    only on the myst-nb versions checked above and stops the build on others.
    The folder must outlive each build, for incremental builds.
    """
    if not myst_nb.__version__.startswith(MYST_NB_CHECKED):
        raise ExtensionError(
            f"book_offline patches myst_nb.sphinx_ext.OUTPUT_FOLDER, a private name checked "
            f"on myst-nb {' '.join(MYST_NB_CHECKED)}x, but myst-nb {myst_nb.__version__} is "
            "installed: check that the constant still names the folder of executed notebooks, "
            "then add the version to MYST_NB_CHECKED"
        )
    cache = Path(config.nb_execution_cache_path)
    if not cache.is_absolute():
        raise ExtensionError(f"nb_execution_cache_path must be absolute, got {str(cache)!r}")
    myst_nb.sphinx_ext.OUTPUT_FOLDER = str(cache.parent / "jupyter_execute")


def setup(app):
    app.connect("config-inited", executed_notebooks_out_of_the_site)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
