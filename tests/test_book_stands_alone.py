"""The book stands on its own: no page points at material its readers have never seen.

The book was first written beside a set of course notes and slides; a reader of the
published book has neither.  Any mention of "the notes", "the slides", "the course" (or
their Spanish) in a source a reader sees (pages, gallery scripts, the package's
docstrings and comments, the Spanish catalogs) fails here; published sources are cited
from ``docs/references.bib`` instead.  ``tests/book/test_stands_alone.py`` reads the
built pages the same way.
"""

import polib
import pytest
from book_pages import DOCS, EXAMPLES, ROOT

from tests.helpers.text import mentions

def source_files():
    yield from sorted(p for p in DOCS.rglob("*.md") if not p.relative_to(DOCS).parts[0].startswith(("_", ".")))
    yield from sorted(DOCS.glob("*.rst"))
    yield from sorted(EXAMPLES.glob("*.py"))
    yield from sorted(EXAMPLES.glob("*.rst"))
    yield from sorted((ROOT / "attn").rglob("*.py"))
    yield ROOT / "README.md"


@pytest.mark.parametrize("text", [
    "as in the notes", "the notes' numbers", "The slides of the course", "the course notes",
    "one of the course notebooks", "the slides' seed", "como en los apuntes",
    "las diapositivas del curso", "el curso",
])
def test_the_check_finds_a_mention(text):
    assert mentions(text), text


@pytest.mark.parametrize("text", [
    "the notebooks of every chapter", "a footnote", "of course", "slides the window",
    "the running example of Raschka (2024)", "en curso",
])
def test_the_check_lets_plain_words_pass(text):
    assert not mentions(text), text


def test_sources_mention_no_unseen_material():
    found = [
        f"{path.relative_to(ROOT)}:{n}: {found}"
        for path in source_files()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if (found := mentions(line))
    ]
    assert not found, "rewrite to stand alone (cite the published source):\n" + "\n".join(found)


def test_catalogs_mention_no_unseen_material():
    found = [
        f"{path.relative_to(ROOT)}: {entry.msgid[:50]!r}: {found}"
        for path in sorted((ROOT / "locale").rglob("*.po"))
        for entry in polib.pofile(str(path))
        if not entry.obsolete and (found := mentions(entry.msgid) + mentions(entry.msgstr))
    ]
    assert not found, "rewrite to stand alone:\n" + "\n".join(found)
