"""The book's languages, written once.

``conf.py`` and its extensions, the tests and the ``Makefile`` read them from here::

    python docs/_ext/book_languages.py          # en es   (the Makefile's LANGUAGES)

The first language is the source (the pages are written in it); the second is
translated from ``locale/<lang>/LC_MESSAGES``.  The language switcher links each
build to the other one, so the book has exactly two.
"""

# Code -> the language's name in that language (the switcher shows it).
LANGUAGES = {"en": "English", "es": "Español"}
SOURCE, TRANSLATION = LANGUAGES  # exactly two: the switcher links each build to the other
# The other language of each build: the switcher's target.
OTHER = {SOURCE: TRANSLATION, TRANSLATION: SOURCE}

if __name__ == "__main__":
    print(" ".join(LANGUAGES))
