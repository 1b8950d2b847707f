"""What search engines, screen readers and phones read in the built HTML, both languages.

Static checks on the pages ``make html`` wrote (see ``conftest.py``); the
browser suite (``test_browser.py``) runs axe-core and measures the same pages.
Hooks in ``docs/_ext/`` (``book_hosting``, ``book_alt``, ``book_a11y``, ``book_images``,
``book_assets``) produce what is checked here.
"""

import re
from urllib.parse import urljoin

import pytest
from bs4 import BeautifulSoup
from PIL import Image

from site_pages import LANGS, source_pages

PAGES = source_pages()
PATHLIKE = re.compile(r"_images/|\.png$|\.svg$")
# TeX a screen reader would spell out: "mathcalN", "approx".
TEX = re.compile(r"[$\\]|mathcal|\bapprox\b")


def soup(site, lang, page):
    path = site / lang / f"{page}.html"
    assert path.is_file(), f"{lang}/{page}.html was not built"
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def figure_alts(doc):
    return [img.get("alt", "") for img in doc.select("article img")]


def squeeze(text):
    return " ".join(text.split())


@pytest.mark.parametrize("page", PAGES)
def test_figures_have_alt_text_in_the_page_language(site_dir, page):
    # Each figure's alt text says what the figure shows (book_alt: written where the
    # figure is drawn): not a file name, no TeX, not the text a reader hears anyway.
    docs = {lang: soup(site_dir, lang, page) for lang in LANGS}
    en, es = (figure_alts(docs[lang]) for lang in LANGS)
    assert len(en) == len(es), f"{page}: {len(en)} images in English, {len(es)} in Spanish"
    for lang, alts in (("en", en), ("es", es)):
        paragraphs = [squeeze(p.get_text(" ")) for p in docs[lang].select("p")]
        for alt in alts:
            assert len(alt.strip()) >= 10 and not PATHLIKE.search(alt), (
                f"{lang}/{page}: an image's alt text is {alt!r}"
            )
            assert not TEX.search(alt), f"{lang}/{page}: TeX in an alt text: {alt!r}"
            inside = [p for p in paragraphs if squeeze(alt) in p]
            assert not inside, f"{lang}/{page}: the alt text {alt!r} is the paragraph {inside[0][:120]!r}"
    # The Spanish alt text is the Spanish text, not the English one.
    same = [a for a, b in zip(en, es) if a == b]
    assert not same, f"{page}: alt text left in English on the Spanish page: {same[:2]}"


def test_the_book_has_figures_with_alt_text(site_dir):
    # The check above must have figures to look at: chapters and gallery alike.
    for prefix in ("chapters/", "auto_examples/plot_"):
        counts = [len(figure_alts(soup(site_dir, "en", p))) for p in PAGES if p.startswith(prefix)]
        assert sum(counts) >= 5, f"only {sum(counts)} figures in the {prefix} pages"


@pytest.mark.parametrize("page", PAGES)
def test_description_and_language_twins(site_dir, page):
    descriptions = {}
    for lang in LANGS:
        doc = soup(site_dir, lang, page)
        meta = doc.select('meta[name="description"]')
        assert len(meta) == 1, f"{lang}/{page}: {len(meta)} meta descriptions"
        text = meta[0]["content"]
        assert 40 <= len(text) <= 170, f"{lang}/{page}: description of {len(text)} characters: {text!r}"
        descriptions[lang] = text
        twins = {link["hreflang"]: link["href"] for link in doc.select('link[rel="alternate"][hreflang]')}
        assert set(twins) == set(LANGS), f"{lang}/{page}: hreflang links {twins}"
        here = f"http://site/{lang}/{page}.html"
        for code, href in twins.items():
            assert urljoin(here, href) == f"http://site/{code}/{page}.html", (
                f"{lang}/{page}: hreflang {code} -> {href}"
            )
        icon = doc.select_one('link[rel="icon"]')
        assert icon is not None, f"{lang}/{page}: no favicon"
        target = (site_dir / lang / page).parent / icon["href"]
        assert target.resolve().is_file(), f"{lang}/{page}: favicon {icon['href']} missing"
    assert descriptions["en"] != descriptions["es"], f"{page}: the Spanish description is English"


