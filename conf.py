"""Sphinx configuration for the attention book.

Build from the repository root with ``make html`` (both languages) or::

    python -m sphinx -b html -c . -D language=en docs _build/html/en

Pages live in ``docs/`` (MyST notebooks executed by myst-nb), gallery scripts in
``examples/`` (executed by sphinx-gallery) and the Spanish catalogs in ``locale/``.
"""

import html
import os
import re
import shutil
import sys
from pathlib import Path

from docutils import nodes
from sphinx.transforms import SphinxTransform

ROOT = Path(__file__).resolve().parent

# The book runs this checkout's `attn`, whatever else is installed: autodoc and
# the gallery import it in this process, myst-nb's kernels inherit PYTHONPATH.
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs" / "_ext"))  # the book's own extensions
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

# -- Project -------------------------------------------------------------------
project = "Attention, from scratch"
author = "the attention book authors"
copyright = "2026, the attention book authors"
release = "0.1.0"
version = release

language = "en"
locale_dirs = [str(ROOT / "locale")]
gettext_compact = False
gettext_uuid = False
gettext_location = False  # one catalog per page already says where; line numbers would churn

extensions = [
    "myst_nb",
    "sphinx_gallery.gen_gallery",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx_copybutton",
    "sphinx_design",
    "book_site",  # docs/_ext/book_site.py: accessibility, weight, search, hosting
]

templates_path = [str(ROOT / "docs" / "_templates")]
exclude_patterns = [
    "_build",
    "**.ipynb_checkpoints",
    # sphinx-gallery writes a notebook next to each generated page: it is a
    # download, not a page, and myst-nb must not run it a second time.
    "auto_examples/*.ipynb",
    "auto_examples/**/*.ipynb",
    "sg_execution_times.rst",
]
suppress_warnings = []

# -- MyST and myst-nb ------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# Every page runs at build time through one cache shared by both languages, so
# the Spanish build reuses the outputs of the English one (code runs once).
nb_execution_mode = "cache"
nb_execution_cache_path = str(ROOT / "_build" / ".jupyter_cache")
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_timeout = 600
nb_merge_streams = True
# myst-nb writes each executed notebook and its figures to <outdir>/../jupyter_execute,
# which for _build/html/en is inside the published site. It has no setting for this,
# so point its folder constant next to the cache instead (an absolute path wins in
# its Path.joinpath); the folder must survive between builds for incremental builds.
import myst_nb.sphinx_ext  # noqa: E402

myst_nb.sphinx_ext.OUTPUT_FOLDER = str(ROOT / "_build" / "jupyter_execute")

# -- sphinx-gallery ----------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "write_computation_times": False,
    # The "Total running time" line changes on every build and could never stay
    # translated: report no example's time.
    "min_reported_time": 10**9,
    "show_memory": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "line_numbers": False,
}

# -- autodoc -----------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = True
napoleon_numpy_docstring = True

# -- Math: MathJax v3 served from the built site, never from a CDN ---------------------
MATHJAX_SRC = Path(__import__("mathjax").__file__).parent / "static" / "mathjax" / "es5"
mathjax_path = "mathjax/es5/tex-chtml.js"
# What tex-chtml.js loads at run time: its fonts, the menu and accessibility parts.
MATHJAX_PARTS = ["tex-chtml.js", "input", "output/chtml", "ui", "a11y", "sre", "adaptors"]

# -- HTML ----------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = "Attention, from scratch"
html_static_path = [str(ROOT / "docs" / "_static")]
html_css_files = ["book.css"]
html_favicon = str(ROOT / "docs" / "_static" / "favicon.svg")
# Where the book is served (Read the Docs tells each build: /en/latest/, /es/latest/).
# book_site reads it for the language switcher, the hreflang links and the sitemap.
html_baseurl = os.environ.get("READTHEDOCS_CANONICAL_URL", "")
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False
html_context = {"default_mode": "light"}
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "article_header_end": ["lang-switch.html", "article-header-buttons.html"],
    "navigation_with_keys": False,
    # The sidebar has the search field; no second one in a top bar.
    "navbar_persistent": [],
}

# sphinx-copybutton: copy code without prompts or outputs.
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_exclude = ".linenos, .gp, .go"

# The other language of each build, for the switcher in the article header.
LANGUAGES = {"en": "English", "es": "Español"}


def _html_context(app, pagename, templatename, context, doctree):
    lang = app.config.language or "en"
    other = "en" if lang == "es" else "es"
    context["book_lang"] = lang
    context["book_other_lang"] = other
    context["book_other_lang_name"] = LANGUAGES[other]


