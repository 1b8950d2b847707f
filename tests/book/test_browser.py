"""The built book in a real browser, offline, as a reader meets it.

Debian's Chromium (``/usr/bin/chromium``) driven by Playwright's Python package,
headless, against ``_build/html`` served on 127.0.0.1.  Every request that
leaves 127.0.0.1 is blocked and reported.  The pages are derived from the
sources (see ``site_pages.py``), both languages:

- each page loads with no console error, no failed request, every image
  decoded (with its width, height and alt text), every formula drawn as MathML
  (no raw TeX, no empty formula, the math font loaded where a formula is drawn),
  at most one code block or output in ten scrolling sideways at 1366 px (a
  laptop) and its language switcher leading to the same page in the other language;
- each page has no serious or critical accessibility violation (axe-core), all
  its content in landmarks (axe's moderate "region" rule), and
  weighs at most 1 MB as a reader downloads it (served gzipped, as Read the
  Docs serves it, with the browser's cache off);
- on a phone wide code and equations show that they scroll, in dark mode
  figures keep their colours, and printed code is wrapped, not cut;
- the first frame drawn is already in the reader's colour scheme, and nothing
  fades to it;
- the switcher also works laid out as Read the Docs serves the book
  (``/en/latest/``, ``/es/latest/``), built with that ``html_baseurl``;
- each page's internal links and anchors resolve (checked statically);
- search, the gallery's downloads, the copy button and the root redirect work;
- the landing page shows the way to chapter 1 in the first screen, laptop and phone;
- screenshots of three pages per language at desktop and phone widths are
  written to ``_build/screenshots/`` for a person to look at.

External links are never requested: they are listed in
``_build/screenshots/external-links.txt``.
"""

import ast
import io
import json
import os
import re
import time
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import polib
import pytest
from axe_playwright_python.sync_playwright import Axe
from book_text import ROLE
from playwright import sync_api

from site_pages import (
    CHAPTERS,
    EXAMPLE_PAGES,
    GALLERY,
    LANGS,
    OTHER,
    PAGES,
    ROOT,
    WRITTEN_PAGES,
    SiteServer,
    built_pages,
    check_links,
    code_blocks,
    gallery_scripts,
    parse,
)


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # Offline: whatever is not 127.0.0.1 goes to a dead proxy (IP literals
    # included) and no host name resolves.  Chromium bypasses the proxy for
    # loopback.  Blocking here, not with Playwright's routing, keeps the HTTP
    # cache, which routing turns off.  Such requests are recorded too.
    "--proxy-server=http://127.0.0.1:9",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]
DESKTOP = {"width": 1280, "height": 800}
LAPTOP = {"width": 1366, "height": 768}  # the commonest laptop screen: every page is opened at it
PHONE = {"width": 390, "height": 844}
TIMEOUT_MS = 20_000

PAGE_PARAMS = [pytest.param(lang, page, id=f"{lang}/{page}") for lang in LANGS for page in PAGES]


def _first(candidates, fallback):
    for name in candidates:
        if name in PAGES:
            return name
    return fallback


# Three pages per language for the screenshots: the landing page, a chapter
# with code, output, maths and a figure, and a gallery example (or the API).
SHOT_PAGES = [
    "index",
    _first(["chapters/02_simplified_attention"], CHAPTERS[0] if CHAPTERS else "api"),
    EXAMPLE_PAGES[0] if EXAMPLE_PAGES else "api",
]

# Search: a term and the page it must find, per language.  "softmax" is the
# same word in both languages (the index of each language must find it);
# "atención" is a Spanish word that the Spanish book's translated pages carry
# (starting with the title of its landing page, "Atención, desde cero").
SEARCHES = [
    pytest.param("en", "softmax", "chapters/02_simplified_attention", id="en-softmax"),
    pytest.param("es", "softmax", "chapters/02_simplified_attention", id="es-softmax"),
    pytest.param("es", "atención", None, id="es-atencion"),
]


def _is_local(url):
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about", "file", "chrome-error"):
        return True
    return parts.hostname == "127.0.0.1"


# -- fixtures ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(site_dir):
    return Path(site_dir)


@pytest.fixture(scope="module")
def server(site):
    # Gzipped, as Read the Docs serves the book: page weights are what readers download.
    with SiteServer(site, gzip=True) as srv:
        yield srv.url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Offsite:
    """Remembers every request of a context that leaves 127.0.0.1.

    (Chromium's flags above make them fail.)
    """

    def __init__(self, context):
        self.urls = []
        context.on("request", self._request)

    def _request(self, request):
        if not _is_local(request.url):
            self.urls.append(request.url)


def _new_context(browser, **kwargs):
    kwargs.setdefault("viewport", DESKTOP)
    context = browser.new_context(**kwargs)
    context.set_default_timeout(TIMEOUT_MS)
    context.offsite = Offsite(context)
    return context


