"""The interface strings of the Spanish site that no page's catalog holds.

``locale/es/LC_MESSAGES/sphinx.po`` overrides Sphinx's and the theme's own
Spanish strings and holds the words the build itself writes (``_()`` in
``conf.py`` and ``docs/_ext``); ``docs/_ext/book_i18n.py`` carries the search
page's into ``_static/translations.js``.  These checks need no build.
"""

import ast
import json
import re
import sys
from pathlib import Path

import polib
import sphinx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from book_i18n import PREFIX, merge_translations_js  # noqa: E402

OURS = ROOT / "locale" / "es" / "LC_MESSAGES" / "sphinx.po"
SPHINX_JS = Path(sphinx.__file__).parent / "locale" / "es" / "LC_MESSAGES" / "sphinx.js"
FOUND = "Search finished, found one page matching the search query."
NONE = (
    "Your search did not match any documents. Please make sure that all words are spelled "
    "correctly and that you've selected enough categories."
)


def _messages(text):
    return json.loads(text.strip()[len(PREFIX):-2])


def test_translations_js_gets_our_search_strings():
    merged = _messages(merge_translations_js(SPHINX_JS.read_text(encoding="utf-8"), polib.pofile(str(OURS))))
    sphinx_own = _messages(SPHINX_JS.read_text(encoding="utf-8"))
    # Sphinx's own: an empty status line (the bug this fixes).
    assert not any(sphinx_own["messages"][FOUND])
    found = merged["messages"][FOUND]
    assert len(found) == len(sphinx_own["messages"][FOUND]) and all(found), found
    assert "${resultCount}" in found[-1] and "${resultCount}" not in found[0], found
    none = merged["messages"][NONE]
    assert none.startswith("Tu búsqueda") and not re.search(r"\b(usted|Su|allá|ningún documentos)\b", none), none
    # Everything else Sphinx translated is still there.
    assert set(sphinx_own["messages"]) <= set(merged["messages"])
    assert merged["plural_expr"] == sphinx_own["plural_expr"]


def test_merge_refuses_what_is_not_sphinx_translations_js():
    try:
        merge_translations_js("var x = 1;", polib.pofile(str(OURS)))
    except ValueError as err:
        assert "translations.js" in str(err)
    else:
        raise AssertionError("merge_translations_js accepted a file it cannot read")


def test_our_plural_forms_are_sphinx_ones():
    # The status line picks its form with Sphinx's own plural expression for Spanish.
    ours = polib.pofile(str(OURS)).metadata["Plural-Forms"]
    plural_expr = _messages(SPHINX_JS.read_text(encoding="utf-8"))["plural_expr"]
    assert plural_expr.replace(" ", "") in ours.replace(" ", ""), (ours, plural_expr)


def _translated():
    """The messages translated by sphinx.po, or by Sphinx's or the theme's own Spanish catalogs."""
    import pydata_sphinx_theme

    catalogs = [
        OURS,
        Path(sphinx.__file__).parent / "locale" / "es" / "LC_MESSAGES" / "sphinx.po",
        Path(pydata_sphinx_theme.__file__).parent / "locale" / "es" / "LC_MESSAGES" / "sphinx.po",
    ]
    return {e.msgid for c in catalogs for e in polib.pofile(str(c)) if e.msgstr and "fuzzy" not in e.flags}


def test_every_template_string_has_a_spanish_translation():
    # The strings our templates pass to _() are translated by sphinx.po, or by
    # Sphinx's or the theme's own Spanish catalogs (make update-po never touches
    # sphinx.po, so a new template string must be added to it by hand).
    known = _translated()
    strings = {
        m.group(2)
        for path in (ROOT / "docs" / "_templates").glob("*.html")
        for m in re.finditer(r"""\b_\(\s*(['"])(.+?)\1\s*\)""", path.read_text(encoding="utf-8"))
    }
    assert {"Main", "Page"} <= strings, strings
    missing = sorted(strings - known)
    assert not missing, f"template strings with no Spanish translation (add them to {OURS.name}): {missing}"


