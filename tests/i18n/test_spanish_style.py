"""The Spanish catalogs follow the translation guide (``locale/README.md``).

Each rule of the guide that a program can check is checked here on every
message of every catalog, so the pages that later chapters add are held to
it as soon as their catalogs exist.  The same rules are checked on the built
pages by ``tests/book/test_spanish_pages.py``.  No build is needed.
"""

import re
from pathlib import Path

import polib
import pytest
from book_languages import TRANSLATION

ROOT = Path(__file__).resolve().parents[2]
PO_DIR = ROOT / "locale" / TRANSLATION / "LC_MESSAGES"
CATALOGS = sorted(PO_DIR.rglob("*.po"))


def _name(path):
    return path.relative_to(PO_DIR).with_suffix("").as_posix()


def messages():
    """``(catalog, entry)`` for every translated message of the page catalogs."""
    for path in CATALOGS:
        if path.name == "sphinx.po":
            continue
        for e in polib.pofile(str(path)):
            if not e.obsolete and e.msgstr:
                yield _name(path), e


def test_the_catalogs_have_messages():
    # Guards the loop: an empty scan would pass every check below.
    assert sum(1 for _ in messages()) > 1500


# -- chapter references ----------------------------------------------------------------

# {ref}`ch-08` (MyST) or :ref:`ch-08` (reST: the gallery and the API) with no text of
# its own prints the chapter's title; so does a reference to a gallery example.
BARE_REF = re.compile(r"(?:\{ref\}|:ref:)`(?P<label>ch-\d+|sphx_glr_[\w.]+)`")
# {ref}`capítulo 8 <ch-08>`, or the number alone after «los capítulos».
NAMED_REF = re.compile(r"(?:\{ref\}|:ref:)`(?P<text>[^`<]*?)\s*<ch-(?P<n>\d+)>`")
NAMED_TEXT = re.compile(r"(?:[Cc]apítulo )?(?P<n>\d+)")


def reference_slips(text):
    """What is wrong with the chapter references of one Spanish message.

    A bare reference prints a title: it may stand alone (a list entry, a table
    cell), open the message before a colon (``{ref}`ch-02`: la analogía…``), or
    sit in «…».  Anywhere else Spanish needs «el capítulo 8»:
    ``el {ref}`capítulo 8 <ch-08>```.  A reference with its own text names the
    chapter by its number, the same number as its label.
    """
    slips = []
    text = re.sub(r"``.*?``", " ", text)  # a role quoted as code is not a reference
    for m in BARE_REF.finditer(text):
        before, after = text[: m.start()].rstrip(), text[m.end():].lstrip()
        if before.endswith("«") and after.startswith("»"):
            continue
        if not before and (not after or after[0] in ":."):
            continue
        slips.append(f"bare {m[0]} after {before[-25:]!r}")
    for m in NAMED_REF.finditer(text):
        named = NAMED_TEXT.fullmatch(m["text"])
        if not named or int(named["n"]) != int(m["n"]):
            slips.append(f"{m[0]}: the text should be «capítulo {int(m['n'])}»")
    return slips


@pytest.mark.parametrize(
    "text",
    [
        "El {ref}`ch-08` da a la atención una noción del orden.",
        "con la tabla sinusoidal del {ref}`ch-08` sumada a la entrada",
        "Acompaña al :ref:`ch-14`.",
        "(la vía rápida o la explícita, como en {ref}`ch-05`)",
        "{ref}`ch-04` explica la escala; {ref}`ch-05`, la máscara.",
        "El ejemplo de la galería {ref}`sphx_glr_auto_examples_plot_02_simplified_attention.py` dibuja",
        "como en el {ref}`capítulo 9 <ch-08>`",
        "como en el {ref}`chapter 8 <ch-08>`",
    ],
)
def test_reference_slips_are_found(text):
    assert reference_slips(text), text


@pytest.mark.parametrize(
    "text",
    [
        "{ref}`ch-02`",
        "{ref}`ch-01`: la analogía de la búsqueda.",
        "El {ref}`capítulo 8 <ch-08>` da a la atención una noción del orden.",
        "en los capítulos {ref}`4 <ch-04>` y {ref}`7 <ch-07>`",
        "El ejemplo de la galería «{ref}`sphx_glr_auto_examples_plot_02_simplified_attention.py`» dibuja",
        "Acompaña al :ref:`capítulo 14 <ch-14>`.",
        "su documentación está en la {ref}`página de la API <api>`",
        "Conserva el marcado: roles como ``{ref}`ch-05` `` y ``{term}`query` ``.",
    ],
)
def test_good_references_pass(text):
    assert not reference_slips(text), reference_slips(text)


def test_chapter_references_read_as_spanish():
    found = [
        f"{name}: {slip}"
        for name, e in messages()
        for slip in reference_slips(e.msgstr)
    ]
    assert not found, (
        "chapter references that print a title inside a Spanish sentence "
        "(write el {ref}`capítulo N <ch-NN>`, or the title in «…»):\n" + "\n".join(found)
    )
