"""The built book: every page, figure and printed output, in both languages.

These checks read the HTML that ``make html`` wrote (see ``conftest.py``); the
browser suite (``test_browser.py``) then looks at the same site as a reader.
"""

import re
import zipfile
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from book_text import ROLE
from bs4.element import PreformattedString
from site_pages import CHAPTERS, EXAMPLE_PAGES, LANGS, OTHER, WRITTEN_PAGES, built_pages, page_soup, parse


def number(page):
    """The two digits that open a chapter's or an example's name (``chapters/03_...``: 03)."""
    return Path(page).name.removeprefix("plot_")[:2]


# Concept chapters: a figure and at least two folded solutions each (Part I's 2 to 10,
# every chapter of Part II, from 12 on).
CONCEPT_CHAPTERS = [c for c in CHAPTERS if "02" <= number(c) <= "10" or number(c) >= "12"]
# The first chapter of each part; Part II continues the numbering of Part I.
PART_STARTS = {"chapters/01_why_attention": 1, "chapters/12_cost_and_tiling": 12}

# Numbers of the running example of Raschka (2024), ch. 3, which the book reproduces (same seeds, inputs).
NOTES_NUMBERS = {
    "chapters/03_trainable_weights": [
        "0.4306, 1.4551",  # x_2's query, seed 123
        "0.2996, 0.8053",  # SelfAttentionV1, seed 123
        "-0.0739,  0.0713",  # SelfAttentionV2, seed 789
    ],
    "chapters/08_positional_encoding": ["656,384"],
}


def cell_outputs(doc):
    """The printed outputs of a page: myst-nb cell outputs and gallery script outputs."""
    blocks = doc.select(".cell_output pre, pre.sphx-glr-script-out, .sphx-glr-script-out pre")
    return [b.get_text() for b in blocks]


def test_the_book_has_its_chapters_and_examples():
    assert len(CHAPTERS) >= 12, CHAPTERS
    assert [number(c) for c in CHAPTERS] == [f"{i:02d}" for i in range(1, len(CHAPTERS) + 1)]
    numbered = {number(e) for e in EXAMPLE_PAGES}
    wanted = {f"{i:02d}" for i in range(2, 10)} | {number(c) for c in CHAPTERS if number(c) >= "12"}
    assert wanted <= numbered, f"a chapter from 2 to 9, or of Part II, has no example: {EXAMPLE_PAGES}"


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_numbers_continue_into_part_two(site_dir, lang):
    # Each part is a toctree of its own (for its caption); Sphinx would restart at 1.
    for chapter in CHAPTERS:
        doc = page_soup(site_dir, lang, chapter)
        shown = doc.select_one("h1 .section-number")
        assert shown is not None, f"{lang}/{chapter}: the title has no number"
        assert shown.get_text().strip() == f"{int(number(chapter))}.", f"{lang}/{chapter}: {shown.get_text()!r}"
    index = page_soup(site_dir, lang, "index")
    captions = [c.get_text(" ", strip=True) for c in index.select("article .caption-text")]
    assert len(captions) >= 3 and captions[0] != captions[1], captions
    for chapter, first in PART_STARTS.items():
        link = index.select_one(f'article .toctree-wrapper a[href="{chapter}.html"]')  # not the start link
        assert link is not None and link.get_text().startswith(f"{first}. "), (lang, chapter, link)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", WRITTEN_PAGES)
