"""The book to take away: the PDF and the EPUB of each language.

``print_files`` runs ``make pdf epub`` once per session (Sphinx reuses the
notebook cache and its own doctrees, LaTeX reruns only when the ``.tex``
changed) and returns the files ``make`` copied into
``_build/html/<lang>/downloads/``.  The chapters' titles are read from the
sources and the Spanish catalogs, the figures counted on the HTML build.
Set ``BOOK_SKIP_BUILD=1`` to test the existing files without rebuilding.
"""

import functools
import os
import re
import shutil
import subprocess
import sys
import unicodedata
import zipfile
from xml.etree import ElementTree
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

import polib
import pytest
from bs4 import BeautifulSoup
from book_languages import SOURCE, catalog
from book_downloads import file_stem
from print_check import log_problems
from book_pages import DOCS
from site_pages import CHAPTERS, LANGS, ROOT, SITE, WRITTEN_PAGES, page_soup, without_emphasis

BUILD = ROOT / "_build"
# Pages with a Markdown title of their own: every chapter, the glossary, the building page.
TITLED_PAGES = [p for p in WRITTEN_PAGES if (DOCS / f"{p}.md").is_file() and p != "index"]
# Debian's packages make pdf needs (docs/building.md: "PDF and EPUB").
PDF_TOOLS = ("xelatex", "latexmk", "xindy", "dvisvgm", "pdftotext", "pdfimages")


def titles():
    """``{lang: {page: title}}``: each page's ``# `` title, translated from its catalog."""
    found = {lang: {} for lang in LANGS}
    for page in TITLED_PAGES:
        source = (DOCS / f"{page}.md").read_text(encoding="utf-8")
        title = next(line[2:].strip() for line in source.splitlines() if line.startswith("# "))
        for lang in LANGS:
            text = title
            if lang != SOURCE:
                entry = polib.pofile(str(ROOT / "locale" / lang / "LC_MESSAGES" / f"{page}.po")).find(title)
                assert entry is not None and entry.msgstr, f"{lang}: {page}'s title {title!r} is not translated"
                text = entry.msgstr
            text = without_emphasis(text)  # *prefill*: italics, printed without the marks
            found[lang][page] = re.sub(r"`([^`]*)`", r"\1", text)  # as printed: code without backticks
    return found


TITLES = titles()


def flat(text):
    """Text with ligatures split (ﬁ -> fi), straight quotes, every run of white space one space."""
    text = unicodedata.normalize("NFKC", text).translate(str.maketrans("‘’“”", "''\"\""))
    return re.sub(r"\s+", " ", text).strip()


def book_titles():
    """``{lang: title}``: the book's title, translated by ``sphinx.po`` (conf.py: ``per_language``)."""
    return {lang: catalog(lang, "sphinx").get("Attention, from scratch", "Attention, from scratch") for lang in LANGS}


BOOK_TITLES = book_titles()


def stem(lang):
    return file_stem(BOOK_TITLES[lang], lang)