@pytest.fixture(scope="module")
def context(browser):
    ctx = _new_context(browser, viewport=LAPTOP)
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def external_links(site):
    found = {}
    yield found
    out = site.parent / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    lines = [f"{url}\t{', '.join(sorted(pages))}" for url, pages in sorted(found.items())]
    (out / "external-links.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


class Recorder:
    """What went wrong while a page was open: console errors, failed requests."""

    def __init__(self, page):
        self.problems = []
        self.pending = set()
        self.finished = []
        page.on("request", lambda req: self.pending.add(req))
        page.on("requestfinished", self._finished)
        page.on("console", self._console)
        page.on("pageerror", lambda err: self.problems.append(f"uncaught exception: {err}"))
        page.on("requestfailed", self._failed)
        page.on("response", self._response)

    def _console(self, msg):
        where = msg.location.get("url") or ""
        if msg.type == "error" and not _is_favicon(where):
            self.problems.append(f"console error: {msg.text} (at {where})")

    def _finished(self, request):
        self.pending.discard(request)
        self.finished.append(request)

    def transferred(self):
        """Bytes the page downloaded: headers and (compressed) bodies of its requests."""
        total = 0
        for request in self.finished:
            sizes = request.sizes()
            total += max(sizes["responseBodySize"], 0) + max(sizes["responseHeadersSize"], 0)
        return total

    def _failed(self, request):
        self.pending.discard(request)
        self.problems.append(f"request failed: {request.url} ({request.failure})")

    def _response(self, response):
        if response.status >= 400 and not _is_favicon(response.url):
            self.problems.append(f"HTTP {response.status}: {response.url}")


    def settle(self, page, quiet_s=0.4, timeout_s=TIMEOUT_MS / 1000):
        """Wait until no request of the page has been in flight for ``quiet_s``.

        (Playwright's "networkidle" state sometimes never comes on these pages.)
        """
        start = quiet = time.monotonic()
        while time.monotonic() - start < timeout_s:
            now = time.monotonic()
            if self.pending:
                quiet = now
            elif now - quiet >= quiet_s:
                return True
            page.wait_for_timeout(50)
        return False


def _is_favicon(url):
    # Chromium asks the server root for /favicon.ico, now and then, when a page
    # names no icon: a request of the browser's, not of the page.
    parts = urlsplit(url)
    return parts.path == "/favicon.ico" and _is_local(url)


def _open(context, url, no_cache=False):
    page = context.new_page()
    if no_cache:  # every file downloaded, as on a first visit
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    rec = Recorder(page)
    response = page.goto(url, wait_until="load")
    return page, rec, response


# JavaScript run in the page ------------------------------------------------------

# Every <img> loaded and decoded; lazy ones are made eager first.
JS_BROKEN_IMAGES = """async () => {
  const imgs = Array.from(document.images);
  imgs.forEach((img) => { img.loading = "eager"; });
  await Promise.all(imgs.map((img) => img.decode().catch(() => null)));
  return imgs.filter((img) => !img.complete || img.naturalWidth === 0)
             .map((img) => img.currentSrc || img.src || img.outerHTML.slice(0, 120));
}"""

# The text a reader sees outside code and typeset math.
JS_PROSE_TEXT = """() => {
  const skip = "pre, code, script, style, textarea, math, .highlight, .sig";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const parts = [];
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node.parentElement && node.parentElement.closest(skip)) continue;
    parts.push(node.nodeValue);
  }
  return parts.join("");
}"""

# .math elements that draw no formula: no <math> inside, or one with no size.
JS_RAW_MATH = """() => Array.from(document.querySelectorAll(".math"))
  .filter((el) => {
    const math = el.querySelector(":scope > math");
    if (!math) return true;
    const box = math.getBoundingClientRect();
    return box.width === 0 || box.height === 0;
  })
  .map((el) => el.textContent.trim().slice(0, 80))"""

# Whether the math font (book.css's "Book Math") has loaded and draws the formulas.
JS_MATH_FONT = """async () => {
  await document.fonts.ready;
  const math = document.querySelector(".math > math");
  return {
    loaded: document.fonts.check('16px "Book Math"', "∑"),
    family: math ? getComputedStyle(math).fontFamily : "",
  };
}"""

# Images of the article without width/height (the layout moves when they arrive),
# or whose alt text is missing, a file name or raw TeX.
JS_IMAGE_FACTS = r"""() => Array.from(document.querySelectorAll("article img")).flatMap((img) => {
  const src = img.getAttribute("src");
  const alt = img.getAttribute("alt") || "";
  const out = [];
  if (!img.hasAttribute("width") || !img.hasAttribute("height")) out.push(`no width/height: ${src}`);
  if (alt.trim().length < 10 || /[$\\]|_images\/|\.png|\.svg/.test(alt)) out.push(`alt ${JSON.stringify(alt)}: ${src}`);
  return out;
})"""

# axe-core: every rule of WCAG 2.0/2.1 A and AA and axe's best practices, plus
# "label-content-name-mismatch" (WCAG 2.5.3), which axe keeps experimental.
AXE = Axe()
AXE_OPTIONS = {
    "rules": {"label-content-name-mismatch": {"enabled": True}},
    "resultTypes": ["violations"],
}
# Moderate findings that fail too: all content lies in landmarks (screen readers
# move by landmarks; the theme's sidebar was in none).
STRICT_RULES = {"region"}
MAX_PAGE_BYTES = 1_000_000  # compressed, as downloaded

# Code blocks and outputs (every <pre> of the article) that scroll sideways, and how many
# there are: at 1366 px at most one in ten may (book.css: "Laptops").
JS_CODE_WIDTH = """() => {
  const pres = Array.from(document.querySelectorAll("article pre"));
  const wide = pres.filter((pre) => pre.scrollWidth > pre.clientWidth + 1);
  return {count: pres.length, wide: wide.map((pre) =>
    `${pre.scrollWidth - pre.clientWidth} px: ${pre.textContent.trim().split("\\n")[0].slice(0, 60)}`)};
}"""
MAX_WIDE_CODE = 0.1
# The widest paragraph or list item of the article, in em of its own font: prose keeps a
# readable measure however wide the column grows for code (book.css: "Laptops").
JS_PROSE_MEASURE = """() => Array.from(document.querySelectorAll("article p, article li:not(:has(div, pre, table, figure))"))
  .filter((el) => !el.closest("table, pre, .sd-card, .cell_output"))
  .map((el) => el.getBoundingClientRect().width / parseFloat(getComputedStyle(el).fontSize))
  .reduce((a, b) => Math.max(a, b), 0)"""
MAX_MEASURE_EM = 48  # about 100 characters of the book's sans-serif


def _accessibility(page):
    """Serious and critical axe violations on the page, and those of STRICT_RULES, one line each."""
    results = AXE.run(page, options=AXE_OPTIONS).response
    return [
        f"axe {v['id']} ({v['impact']}): {v['help']}; e.g. {v['nodes'][0]['html'][:160]!r}"
        for v in results["violations"]
        if v["impact"] in ("serious", "critical") or v["id"] in STRICT_RULES
    ]


RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\\begin\{|\$\$|\$[^$\s][^$]{0,200}?\$")


def _check_math(page, has_math):
    """Formulas are MathML the browser draws (book_math), with the book's math font."""
    problems = []
    if page.locator("script[src*='mathjax' i]").count():
        problems.append("the page loads MathJax: formulas are MathML written at build time")
    if has_math:
        raw = page.evaluate(JS_RAW_MATH)
        if raw:
            problems.append(f"{len(raw)} math element(s) with no drawn <math>, e.g. {raw[:3]}")
        font = page.evaluate(JS_MATH_FONT)
        if not font["loaded"] or not font["family"].startswith('"Book Math"'):
            problems.append(f"formulas not drawn with the math font (book-math.woff2): {font}")
    text = page.evaluate(JS_PROSE_TEXT)
    leftovers = sorted({m.group(0)[:60] for m in RAW_TEX.finditer(text)})
    if leftovers:
        problems.append(f"raw TeX left in the text: {leftovers[:5]}")
    return problems


# Fonts the page fetched (after document.fonts.ready).
JS_FONTS = """async () => {
  await document.fonts.ready;
  return performance.getEntriesByType("resource").map((e) => e.name.split("?")[0].split("/").pop())
    .filter((name) => /\\.woff2?$/.test(name));
}"""


def _check_icons(page):
    """The theme's icons come from the cut-down font (book_fonts), never the whole 115 KB one."""
    fonts = page.evaluate(JS_FONTS)
    problems = []
    if "fa-solid-900.woff2" in fonts:
        problems.append(f"the page fetched Font Awesome's whole font: {fonts}")
    if "book-icons.woff2" not in fonts:
        problems.append(f"the icons' font book-icons.woff2 was not used: {fonts}")
    return problems


# -- the site as a whole ------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_every_built_page_is_tested(site, lang):
    built = built_pages(site, lang)
    expected = set(PAGES)
    assert built == expected, (
        f"{site / lang}: pages built but not derived from the sources (stale or "
        f"unexpected): {sorted(built - expected)}; pages the sources should produce "
        f"but were not built: {sorted(expected - built)}"
    )


# -- every page ------------------------------------------------------------------------


@pytest.mark.parametrize("lang, page_name", PAGE_PARAMS)
def test_links_resolve(site, lang, page_name, external_links):
    path = site / lang / f"{page_name}.html"
    assert path.is_file(), f"{path} was not built"
    problems, external = check_links(site, lang, page_name)
    for url in external:
        external_links.setdefault(url, set()).add(f"{lang}/{page_name}")
    assert not problems, f"{lang}/{page_name}.html has broken links:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("lang, page_name", PAGE_PARAMS)
def test_page_in_browser(site, server, context, lang, page_name):
    path = site / lang / f"{page_name}.html"
    assert path.is_file(), f"{path} was not built"
    url = f"{server}/{lang}/{page_name}.html"
    offsite_before = len(context.offsite.urls)
    page, rec, response = _open(context, url, no_cache=True)
    problems = []
    try:
        assert response is not None and response.status == 200, f"{url}: {response}"
        problems += _check_math(page, bool(parse(path).select("span.math, div.math")))
        problems += _check_icons(page)
        broken = page.evaluate(JS_BROKEN_IMAGES)
        if broken:
            problems.append(f"image(s) with no pixels: {broken}")
        problems += page.evaluate(JS_IMAGE_FACTS)
        code = page.evaluate(JS_CODE_WIDTH)
        if len(code["wide"]) > MAX_WIDE_CODE * code["count"]:
            problems.append(
                f"{len(code['wide'])} of {code['count']} code blocks and outputs scroll sideways at "
                f"{LAPTOP['width']} px (at most {MAX_WIDE_CODE:.0%}): {code['wide'][:4]}"
            )
        measure = page.evaluate(JS_PROSE_MEASURE)  # em
        if measure > MAX_MEASURE_EM:
            problems.append(f"a paragraph {measure:.0f} em wide at {LAPTOP['width']} px (at most {MAX_MEASURE_EM})")
        # Late requests (fonts) get their chance to fail.
        if not rec.settle(page):
            problems.append(f"requests never finished: {sorted(r.url for r in rec.pending)}")
        problems += rec.problems
        weight = rec.transferred()
        if weight > MAX_PAGE_BYTES:
            problems.append(f"the page downloads {weight / 1e6:.2f} MB (gzipped), more than 1 MB")
        problems += _accessibility(page)
        offsite = context.offsite.urls[offsite_before:]
        if offsite:
            problems.append(f"request(s) leaving 127.0.0.1 (blocked): {offsite}")

        # The language switcher opens this page in the other language.
        other = OTHER[lang]
        switch = page.locator("a.lang-switch")
        if switch.count() != 1:
            problems.append(f"{switch.count()} a.lang-switch links, expected 1")
        else:
            target = f"{server}/{other}/{page_name}.html"
            switch.click()
            try:
                page.wait_for_url(target, wait_until="commit")
                got_lang = page.locator("html").get_attribute("lang")
                if got_lang != other:
                    problems.append(f"switcher led to {page.url} whose html[lang] is {got_lang!r}, not {other!r}")
            except sync_api.Error:
                problems.append(f"switcher led to {page.url}, expected {target}")
    finally:
        page.close()
    assert not problems, f"{url}:\n  " + "\n  ".join(problems)


# -- search ------------------------------------------------------------------------------


def _wait_for_search_results(page):
    """Wait until searchtools.js has listed every result.

    It then retitles the results "Search Results" (translated).  `Documentation` is a
    top-level `const` of Sphinx's doctools.js: a global binding, not a property of `window`.
    """
    page.wait_for_function(
        """() => (document.querySelector('#search-results h2')?.innerText || '')
                 === (typeof Documentation !== 'undefined' && Documentation.gettext('Search Results'))""",
        timeout=TIMEOUT_MS,
    )


@pytest.mark.parametrize("lang, term, expected", SEARCHES)
def test_search_finds(server, context, lang, term, expected):
    url = f"{server}/{lang}/search.html?q={term}"
    page, rec, _ = _open(context, url)
    try:
        _wait_for_search_results(page)
        hrefs = page.eval_on_selector_all(
            "#search-results ul.search li > a", "els => els.map((a) => a.href)"
        )
        summary = page.inner_text("#search-results .search-summary")
        # (Each result is listed once its page has been fetched and its snippet made.)
        snippets = page.eval_on_selector_all(
            "#search-results ul.search li p.context", "els => els.map((p) => p.innerText)"
        )
    finally:
        page.close()
    # Snippets show the page's text around the word, not the header's buttons
    # (the switcher's "Español"/"English", the colour modes) or a contents list.
    header_words = ("System Settings", "Español", "English", "Light", "Dark", "Claro", "Oscuro")
    for snippet in snippets:
        assert term.lower() in snippet.lower(), f"{url}: a snippet without {term!r}: {snippet!r}"
        assert not any(word in snippet for word in header_words), (
            f"{url}: a snippet with the page header's text: {snippet!r}"
        )
    assert snippets, f"{url}: no result has a snippet"
    pages = [urlsplit(h).path for h in hrefs]
    assert pages, f"{url}: no result for {term!r} ({summary!r})"
    base = f"/{lang}/"
    assert all(p.startswith(base) and p.endswith(".html") for p in pages), (
        f"{url}: results outside the {lang} book or not pages: {pages}"
    )
    if expected is not None:
        assert f"{base}{expected}.html" in pages, (
            f"{url}: {expected} not among the results {pages}"
        )
    assert not rec.problems, f"{url}: " + "; ".join(rec.problems)


@pytest.mark.parametrize("lang, term", [("en", "attention"), ("es", "atención")])
def test_search_makes_few_requests(server, browser, lang, term):
    # A word on every page: searchtools.js fetched every result page for its snippet
    # (62 requests); book-search.js fetches each page once, the best-ranked few.
    ctx = _new_context(browser)
    try:
        url = f"{server}/{lang}/search.html?q={term}"
        page, rec, _ = _open(ctx, url, no_cache=True)
        _wait_for_search_results(page)
        assert rec.settle(page), f"{url}: requests never finished"
        results = page.locator("#search-results ul.search li").count()
        requests = [r.url for r in rec.finished]
    finally:
        ctx.close()
    assert results > 20, f"{url}: only {results} results, the check below means little"
    assert len(requests) <= 30, f"{url}: {len(requests)} requests: {requests}"
    fetched = [u for u in requests if u.endswith(".html")]
    assert len(fetched) == len(set(fetched)), f"{url}: pages fetched more than once: {sorted(fetched)}"


# What the search page says when it has finished, per language: Sphinx 9.0's own
# Spanish catalog leaves the status line empty and words the no-results message
# with errors and *usted*; locale/es/LC_MESSAGES/sphinx.po replaces both
# (docs/_ext/book_i18n.py puts them into _static/translations.js).
SEARCH_STATUS = {
    "en": {
        "found": r"Search finished, found (one page|\d+ pages) matching the search query\.",
        "none": r"Your search did not match any documents\. .*",
    },
    "es": {
        "found": r"Búsqueda terminada: (una página coincide|\d+ páginas coinciden) con tu búsqueda\.",
        "none": r"Tu búsqueda no coincide con ninguna página\. Comprueba .* hayas .*",
    },
}
STATUS_SEARCHES = [
    pytest.param("en", "softmax", "found", id="en-found"),
    pytest.param("en", "zqxjkvw", "none", id="en-none"),
    pytest.param("es", "atención", "found", id="es-found"),
    pytest.param("es", "zqxjkvw", "none", id="es-none"),
]


@pytest.mark.parametrize("lang, term, outcome", STATUS_SEARCHES)
def test_search_status_line(server, context, lang, term, outcome):
    url = f"{server}/{lang}/search.html?q={term}"
    page, rec, _ = _open(context, url)
    try:
        _wait_for_search_results(page)
        status = page.inner_text("#search-results .search-summary").strip()
    finally:
        page.close()
    assert re.fullmatch(SEARCH_STATUS[lang][outcome], status), f"{url}: the status line says {status!r}"
    assert not rec.problems, f"{url}: " + "; ".join(rec.problems)


# -- gallery downloads --------------------------------------------------------------------


def _title(script_text):
    """The title of a gallery script: the first line of its docstring."""
    return ast.get_docstring(ast.parse(script_text)).strip().splitlines()[0]


def _check_download_language(where, text, script, lang):
    # The English example's title is in the English download only; the Spanish
    # one carries the title of the Spanish page (its catalog's translation).
    english = _title(script.read_text(encoding="utf-8"))
    assert (english in text) == (lang == "en"), (
        f"{where}: the text blocks are not in {lang!r} (English title {english!r} "
        f"{'missing' if lang == 'en' else 'present'})"
    )


def _check_script_download(where, text, script, lang):
    source = script.read_text(encoding="utf-8")
    _check_download_language(where, text, script, lang)
    # Same program: only the docstring and the comments may differ; no role left as markup.
    def program(t):
        module = ast.parse(t)
        return ast.dump(ast.Module(body=module.body[1:], type_ignores=[]))
    assert program(text) == program(source), f"{where}: the code differs from {script.name}"
    assert not ROLE.search(text), f"{where}: role markup left: {ROLE.search(text)[0]}"
    catalog = ROOT / "locale" / lang / "LC_MESSAGES" / GALLERY / f"{script.stem}.po"
    translated = {e.msgid: e.msgstr for e in polib.pofile(str(catalog))} if lang != LANGS[0] else {}
    expected = translated.get(_title(source), _title(source))
    assert _title(text) == expected, f"{where}: the title is {_title(text)!r}, not {expected!r}"


@pytest.mark.parametrize("lang", LANGS)
def test_gallery_downloads(server, context, lang):
    scripts = gallery_scripts()
    assert scripts, "no examples/plot_*.py: the gallery is empty"
    for script in scripts:
        url = f"{server}/{lang}/{GALLERY}/{script.stem}.html"
        page, rec, _ = _open(context, url)
        try:
            links = {
                kind: page.eval_on_selector_all(
                    f".sphx-glr-download-{kind} a", "els => els.map((a) => a.href)"
                )
                for kind in ("python", "jupyter")
            }
            for kind, suffix in (("python", ".py"), ("jupyter", ".ipynb")):
                assert len(links[kind]) == 1, f"{url}: {len(links[kind])} {suffix} download links"
                href = links[kind][0]
                assert href.endswith(f"/{script.stem}{suffix}"), f"{url}: {suffix} link is {href}"
                resp = context.request.get(href)
                body = resp.body()
                assert resp.status == 200 and body, f"{href}: HTTP {resp.status}, {len(body)} bytes"
                if suffix == ".py":
                    _check_script_download(href, body.decode("utf-8"), script, lang)
                else:
                    nb = json.loads(body)
                    code = "".join(
                        "".join(c["source"]) for c in nb.get("cells", []) if c.get("cell_type") == "code"
                    )
                    assert nb.get("nbformat") == 4 and "import" in code, (
                        f"{href}: not a notebook with the example's code"
                    )
                    text = "".join("".join(c["source"]) for c in nb["cells"] if c.get("cell_type") == "markdown")
                    _check_download_language(href, text, script, lang)
            # The browser itself downloads the script (the links carry `download`).
            with page.expect_download() as info:
                page.click(".sphx-glr-download-python a")
            saved = Path(info.value.path())
            _check_script_download(f"{url} (downloaded)", saved.read_text(encoding="utf-8"), script, lang)
            zips = page.eval_on_selector_all(
                ".sphx-glr-download-zip a", "els => els.map((a) => a.href)"
            )
            for href in zips:
                resp = context.request.get(href)
                assert resp.status == 200, f"{href}: HTTP {resp.status}"
                archive = zipfile.ZipFile(io.BytesIO(resp.body()))
                names = archive.namelist()
                assert {f"{script.stem}.py", f"{script.stem}.ipynb"} <= set(names), (
                    f"{href}: holds {names}"
                )
                _check_script_download(href, archive.read(f"{script.stem}.py").decode("utf-8"), script, lang)
            assert not rec.problems, f"{url}: " + "; ".join(rec.problems)
        finally:
            page.close()


@pytest.mark.parametrize("lang, label", [("en", "Out:"), ("es", "Salida:")])
def test_gallery_output_label(server, context, lang, label):
    # sphinx-gallery labels printed output from its CSS (no catalog reaches it);
    # book.css gives the Spanish pages their own label.
    script = gallery_scripts()[0]
    page, rec, _ = _open(context, f"{server}/{lang}/{GALLERY}/{script.stem}.html")
    try:
        shown = page.evaluate(
            "() => getComputedStyle(document.querySelector('.sphx-glr-script-out'), '::before').content"
        )
    finally:
        page.close()
    assert shown == f'"{label}"', f"{lang}/{script.stem}: the output label is {shown}"


# -- copy button ------------------------------------------------------------------------

PROMPT = re.compile(r"^(>>> |\.\.\. )")

JS_BLOCK_INDEX = """(start) => Array.from(document.querySelectorAll("div.highlight pre"))
  .findIndex((pre) => pre.innerText.startsWith(start))"""


def _lines(text):
    return [line.rstrip() for line in text.strip("\n").splitlines() if line.strip()]


def _copy(page, block):
    """Click the copy button of a ``div.highlight`` and return the clipboard."""
    page.evaluate("() => navigator.clipboard.writeText('')")
    block.hover()
    block.locator(".copybtn").click()
    page.wait_for_function("() => navigator.clipboard.readText().then((t) => t.length > 0)")
    return page.evaluate("() => navigator.clipboard.readText()")


def _prompted_block(site, lang):
    for name in PAGES:
        path = site / lang / f"{name}.html"
        if path.is_file() and any(b.startswith(">>> ") for b in code_blocks(path)):
            return name
    return None


@pytest.mark.parametrize("lang", LANGS)
def test_copy_button(site, server, browser, lang):
    ctx = _new_context(browser)
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
    try:
        # A code cell with output: the button copies the code, not the output.
        chapter = next(
            (
                name
                for name in CHAPTERS
                if parse(site / lang / f"{name}.html").select_one(".cell_output")
            ),
            None,
        ) if all((site / lang / f"{n}.html").is_file() for n in CHAPTERS) else None
        assert chapter, f"no built chapter in {lang} has a code cell with output"
        url = f"{server}/{lang}/{chapter}.html"
        page = ctx.new_page()
        page.goto(url)
        cell = page.locator("div.cell:has(.cell_output)").first
        code = cell.locator(".cell_input pre").inner_text()
        output = cell.locator(".cell_output").inner_text()
        copied = _copy(page, cell.locator(".cell_input div.highlight"))
        assert _lines(copied) == _lines(code), f"{url}: copied {copied!r}, the cell's code is {code!r}"
        out_lines = [line for line in _lines(output) if line not in _lines(code)]
        assert not any(line in _lines(copied) for line in out_lines), (
            f"{url}: the copied text holds the cell's output: {copied!r}"
        )
        page.close()

        # A block with >>> prompts, where the book has one: prompts and output stay out.
        name = _prompted_block(site, lang)
        if name is not None:
            url = f"{server}/{lang}/{name}.html"
            page = ctx.new_page()
            page.goto(url)
            index = page.evaluate(JS_BLOCK_INDEX, ">>> ")
            block = page.locator("div.highlight").nth(index)
            shown = block.locator("pre").inner_text()
            copied = _copy(page, block)
            want = [PROMPT.sub("", line) for line in _lines(shown) if PROMPT.match(line)]
            assert ">>>" not in copied, f"{url}: copied text keeps a prompt: {copied!r}"
            assert _lines(copied) == want, f"{url}: copied {copied!r}, expected {want!r}"
            page.close()
    finally:
        ctx.close()


# -- the root page, opened from disk ---------------------------------------------------------------


@pytest.mark.parametrize(
    "locale, lang", [("en-US", "en"), ("es-ES", "es"), ("fr-FR", "en")]
)
def test_root_index_redirects_from_disk(site, browser, locale, lang):
    ctx = _new_context(browser, locale=locale)
    try:
        page = ctx.new_page()
        rec = Recorder(page)
        start = (site / "index.html").resolve().as_uri()
        target = (site / lang / "index.html").resolve().as_uri()
        page.goto(start)
        page.wait_for_url(target, wait_until="load")
        assert page.evaluate("() => document.documentElement.lang") == lang, (
            f"{start} with locale {locale} reached {page.url}"
        )
        assert rec.settle(page), f"{target}: requests never finished: {rec.pending}"
        assert not rec.problems, f"{target} opened from disk: " + "; ".join(rec.problems)
        assert not ctx.offsite.urls, f"{target}: requests leaving the machine: {ctx.offsite.urls}"
    finally:
        ctx.close()


# -- screenshots for a person to look at ----------------------------------------------------------------


@pytest.mark.parametrize("width_name, viewport", [("desktop", DESKTOP), ("phone", PHONE)])
@pytest.mark.parametrize("lang", LANGS)
def test_screenshots(site, server, browser, lang, width_name, viewport):
    out = site.parent / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    ctx = _new_context(browser, viewport=viewport, is_mobile=width_name == "phone")
    try:
        for name in SHOT_PAGES:
            page = ctx.new_page()
            url = f"{server}/{lang}/{name}.html"
            page.goto(url, wait_until="load")
            page.evaluate("() => document.fonts.ready.then(() => 1)")
            shot = out / f"{lang}-{name.replace('/', '-')}-{width_name}.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000, f"{shot}: suspiciously small screenshot of {url}"
            page.close()
    finally:
        ctx.close()


# -- phones, dark mode, print ---------------------------------------------------------------

NARROW = {"width": 375, "height": 812}

# Elements wider than their box, and whether each shows a scroll cue: it scrolls
# (overflow-x auto/scroll) and its background draws the edge shadows (gradients);
# and whether a keyboard reaches it (tabindex 0: the theme gives it to wide code and
# tables, book-site.js to wide inline formulas, book_math to display formulas).
JS_WIDE = """() => Array.from(document.querySelectorAll(
    "article div.highlight pre, article div.math, article span.math, article .pst-scrollable-table-container"))
  .filter((el) => el.scrollWidth > el.clientWidth + 1)
  .map((el) => {
    const style = getComputedStyle(el);
    return {
      kind: el.tagName.toLowerCase() === "pre" ? "code" : el.matches(".math") ? "math" : "table",
      scrolls: ["auto", "scroll"].includes(style.overflowX),
      cue: el.matches("span.math") || (style.backgroundImage.match(/gradient/g) || []).length >= 4,
      focusable: el.tabIndex >= 0,
      text: el.textContent.slice(0, 60),
    };
  })"""

# What sticks out on the right of a page: the outermost elements past the screen's
# edge that no scrolling box holds.
JS_STICKING_OUT = """() => {
  const width = document.documentElement.clientWidth;
  const held = (el) => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== "visible") return true;
    }
    return false;
  };
  return Array.from(document.querySelectorAll("body *"))
    .filter((el) => el.getBoundingClientRect().right > width + 1 && !held(el)
                    && !(el.parentElement && el.parentElement.getBoundingClientRect().right > width + 1))
    .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join(".")}: ${el.textContent.trim().slice(0, 50)}`)
    .slice(0, 5);
}"""


def _ready(page):
    """Fonts loaded: widths and colours measured are those the page keeps.  (Nothing fades in
    after "load": test_first_paint_has_the_colour_scheme.)"""
    page.evaluate("() => document.fonts.ready.then(() => 1)")


@pytest.mark.parametrize("lang", LANGS)
def test_phone_shows_what_scrolls(server, browser, lang):
    ctx = _new_context(browser, viewport=NARROW, is_mobile=True)
    seen = set()
    try:
        for name in CHAPTERS:
            page = ctx.new_page()
            page.goto(f"{server}/{lang}/{name}.html", wait_until="load")
            _ready(page)
            wide = page.evaluate(JS_WIDE)
            page.close()
            bad = [w for w in wide if not (w["scrolls"] and w["cue"] and w["focusable"])]
            assert not bad, (
                f"{lang}/{name} at 375 px: wide elements with no scroll cue or out of the keyboard's reach: {bad[:3]}"
            )
            seen |= {w["kind"] for w in wide}
            if seen >= {"code", "math"}:
                break
    finally:
        ctx.close()
    # Otherwise the check above looked at nothing.
    assert seen >= {"code", "math"}, f"no chapter has wide code and wide equations at 375 px: {seen}"


@pytest.mark.parametrize("screen", [375, 320])
@pytest.mark.parametrize("lang", LANGS)
def test_no_page_scrolls_sideways_on_a_phone(server, browser, lang, screen):
    # Every page at 375 px, and at 320 px (WCAG 1.4.10, reflow): the header's buttons, long
    # inline code, the API's signatures and field lists, the index and headings fit; what
    # cannot (wide code, tables, formulas) scrolls in its box.
    ctx = _new_context(browser, viewport={**NARROW, "width": screen}, is_mobile=True)
    page = ctx.new_page()
    wide = {}
    try:
        for name in PAGES:
            page.goto(f"{server}/{lang}/{name}.html", wait_until="load")
            _ready(page)
            width = page.evaluate("() => document.documentElement.scrollWidth")
            if width > screen:
                wide[name] = (width, page.evaluate(JS_STICKING_OUT))
    finally:
        ctx.close()
    assert not wide, f"{lang}: pages wider than a {screen} px phone: {wide}"


# Names in a table's code, broken letter by letter: more lines than words.
JS_BROKEN_NAMES = """() => Array.from(document.querySelectorAll("article table code.literal"))
  .filter((code) => {
    const lines = Math.round(code.getBoundingClientRect().height / parseFloat(getComputedStyle(code).lineHeight));
    return lines > code.textContent.trim().split(/[\\s_.]+/).length;
  }).map((code) => code.textContent.trim()).slice(0, 5)"""


@pytest.mark.parametrize("lang", LANGS)
def test_table_names_stay_whole_on_a_phone(server, browser, lang):
    # The API's "Names" table broke attn, d_in, num_heads one letter per line at 375 px.
    ctx = _new_context(browser, viewport=NARROW, is_mobile=True)
    try:
        page = ctx.new_page()
        page.goto(f"{server}/{lang}/api.html", wait_until="load")
        _ready(page)
        assert page.locator("article table code.literal").count() > 20, "the check below looks at nothing"
        broken = page.evaluate(JS_BROKEN_NAMES)
    finally:
        ctx.close()
    assert not broken, f"{lang}/api at 375 px: names broken across lines in a table: {broken}"


@pytest.mark.parametrize("lang", LANGS)
def test_controls_are_finger_sized(server, browser, lang):
    # The article header's buttons (language, notebook, colour mode, sidebars), at least 24 px
    # each way (WCAG 2.2, 2.5.8), on a phone.
    ctx = _new_context(browser, viewport=NARROW, is_mobile=True)
    try:
        page = ctx.new_page()
        page.goto(f"{server}/{lang}/{CHAPTERS[0]}.html", wait_until="load")
        _ready(page)
        small = page.evaluate("""() => Array.from(document.querySelectorAll(
            ".bd-header-article a, .bd-header-article button, .bd-header-article summary"))
          .map((el) => [el.className || el.tagName, el.getBoundingClientRect()])
          .filter(([, box]) => box.width > 0 && (box.width < 24 || box.height < 24))
          .map(([name, box]) => `${name}: ${Math.round(box.width)}x${Math.round(box.height)}`)""")
    finally:
        ctx.close()
    assert not small, f"{lang}: controls under 24 px on a phone: {small}"


@pytest.mark.parametrize("lang", LANGS)
def test_display_equations_are_tab_stops_only_when_they_scroll(server, browser, lang):
    # A Tab stop that scrolls nothing is a stop for nothing (axe: focus-order-semantics).
    ctx = _new_context(browser)
    try:
        seen = {True: 0, False: 0}
        for width in (DESKTOP["width"], NARROW["width"]):
            page = ctx.new_page()
            page.set_viewport_size({**DESKTOP, "width": width})
            page.goto(f"{server}/{lang}/{CHAPTERS[3]}.html", wait_until="load")
            _ready(page)
            page.wait_for_timeout(300)
            facts = page.evaluate("""() => Array.from(document.querySelectorAll("article div.math"))
              .filter((d) => d.clientWidth > 0)
              .map((d) => [d.scrollWidth > d.clientWidth + 1, d.tabIndex === 0])""")
            page.close()
            wrong = [f for f in facts if f[0] != f[1]]
            assert facts and not wrong, f"{lang} at {width} px: (scrolls, tab stop) {wrong[:3]} of {len(facts)}"
            for scrolls, _ in facts:
                seen[scrolls] += 1
    finally:
        ctx.close()
    assert seen[True] and seen[False], f"{lang}: the check saw no wide or no narrow formula: {seen}"


@pytest.mark.parametrize("lang, term", [("en", "attention"), ("es", "atención")])
def test_search_from_disk(site, browser, lang, term):
    # Opened from disk, a page cannot fetch another: results listed, no error in the console.
    ctx = _new_context(browser)
    try:
        page = ctx.new_page()
        rec = Recorder(page)
        page.goto((site / lang / "search.html").resolve().as_uri() + f"?q={term}", wait_until="load")
        _wait_for_search_results(page)
        page.wait_for_timeout(500)
        results = page.locator("#search-results ul.search li").count()
    finally:
        ctx.close()
    assert results > 5, f"{lang}: {results} results for {term!r} from disk"
    assert not rec.problems, f"{lang}/search.html from disk: " + "; ".join(rec.problems[:5])


# The article header's controls, as the keyboard meets them (Tab from the top).
HEADER_CONTROLS = {
    "contents": "button.primary-toggle",
    "language switch": "a.lang-switch",
    ".ipynb": "a.book-notebook",
    "colour mode": "button.theme-switch-button",
    "search": "button.search-button",
    "page contents": "button.secondary-toggle",
}
# The focused element and whether it draws a ring (an outline or a shadow).
JS_FOCUSED = """(controls) => {
  const el = document.activeElement;
  const style = getComputedStyle(el);
  const outline = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0;
  const name = Object.keys(controls).find((key) => el.matches(controls[key]));
  return { name: name || null, ring: outline || style.boxShadow !== "none" };
}"""


@pytest.mark.parametrize("lang", LANGS)
def test_keyboard_focus_is_visible_in_the_header(server, browser, lang):
    ctx = _new_context(browser, viewport=NARROW, is_mobile=True)
    try:
        page = ctx.new_page()
        page.goto(f"{server}/{lang}/{CHAPTERS[0]}.html", wait_until="load")
        _ready(page)
        seen = {}
        for _ in range(20):
            page.keyboard.press("Tab")
            focused = page.evaluate(JS_FOCUSED, HEADER_CONTROLS)
            if focused["name"]:
                seen[focused["name"]] = focused["ring"]
            if len(seen) == len(HEADER_CONTROLS):
                break
        missing = set(HEADER_CONTROLS) - set(seen)
        assert not missing, f"{lang}: Tab never reaches {sorted(missing)}"
        unringed = sorted(name for name, ring in seen.items() if not ring)
        assert not unringed, f"{lang}: no visible focus on {unringed}"

        # The colour-mode menu opens with Enter and the arrows move through its items.
        page.focus(HEADER_CONTROLS["colour mode"])
        page.keyboard.press("Enter")
        page.keyboard.press("ArrowDown")
        in_menu = page.evaluate("() => !!document.activeElement.closest('.theme-switch-container .dropdown-menu')")
        assert in_menu, f"{lang}: after Enter and ArrowDown on the colour-mode button the focus is not in its menu"
        ring = page.evaluate(JS_FOCUSED, {})["ring"]
        assert ring, f"{lang}: no visible focus on the colour-mode menu's item"
        page.keyboard.press("Escape")
        back = page.evaluate(JS_FOCUSED, HEADER_CONTROLS)["name"]
        assert back == "colour mode", f"{lang}: Escape leaves the focus on {back!r}, not the colour-mode button"
    finally:
        ctx.close()


# Each frame the page draws up to its "load" event: html[data-theme] and the CSS transitions
# running.  Recorded from the document's creation, before any script of the page runs.
JS_FRAMES = """(() => {
  const frames = window.__frames = [];
  const note = (when) => frames.push({
    when, theme: document.documentElement.dataset.theme,
    fading: [...new Set(document.getAnimations().filter((a) => a instanceof CSSTransition)
      .map((a) => `${a.effect.target.tagName.toLowerCase()}.${a.effect.target.classList[0] || ""} ${a.transitionProperty}`))],
  });
  const frame = () => { note("frame"); if (document.readyState !== "complete") requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
  document.addEventListener("DOMContentLoaded", () => setTimeout(() => note("DOMContentLoaded")));
  window.addEventListener("load", () => note("load"));
})()"""


@pytest.mark.parametrize("system, stored, expected", [
    ("dark", None, "dark"),  # no choice stored: the page takes the system's light or dark
    ("light", None, "light"),
    ("dark", ("auto", "light"), "dark"),  # the system turned dark since the last visit
    ("dark", ("light", "light"), "light"),  # the reader's choice wins
])
@pytest.mark.parametrize("lang", LANGS)
def test_first_paint_has_the_colour_scheme(server, browser, lang, system, stored, expected):
    # The theme resolves "auto" at DOMContentLoaded, after the first paint: on a first visit
    # the page showed the light colours of "auto", then faded its buttons to the scheme for
    # 0.15 s.  The head's script (layout.html) sets the scheme before anything is drawn.
    ctx = _new_context(browser, color_scheme=system)
    if stored:
        ctx.add_init_script(f"localStorage.setItem('mode', '{stored[0]}'); localStorage.setItem('theme', '{stored[1]}');")
    ctx.add_init_script(JS_FRAMES)
    try:
        page = ctx.new_page()
        page.goto(f"{server}/{lang}/index.html", wait_until="load")  # where a first visit lands
        frames = page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done(window.__frames)))")
    finally:
        ctx.close()
    assert [f["when"] for f in frames].count("frame") >= 1, f"{lang}: no frame recorded: {frames}"
    wrong = [f for f in frames if f["theme"] != expected or f["fading"]]
    assert not wrong, (
        f"{lang}, {system} system, stored {stored}: frames not in the {expected} scheme or fading "
        f"({len(wrong)} of {len(frames)}): {wrong[:3]}"
    )


