"""The book's languages and their catalogs, written once for ``conf.py``, its extensions and the tests.

``python docs/_ext/book_languages.py`` prints them (``en es``: the Makefile's LANGUAGES), the source first.
"""

from pathlib import Path

LANGUAGES = {"en": "English", "es": "Español"}  # code -> the language's name in itself (the switcher shows it)
SOURCE, TRANSLATION = LANGUAGES  # exactly two: the switcher links each build to the other
OTHER = {SOURCE: TRANSLATION, TRANSLATION: SOURCE}
LOCALE = Path(__file__).resolve().parents[2] / "locale"


def catalog(lang, name):
    """``{msgid: msgstr}`` of ``lang``'s catalog ``name`` (``api``, ``sphinx``), translated and not fuzzy."""
    import polib

    path = LOCALE / lang / "LC_MESSAGES" / f"{name}.po"
    if lang == SOURCE or not path.is_file():
        return {}
    return {
        e.msgid: e.msgstr for e in polib.pofile(str(path)) if e.msgstr and not e.obsolete and "fuzzy" not in e.flags
    }


if __name__ == "__main__":
    print(" ".join(LANGUAGES))