@pytest.mark.parametrize("lang", LANGS)
def test_no_page_loads_what_it_does_not_use(site_dir, lang):
    # Font Awesome's 1.5 MB script (the stylesheet's web font draws the icons), the
    # search scripts outside the search page, MathJax (formulas are MathML: book_math).
    for page in PAGES:
        doc = soup(site_dir, lang, page)
        scripts = [s.get("src", "") for s in doc.select("script[src]")]
        assert not any("fontawesome" in s for s in scripts), f"{lang}/{page}: loads Font Awesome's script"
        if page != "search":
            assert not any(re.search(r"searchtools|searchindex", s) for s in scripts), (
                f"{lang}/{page}: loads the search scripts"
            )
        assert not any("mathjax" in s.lower() for s in scripts), f"{lang}/{page}: loads MathJax"
        # Before the first paint only the colour scheme's inline script runs (layout.html); Sphinx's scripts and the
        # theme's run once the page is parsed: files deferred, inline scripts as modules (book_assets).  The search
        # page's scripts run at once, and the module index's template calls documentation_options.js inline.
        blocking = [s for s in doc.head.select("script") if not s.has_attr("defer") and not s.has_attr("async")
                    and s.get("type") not in ("module", "application/json")]
        if page not in ("search", "py-modindex"):
            assert [s.has_attr("data-cfasync") for s in blocking] == [True], (
                f"{lang}/{page}: scripts that block the first paint: {[s.get('src') or s.text[:60] for s in blocking]}"
            )
        assert blocking and "prefers-color-scheme" in blocking[0].text, f"{lang}/{page}: the colour scheme waits"
        # The theme's styles/theme.css is one @import of basic.css: a second round trip before
        # the first paint (layout.html links basic.css itself).  The gallery's tags, the copy
        # button and sphinx-design's tabs load only where the article has what they act on.
        styles = [s.get("href", "") for s in doc.select('link[rel="stylesheet"]')]
        assert not any("styles/theme.css" in s for s in styles), f"{lang}/{page}: links styles/theme.css"
        assert any(re.search(r"_static/basic\.css", s) for s in styles), f"{lang}/{page}: no basic.css"
        article = str(doc.select_one("article") or "")
        for script, mark in (("sg-tags.js", 'class="sphx-glr'), ("copybutton.js", 'class="highlight'),
                             ("design-tabs.js", "sd-tab-set")):
            if any(script in s for s in scripts):
                assert mark in article, f"{lang}/{page}: loads {script} with nothing to act on"


@pytest.mark.parametrize("lang", LANGS)
def test_first_screen_image_is_fetched_first(site_dir, lang):
    # The landing page's heatmap is the largest thing its first screen paints (Lighthouse's LCP): fetched at once
    # and before the rest, not when the layout finds it near the screen.  Other figures load lazily; only a page's
    # first image, after less than a phone screen of text, loads at once (book_images).
    heatmap = soup(site_dir, lang, "index").select_one("article .book-intro img")
    assert heatmap is not None, f"{lang}/index: no heatmap beside the lead"
    assert heatmap.get("loading") != "lazy" and heatmap.get("fetchpriority") == "high", (
        f"{lang}/index: the heatmap is fetched late: {heatmap}"
    )
    lazy = 0
    for page in PAGES:
        images = soup(site_dir, lang, page).select("article img")
        lazy += sum(img.get("loading") == "lazy" for img in images)
        eager = [img["src"] for img in images[1:] if img.get("loading") != "lazy" or img.has_attr("fetchpriority")]
        assert not eager, f"{lang}/{page}: images after the first that load at once: {eager}"
    assert lazy >= 50, f"only {lazy} lazy images in the {lang} book"


GALLERY_THUMB = (320, 224)  # conf.py: sphinx-gallery's cards draw 160 x 112 CSS px at most; twice that


@pytest.mark.parametrize("lang", LANGS)
def test_gallery_thumbnails_are_twice_their_drawn_size(site_dir, lang):
    # The default 400 x 280 PNGs weighed 552 KiB, drawn at most 160 x 112 (the review of 2026-11-28).
    thumbs = soup(site_dir, lang, "auto_examples/index").select(".sphx-glr-thumbcontainer img")
    assert len(thumbs) >= 10, f"{lang}: {len(thumbs)} thumbnails in the gallery"
    for img in thumbs:
        with Image.open(site_dir / lang / "auto_examples" / img["src"]) as file:
            assert file.size == GALLERY_THUMB, (
                f"{lang}: {img['src']} is {file.size}, not {GALLERY_THUMB}; sphinx-gallery writes a thumbnail when its "
                "script runs: after changing thumbnail_size in conf.py, delete docs/auto_examples/*.md5"
            )
        assert (int(img["width"]), int(img["height"])) == GALLERY_THUMB, f"{lang}: {img}"


@pytest.mark.parametrize("lang", LANGS)
def test_hide_cell_toggles_say_what_they_show(site_dir, lang):
    found = 0
    for page in PAGES:
        for summary in soup(site_dir, lang, page).select("details.hide > summary"):
            found += 1
            assert not summary.has_attr("aria-label"), (
                f"{lang}/{page}: a toggle's spoken name differs from its text: {summary}"
            )
    assert found, f"no hide-cell toggle in the {lang} book: the check looked at nothing"


@pytest.mark.parametrize("lang", LANGS)
def test_figures_open_full_size(site_dir, lang):
    # On a phone a grid of heatmaps shrinks to the screen: each figure links to its file.
    found = 0
    for page in PAGES:
        doc = soup(site_dir, lang, page)
        for img in doc.select(".cell_output img, img.sphx-glr-single-img, img.sphx-glr-multi-img"):
            found += 1
            link = img.find_parent("a")
            assert link is not None and link["href"] == img["src"], (
                f"{lang}/{page}: figure {img['src']} does not link to its file"
            )
    assert found >= 10, f"only {found} figures in the {lang} book"
