"""Sphinx configuration for the attention book.

Build from the repository root with ``make html`` (both languages) or::

    python -m sphinx -b html -c . -D language=en docs _build/html/en

Pages live in ``docs/`` (MyST notebooks executed by myst-nb), gallery scripts in
``examples/`` (executed by sphinx-gallery) and the Spanish catalogs in ``locale/``.
This file holds settings only; what the libraries' settings cannot say lives in
the local extensions of ``docs/_ext/`` (each hook says why it exists).
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent

# The book runs this checkout's `attn`, whatever else is installed: autodoc and
# the gallery import it in this process, myst-nb's kernels inherit PYTHONPATH.
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
# A model trained by a chapter is saved there and loaded by its gallery script (attn/models/train.py).
os.environ.setdefault("ATTN_WEIGHTS_DIR", str(ROOT / "_build" / "weights"))
# matplotlib's font cache, built now if it is missing, before a kernel or a gallery script
# imports matplotlib and prints that it builds it into a page (tools/execute_notebooks.py).
import matplotlib.font_manager  # noqa: E402,F401
# The local extensions, and the language list they share with the tests and the Makefile.
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from book_languages import LANGUAGES, LOCALE, SOURCE  # noqa: E402
from book_hosting import DESCRIPTION  # noqa: E402
from book_downloads import file_stem  # noqa: E402
from book_pages import GENERATED_PAGES  # noqa: E402

# -- Project -------------------------------------------------------------------
# The source language's values; per_language (below) gives each build its own.
project = html_title = "Attention, from scratch"
author = "the attention book authors"
copyright = f"2026, {author}"
release = "0.1.0"
version = release

language = SOURCE  # `-D language=es` builds the translation
locale_dirs = [str(LOCALE)]
gettext_compact = False
gettext_uuid = False
gettext_location = False  # one catalog per page already says where; line numbers would churn

extensions = [
    "myst_nb",
    "sphinx_gallery.gen_gallery",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx_copybutton",
    "sphinx_design",
    "sphinxcontrib.bibtex",  # the bibliography: docs/references.bib, {cite:t} and {cite:p}
    "book_bibliography",  # docs/_ext: entries and citations without English words
    "book_i18n",  # docs/_ext: what the catalogs cannot translate
    "book_math",  # docs/_ext/book_math.py: formulas as MathML at build time, the math font
    "sphinx_sitemap",  # sitemap.xml of each language, with each page's twin (when hosted)
    "sphinxext.opengraph",  # each page's description and Open Graph tags, from its first text
    "book_hosting",  # docs/_ext: the language switcher, hreflang twins, the sitemap's URLs, robots.txt
    "book_a11y",  # docs/_ext: names for the controls the theme and myst-nb leave unnamed
    "book_images",  # docs/_ext: images with their size, loaded lazily, figures linked to their file
    "book_alt",  # docs/_ext: alt text of the figures, in the page's language
    "book_assets",  # docs/_ext: each page loads only the stylesheets it uses, scripts deferred
    "book_fonts",  # docs/_ext: the theme's icon font cut down to the icons used
    "book_parts",  # docs/_ext/book_parts.py: Part II's chapters numbered after Part I's
    "book_listings",  # docs/_ext: the package's code shown without its docstrings
    "book_outputs",  # docs/_ext: printed output as the code printed it, attn.viz.plot.explore's heatmaps explorable
    "translated_downloads",  # docs/_ext: the gallery's downloads with translated text blocks
    "chapter_notebooks",  # docs/_ext: each chapter as a notebook in the page's language, and an archive
    "book_print",  # docs/_ext/book_print.py: the PDF and the EPUB (make pdf, make epub)
    "book_downloads",  # docs/_ext: the files' names, the landing page's list of them
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

# -- MyST and myst-nb ------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# Every page runs at build time through one cache shared by both languages, so
# the Spanish build reuses the outputs of the English one (code runs once).
nb_execution_mode = "cache"
nb_execution_cache_path = str(ROOT / "_build" / ".jupyter_cache")
nb_execution_raise_on_error = True
nb_execution_show_tb = True
# No limit on a cell's time by default: a busy 2-core machine takes minutes over a
# training cell. To stop a cell that hangs, set one in seconds:
# BOOK_CELL_TIMEOUT=900 make html (-1: no limit).
nb_execution_timeout = int(os.environ.get("BOOK_CELL_TIMEOUT", "-1"))
nb_merge_streams = True
# A figure's alt text (the cell's `mystnb: {image: {alt: ...}}`, docs/_ext/book_alt.py) is
# translated by the catalogs: the gettext builder keeps the figure (myst-nb's default for
# it is the output's text/plain form), so that `make update-po` extracts its alt text.
nb_mime_priority_overrides = [("gettext", "image/png", 1)]
# myst-nb writes the executed notebooks and their images beside the output folder
# (<outdir>/../jupyter_execute): the Makefile builds each language into its own tree,
# _build/html-<lang>, so that folder lies out of the site it assembles in _build/html.

# Processes that run code side by side: the gallery's scripts here, the chapters'
# notebooks in tools/execute_notebooks.py (which make html runs before Sphinx).
JOBS = int(os.environ.get("BOOK_JOBS", "0")) or os.cpu_count() or 1

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
    # The gallery's cards draw a thumbnail at most 160 x 112 CSS px (sg_gallery.css; measured in the built
    # gallery at 1366 and 375 px): stored at twice that, sharp on a phone's 2-3 pixels per CSS px, not the
    # default's 400 x 280. sphinx-gallery makes a thumbnail when its script runs: after changing this,
    # delete docs/auto_examples/*.md5.
    "thumbnail_size": (320, 224),
    # Each figure's alt text, from the "# sphinx_gallery_alt = ..." comment of the block
    # that draws it, as a plain image the catalogs translate (docs/_ext/book_alt.py).
    "image_scrapers": ("book_alt.gallery_scraper",),
    # The scripts run side by side, one process per core (joblib), as the chapters'
    # notebooks do (tools/execute_notebooks.py); BOOK_JOBS=1 runs them one by one.
    "parallel": JOBS if JOBS > 1 else False,
}

# -- Bibliography (sphinxcontrib-bibtex; styles in docs/_ext/book_bibliography.py) ----------
# One file; docs/bibliography.md lists every entry. Entries link their DOI, arXiv page or
# publisher's page as plain links: nothing is fetched at build time.
bibtex_bibfiles = ["docs/references.bib"]  # relative to this folder
bibtex_default_style = "book"
bibtex_reference_style = "book"
bibtex_encoding = "utf-8"
bibtex_cite_id = "ref-{key}"  # stable anchors: bibliography.html#ref-vaswani2017

# -- autodoc -----------------------------------------------------------------------
autodoc_member_order = "bysource"
# The module index lists attn.functional, attn.layers.rope, ... flat: a module whose name keeps a
# dot after the prefix is grouped under its package behind a collapse button drawn with an image
# that has no alt text. Sphinx strips the first prefix that matches: the folders' before "attn.".
modindex_common_prefix = [f"attn.{folder}." for folder in ("ops", "layers", "cache", "models", "viz", "exercises")]
modindex_common_prefix += ["attn."]
# (napoleon reads the package's Google-style docstrings: Args, Returns, Shape.)

# -- Math: MathML written at build time (book_math), drawn by the browser: no script --
html_math_renderer = "mathml"

# -- HTML ----------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_static_path = [str(ROOT / "docs" / "_static")]
html_css_files = ["book.css"]
# The .py and .ipynb downloads download when the book is opened from disk too;
# book-site.js: wide inline formulas on phones (book.css).
html_js_files = [("book-downloads.js", {"defer": "defer"}), ("book-site.js", {"defer": "defer"})]
html_favicon = str(ROOT / "docs" / "_static" / "favicon.svg")
# Where the book is served (Read the Docs tells each build: /en/latest/, /es/latest/).
# book_hosting reads it for the language switcher and the hreflang links, and derives
# sphinx-sitemap's and sphinxext-opengraph's URLs from it.
html_baseurl = os.environ.get("READTHEDOCS_CANONICAL_URL", "")
# sphinx-sitemap: both languages of every page Sphinx does not write itself. Built
# without html_baseurl (make html) there is no sitemap, which it reports as a warning.
sitemap_locales = list(LANGUAGES)
sitemap_excludes = [f"{page}.html" for page in GENERATED_PAGES]
suppress_warnings = ["sitemap.configuration"]
# sphinxext-opengraph: the Open Graph tags, each page's description given by book_hosting.
# No social cards: they render offline (matplotlib, a bundled font), but their text is
# the extension's own reading of the page, formulas as raw TeX (\sqrt{d_k}).
ogp_social_cards = {"enable": False}
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False
# Light or dark as the reader's system prefers (the theme's switch still chooses).
html_context = {"default_mode": "auto"}
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "article_header_end": ["lang-switch.html", "chapter-notebook.html", "article-header-buttons.html"],
    "navigation_with_keys": False,
    # The landing page has no "Contents" column: its one entry left a 250 px empty column.
    "secondary_sidebar_items": {"**": ["page-toc.html"], "index": []},
    # The sidebar has the search field; no second one in a top bar.
    "navbar_persistent": [],
}

# sphinx-copybutton: copy code without prompts or outputs.
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_exclude = ".linenos, .gp, .go"

# -- PDF and EPUB: make pdf, make epub (docs/building.md: "PDF and EPUB") -------------------------
# per_language (below) names the files after the edition's title (attention-from-scratch-en.pdf,
# atencion-desde-cero-es.epub); book_print prints the toctrees' captions as the book's
# parts and the folded solutions as titled blocks.
latex_engine = "xelatex"  # Unicode text; polyglossia sets the language (Spanish hyphenation)
latex_elements = {
    "papersize": "a4paper",
    "pointsize": "10pt",
    # Fonts from Debian's packages: fonts-freefont-otf (text) and fonts-dejavu-core (code).
    # The code's font must have every character the book prints (✓ ✗ ∉ ≠ ·): FreeMono
    # and DejaVu Sans Mono Oblique lack ✗, so comments (italic) are the upright face
    # slanted. tools/print_check.py fails the build on any "Missing character".
    "fontpkg": r"""