def _figure_page():
    return next(p for p in CHAPTERS if "02_" in p)


@pytest.mark.parametrize("lang", LANGS)
def test_dark_mode_keeps_figures_bright(server, browser, lang):
    ctx = _new_context(browser, color_scheme="dark")
    ctx.add_init_script("localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');")
    try:
        page = ctx.new_page()
        page.goto(f"{server}/{lang}/{_figure_page()}.html", wait_until="load")
        assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
        filters = page.eval_on_selector_all(
            "article img", "els => els.map((img) => getComputedStyle(img).filter)"
        )
    finally:
        ctx.close()
    assert filters, "no figure to look at"
    assert set(filters) == {"none"}, f"{lang}: figures are filtered in dark mode: {set(filters)}"


@pytest.mark.parametrize("lang", LANGS)
def test_print_wraps_code(server, browser, lang):
    # A4's width at 96 dpi.  Printed code wraps instead of being cut, and a wrapped line
    # continues further in than its own first character: not as a dedented statement.
    ctx = _new_context(browser, viewport={"width": 794, "height": 1123})
    try:
        cut, dedented, wrapped = [], [], 0
        for name in CHAPTERS:
            page = ctx.new_page()
            page.goto(f"{server}/{lang}/{name}.html", wait_until="load")
            page.emulate_media(media="print")
            page.wait_for_function("() => !document.querySelector('article pre:not(.book-lines)')")
            cut += page.evaluate(
                """(name) => Array.from(document.querySelectorAll("article pre"))
                   .filter((pre) => pre.scrollWidth > pre.clientWidth + 1)
                   .map((pre) => `${name}: ${pre.textContent.slice(0, 60)}`)""",
                name,
            )
            lines = page.evaluate(JS_PRINTED_LINES)
            wrapped += lines["wrapped"]
            dedented += [f"{name}: {text}" for text in lines["dedented"]]
            page.close()
    finally:
        ctx.close()
    assert not cut, f"{lang}: printed code blocks cut at the margin: {cut[:5]}"
    assert wrapped, f"{lang}: no printed code line wraps on A4: the check below saw nothing"
    assert not dedented, f"{lang}: wrapped code lines continuing left of their own start: {dedented[:5]}"


