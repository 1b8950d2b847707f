# The attention book. `make help` lists the targets.
PYTHON      ?= python
SPHINXBUILD ?= $(PYTHON) -m sphinx
# No -q: a long build shows it is alive, a line per page read, executed and written
# (myst-nb: "Executing notebook ...", "Executed notebook in ... seconds").
SPHINXOPTS  ?= -W --keep-going
SOURCEDIR    = docs
BUILDDIR     = _build
# docs/_ext/book_languages.py holds the list (the source language first).
LANGUAGES   := $(shell $(PYTHON) docs/_ext/book_languages.py)
ifeq ($(LANGUAGES),)
$(error $(PYTHON) docs/_ext/book_languages.py printed no languages)
endif
SOURCELANG   = $(word 1,$(LANGUAGES))
TRANSLATION  = $(word 2,$(LANGUAGES))
# -c . : conf.py sits at the top level, the pages in docs/
SPHINX       = $(SPHINXBUILD) -c . $(SPHINXOPTS)

.PHONY: help html $(addprefix html-,$(LANGUAGES)) root-index notebooks gettext update-po translation-check \
        pdf $(addprefix pdf-,$(LANGUAGES)) epub $(addprefix epub-,$(LANGUAGES)) book \
        test test-fast test-book test-pkg test-spelling livehtml clean clean-html clean-pdf clean-epub clean-cache

help:
	@echo "make html               both languages: the site $(BUILDDIR)/html (en/, es/), from $(BUILDDIR)/html-<lang>"
	@echo "make html-en            the English book only"
	@echo "make html-es            the Spanish book only"
	@echo "make pdf                the book as a PDF, both languages (XeLaTeX; README: PDF and EPUB)"
	@echo "make pdf-en, pdf-es     one language's PDF"
	@echo "make epub               the book as an EPUB, both languages"
	@echo "make epub-en, epub-es   one language's EPUB"
	@echo "make book               pdf, epub, then html (the landing page links the files)"
	@echo "make notebooks          run the chapters' notebooks not yet in the cache, side by side (BOOK_JOBS)"
	@echo "make gettext            extract the messages to $(BUILDDIR)/gettext/*.pot"
	@echo "make update-po          gettext, then update locale/es/LC_MESSAGES/*.po"
	@echo "make translation-check  fail on any untranslated or fuzzy Spanish message"
	@echo "make test               every test: test-fast, then test-book"
	@echo "make test-fast          the package and catalog tests only (no book build)"
	@echo "make test-book          the built book's and the browser's tests (builds the book)"
	@echo "make test-pkg           the package's tests and the linter only: the quick loop (about 40 s)"
	@echo "make test-spelling      spelling, terminology and style of the Spanish catalogs"
	@echo "make livehtml           rebuild the English book on every change (sphinx-autobuild)"
	@echo "make clean-html         remove the site (keeps the notebook cache: no page runs again)"
	@echo "make clean-pdf          remove the PDF build, clean-epub the EPUB build (same)"
	@echo "make clean-cache        remove the notebook cache, the gallery and the trained weights: all code runs again"
	@echo "make clean              remove everything the build wrote"

# The chapters' notebooks run first, side by side on every core, into the notebook
# cache (tools/execute_notebooks.py); then the languages build side by side, each
# Sphinx on a core (BOOK_JOBS=1: one after the other). Sphinx reads the notebooks'
# outputs from the cache; the first build to start runs the gallery's scripts and the
# other waits for it, then reuses them (conf.py: gallery_lock), so every piece of code
# runs once per build. The two builds' lines interleave in the log.
html: notebooks
	$(MAKE) -j$(if $(filter 1,$(BOOK_JOBS)),1,$(words $(LANGUAGES))) NOTEBOOKS= $(addprefix html-,$(LANGUAGES)) root-index

notebooks:
	$(PYTHON) tools/execute_notebooks.py

# Each language builds into a tree of its own, $(BUILDDIR)/html-<lang>, so that what
# myst-nb writes beside its output folder (jupyter_execute: the executed notebooks and
# their images) lies in $(BUILDDIR), out of the site; the site, $(BUILDDIR)/html, is
# assembled from copies of the trees.
# NOTEBOOKS=  (make html): the notebooks have run already.
NOTEBOOKS ?= notebooks
$(addprefix html-,$(LANGUAGES)): html-%: $(NOTEBOOKS)
	$(SPHINX) -b html -D language=$* -d $(BUILDDIR)/doctrees/$* $(SOURCEDIR) $(BUILDDIR)/html-$*
	@mkdir -p $(BUILDDIR)/html && rm -rf $(BUILDDIR)/html/$*
	cp -R $(BUILDDIR)/html-$* $(BUILDDIR)/html/$*

root-index:
	@mkdir -p $(BUILDDIR)/html
	cp tools/root-index.html $(BUILDDIR)/html/index.html
	touch $(BUILDDIR)/html/.nojekyll

