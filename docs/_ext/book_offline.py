"""The built site stands alone: no CDN at read time, nothing stray in the site.

A local Sphinx extension (``extensions`` in ``conf.py``).  Its two hooks cover
what the libraries' settings cannot say.
"""

from pathlib import Path

import mathjax  # the files of MathJax v3, from the wheel django-static-mathjax
import myst_nb
import myst_nb.sphinx_ext
from sphinx.errors import ExtensionError
from sphinx.util.fileutil import copy_asset

# MathJax v3's es5 bundle carries its fonts; v4 (Sphinx's default) fetches them from a CDN.
MATHJAX_ES5 = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
# What the page script (``mathjax_path``'s file) loads at run time: its input and
# output parts with the fonts, the menu and the accessibility parts.
MATHJAX_PARTS = ["input", "output/chtml", "ui", "a11y", "sre", "adaptors"]

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


def check_mathjax_path(app, config):
    """Fail early if ``mathjax_path`` is not a page script of the MathJax v3 es5 bundle.

    Why: ``copy_mathjax`` runs after the whole build, and a missing source would
    leave pages that load a script the site does not have.
    """
    script = Path(config.mathjax_path)
    if script.is_absolute() or "//" in config.mathjax_path or not (MATHJAX_ES5 / script.name).is_file():
        raise ExtensionError(
            f"mathjax_path must name a file of {MATHJAX_ES5} relative to _static, "
            f"e.g. 'mathjax/es5/tex-chtml.js'; got {config.mathjax_path!r}"
        )
    missing = [part for part in MATHJAX_PARTS if not (MATHJAX_ES5 / part).is_dir()]
    if missing:
        raise ExtensionError(f"MathJax parts missing from {MATHJAX_ES5}: {missing}")


def copy_mathjax(app, exception):
    """Copy MathJax v3 into the site's ``_static``, at ``mathjax_path``.

    Why: Sphinx loads MathJax v4 from a CDN by default, and the book must read
    offline.  ``html_static_path`` cannot do it: it copies a folder's *contents*
    into ``_static`` (not into ``_static/mathjax/es5``), and the whole bundle
    (most of it other page scripts) where one script and six parts are needed.
    """
    if exception is not None or app.builder.format != "html":
        return
    script = Path(app.config.mathjax_path)
    dest = Path(app.outdir) / "_static" / script.parent
    copy_asset(MATHJAX_ES5 / script.name, dest, force=True)
    for part in MATHJAX_PARTS:
        copy_asset(MATHJAX_ES5 / part, dest / part, force=True)


def setup(app):
    app.connect("config-inited", executed_notebooks_out_of_the_site)
    app.connect("config-inited", check_mathjax_path)
    app.connect("build-finished", copy_mathjax)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