def test_page_is_built_in_its_language(site_dir, lang, page):
    doc = page_soup(site_dir, lang, page)
    assert doc.html.get("lang") == lang, f"{lang}/{page}: <html lang={doc.html.get('lang')!r}>"
    # Nothing comes from a third party: no script, style, image or font from the network.
    for tag, attr in (("script", "src"), ("link", "href"), ("img", "src")):
        for el in doc.find_all(tag):
            url = el.get(attr) or ""
            assert not re.match(r"^(https?:)?//", url), f"{lang}/{page}: <{tag}> loads {url}"
    # The switcher leads to the same page in the other language.
    switch = doc.select_one("a.lang-switch")
    assert switch is not None, f"{lang}/{page}: no language switcher"
    other = OTHER[lang]
    target = (site_dir / lang / page).parent / switch["href"]
    assert target.resolve() == (site_dir / other / f"{page}.html").resolve(), switch["href"]
    # Every image the page shows was written.
    for img in doc.find_all("img"):
        src = img["src"]
        assert (site_dir / lang / page).parent.joinpath(src).resolve().is_file(), f"{lang}/{page}: missing {src}"
    # A build-time message that changes on every build would never stay translated.
    assert "Total running time" not in doc.get_text()


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("chapter", CONCEPT_CHAPTERS)
def test_concept_chapter_has_outputs_figures_and_exercises(site_dir, lang, chapter):
    doc = page_soup(site_dir, lang, chapter)
    assert cell_outputs(doc), f"{chapter}: no executed output"
    # A figure is a PNG the build drew, or an attention explorer (the web page's form of
    # a heatmap; the PDF and the EPUB print its PNG).
    figures = [img for img in doc.select(".cell_output img") if img["src"].endswith(".png")]
    figures += doc.select(".cell_output [data-attention-explorer]")
    assert figures, f"{chapter}: no figure drawn at build time"
    assert len(doc.select(".sd-dropdown")) >= 2, f"{chapter}: fewer than two folded solutions"
    # The package's own code is shown (literalinclude), not a retyped copy.
    assert doc.select(".highlight-python, .highlight-ipython3"), chapter


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", EXAMPLE_PAGES)
def test_gallery_example_has_figure_output_and_downloads(site_dir, lang, page):
    doc = page_soup(site_dir, lang, page)
    example = Path(page).name
    images = [img["src"] for img in doc.find_all("img") if f"sphx_glr_{example}_" in img["src"]]
    assert images, f"{lang}/{example}: no figure"
    hrefs = [a["href"] for a in doc.select("a.download, a.reference.download")]
    for suffix in (".py", ".ipynb"):
        found = [h for h in hrefs if h.endswith(f"{example}{suffix}")]
        assert found, f"{lang}/{example}: no {suffix} download among {hrefs}"
        path = (site_dir / lang / "auto_examples").joinpath(found[0]).resolve()
        assert path.is_file() and path.stat().st_size > 0, path
    # Links back to its chapter.
    assert doc.select('a[href*="chapters/"]'), f"{lang}/{example}: no link back to a chapter"


@pytest.mark.parametrize("page", CHAPTERS + EXAMPLE_PAGES)
def test_outputs_are_shared_by_both_languages(site_dir, page):
    # The code ran once: the Spanish book shows exactly the English book's outputs.
    en = cell_outputs(page_soup(site_dir, "en", page))
    es = cell_outputs(page_soup(site_dir, "es", page))
    assert en == es, f"{page}: printed outputs differ between en and es"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("chapter", sorted(NOTES_NUMBERS))
def test_printed_numbers_match_the_notes(site_dir, lang, chapter):
    text = "\n".join(cell_outputs(page_soup(site_dir, lang, chapter)))
    for number in NOTES_NUMBERS[chapter]:
        assert number in text, f"{lang}/{chapter}: the notes' {number!r} is not printed"


@pytest.mark.parametrize("lang", LANGS)
def test_language_settings_search_and_math(site_dir, lang):
    options = (site_dir / lang / "_static" / "documentation_options.js").read_text()
    assert re.search(rf"LANGUAGE:\s*'{lang}'", options), options
    index = (site_dir / lang / "searchindex.js").read_text(encoding="utf-8")
    assert "chapters/02_simplified_attention" in index
    title = page_soup(site_dir, lang, "index").title.get_text()
    assert ("Atención" in title) == (lang == "es"), title
    # Formulas are MathML written by the build (book_math), drawn with the site's math font.
    doc = page_soup(site_dir, lang, "chapters/04_scaling")
    formulas = doc.select("span.math, div.math")
    assert formulas and all(f.find("math") is not None for f in formulas), formulas[:3]
    assert doc.select("div.math > math[display=block]") and doc.find("msqrt") and doc.find("mfrac")
    font = site_dir / lang / "_static" / "book-math.woff2"
    assert font.is_file() and 5_000 < font.stat().st_size < 200_000, font
    icons = site_dir / lang / "_static" / "book-icons.woff2"  # the theme's icons, cut down
    assert icons.is_file() and icons.stat().st_size < 20_000, icons
    assert not (site_dir / lang / "_static" / "mathjax").exists()