# The PDF and the EPUB: each builder keeps its own doctrees (the notebook cache and the
# gallery are shared with make html); every page is written again (-a: one file holds them
# all, and a change to the build's code alone would leave stale pages in it), and
# tools/print_check.py fails on a missing glyph or an undefined reference, then copies
# the file to $(BUILDDIR)/html-<lang>/downloads/ (where the landing page looks for it)
# and to the site, $(BUILDDIR)/html/<lang>/downloads/.
pdf: $(addprefix pdf-,$(LANGUAGES))

$(addprefix pdf-,$(LANGUAGES)): pdf-%: notebooks
	rm -rf $(BUILDDIR)/latex/$*  # a run stopped half-way leaves files the next one trips on
	$(SPHINX) -b latex -D language=$* -d $(BUILDDIR)/doctrees/latex-$* $(SOURCEDIR) $(BUILDDIR)/latex/$*
	$(MAKE) -C $(BUILDDIR)/latex/$* all-pdf LATEXMKOPTS="-silent"
	$(PYTHON) tools/print_check.py pdf $(BUILDDIR)/latex/$* $(BUILDDIR)/html-$*/downloads $(BUILDDIR)/html/$*/downloads

epub: $(addprefix epub-,$(LANGUAGES))

$(addprefix epub-,$(LANGUAGES)): epub-%: notebooks
	$(SPHINX) -b epub -a -D language=$* -d $(BUILDDIR)/doctrees/epub-$* $(SOURCEDIR) $(BUILDDIR)/epub/$*
	$(PYTHON) tools/print_check.py epub $(BUILDDIR)/epub/$* $(BUILDDIR)/html-$*/downloads $(BUILDDIR)/html/$*/downloads

# html last: its landing page links the files that exist.
book: pdf epub
	$(MAKE) html

gettext: notebooks
	rm -rf $(BUILDDIR)/gettext
	$(SPHINX) -b gettext -d $(BUILDDIR)/doctrees/gettext $(SOURCEDIR) $(BUILDDIR)/gettext

# sphinx.pot holds the templates' strings; locale/*/LC_MESSAGES/sphinx.po is kept by
# hand (it also overrides Sphinx's and the theme's own strings), so it is not updated.
update-po: gettext
	rm -f $(BUILDDIR)/gettext/sphinx.pot
	sphinx-intl update -p $(BUILDDIR)/gettext -l $(TRANSLATION) -d locale -w 79
	$(PYTHON) tools/po_tidy.py locale/$(TRANSLATION)/LC_MESSAGES

translation-check:
	$(PYTHON) tools/translation_check.py locale/$(TRANSLATION)/LC_MESSAGES

# Everything, in two tiers, each test once: the package, the catalogs and the linter first
# (no build: a broken package fails within minutes), then the built book and the browser.
test:
	$(MAKE) test-fast
	$(MAKE) test-book

# The tests of the built book and the browser (they run make html once).
test-book:
	$(PYTHON) -m pytest -m book

# The package and the catalogs, without building the book (markers in pytest.ini).
test-fast:
	$(PYTHON) -m pytest -m "not book"

# The quick loop while changing the package: its tests and the linter, no catalogs, no book.
test-pkg:
	$(PYTHON) -m pytest tests/attn tests/test_lint.py -m "not book and not spelling"

# The Spanish catalogs' spelling (hunspell-es), terminology and style (marker in pytest.ini).
test-spelling:
	$(PYTHON) -m pytest tests/i18n -m spelling

livehtml:
	sphinx-autobuild -c . -D language=$(SOURCELANG) -d $(BUILDDIR)/doctrees/live \
	  --ignore "*/auto_examples/*" $(SOURCEDIR) $(BUILDDIR)/live

# Each output alone; the notebook cache (_build/.jupyter_cache) and the gallery
# (docs/auto_examples) stay, so the next build runs no code that has not changed.
clean-html:
	rm -rf $(BUILDDIR)/html $(addprefix $(BUILDDIR)/html-,$(LANGUAGES)) $(addprefix $(BUILDDIR)/doctrees/,$(LANGUAGES)) $(BUILDDIR)/jupyter_execute

clean-pdf:
	rm -rf $(BUILDDIR)/latex $(addprefix $(BUILDDIR)/doctrees/latex-,$(LANGUAGES))

clean-epub:
	rm -rf $(BUILDDIR)/epub $(addprefix $(BUILDDIR)/doctrees/epub-,$(LANGUAGES))

clean-cache:
	rm -rf $(BUILDDIR)/.jupyter_cache $(BUILDDIR)/weights $(SOURCEDIR)/auto_examples $(SOURCEDIR)/sg_execution_times.rst

clean:
	rm -rf $(BUILDDIR) $(SOURCEDIR)/auto_examples $(SOURCEDIR)/sg_execution_times.rst