@pytest.fixture(scope="session")
def print_files():
    missing = [tool for tool in PDF_TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.fail(
            f"make pdf needs {missing}: install Debian's texlive-xetex texlive-latex-extra "
            "texlive-lang-spanish latexmk xindy preview-latex-style dvisvgm fonts-freefont-otf "
            "fonts-dejavu-core poppler-utils (docs/building.md: PDF and EPUB; .ci/run does)",
            pytrace=False,
        )
    if os.environ.get("BOOK_SKIP_BUILD") != "1":
        proc = subprocess.run(
            ["make", "pdf", "epub", f"PYTHON={sys.executable}"], cwd=ROOT, capture_output=True, text=True
        )
        if proc.returncode != 0:
            pytest.fail(
                f"make pdf epub failed (exit {proc.returncode}):\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}",
                pytrace=False,
            )
    files = {}
    for lang in LANGS:
        for suffix in ("pdf", "epub"):
            path = SITE / lang / "downloads" / f"{stem(lang)}.{suffix}"
            if not path.is_file():
                pytest.fail(f"{path} was not built", pytrace=False)
            files[lang, suffix] = path
    return files


@functools.lru_cache(maxsize=None)
def pdf_text(path):
    return flat(subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout)


def pdf_image_count(path):
    """How many images the PDF draws (``pdfimages -list``; soft masks are not images)."""
    out = subprocess.run(["pdfimages", "-list", str(path)], capture_output=True, text=True, check=True).stdout
    rows = [line.split() for line in out.splitlines()[2:] if line.strip()]
    return sum(1 for row in rows if row[2] == "image")


def html_figures(site, lang, page):
    """The figures a built HTML page shows in its article, thumbnails of the gallery apart.

    An attention explorer counts as one: the PDF and the EPUB print its static heatmap
    (docs/_ext/book_outputs.py).
    """
    doc = page_soup(site, lang, page)
    article = doc.select_one("article") or doc
    images = [img for img in article.find_all("img") if not img.find_parent(class_="sphx-glr-thumbcontainer")]
    return images + article.select("[data-attention-explorer]")


def test_file_names_follow_the_titles():
    assert stem("en") == "attention-from-scratch-en"
    assert stem("es") == "atencion-desde-cero-es"


# -- PDF ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_pdf_has_every_title(print_files, lang):
    text = pdf_text(print_files[lang, "pdf"])
    missing = [title for title in TITLES[lang].values() if flat(title) not in text]
    assert not missing, f"{lang}: titles not in the PDF: {missing}"


@pytest.mark.parametrize("lang", LANGS)
def test_pdf_has_no_unresolved_reference_or_missing_glyph(print_files, lang):
    text = pdf_text(print_files[lang, "pdf"])
    assert "??" not in text, f"{lang}: an unresolved reference prints ??: …{text[max(0, text.find('??') - 80):][:160]}…"
    log = BUILD / "latex" / lang / f"{stem(lang)}.log"
    assert not log_problems(log.read_text(encoding="utf-8", errors="replace")), log


@pytest.mark.parametrize("lang", LANGS)
def test_pdf_has_every_figure(print_files, site_dir, lang):
    # Every figure of the HTML pages (the gallery's thumbnails are web-only), and the
    # solutions' code: the PDF prints the cells the web pages fold.
    wanted = sum(len(html_figures(site_dir, lang, page)) for page in WRITTEN_PAGES)
    assert wanted >= len(CHAPTERS), wanted
    assert pdf_image_count(print_files[lang, "pdf"]) >= wanted


@pytest.mark.parametrize("lang", LANGS)
def test_pdf_prints_solutions_and_their_code(print_files, lang):
    # Each folded solution is a titled block (an admonition, like its exercise), and the
    # code cells the web pages fold are printed: the code of solution 4.1.
    tex = (BUILD / "latex" / lang / f"{stem(lang)}.tex").read_text(encoding="utf-8")
    solution = {"en": "Solution", "es": "Solución"}[lang]
    blocks = tex.count(f"\\begin{{sphinxadmonition}}{{note}}{{{solution}}}")
    assert blocks >= 2 * 10, f"{lang}: {blocks} solutions printed as titled blocks"
    assert "sigma**2*d_k**0.5" in pdf_text(print_files[lang, "pdf"]).replace(" ", ""), lang


# -- EPUB --------------------------------------------------------------------------------------


def epub_pages(path):
    """``{name: parsed XHTML}`` of an EPUB's pages, and the set of its file names."""
    with zipfile.ZipFile(path) as epub:
        names = set(epub.namelist())
        pages = {
            name: BeautifulSoup(epub.read(name).decode("utf-8"), "html.parser")
            for name in names
            if name.endswith(".xhtml")
        }
    return pages, names


@pytest.mark.parametrize("lang", LANGS)
def test_epub_container_is_valid(print_files, lang):
    ns = {
        "c": "urn:oasis:names:tc:opendocument:xmlns:container",
        "opf": "http://www.idpf.org/2007/opf",
        "dc": "http://purl.org/dc/elements/1.1/",
        "ncx": "http://www.daisy.org/z3986/2005/ncx/",
    }
    with zipfile.ZipFile(print_files[lang, "epub"]) as epub:
        first = epub.infolist()[0]
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
        assert epub.read("mimetype") == b"application/epub+zip"
        container = ElementTree.fromstring(epub.read("META-INF/container.xml"))
        opf_name = container.find("c:rootfiles/c:rootfile", ns).get("full-path")
        opf = ElementTree.fromstring(epub.read(opf_name))
        ncx = ElementTree.fromstring(epub.read("toc.ncx"))
        nav = BeautifulSoup(epub.read("nav.xhtml"), "html.parser")
        names = set(epub.namelist())
    # The table of contents is named in the book's language (Sphinx writes it in English).
    toc = catalog(lang, "sphinx").get("Table of Contents", "Table of Contents")
    assert (lang == SOURCE) == (toc == "Table of Contents"), toc
    assert nav.title.get_text() == nav.h1.get_text() == toc, (nav.title, nav.h1)
    assert [r.get("title") for r in opf.iterfind("opf:guide/opf:reference[@type='toc']", ns)] == [toc]
    assert opf.findtext("opf:metadata/dc:language", namespaces=ns) == lang
    assert opf.findtext("opf:metadata/dc:title", namespaces=ns) == BOOK_TITLES[lang]
    base = PurePosixPath(opf_name).parent
    for item in opf.iterfind("opf:manifest/opf:item", ns):
        href = item.get("href")
        assert os.path.normpath(base / unquote(href)) in names, f"{lang}: the manifest lists {href}"
    # The table of contents (EPUB 2 readers') leads to pages that exist.
    for content in ncx.iterfind(".//ncx:content", ns):
        page = os.path.normpath(base / unquote(urlsplit(content.get("src")).path))
        assert page in names, f"{lang}: toc.ncx leads to {content.get('src')}"


@pytest.mark.parametrize("lang", LANGS)
def test_epub_has_every_title_and_figure(print_files, site_dir, lang):
    pages, names = epub_pages(print_files[lang, "epub"])
    for page, title in TITLES[lang].items():
        doc = pages.get(f"{page}.xhtml")
        assert doc is not None, f"{lang}: {page}.xhtml is not in the EPUB"
        h1 = doc.find("h1")
        assert h1 is not None and flat(title) in flat(h1.get_text()), f"{lang}/{page}: title {h1}"
    for page in WRITTEN_PAGES:
        doc = pages[f"{page}.xhtml"]
        figures = [img for img in doc.find_all("img") if "math" not in img.get("class", [])]
        assert len(figures) >= len(html_figures(site_dir, lang, page)), f"{lang}/{page}: figures missing"


@pytest.mark.parametrize("lang", LANGS)
def test_epub_links_images_and_math_resolve(print_files, lang):
    pages, names = epub_pages(print_files[lang, "epub"])
    problems = []
    for name, doc in pages.items():
        here = PurePosixPath(name).parent
        for img in doc.find_all("img"):
            target = os.path.normpath(here / unquote(img["src"]))
            if target not in names:
                problems.append(f"{name}: image {img['src']}")
        for link in doc.find_all(["a", "link"], href=True):
            url = urlsplit(link["href"])
            if url.scheme or url.netloc or not url.path:
                continue
            target = os.path.normpath(here / unquote(url.path))
            if target not in names:
                problems.append(f"{name}: link {link['href']}")
        body = doc.find("body") or doc
        text = body.get_text()
        if "??" in text:
            problems.append(f"{name}: ??")
        # Mathematics is typeset (an SVG per formula), never left as TeX for MathJax.
        if re.search(r"\\\(|\\\[|\$\$", text):
            problems.append(f"{name}: raw TeX")
        if doc.find("details"):
            problems.append(f"{name}: a folded <details> (solutions and cells print open)")
    assert not problems, f"{lang}: " + "\n".join(problems[:20])
    chapter = pages[f"{CHAPTERS[3]}.xhtml"]
    assert chapter.select("img.math"), f"{lang}/{CHAPTERS[3]}: no typeset formula"


# -- the landing page's links ------------------------------------------------------------------


def test_landing_page_links_only_what_exists(tmp_path, monkeypatch):
    # A file is linked where it lies (downloads/ under the language's root), or named with
    # the command that makes it; on Read the Docs, where it serves the formats it builds.
    from types import SimpleNamespace

    from book_downloads import archive_stem, download_entries

    # (Outside a build the archive's first word is not translated: test_notebooks checks the names.)
    archive = f"downloads/{archive_stem(BOOK_TITLES['es'], 'es')}.zip"

    for var in ("READTHEDOCS", "READTHEDOCS_LANGUAGE", "READTHEDOCS_VERSION"):
        monkeypatch.delenv(var, raising=False)
    app = SimpleNamespace(
        config=SimpleNamespace(language="es", project=BOOK_TITLES["es"]), outdir=str(tmp_path), extensions={}
    )
    assert download_entries(app) == [("pdf", None, "make pdf-es"), ("epub", None, "make epub-es")]
    (tmp_path / "downloads").mkdir()
    (tmp_path / "downloads" / "atencion-desde-cero-es.pdf").write_bytes(b"%PDF")
    app.extensions = {"chapter_notebooks": None}  # make html writes the archive itself
    assert download_entries(app) == [
        ("pdf", "downloads/atencion-desde-cero-es.pdf", "make pdf-es"),
        ("epub", None, "make epub-es"),
        ("notebooks", archive, "make html"),
    ]
    monkeypatch.setenv("READTHEDOCS", "True")
    monkeypatch.setenv("READTHEDOCS_LANGUAGE", "es")
    monkeypatch.setenv("READTHEDOCS_VERSION", "latest")
    hrefs = [href for _, href, _ in download_entries(app)]
    assert hrefs == ["/_/downloads/es/latest/pdf/", "/_/downloads/es/latest/epub/", archive]