\setmainfont{FreeSerif}[Extension=.otf, UprightFont=*, ItalicFont=*Italic,
  BoldFont=*Bold, BoldItalicFont=*BoldItalic]
\setsansfont{FreeSans}[Extension=.otf, UprightFont=*, ItalicFont=*Oblique,
  BoldFont=*Bold, BoldItalicFont=*BoldOblique]
\setmonofont{DejaVu Sans Mono}[Scale=MatchLowercase,
  ItalicFont=DejaVu Sans Mono, ItalicFeatures={FakeSlant=0.2},
  BoldItalicFont=DejaVu Sans Mono Bold, BoldItalicFeatures={FakeSlant=0.2}]
""",
    # Long code and output lines wrap (with a mark), even where they have no space.
    "sphinxsetup": "verbatimforcewraps=true, verbatimmaxunderfull=2",
    # The landing page's text follows the contents: its pages' running head is not "Contents".
    "tableofcontents": r"\sphinxtableofcontents\markboth{}{}",
}
latex_domain_indices = False
latex_show_urls = "footnote"

# The EPUB's mathematics: SVG images drawn by LaTeX (many e-readers draw no MathML).
# book_print registers epub_math_renderer and loads sphinx.ext.imgmath.
epub_math_renderer = "imgmath"
imgmath_image_format = "svg"
imgmath_use_preview = True  # inline formulas sit on the text's baseline
imgmath_font_size = 14
epub_show_urls = "no"
epub_css_files = []  # book.css styles the web theme; the EPUB keeps Sphinx's epub theme
epub_exclude_files = ["search.html"]


# -- Per language ----------------------------------------------------------------------
# The values below differ between the languages, and this file runs before Sphinx
# applies `-D language=es` (make html-es, Read the Docs): so they are set once the
# configuration is complete, by the hook below, which reads the language Sphinx will
# build. Their words come from the one table of the interface's strings,
# locale/<lang>/LC_MESSAGES/sphinx.po, which Sphinx has loaded by then (`_`). It runs
# before every other config-inited hook (priority 100), so extensions see this
# language's values.


def per_language(app, config):
    from sphinx.locale import get_translation

    _ = get_translation("sphinx")
    config.project = config.html_title = _(html_title)
    config.author = _(author)
    config.copyright = f"2026, {config.author}"
    config.nb_code_prompt_show = _("Show code cell {type}")
    config.nb_code_prompt_hide = _("Hide code cell {type}")
    config.html_theme_options = {**config.html_theme_options, "search_bar_text": _("Search…")}
    # The PDF and the EPUB are named after the edition's title: atencion-desde-cero-es.pdf.
    stem = file_stem(config.project, config.language)
    config.latex_documents = [(config.root_doc, f"{stem}.tex", config.project, config.author, "manual")]
    config.epub_basename = config.epub_identifier = stem
    config.epub_uid = stem.replace("-", "_")
    config.epub_description = _(DESCRIPTION)


# -- One gallery run for builds side by side ------------------------------------------
# sphinx-gallery writes its pages into docs/auto_examples when the builder starts
# (builder-inited, priority 500), and make html builds the languages side by side: one
# build at a time runs it, the other waits, then finds every script unchanged (its MD5).
GALLERY_LOCK = ROOT / "_build" / ".gallery.lock"


def gallery_lock(app):
    try:
        import fcntl
    except ImportError:  # Windows, where make html is not the way to build: one build at a time
        app.book_gallery_lock = open(os.devnull, "w")
        return
    GALLERY_LOCK.parent.mkdir(parents=True, exist_ok=True)
    app.book_gallery_lock = GALLERY_LOCK.open("w")
    # A POSIX lock, which the gallery's worker processes (forked) do not inherit: closing the
    # file releases it, once the gallery is written (or at exit).
    fcntl.lockf(app.book_gallery_lock, fcntl.LOCK_EX)


def setup(app):
    app.connect("config-inited", per_language, priority=100)
    app.connect("builder-inited", gallery_lock, priority=400)
    app.connect("builder-inited", lambda app: app.book_gallery_lock.close(), priority=600)