# Printed code lines (book-site.js: one span each) that wrap, and those whose wrapped
# part starts at or left of the line's first character.
JS_PRINTED_LINES = r"""() => {
  const out = {wrapped: 0, dedented: []};
  document.querySelectorAll("article pre > .book-line").forEach((line) => {
    const range = document.createRange();
    range.selectNodeContents(line);
    const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0);
    if (!rects.length) return;
    const later = rects.filter((r) => r.top > rects[0].top + 2);
    if (!later.length) return;
    out.wrapped++;
    const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const at = walker.currentNode.nodeValue.search(/\S/);
      if (at < 0) continue;
      const first = document.createRange();
      first.setStart(walker.currentNode, at);
      first.setEnd(walker.currentNode, at + 1);
      if (Math.min(...later.map((r) => r.left)) <= first.getBoundingClientRect().left + 1) {
        out.dedented.push(line.textContent.trim().slice(0, 60));
      }
      break;
    }
  });
  return out;
}"""


def _flat(text):
    return " ".join(text.split())


@pytest.mark.parametrize("lang", LANGS)
def test_printed_chapter_has_its_solutions(site, server, browser, lang, tmp_path):
    # Printed from the browser, a chapter carries its exercises' solutions and its folded
    # code: closed <details> print open (book.css, book-site.js).
    import shutil
    import subprocess

    assert shutil.which("pdftotext"), "pdftotext (Debian's poppler-utils) is needed"
    name = _figure_page()
    doc = parse(site / lang / f"{name}.html")
    solution = doc.select_one("details.sd-dropdown .sd-card-body p")
    folded = doc.select_one("details.hide .cell_input pre")
    assert solution is not None and folded is not None, f"{lang}/{name}: no folded solution or code"
    # The solution's words before its first formula; the folded code's first line, up to
    # its comment (printed, a long line wraps).
    words = _flat(solution.find(string=True, recursive=False) or solution.get_text())[:40]
    code = _flat(folded.get_text().strip().splitlines()[0].split("#")[0])[:30]
    ctx = _new_context(browser)
    try:
        page = ctx.new_page()
        page.goto(f"{server}/{lang}/{name}.html", wait_until="load")
        _ready(page)
        pdf = tmp_path / "chapter.pdf"
        page.pdf(path=str(pdf))
    finally:
        ctx.close()
    text = _flat(subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"],
                                capture_output=True, text=True, check=True).stdout)
    assert words and words in text, f"{lang}/{name}: the printed chapter lacks the solution {words!r}"
    assert code in text, f"{lang}/{name}: the printed chapter lacks the folded code {code!r}"