def _python_strings(path):
    """The literal strings ``path`` (Python) passes to ``_()``, constants named by it included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = {
        target.id: node.value.value for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets if isinstance(target, ast.Name)
    }
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.add(arg.value)
            elif isinstance(arg, ast.Name) and isinstance(constants.get(arg.id), str):
                found.add(constants[arg.id])
    return found


def test_every_string_the_build_writes_has_a_spanish_translation():
    # The build's own words (conf.py's title, the landing page's downloads, the notebooks'
    # first cell, alt texts) are one table: sphinx.po.  Names such as "optional" are
    # passed as variables and checked by the tests of what they translate.
    strings = set().union(*(_python_strings(p) for p in [ROOT / "conf.py", *(ROOT / "docs" / "_ext").glob("*.py")]))
    assert {"Attention, from scratch", "Table of Contents", "notebooks"} <= strings, sorted(strings)
    missing = sorted(strings - _translated())
    assert not missing, f"strings of the build with no Spanish translation (add them to {OURS.name}): {missing}"


def test_python_strings_finds_strings():
    # The check itself must be able to fail.
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "x.py")
        path.write_text('T = TITLE = "A"\nx = _("B") + _(TITLE) + _(name) + f(_("C").format(y=1))\n', encoding="utf-8")
        assert _python_strings(path) == {"A", "B", "C"}


def test_the_raises_field_is_translated():
    # Sphinx's own Spanish catalog calls the Raises field of the API page "Muestra" ("shows").
    sphinx_po = Path(sphinx.__file__).parent / "locale" / "es" / "LC_MESSAGES" / "sphinx.po"
    theirs = {e.msgid: e.msgstr for e in polib.pofile(str(sphinx_po))}
    ours = {e.msgid: e.msgstr for e in polib.pofile(str(OURS))}
    assert theirs.get("Raises") != "Excepciones"  # the override is still needed
    assert ours["Raises"] == "Excepciones"


# The book speaks to its reader with «tú» (locale/README.md, «Register»); Sphinx's and the
# theme's Spanish catalogs often use «usted».  Forms that only «usted» writes in an
# interface: the pronoun, «por favor», «su búsqueda» and the imperatives an interface uses.
USTED = re.compile(
    r"\b(usted|ustedes|por favor|su búsqueda|su navegador|haga|active|asegúrese|compruebe|"
    r"seleccione|introduzca|ingrese|escriba|pulse|intente|utilice|habilite|verifique|consulte|espere)\b",
    re.I,
)


def template_strings():
    """Every literal string the HTML templates translate: ``_('…')`` and ``{% trans %}…{% endtrans %}``.

    Ours (``docs/_templates``), Sphinx's basic theme, pydata-sphinx-theme and
    sphinx-book-theme: whatever the Spanish site can show around the text.
    """
    import pydata_sphinx_theme
    import sphinx_book_theme

    roots = [
        ROOT / "docs" / "_templates",
        Path(sphinx.__file__).parent / "themes",
        Path(pydata_sphinx_theme.__file__).parent / "theme",
        Path(sphinx_book_theme.__file__).parent / "theme",
    ]
    found = set()
    for root in roots:
        for path in root.rglob("*.html"):
            text = path.read_text(encoding="utf-8")
            found |= {m[2] for m in re.finditer(r"""\b_\(\s*(['"])(.+?)\1\s*[,)]""", text)}
            found |= {m[1] for m in re.finditer(r"{%-?\s*trans\s*-?%}(.*?){%-?\s*endtrans\s*-?%}", text, re.S)}
    return found


def shown_translations():
    """``{msgid: Spanish}`` for every interface string: the templates' and the search page's scripts'.

    The translation a reader sees: ours (``sphinx.po``) where we give one, else
    Sphinx's or the theme's (the order in which Sphinx looks them up).
    """
    import pydata_sphinx_theme

    catalogs = [
        OURS,
        Path(sphinx.__file__).parent / "locale" / "es" / "LC_MESSAGES" / "sphinx.po",
        Path(pydata_sphinx_theme.__file__).parent / "locale" / "es" / "LC_MESSAGES" / "sphinx.po",
    ]
    wanted = template_strings() | set(_messages(SPHINX_JS.read_text(encoding="utf-8"))["messages"])
    shown = {}
    for catalog in catalogs:
        for e in polib.pofile(str(catalog)):
            if e.msgid in wanted and e.msgid not in shown and "fuzzy" not in e.flags:
                text = " ".join(e.msgstr_plural.values()) if e.msgid_plural else e.msgstr
                if text.strip():
                    shown[e.msgid] = text
    return shown


def test_the_interface_says_tu():
    shown = shown_translations()
    assert len(shown) > 40 and "Please activate JavaScript to enable the search functionality." in shown
    usted = {k: v for k, v in shown.items() if USTED.search(v)}
    assert not usted, f"interface strings that say «usted» (give the «tú» form in {OURS.name}): {usted}"


def test_usted_is_recognised():
    # The check must be able to fail: Sphinx's own translations of two of these strings.
    assert USTED.search("Por favor, active JavaScript para habilitar la funcionalidad de búsqueda.")
    assert USTED.search("Su búsqueda no coincide con ningún documentos.")
    assert not USTED.search("Activa JavaScript para poder usar la búsqueda. Comprueba que todas las palabras")
