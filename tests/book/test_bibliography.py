"""The built bibliography: its page in both languages, and every citation on every page.

``tests/test_book_bibliography.py`` checks the sources without a build.
"""

import re

import pytest
from book_bibliography import BookStyle, citation_text, load_entries
from site_pages import GALLERY, LANGS, ROOT, WRITTEN_PAGES, page_soup

ENTRIES = load_entries()


def source_text(page):
    """The source of a written page (docs/<page>.md or .rst, or a gallery script), or "" (a generated page)."""
    name = page.removeprefix(f"{GALLERY}/")
    paths = [ROOT / "examples" / f"{name}.py"] if page.startswith(f"{GALLERY}/") else [
        ROOT / "docs" / f"{page}.md", ROOT / "docs" / f"{page}.rst"]
    return "".join(p.read_text(encoding="utf-8") for p in paths if p.is_file())


# The pages whose source cites a work ({cite:t}, {cite:p}): on the others the test below could not fail.
CITING_PAGES = [p for p in WRITTEN_PAGES if re.search(r"\{cite:[tp]\}|:cite:", source_text(p))]
PAGE = "bibliography"
TITLE = {"en": "Bibliography", "es": "Bibliografía"}


@pytest.mark.parametrize("lang", LANGS)
def test_bibliography_page_lists_every_entry_with_its_link(site_dir, lang):
    doc = page_soup(site_dir, lang, PAGE)
    assert doc.select_one("article h1").get_text(strip=True).rstrip("#") == TITLE[lang]
    items = doc.select("article ul.book-bibliography > li")
    anchors = [item.select_one("[id^=ref-]")["id"] for item in items]
    # Every entry, sorted by author, year and title (the book style's order).
    assert anchors == [f"ref-{e.key}" for e in BookStyle().sort(ENTRIES.values())], anchors
    for item in items:
        links = [a["href"] for a in item.select("a.reference.external")]
        assert links and all(h.startswith("https://") for h in links), item.get_text()[:80]
        assert not item.select(".label"), "an entry shows a number that no citation names"
    assert items[0].get_text().startswith("Agrawal, A.") and "(2023)" in items[0].get_text()
    # The index lists it under the Reference toctree.
    index = page_soup(site_dir, lang, "index")
    assert index.select_one(f'article a[href="{PAGE}.html"]') is not None


def test_some_pages_cite():
    assert len(CITING_PAGES) >= 10, CITING_PAGES


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", CITING_PAGES)
def test_citations_link_their_entries(site_dir, lang, page):
    doc = page_soup(site_dir, lang, page)
    entries = page_soup(site_dir, lang, PAGE)
    citations = doc.select("span.bibtex-citation")
    assert citations, f"{lang}/{page}: its source cites, its page shows no citation"
    for citation in citations:
        links = citation.select("a[href]")
        assert links, f"{lang}/{page}: a citation without a link: {citation.get_text()!r}"
        keys = []
        for link in links:
            target, _, anchor = link["href"].partition("#")
            assert target.endswith(f"{PAGE}.html") and anchor.startswith("ref-"), link["href"]
            assert entries.find(id=anchor) is not None, f"{lang}/{page}: no entry {anchor}"
            keys.append(anchor.removeprefix("ref-"))
        # What the page shows is what the chapters' notebooks write (book_bibliography.citation_text).
        shown = re.sub(r"\s+", " ", citation.get_text())
        role = "p" if shown.startswith("(") else "t"
        assert shown == citation_text(ENTRIES, role, ",".join(keys)), (lang, page, shown)
