"""The built bibliography: its page in both languages, and every citation on every page.

``tests/test_book_bibliography.py`` checks the sources without a build.
"""

import re

import pytest
from book_bibliography import BookStyle, citation_text, load_entries
from site_pages import LANGS, WRITTEN_PAGES, page_soup

ENTRIES = load_entries()
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


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", WRITTEN_PAGES)
def test_citations_link_their_entries(site_dir, lang, page):
    doc = page_soup(site_dir, lang, page)
    entries = page_soup(site_dir, lang, PAGE)
    for citation in doc.select("span.bibtex-citation"):
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
