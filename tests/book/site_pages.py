"""What the built book should contain, and static checks on its HTML.

Helpers for ``test_browser.py``.  The pages to test are derived from the
*sources* (``docs/`` and ``examples/``), so pytest can parametrise before the
session fixture builds the site; ``test_every_built_page_is_tested`` then checks
that the built folders hold exactly these pages.
"""

import functools
import gzip
import http.server
import io
import re
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from bs4 import BeautifulSoup
from book_languages import LANGUAGES, OTHER  # noqa: F401 (OTHER: for the tests)
# The pages derived from the sources (docs/_ext/book_pages.py); source_pages: for the tests.
from book_pages import GALLERY, ROOT, gallery_scripts, source_pages, written_pages  # noqa: F401

SITE = ROOT / "_build" / "html"  # make html: one folder per language
LANGS = tuple(LANGUAGES)


def built_pages(site, lang):
    """Page names of the HTML files built for ``lang`` (outside ``_`` folders)."""
    base = site / lang
    names = set()
    for path in base.rglob("*.html"):
        rel = path.relative_to(base)
        if rel.parts[0].startswith("_"):
            continue
        names.add(rel.with_suffix("").as_posix())
    return names


@functools.lru_cache(maxsize=None)
def without_emphasis(markdown_text):
    """Markdown *emphasis* as a page prints it: the words, without the marks."""
    return re.sub(r"(?<!\w)\*(\S[^*]*?)\*(?!\w)", r"\1", markdown_text)


def parse(path):
    """The HTML file at ``path``, parsed (a new tree at every call: change it freely)."""
    return BeautifulSoup(Path(path).read_text(encoding="utf-8"), "html.parser")


def page_soup(site, lang, page):
    """The built page ``page`` (``chapters/01_why_attention``) of ``lang``, parsed."""
    path = site / lang / f"{page}.html"
    assert path.is_file(), f"{lang}/{page}.html was not built"
    return parse(path)


def element_ids(doc):
    """The targets a ``#fragment`` can name: every ``id``, and ``name`` on ``<a>``."""
    ids = {el["id"] for el in doc.find_all(id=True)}
    return ids | {a["name"] for a in doc.find_all("a", attrs={"name": True})}


@functools.lru_cache(maxsize=None)
def file_ids(path):
    """:func:`element_ids` of the built file at ``path`` (resolved), parsed once per session.

    Every page links into the API page and the glossary many times: parsing the target
    again for each link made the link checks the longest part of the suite.
    """
    return frozenset(element_ids(parse(path)))


# The pages, derived once from the sources (page names, as in the built folders).
PAGES = source_pages()
WRITTEN_PAGES = written_pages()  # Sphinx's own left out
CHAPTERS = [p for p in PAGES if p.startswith("chapters/")]
EXAMPLE_PAGES = [f"{GALLERY}/{script.stem}" for script in gallery_scripts()]


def is_external(href):
    parts = urlsplit(href)
    return bool(parts.scheme or parts.netloc) and parts.scheme != "file"


def check_links(site, lang, page):
    """Problems with the internal links of one page, and its external links.

    Every ``<a href>`` that is not external must point to a file inside the
    built site, and its ``#fragment`` (if any) to an ``id`` in that file.
    Returns ``(problems, external)``: two lists of strings.
    """
    src = site / lang / f"{page}.html"
    base = f"http://site/{lang}/{page}.html"
    problems, external = [], []
    for link in parse(src).find_all("a", href=True):
        href = link["href"].strip()
        if not href or href.startswith(("mailto:", "javascript:", "tel:")):
            continue
        if is_external(href):
            external.append(href)
            continue
        url = urlsplit(urljoin(base, href))
        path = unquote(url.path).lstrip("/")
        target = site / path
        if href.startswith("#"):
            target = src
        elif not target.resolve().is_relative_to(site.resolve()):
            problems.append(f"{href!r} leaves the site")
            continue
        elif target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            problems.append(f"{href!r}: no file {target.relative_to(site)}")
            continue
        fragment = unquote(url.fragment)
        if fragment and target.suffix == ".html" and fragment not in file_ids(target.resolve()):
            problems.append(
                f"{href!r}: no element with id {fragment!r} in {target.relative_to(site)}"
            )
    return problems, external


def code_blocks(path):
    """The text of every ``<pre>`` block of a page."""
    return [pre.get_text() for pre in parse(path).find_all("pre")]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".ipynb": "application/x-ipynb+json",
        ".js": "text/javascript",
        ".woff": "font/woff",
        ".woff2": "font/woff2",
    }

    def log_message(self, format, *args):
        pass


