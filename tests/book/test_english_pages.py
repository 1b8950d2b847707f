"""The built English pages name chapters as a sentence needs them: "chapter 3", not its title.

A bare ``{ref}`ch-03``` prints the chapter's title, "Self-attention with trainable
weights"; inside a sentence that reads "The self-attention of Self-attention with
trainable weights lets…". The rule is the Spanish edition's (``locale/README.md``,
«References to chapters»), written for English in ``STYLE.md``: a title stands bare
only as a label (alone in a list entry or table cell, or before a colon) or in quotes
(“…”); anywhere else the reference reads ``{ref}`chapter 3 <ch-03>```.
"""

import pytest
from bs4 import BeautifulSoup
from site_pages import WRITTEN_PAGES, misread_titles, page_soup, page_titles

LANG = "en"


def test_misread_titles_finds_english_titles_in_sentences():
    # The check must be able to fail: the cases the newcomer's trial found, and what passes.
    titles = {"chapters/03_trainable_weights": "Self-attention with trainable weights",
              "auto_examples/plot_02_simplified_attention": "Simplified self-attention"}
    link = '<a class="reference internal" href="{}#ch-03">{}</a>'
    ch3, ex2 = "03_trainable_weights.html", "../auto_examples/plot_02_simplified_attention.html"
    title, gallery = "Self-attention with trainable weights", "Simplified self-attention"
    doc = BeautifulSoup(
        "<article>"
        f"<p>The self-attention of {link.format(ch3, title)} lets every token look…</p>"
        f"<p>{link.format(ch3, title)} builds the queries…</p>"
        f"<p>Companion of {link.format(ex2, gallery)}.</p>"
        # what reads well
        f"<p>The self-attention of {link.format(ch3, 'chapter 3')} lets every token look…</p>"
        f"<p>The gallery example “{link.format(ex2, gallery)}” draws…</p>"
        f"<ul><li><p>{link.format(ch3, title)}: the queries, keys and values.</p></li></ul>"
        f"<table><tr><td><p>{link.format(ch3, title)}</p></td></tr></table>"
        "</article>",
        "html.parser",
    )
    found = misread_titles(doc, "chapters/05_causal_attention", titles, LANG)
    kinds = [what.split(" before")[0] if " before the title" in what else "bare" for _, what in found]
    assert kinds == ["«of»", "bare", "«of»"], found


@pytest.fixture(scope="module")
def titles(site_dir):
    return page_titles(site_dir, LANG)


def test_every_english_chapter_title_is_known(titles):
    # Guards page_titles: the check below compares links with these titles.
    chapters = [p for p in titles if p.startswith("chapters/")]
    assert len(chapters) >= 21 and titles["chapters/03_trainable_weights"] == "Self-attention with trainable weights"


@pytest.mark.parametrize("page", WRITTEN_PAGES)
def test_references_read_as_english(site_dir, titles, page):
    found = misread_titles(page_soup(site_dir, LANG, page), page, titles, LANG)
    assert not found, (
        f"en/{page}: a reference prints a title where the sentence needs “chapter N” "
        "(write {ref}`chapter N <ch-NN>`) or the title in “…”:\n" + "\n".join(what for _, what in found)
    )