# -- hosted as Read the Docs serves it --------------------------------------------------------

HOSTED_BASE = "https://attention.example.org/{lang}/latest/"
HOSTED_PAGES = ["index", CHAPTERS[0] if CHAPTERS else "api", EXAMPLE_PAGES[0] if EXAMPLE_PAGES else "api"]


@pytest.fixture(scope="module")
def hosted(site, tmp_path_factory):
    """The book built as Read the Docs builds it, laid out as it serves it.

    Each language is built on its own with ``READTHEDOCS_CANONICAL_URL`` set to its
    URL, as Read the Docs sets it (``conf.py`` makes it ``html_baseurl``), into
    ``<root>/<lang>/latest``.
    The build reuses a copy of the doctrees of ``make html``: only the pages are written.
    """
    import shutil
    import subprocess
    import sys

    root = tmp_path_factory.mktemp("readthedocs")
    for lang in LANGS:
        doctrees = root / "doctrees" / lang
        shutil.copytree(ROOT / "_build" / "doctrees" / lang, doctrees)
        proc = subprocess.run(
            [sys.executable, "-m", "sphinx", "-c", ".", "-q", "-W", "--keep-going", "-b", "html",
             "-D", f"language={lang}", "-d", str(doctrees), "docs", str(root / lang / "latest")],
            cwd=ROOT, capture_output=True, text=True,
            env={**os.environ, "READTHEDOCS_CANONICAL_URL": HOSTED_BASE.format(lang=lang)},
        )
        assert proc.returncode == 0, f"hosted build ({lang}) failed:\n{proc.stderr[-4000:]}"
    with SiteServer(root, gzip=True) as srv:
        yield root, srv.url


