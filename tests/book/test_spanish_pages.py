"""The built Spanish pages read as written in Spanish: references, formulas, numbers.

Each check runs on every page the sources write (``WRITTEN_PAGES``), so a
chapter added to the book is checked as soon as it is built.  The rules are
those of the translation guide, ``locale/README.md``; the catalog-side checks
of the same rules are in ``tests/i18n/test_spanish_style.py``.
"""

import re

import pytest
from bs4 import BeautifulSoup
from tests.helpers.text import MATH_NAMES
from site_pages import BLOCKS, WRITTEN_PAGES, misread_titles, page_soup, page_titles, text_of

LANG = "es"

def test_misread_titles_finds_the_old_references():
    # The check itself must be able to fail: the review's cases, and the forms that pass.
    titles = {"chapters/08_positional_encoding": "El orden: codificación posicional",
              "auto_examples/plot_15_rope_alibi": "RoPE y ALiBi"}
    link = '<a class="reference internal" href="{}#ch-08">{}</a>'
    ch8 = "08_positional_encoding.html"
    doc = BeautifulSoup(
        "<article>"
        f"<p>El {link.format(ch8, 'El orden: codificación posicional')} da a la atención…</p>"
        f"<p>con la tabla sinusoidal del {link.format(ch8, 'El orden: codificación posicional')}.</p>"
        f"<p>{link.format(ch8, 'El orden: codificación posicional')} describe cada par…</p>"
        f"<p>El ejemplo de la galería {link.format('../auto_examples/plot_15_rope_alibi.html', 'RoPE y ALiBi')} dibuja…</p>"
        # what reads well
        f"<p>El {link.format(ch8, 'capítulo 8')} da a la atención…</p>"
        f"<p>El ejemplo «{link.format('../auto_examples/plot_15_rope_alibi.html', 'RoPE y ALiBi')}» dibuja…</p>"
        f"<ul><li><p>{link.format(ch8, 'El orden: codificación posicional')}: la tabla sinusoidal.</p></li></ul>"
        f"<table><tr><td><p>{link.format(ch8, 'El orden: codificación posicional')}</p></td></tr></table>"
        "</article>",
        "html.parser",
    )
    found = misread_titles(doc, "chapters/15_positions_today", titles, LANG)
    kinds = [what.split(" before")[0] if " before the title" in what else "bare" for _, what in found]
    assert kinds == ["«El»", "«del»", "bare", "bare"], found


@pytest.fixture(scope="module")
def titles(site_dir):
    return page_titles(site_dir, LANG)


@pytest.mark.parametrize("page", WRITTEN_PAGES)
def test_references_read_as_spanish(site_dir, titles, page):
    found = misread_titles(page_soup(site_dir, LANG, page), page, titles, LANG)
    assert not found, (
        f"es/{page}: a reference prints a title where the sentence needs «el capítulo N» "
        "(write {ref}`capítulo N <ch-NN>` in the catalog) or the title in «…»:\n"
        + "\n".join(what for _, what in found)
    )


def test_every_chapter_title_is_known(site_dir, titles):
    # Guards page_titles: the check above compares links with these titles.
    chapters = [p for p in titles if p.startswith("chapters/")]
    assert len(chapters) >= 15 and titles["chapters/08_positional_encoding"] == "El orden: codificación posicional"


# -- numbers in formulas -------------------------------------------------------------


def math_numbers(doc):
    """The text of every ``<mn>`` of the page's formulas (MathML written by book_math)."""
    return [mn.get_text() for math in doc.find_all("math") for mn in math.find_all("mn")]


@pytest.mark.parametrize("page", WRITTEN_PAGES)
def test_formulas_use_the_decimal_comma(site_dir, page):
    # Inline formulas come from the catalogs (0{,}5); display formulas are shared with the
    # English edition and must not hold a decimal number (locale/README.md, «Numbers»).
    points = [n for n in math_numbers(page_soup(site_dir, LANG, page)) if re.search(r"\d\.\d", n)]
    assert not points, f"es/{page}: numbers with a decimal point in formulas: {points}"


def test_the_formulas_have_decimal_commas(site_dir):
    # Guards the check above: the Spanish formulas do have decimals, written with a comma.
    commas = [n for page in WRITTEN_PAGES for n in math_numbers(page_soup(site_dir, LANG, page)) if "," in n]
    assert len(commas) >= 20 and "0,5" in commas, commas
    english = [n for n in math_numbers(page_soup(site_dir, "en", "chapters/05_causal_attention"))]
    assert "0.5" in english


