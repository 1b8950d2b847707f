"""The built book mentions no notes, slides or course its readers have never seen.

``tests/test_book_stands_alone.py`` reads the sources and catalogs; this reads what a
reader gets: every built page's text, in both languages, and the downloaded notebooks.
"""

import pytest
from site_pages import LANGS, WRITTEN_PAGES, page_soup

from tests.helpers.text import mentions


@pytest.mark.parametrize("lang", LANGS)
def test_built_pages_mention_no_unseen_material(site_dir, lang):
    found = []
    for page in WRITTEN_PAGES:
        doc = page_soup(site_dir, lang, page)
        article = doc.select_one("article") or doc
        if hits := mentions(article.get_text(" ")):
            found.append(f"{lang}/{page}: {hits}")
    assert not found, found


@pytest.mark.parametrize("lang", LANGS)
def test_downloaded_notebooks_mention_no_unseen_material(site_dir, lang):
    notebooks = sorted((site_dir / lang / "downloads").rglob("*.ipynb"))
    assert notebooks, f"{lang}: no downloaded notebook"
    found = [f"{p.name}: {hits}" for p in notebooks if (hits := mentions(p.read_text(encoding="utf-8")))]
    assert not found, found