def _finish_html(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    # MathJax v3 (tex-chtml) with its fonts, menu and accessibility parts.
    dest = Path(app.outdir) / "_static" / "mathjax" / "es5"
    for part in MATHJAX_PARTS:
        src = MATHJAX_SRC / part
        target = dest / part
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, dirs_exist_ok=True)
        else:
            shutil.copy2(src, target)


# Config values are not translated by the catalogs: these are set per build.
PER_LANGUAGE = {
    "en": {
        "html_title": "Attention, from scratch",
        "author": "the attention book authors",
        "nb_code_prompt_show": "Show code cell {type}",
        "nb_code_prompt_hide": "Hide code cell {type}",
        "html_theme_options": {"search_bar_text": "Search…"},
    },
    "es": {
        "html_title": "Atención, desde cero",
        "author": "los autores del libro de atención",
        "nb_code_prompt_show": "Mostrar la celda de código",
        "nb_code_prompt_hide": "Ocultar la celda de código",
        "html_theme_options": {"search_bar_text": "Buscar…"},
    },
}


def _per_language(app, config):
    values = PER_LANGUAGE.get(config.language or "en", PER_LANGUAGE["en"])
    for name, value in values.items():
        if isinstance(value, dict):  # added to the dict the config already has
            value = {**getattr(config, name), **value}
        setattr(config, name, value)
    config.project = values["html_title"]
    config.copyright = f"2026, {values['author']}"


class DisplayMathIsNotTranslated(SphinxTransform):
    """Keep display formulas out of the catalogs: LaTeX reads the same in both languages.

    Runs before Sphinx's Locale transform (priority 20), so gettext never
    extracts a ``math_block`` and the translated build keeps the English one.
    """

    default_priority = 10

    def apply(self, **kwargs):
        for node in self.document.findall(nodes.math_block):
            node["translatable"] = False


THUMB_IMAGE = re.compile(r"sphx_glr_(?P<name>.+)_thumb\.\w+$")
THUMB_TOOLTIP = re.compile(r'(<div class="sphx-glr-thumbcontainer" tooltip=")[^"]*(")')
THUMB_TITLE = re.compile(r'(<div class="sphx-glr-thumbnail-title">).*?(</div>)', re.S)


def _gallery_summary(env, docname):
    """The first paragraph of a gallery page, as the reader's language has it."""
    doctree = env.get_doctree(docname)
    section = next(iter(doctree.findall(nodes.section)), None)
    for child in section.children if section is not None else ():
        if isinstance(child, nodes.paragraph):
            return child.astext().replace("\n", " ")
    return ""


def _translate_gallery_cards(app, doctree, docname):
    """Put the translated title and summary on the gallery's cards.

    sphinx-gallery writes each card of ``auto_examples/index`` as raw HTML (the
    summary as a tooltip, the title in a ``div``), which the catalogs cannot
    reach; the Spanish book would show them in English.  Both are taken here
    from the example's own, translated, page.
    """
    if docname != "auto_examples/index" or (app.config.language or "en") == "en":
        return
    pending = None  # the raw node that opens the card being read
    name = None
    for node in doctree.findall(lambda n: isinstance(n, (nodes.raw, nodes.image))):
        if isinstance(node, nodes.raw) and "sphx-glr-thumbcontainer" in node.astext():
            pending, name = node, None
        elif isinstance(node, nodes.image) and pending is not None:
            match = THUMB_IMAGE.search(node["uri"])
            name = match and f"auto_examples/{match['name']}"
            if name in app.env.titles:
                summary = html.escape(_gallery_summary(app.env, name), quote=True)
                text = THUMB_TOOLTIP.sub(lambda m: m[1] + summary + m[2], pending.astext())
                pending.children = [nodes.Text(text)]
        elif isinstance(node, nodes.raw) and "sphx-glr-thumbnail-title" in node.astext() and name in app.env.titles:
            title = html.escape(app.env.titles[name].astext())
            text = THUMB_TITLE.sub(lambda m: m[1] + title + m[2], node.astext())
            node.children = [nodes.Text(text)]
            pending = name = None


def setup(app):
    app.add_transform(DisplayMathIsNotTranslated)
    app.connect("config-inited", _per_language, priority=100)
    app.connect("html-page-context", _html_context)
    app.connect("build-finished", _finish_html)
    app.connect("doctree-resolved", _translate_gallery_cards)