@pytest.mark.parametrize("lang", LANGS)
def test_hosted_switcher_and_twins(hosted, browser, lang):
    root, url = hosted
    other = OTHER[lang]
    ctx = _new_context(browser)
    try:
        for name in HOSTED_PAGES:
            page, rec, response = _open(ctx, f"{url}/{lang}/latest/{name}.html")
            assert response.status == 200, f"{page.url}: HTTP {response.status}"
            twins = dict(page.eval_on_selector_all(
                "link[rel=alternate][hreflang]", "els => els.map((l) => [l.hreflang, l.href])"
            ))
            assert twins == {
                lang: HOSTED_BASE.format(lang=lang) + f"{name}.html",
                other: HOSTED_BASE.format(lang=other) + f"{name}.html",
            }, f"{lang}/latest/{name}: hreflang links {twins}"
            page.click("a.lang-switch")
            target = f"{url}/{other}/latest/{name}.html"
            page.wait_for_url(target, wait_until="load")
            assert page.locator("html").get_attribute("lang") == other
            assert not rec.problems, f"{target}: " + "; ".join(rec.problems)
            page.close()
    finally:
        ctx.close()
    # A sitemap per language (sphinx-sitemap), each page with its twin, none of Sphinx's own pages.
    base = HOSTED_BASE.format(lang=lang)
    sitemap = (root / lang / "latest" / "sitemap.xml").read_text(encoding="utf-8")
    locs = re.findall(r"<loc>([^<]*)</loc>", sitemap)
    assert sorted(locs) == sorted(f"{base}{name}.html" for name in WRITTEN_PAGES), f"{lang} sitemap: {locs}"
    for name in WRITTEN_PAGES:
        for code in LANGS:
            assert f'hreflang="{code}" href="{HOSTED_BASE.format(lang=code)}{name}.html"' in sitemap, (lang, name, code)
    # robots.txt names it; Open Graph's page URLs are absolute.
    robots = (root / lang / "latest" / "robots.txt").read_text(encoding="utf-8")
    assert f"Sitemap: {base}sitemap.xml" in robots.splitlines(), robots
    chapter = parse(root / lang / "latest" / f"{HOSTED_PAGES[1]}.html")
    assert chapter.select_one('meta[property="og:url"]')["content"] == f"{base}{HOSTED_PAGES[1]}.html"


