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
# The local extensions, and the language list they share with the tests and the Makefile.
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from book_languages import SOURCE  # noqa: E402

# -- Project -------------------------------------------------------------------
# Configuration values are not messages of any page, so the catalogs never translate
# them: book_i18n sets these for the language being built (and `project` to the title).
book_per_language = {
    "en": {
        "html_title": "Attention, from scratch",
        "author": "the attention book authors",
        "nb_code_prompt_show": "Show code cell {type}",
        "nb_code_prompt_hide": "Hide code cell {type}",
        "html_theme_options": {"search_bar_text": "Search…"},
    },
    "es": {
        "html_title": "Atención, desde cero",
        "author": "los autores de «Atención, desde cero»",
        "nb_code_prompt_show": "Mostrar la celda de código",
        "nb_code_prompt_hide": "Ocultar la celda de código",
        "html_theme_options": {"search_bar_text": "Buscar…"},
    },
}
project = html_title = book_per_language[SOURCE]["html_title"]
author = book_per_language[SOURCE]["author"]
copyright = f"2026, {author}"
release = "0.1.0"
version = release

language = SOURCE  # `-D language=es` builds the translation
locale_dirs = [str(ROOT / "locale")]
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
    "book_offline",  # docs/_ext: executed notebooks out of the site
    "book_math",  # docs/_ext/book_math.py: formulas as MathML at build time, the math font
    "book_site",  # docs/_ext/book_site.py: accessibility, weight, search, hosting
    "book_parts",  # docs/_ext/book_parts.py: Part II's chapters numbered after Part I's
    "book_listings",  # docs/_ext: the package's code shown without its docstrings
    "book_outputs",  # docs/_ext: printed output joined as the code printed it
    "book_explorer",  # docs/_ext: attn.plot.explore's interactive heatmaps on the web pages
    "translated_ui",  # docs/_ext: search strings, API types, labels in the reader's language
    "translated_downloads",  # docs/_ext: the gallery's downloads with translated text blocks
    "chapter_notebooks",  # docs/_ext: each chapter as a notebook in the page's language, and an archive
    "book_print",  # docs/_ext/book_print.py: the PDF and the EPUB (make pdf, make epub)
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
nb_execution_timeout = 600
nb_merge_streams = True
# (book_offline writes the executed notebooks next to this cache, out of the site.)

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
# The module index lists attn.functional, attn.rope, ... flat: without a common prefix it
# groups them under "attn" behind a collapse button drawn with an image that has no alt text.
modindex_common_prefix = ["attn."]
# (napoleon reads the package's Google-style docstrings: Args, Returns, Shape.)

# -- Math: MathML written at build time (book_math), drawn by the browser: no script --
html_math_renderer = "mathml"

# -- HTML ----------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
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
    "article_header_end": ["lang-switch.html", "chapter-notebook.html", "article-header-buttons.html"],
    "navigation_with_keys": False,
    # The sidebar has the search field; no second one in a top bar.
    "navbar_persistent": [],
}

# sphinx-copybutton: copy code without prompts or outputs.
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_exclude = ".linenos, .gp, .go"

# -- PDF and EPUB: make pdf, make epub (README: "PDF and EPUB") -------------------------
# book_print names the files per language (attention-from-scratch-en.pdf,
# atencion-desde-cero-es.epub), prints the toctrees' captions as the book's parts and
# the folded solutions as titled blocks.
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