def test_theme_css_keeps_the_rules_of_the_site_icons_only(site_dir):
    # book_fonts cuts the theme's stylesheet (render-blocking) to the icons the pages and scripts draw.
    import pydata_sphinx_theme
    from book_fonts import FA_CLASS, FA_CLASS_RULE

    theme = Path(pydata_sphinx_theme.__file__).parent / "theme/pydata_sphinx_theme/static/styles/pydata-sphinx-theme.css"
    icons = lambda css: {name for rule in FA_CLASS_RULE.finditer(css) for name in FA_CLASS.findall(rule[1])}
    every = icons(theme.read_text(encoding="utf-8"))
    for lang in LANGS:
        static = site_dir / lang / "_static"
        kept = icons((static / "styles" / "pydata-sphinx-theme.css").read_text(encoding="utf-8"))
        sources = [*(site_dir / lang).rglob("*.html"), *static.rglob("*.js")]
        drawn = {name for path in sources for name in FA_CLASS.findall(path.read_text(encoding="utf-8", errors="ignore"))}
        assert len(every) > 1000 and len(kept) < len(every) / 10, (lang, len(every), len(kept))
        assert drawn & every and drawn & every <= kept, (lang, sorted((drawn & every) - kept))


def test_spanish_search_uses_the_spanish_stemmer(site_dir):
    options = (site_dir / "es" / "_static" / "language_data.js").read_text(encoding="utf-8")
    assert "SpanishStemmer" in options or "spanish" in options.lower()


def test_root_index_sends_readers_to_a_language(site_dir):
    doc = parse(site_dir / "index.html")
    assert [a["href"] for a in doc.find_all("a", href=True)] == [f"{lang}/index.html" for lang in LANGS]
    assert "navigator.language" in doc.script.get_text()
    assert not (site_dir / "jupyter_execute").exists(), "executed notebooks leaked into the site"


# Role markup that a reader should never see: MyST roles and reST roles left
# unparsed (a translated message keeps its page's syntax: MyST on .md pages,
# reST on the API page and the gallery).
RAW_ROLE = re.compile(r"\{(term|ref|doc|numref|eq|math)\}`|:(math|func|class|meth|ref|doc|term|download):`")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", WRITTEN_PAGES)
def test_no_raw_role_markup_in_the_prose(site_dir, lang, page):
    doc = page_soup(site_dir, lang, page)
    raw = [
        str(text).strip()[:80]
        for text in doc.find_all(string=RAW_ROLE)
        if not text.find_parent(["pre", "code", "script", "style"])
    ]
    assert not raw, f"{lang}/{page}: role markup shown as text: {raw[:3]}"


@pytest.mark.parametrize("page", WRITTEN_PAGES)
def test_spanish_page_is_translated(site_dir, page):
    # Each page's title and first paragraph come from the Spanish catalog.
    def head(lang):
        doc = page_soup(site_dir, lang, page)
        main = doc.select_one("article") or doc
        h1 = main.find("h1").get_text(" ", strip=True)
        p = main.find("p")
        return h1, p.get_text(" ", strip=True) if p else ""

    en, es = head("en"), head("es")
    assert en[0] != es[0], f"es/{page}: the title is the English one: {es[0]!r}"
    assert en[1] != es[1], f"es/{page}: the first paragraph is the English one: {es[1][:80]!r}"


# What the theme and Sphinx put around the text, which their own Spanish
# catalogs leave in English (see locale/es/LC_MESSAGES/sphinx.po).
# CSS selectors of elements that carry the text.
CHROME = {
    "en": ['[title="Link to this heading"]', '[title="Toggle primary sidebar"]', '[placeholder="Search…"]'],
    "es": ['[title="Enlace a este encabezado"]', '[title="Mostrar u ocultar la barra lateral principal"]',
           '[placeholder="Buscar…"]'],
}


@pytest.mark.parametrize("lang", LANGS)
def test_page_chrome_is_in_the_page_language(site_dir, lang):
    doc = page_soup(site_dir, lang, "chapters/02_simplified_attention")
    for selector in CHROME[lang]:
        assert doc.select_one(selector), f"{lang}: no {selector}"
    for selector in CHROME[OTHER[lang]]:
        assert not doc.select_one(selector), f"{lang}: {selector} is the other language's"