# -- downloads opened from disk ----------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_downloads_download_from_disk(site, browser, lang):
    # From file:// browsers ignore the `download` attribute and show a .py or an .ipynb as
    # text; book-downloads.js saves the file from its .js twin instead (translated_downloads).
    example, chapter = EXAMPLE_PAGES[0], CHAPTERS[0]
    ctx = browser.new_context(accept_downloads=True)
    try:
        for name, selector in (
            (example, ".sphx-glr-download-python a"),
            (example, ".sphx-glr-download-jupyter a"),
            (chapter, "a.book-notebook"),
        ):
            page = ctx.new_page()
            path = site / lang / f"{name}.html"
            page.goto(path.as_uri())
            href = page.get_attribute(selector, "href")
            with page.expect_download(timeout=TIMEOUT_MS) as info:
                page.click(selector)
            saved = Path(info.value.path())
            assert info.value.suggested_filename == Path(href).name, (info.value.suggested_filename, href)
            assert saved.read_bytes() == (path.parent / href).resolve().read_bytes(), f"{lang}/{name}: {href} differs"
            assert page.url == path.as_uri(), f"{lang}/{name}: the page left for {page.url}"
            page.close()
    finally:
        ctx.close()


# -- search: its field and its highlights -------------------------------------------------

# Each search field's icon and where the field's text starts (its left padding): the
# first letter typed must lie right of the magnifier.
JS_SEARCH_FIELDS = """() => Array.from(document.querySelectorAll("form.bd-search"))
  .filter((form) => form.getBoundingClientRect().width > 0)
  .map((form) => {
    const icon = form.querySelector("i, svg").getBoundingClientRect();
    const input = form.querySelector("input");
    const box = input.getBoundingClientRect(), style = getComputedStyle(input);
    return { iconRight: icon.right, iconWidth: icon.width,
             textStart: box.left + parseFloat(style.borderLeftWidth) + parseFloat(style.paddingLeft) };
  })"""