# -- words in formulas ---------------------------------------------------------------

# MATH_NAMES: the words a Spanish formula may borrow (tests/helpers/text.py).


def spanish_words():
    """The words of the Spanish catalogs' prose (outside code, math, role targets and «quotes»)."""
    from book_languages import TRANSLATION
    from site_pages import ROOT
    from translation_check import prose_words

    return prose_words(ROOT / "locale" / TRANSLATION / "LC_MESSAGES")


def math_words(doc):
    """The words (two letters or more) of every formula of ``doc``: identifiers, text, operators."""
    return [
        word
        for math in doc.find_all("math")
        for token in math.find_all(["mi", "mtext", "mo"])
        for word in re.findall(r"[^\W\d]{2,}", token.get_text())
    ]


def english_in_math(words, spanish):
    return sorted({w for w in words if w not in MATH_NAMES and w.lower() not in spanish})


@pytest.fixture(scope="module")
def spanish():
    return spanish_words()


def test_english_in_math_finds_english(spanish):
    # The check must be able to fail: the words the review found in the formulas.
    doc = BeautifulSoup(
        "<math><munder><mo>max</mo><mrow><mi>j</mi><mtext>seen</mtext></mrow></munder>"
        "<msub><mi>softmax</mi><mtext>row</mtext></msub><mtext>otherwise</mtext>"
        "<mtext>operations per byte,</mtext><msub><mi>d</mi><mtext>head</mtext></msub>"
        "<msub><mi>rope</mi><mtext>por mitades</mtext></msub></math>",
        "html.parser",
    )
    assert english_in_math(math_words(doc), spanish) == ["operations", "otherwise", "per", "row", "seen"]
    assert len(spanish) > 2000 and {"fila", "mitades", "byte"} <= spanish


@pytest.mark.parametrize("page", WRITTEN_PAGES)
def test_no_english_in_formulas(site_dir, spanish, page):
    english = english_in_math(math_words(page_soup(site_dir, LANG, page)), spanish)
    assert not english, (
        f"es/{page}: English words in formulas: {english}. Display formulas are shared with "
        "the English edition: write them with notation only (j \\le t, not 'j seen') and say "
        "the rest in the text; inline formulas are in the catalog: translate their words. "
        "A name of the package's code may go into MATH_NAMES."
    )


# -- prose left in English ----------------------------------------------------------------

# What both editions print alike: code, formulas, outputs, API signatures, quotations
# (chapter 1's example sentence) and the bibliography's entries.
SHARED = ("pre, code, math, .math, div.highlight, div.cell_output, .sphx-glr-script-out, dt.sig, blockquote, "
          ".book-bibliography, .citation, script")


def prose(doc):
    """``{text}`` of the prose blocks (six words or more) of a page's article, shared parts left out."""
    article = BeautifulSoup(str(doc.select_one("article") or doc), "html.parser")
    for node in article.select(SHARED):
        node.decompose()
    texts = (text_of(block) for block in article.find_all(BLOCKS + ["h1", "h2", "h3", "figcaption"]))
    return {t for t in texts if len(re.findall(r"[^\W\d_]{2,}", t)) >= 6}


def test_prose_finds_a_paragraph_left_in_english():
    english = BeautifulSoup("<article><p>Part III puts attention to work, in two chapters.</p>"
                            "<pre>for h in range(num_heads): print(h, weights[h])</pre></article>", "html.parser")
    spanish = BeautifulSoup("<article><p>Part III puts attention to work, in two chapters.</p>"
                            "<pre>for h in range(num_heads): print(h, weights[h])</pre></article>", "html.parser")
    assert prose(english) & prose(spanish) == {"Part III puts attention to work, in two chapters."}


@pytest.mark.parametrize("page", WRITTEN_PAGES)
def test_no_paragraph_left_in_english(site_dir, page):
    # A catalog entry whose msgid no longer matches the source (a merge that kept the old
    # sentence) leaves the English paragraph on the Spanish page; translation-check,
    # which reads only the catalogs, cannot see it.
    left = prose(page_soup(site_dir, "en", page)) & prose(page_soup(site_dir, LANG, page))
    assert not left, f"es/{page}: paragraphs still in English (run make update-po and translate): {sorted(left)}"