@pytest.mark.parametrize("lang", LANGS)
def test_gallery_cards_are_in_the_page_language(site_dir, lang):
    # The cards are raw HTML that the catalogs do not reach; docs/_ext/book_i18n.py translates them.
    doc = page_soup(site_dir, lang, "auto_examples/index")
    cards = doc.select(".sphx-glr-thumbcontainer")
    assert len(cards) == len(EXAMPLE_PAGES), f"{lang}: {len(cards)} cards for {len(EXAMPLE_PAGES)} examples"
    english = page_soup(site_dir, "en", "auto_examples/index").select(".sphx-glr-thumbcontainer")
    for card, en_card in zip(cards, english, strict=True):
        href = card.select_one("a")["href"]
        page = page_soup(site_dir, lang, f"auto_examples/{Path(href).stem}")
        title = page.find("h1").get_text(" ", strip=True).rstrip("#").strip()
        shown = card.select_one(".sphx-glr-thumbnail-title").get_text(" ", strip=True)
        assert shown == title, f"{lang}: the card of {href} says {shown!r}, its page {title!r}"
        if lang != "en":
            assert card["tooltip"] and card["tooltip"] != en_card["tooltip"], (
                f"{lang}: the card of {href} keeps the English summary"
            )
        # A tooltip is plain text: no TeX, no reference label.
        raw = re.findall(r"\\[A-Za-z]+|\bch-\d\d\b|:(?:math|ref):", card["tooltip"])
        assert not raw, f"{lang}: the tooltip of {href} shows {raw}: {card['tooltip'][:120]!r}"


# English words a Spanish reader must not meet outside code: in the text of a
# page or in the labels that tooltips and screen readers read out.  Each was
# once on the Spanish site (issue 11); the list is short on purpose: words that
# Spanish prose never uses, matched case-sensitively where only the interface
# capitalises them. A word joined to a name by "-" or "." is part of that name
# (Qwen3-Next, torch.nn.Module), not interface text.
ENGLISH_WORDS = re.compile(
    r"(?<![-.])\b(optional|module|Module|Toggle|toggle|Main|Page|Companion|Download|Previous|Next|"
    r"Show|Hide|Search|Contents|Skip|Back to top|Copyright|contents|Type|Parameters|Returns|Return type)\b"
)
LABELS = ("aria-label", "alt", "title", "placeholder", "tooltip", "data-tooltip", "aria-description")
# Code, formulas, printed output, signatures and the argument names that open the
# entries of an API field list are shared by both languages.
NOT_PROSE = (
    "pre, code, kbd, samp, script, style, .highlight, .math, .sig, .sphx-glr-script-out, "
    ".cell_output, dl.field-list p > strong:first-child"
)


def english_left(doc):
    """``(where, text)`` for each English word of ENGLISH_WORDS on the page ``doc``."""
    skip = {id(n) for el in doc.select(NOT_PROSE) for n in [el, *el.descendants]}
    found = []
    for text in doc.find_all(string=True):
        if isinstance(text, PreformattedString):  # comments, doctype: not shown
            continue
        if id(text) in skip or text.parent.name in ("script", "style", "title", "[document]"):
            continue
        if m := ENGLISH_WORDS.search(text):
            found.append((f"<{text.parent.name}> text", f"{m[0]!r} in {text.strip()[:80]!r}"))
    for tag in doc.find_all(True):
        if id(tag) in skip:
            continue
        for name in LABELS:
            value = tag.get(name)
            if isinstance(value, str) and (m := ENGLISH_WORDS.search(value)):
                found.append((f"<{tag.name} {name}>", f"{m[0]!r} in {value[:80]!r}"))
    title = doc.title.get_text() if doc.title else ""
    if m := ENGLISH_WORDS.search(title):
        found.append(("<title>", f"{m[0]!r} in {title[:80]!r}"))
    return found


def test_english_left_finds_english():
    # The check itself must be able to fail.
    doc = BeautifulSoup(
        '<html><head><title>Índice de módulos</title></head><body>'
        '<nav aria-label="Main"></nav><p>x (<em>int</em>, <em>optional</em>)</p>'
        '<p>m (<em>torch.nn.Module</em>): Qwen3-Next</p>'
        '<pre>import torch  # optional</pre><span class="math">\\text{Page}</span>'
        '<details><summary aria-label="Mostrar u ocultar el contenido"></summary></details>'
        '<div tooltip="Companion of ch-02"></div><!-- Table of contents --></body></html>',
        "html.parser",
    )
    found = [where for where, _ in english_left(doc)]
    assert found == ["<em> text", "<nav aria-label>", "<div tooltip>"], english_left(doc)