@pytest.mark.parametrize("lang", LANGS)
def test_search_icon_is_clear_of_the_text(server, browser, lang):
    for viewport in (NARROW, {"width": 1366, "height": 800}):
        ctx = _new_context(browser, viewport=viewport)
        try:
            page = ctx.new_page()
            page.goto(f"{server}/{lang}/search.html", wait_until="load")
            _ready(page)
            fields = {"the search page": page.evaluate(JS_SEARCH_FIELDS)}
            page.goto(f"{server}/{lang}/{_figure_page()}.html", wait_until="load")
            _ready(page)
            page.locator("button.search-button__button:visible").first.click()  # the search dialog
            page.wait_for_selector("dialog[open] form.bd-search input")
            fields["the header's dialog"] = page.evaluate(JS_SEARCH_FIELDS)
        finally:
            ctx.close()
        for where, found in fields.items():
            assert found, f"{lang} at {viewport['width']} px: no visible search field on {where}"
            for field in found:
                assert field["iconWidth"] > 0, f"{lang}: the magnifier of {where} is not drawn: {field}"
                assert field["iconRight"] <= field["textStart"], (
                    f"{lang} at {viewport['width']} px: the magnifier of {where} covers the first letter "
                    f"typed: {field}"
                )


# Contrast (WCAG) of every word a search highlighted: its colour against the first
# background drawn behind it.
JS_HIGHLIGHT_CONTRAST = """() => {
  const rgb = (s) => s.match(/[\\d.]+/g).map(Number);
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length < 4 || c[3] > 0) return c;
    }
    return [255, 255, 255];
  };
  return Array.from(document.querySelectorAll("article .highlighted")).map((el) => {
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(background(el))].sort((x, y) => y - x);
    return { inLink: !!el.closest("a"), ratio: (a + 0.05) / (b + 0.05), text: el.textContent };
  });
}"""


@pytest.mark.parametrize("lang, term", [("en", "attention"), ("es", "atención")])
def test_search_highlights_are_readable(server, browser, lang, term):
    page_name = next(p for p in CHAPTERS if "03_" in p)
    for scheme in ("light", "dark"):
        ctx = _new_context(browser, color_scheme=scheme)
        try:
            page = ctx.new_page()
            page.goto(f"{server}/{lang}/{page_name}.html?highlight={term}", wait_until="load")
            page.wait_for_selector("article .highlighted", state="attached")
            found = page.evaluate(JS_HIGHLIGHT_CONTRAST)
        finally:
            ctx.close()
        assert any(h["inLink"] for h in found), f"{lang}/{page_name}: no highlighted word in a link to check"
        low = [h for h in found if h["ratio"] < 4.5]
        assert not low, f"{lang}/{page_name} ({scheme}): highlighted words below 4.5:1: {low[:3]}"


# The pages axe checks at both widths, light and dark (test_page_in_browser checks every
# page at the desktop width, light): the landing page, chapters with figures, tables, an
# explorer, and a search with its results, then a page it highlights.  (Not the API page:
# axe takes 30-40 s over it, and test_page_in_browser checks it.)
AXE_SAMPLE = ["index", *(p for p in CHAPTERS if p.split("/")[-1][:3] in ("03_", "12_", "15_", "16_"))]
AXE_MODES = [
    pytest.param(NARROW, "light", id="375-light"),
    pytest.param(NARROW, "dark", id="375-dark"),
    pytest.param({"width": 1366, "height": 800}, "dark", id="1366-dark"),
    pytest.param({"width": 1366, "height": 800}, "light", id="1366-light"),
]


@pytest.mark.parametrize("viewport, scheme", AXE_MODES)
@pytest.mark.parametrize("lang", LANGS)
def test_axe_at_both_widths_light_and_dark(server, browser, lang, viewport, scheme):
    term = {"en": "attention"}.get(lang, "atención")
    pages = [] if scheme == "light" and viewport["width"] > NARROW["width"] else list(AXE_SAMPLE)
    pages += [f"search.html?q={term}", f"{AXE_SAMPLE[1]}.html?highlight={term}"]
    ctx = _new_context(browser, viewport=viewport, color_scheme=scheme)
    problems = {}
    try:
        page = ctx.new_page()
        for name in pages:
            page.goto(f"{server}/{lang}/{name if '.html' in name else name + '.html'}", wait_until="load")
            if name.startswith("search.html"):
                _wait_for_search_results(page)
            _ready(page)
            assert page.evaluate("() => document.documentElement.dataset.theme") == scheme
            found = _accessibility(page)
            if found:
                problems[name] = found
    finally:
        ctx.close()
    assert not problems, f"{lang} at {viewport['width']} px, {scheme}: " + "; ".join(
        f"{name}: {found}" for name, found in problems.items()
    )



# -- the landing page ---------------------------------------------------------------------------

START = {"en": "Start with chapter 1", "es": "Empieza por el capítulo 1"}
PART_STARTS = ["chapters/01_why_attention", "chapters/12_cost_and_tiling", "chapters/16_cross_attention"]
FIRST_SCREENS = [
    pytest.param({"width": 1366, "height": 768}, False, id="laptop"),
    pytest.param({"width": 375, "height": 667}, True, id="phone"),
]


@pytest.mark.parametrize("viewport, mobile", FIRST_SCREENS)
@pytest.mark.parametrize("lang", LANGS)
def test_landing_page_has_a_way_in(site, server, browser, lang, viewport, mobile):
    # The link to chapter 1 in the first screen; the three parts as cards, each linking its
    # first chapter; a heatmap the build drew; downloads only of files this build made.
    ctx = _new_context(browser, viewport=viewport, is_mobile=mobile)
    try:
        page, rec, _ = _open(ctx, f"{server}/{lang}/index.html")
        _ready(page)
        start = page.locator("article .book-start a")
        assert start.count() == 1, f"{lang}: {start.count()} links to start with"
        assert start.inner_text().strip().startswith(START[lang]), f"{lang}: {start.inner_text()!r}"
        assert start.get_attribute("href").split("#")[0].endswith(f"{PART_STARTS[0]}.html"), start.get_attribute("href")
        box = start.bounding_box()
        assert box and box["y"] + box["height"] <= viewport["height"], f"{lang}: the start link is below the first screen {box}"
        assert min(box["width"], box["height"]) >= 24, f"{lang}: the start link is {box}"
        cards = page.locator("article .book-parts .sd-card")
        assert cards.count() == 3, f"{lang}: {cards.count()} part cards"
        links = [cards.nth(k).locator("a.sd-stretched-link").first.get_attribute("href") for k in range(3)]
        assert [h.split("#")[0] for h in links] == [f"{p}.html" for p in PART_STARTS], f"{lang}: {links}"
        heatmap = page.locator("article .book-intro img")
        assert heatmap.count() == 1, f"{lang}: {heatmap.count()} images beside the lead"
        assert heatmap.evaluate("(img) => img.decode().then(() => img.naturalWidth > 0)"), f"{lang}: heatmap not drawn"
        assert "sphx_glr_plot_02_" in heatmap.get_attribute("src"), heatmap.get_attribute("src")  # a gallery figure
        # The first screen's largest paint on a laptop, beside the lead: fetched at once and first (book_images).
        assert heatmap.evaluate("(img) => img.loading") == "eager", f"{lang}: the heatmap loads lazily"
        assert heatmap.get_attribute("fetchpriority") == "high", f"{lang}: the heatmap is fetched in no hurry"
        assert mobile or heatmap.bounding_box()["y"] < viewport["height"], f"{lang}: the heatmap is below the first screen"
        text = page.locator("article ul.book-downloads").inner_text()
        assert "make " not in text, f"{lang}: the landing page offers a make target: {text!r}"
        for href in page.locator("article ul.book-downloads a").evaluate_all("(els) => els.map((a) => a.href)"):
            path = urlsplit(href).path.removeprefix("/")
            assert (site / path).is_file(), f"{lang}: a download that this build did not make: {href}"
        assert not rec.problems, f"{lang}/index: " + "; ".join(rec.problems)
    finally:
        ctx.close()