class _Gzip(_Quiet):
    """Serves text files gzipped when the browser accepts it, as Read the Docs does.

    (``http.server`` sends every file as it is; page weights measured through
    it would count the text uncompressed.)
    """

    COMPRESSED = (".html", ".js", ".css", ".svg", ".json", ".txt", ".xml", ".map", ".ipynb", ".py")

    def send_head(self):
        path = self.translate_path(self.path)
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not accepts or not path.endswith(self.COMPRESSED) or not Path(path).is_file():
            return super().send_head()
        body = gzip.compress(Path(path).read_bytes(), compresslevel=6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return io.BytesIO(body)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A browser that closes a page while a file is still on its way.
        if not isinstance(sys.exception(), (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class SiteServer:
    """A threaded ``http.server`` on 127.0.0.1, an ephemeral port, serving ``root``.

    ``gzip=True`` compresses text files for browsers that accept it (Read the
    Docs does), so that what a page weighs is what a reader downloads.
    """

    def __init__(self, root, gzip=False):
        handler = functools.partial(_Gzip if gzip else _Quiet, directory=str(root))
        self.httpd = _Server(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


# -- references that print a page's title -----------------------------------------------

# Words after which a title cannot follow bare, per language: «el El orden…», «del Las
# posiciones…»; "the Why attention", "of Self-attention with trainable weights".
LEADS_IN = {
    "es": re.compile(
        r"(?:^|[\s(¿¡])(el|la|los|las|lo|un|una|unos|unas|del|al|de|a|en|con|por|para|sobre|"
        r"desde|hasta|entre|según|sin|tras|hacia|y|e|o|u|ni|que|véase|como|ver)\s*$", re.I),
    "en": re.compile(
        r"(?:^|[\s(])(the|a|an|of|in|to|from|by|with|and|or|as|see|for|on|at|than|that|which|"
        r"whose|into|after|before|like)\s*$", re.I),
}
# A title may sit in quotes: «…» in Spanish, “…” in English.
QUOTES = {"es": ("«", "»"), "en": ("“", "”")}
BLOCKS = ["p", "li", "td", "th", "dd", "dt", "caption"]


def text_of(node):
    return re.sub(r"\s+", " ", node.get_text()).strip()


def page_titles(site, lang):
    """``{page name: title}`` of every page of ``lang``, as its ``<h1>`` reads (no ``#`` anchor)."""
    titles = {}
    for page in built_pages(site, lang):
        h1 = page_soup(site, lang, page).find("h1")
        if h1 is not None:
            h1 = BeautifulSoup(str(h1), "html.parser")
            for anchor in h1.select("a.headerlink, .section-number"):
                anchor.decompose()
            titles[page] = text_of(h1)
    return titles


def _target(page, href):
    """The page name an ``href`` of ``page`` points to (``chapters/08_positional_encoding``)."""
    path = unquote(urlsplit(urljoin(f"http://site/{page}.html", href)).path).lstrip("/")
    return path.removesuffix(".html")


def _around(block, link):
    """The text of ``block`` before and after ``link``."""
    inside = {id(s) for s in link.find_all(string=True)}
    before, after, seen = [], [], False
    for s in block.find_all(string=True):
        if id(s) in inside:
            seen = True
        else:
            (after if seen else before).append(str(s))
    return re.sub(r"\s+", " ", "".join(before)).strip(), re.sub(r"\s+", " ", "".join(after)).strip()


def misread_titles(doc, page, titles, lang):
    """Links of ``doc``'s text that print a page's title where a sentence of ``lang`` cannot read it.

    A title stands bare only as a label: alone in its list item or table cell, or
    opening it before a colon (``Autoatención simplificada: la analogía…``).
    Anywhere else in a sentence the reference reads «el capítulo 8» (``{ref}`capítulo
    8 <ch-08>```; in English ``{ref}`chapter 8 <ch-08>```), or the title goes in quotes
    (``QUOTES``).  Returns ``(title, what is wrong)`` pairs.
    """
    found = []
    main = doc.select_one("article") or doc
    for link in main.select("a.reference.internal"):
        if link.find_parent(["nav"]) or link.find_parent(class_="toctree-wrapper"):
            continue
        shown = text_of(link)
        if not shown or titles.get(_target(page, link["href"])) != shown:
            continue
        block = link.find_parent(BLOCKS)
        if block is None:
            continue
        before, after = _around(block, link)
        if before.endswith(QUOTES[lang][0]) and after.startswith(QUOTES[lang][1]):
            continue
        if not before and (not after or after[0] in ":."):
            continue
        if m := LEADS_IN[lang].search(before):
            found.append((shown, f"«{m[1]}» before the title: «…{before[-30:]} {shown}»"))
        else:
            found.append((shown, f"a bare title in a sentence: «…{before[-30:]} {shown} {after[:20]}…»"))
    return found