def test_no_english_around_the_spanish_text(site_dir):
    problems = []
    for page in sorted(built_pages(site_dir, "es")):
        doc = page_soup(site_dir, "es", page)
        problems += [f"es/{page}: {where}: {what}" for where, what in english_left(doc)]
    assert not problems, f"{len(problems)} English words on Spanish pages:\n" + "\n".join(problems[:40])


def listings(doc):
    """The package code a page shows with ``literalinclude``: Python blocks outside any cell."""
    return [
        block.get_text()
        for block in doc.select("div.highlight-python pre")
        if not block.find_parent(class_=["cell", "sphx-glr-example-title"])
    ]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_listings_show_code_without_docstrings(site_dir, chapter):
    # docs/_ext/book_listings.py drops the English docstrings from what the chapters show
    # (the API page has them, translated): no listing of either language has one.
    shown = {lang: listings(page_soup(site_dir, lang, chapter)) for lang in LANGS}
    assert shown["en"] == shown["es"], "the listings differ between languages"
    left = [text.split("\n", 1)[0] for text in shown["en"] if '"""' in text or "'''" in text]
    assert not left, f"listings with a docstring: {left}"


def test_listings_fit_on_one_screen(site_dir):
    # The built listings, as a reader sees them; tests/i18n/test_code_comments.py holds the
    # sources to the same 45 lines (SCREEN there) without a build.
    long = {
        f"{chapter}: {text.split(chr(10), 1)[0]}": n
        for chapter in CHAPTERS
        for text in listings(page_soup(site_dir, "en", chapter))
        if (n := len(text.strip("\n").split("\n"))) > 45
    }
    assert not long, f"listings longer than a screen: {long}"


def test_every_listing_is_found(site_dir):
    # Guards the selector: chapters 2 to 15 show about 30 listings between them.
    found = sum(len(listings(page_soup(site_dir, "en", c))) for c in CHAPTERS)
    assert found >= 25, found


# -- the downloads: no markup a reader would see as it is ------------------------------------

LABEL = re.compile(r"\bch-\d\d\b")


def download_texts(site, lang):
    """``(where, text)`` of each download of ``lang``: gallery scripts and notebooks, chapter
    notebooks, and every member of the archives."""
    base = site / lang
    for path in sorted([*base.glob("_downloads/*/*"), *base.glob("downloads/**/*")]):
        where = path.relative_to(site).as_posix()
        if path.suffix in (".py", ".ipynb"):
            yield where, path.read_text(encoding="utf-8")
        elif path.suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                for name in archive.namelist():
                    yield f"{where}:{name}", archive.read(name).decode("utf-8")


@pytest.mark.parametrize("lang", LANGS)
def test_downloads_show_no_markup(site_dir, lang):
    # Roles (:ref:`ch-13`, :class:`attn.KVCache`, {term}`...`) and reference labels are the
    # page's words in every download (docs/_ext/book_text.py: resolve_roles).
    assert ROLE.search(":ref:`ch-13`") and ROLE.search("{term}`query`") and LABEL.search("Acompaña al `ch-15`.")
    texts = list(download_texts(site_dir, lang))
    kinds = {Path(where.split(":")[-1]).suffix for where, _ in texts}
    assert {".py", ".ipynb"} <= kinds and len(texts) >= 2 * len(EXAMPLE_PAGES) + len(CHAPTERS), (kinds, len(texts))
    left = [f"{where}: {m[0]}" for where, text in texts for m in [ROLE.search(text) or LABEL.search(text)] if m]
    assert not left, f"{lang}: markup left in {len(left)} download(s): {left[:5]}"


def test_api_tooltips_are_in_the_page_language(site_dir):
    # Sphinx's tooltip of a signature's "*" (keyword-only parameters), translated by sphinx.po.
    english = "Keyword-only parameters separator (PEP 3102)"
    titles = {lang: [a["title"] for a in page_soup(site_dir, lang, "api").select("abbr[title*='PEP 3102']")] for lang in LANGS}
    assert titles["en"] and set(titles["en"]) == {english}, titles["en"][:2]
    assert len(titles["es"]) == len(titles["en"]) and english not in titles["es"], titles["es"][:2]
