"""Two languages from one source: what the catalogs alone cannot translate.

A local Sphinx extension (``extensions`` in ``conf.py``).  The pages are English;
``-D language=es`` builds the Spanish book from ``locale/es``.  Sphinx translates
the text of the pages, and each hook below covers one thing it does not reach.
"""

import html
import re

from docutils import nodes
from sphinx.transforms import SphinxTransform

from book_languages import SOURCE
from book_text import plain_text


def per_language_config(app, config):
    """Set the configuration values that differ between the languages.

    Why: configuration values (the title, the author, myst-nb's "Show code cell"
    labels, the search field's placeholder) are not messages of any page, so the
    catalogs never see them, and ``-D language=es`` is applied after ``conf.py``
    ran.  ``book_per_language`` in ``conf.py`` holds the values; a dict value is
    merged into the dict the configuration already has.  The project's name is
    the title, and the copyright line names the translated author.
    """
    values = config.book_per_language[config.language or SOURCE]
    source_author = config.author
    for name, value in values.items():
        if isinstance(value, dict):
            value = {**getattr(config, name), **value}
        setattr(config, name, value)
    config.project = config.html_title
    config.copyright = config.copyright.replace(source_author, config.author)


class DisplayMathIsNotTranslated(SphinxTransform):
    """Keep display formulas out of the catalogs: LaTeX reads the same in both languages.

    Why: gettext would extract every ``math_block`` as a message, and a
    translator could only copy it (or break it).  Runs before Sphinx's Locale
    transform (priority 20), so the translated build keeps the English formula.
    """

    default_priority = 10

    def apply(self, **kwargs):
        for node in self.document.findall(nodes.math_block):
            node["translatable"] = False


THUMB_IMAGE = re.compile(r"sphx_glr_(?P<name>.+)_thumb\.\w+$")
THUMB_TOOLTIP = re.compile(r'(<div class="sphx-glr-thumbcontainer" tooltip=")[^"]*(")')
THUMB_TITLE = re.compile(r'(<div class="sphx-glr-thumbnail-title">).*?(</div>)', re.S)


def _replace_inner(pattern, raw, text):
    """``raw`` HTML with what lies between ``pattern``'s two groups replaced by ``text``."""
    return pattern.sub(lambda m: m[1] + html.escape(text, quote=True) + m[2], raw)


def _gallery_summary(env, docname):
    """The first paragraph of a gallery page, as the reader's language has it.

    As plain text: a tooltip cannot typeset ``:math:`6 \\times 6``` nor follow
    ``:ref:`ch-02```, so formulas are read as text (``6 × 6``) and references
    give their target's title.
    """
    doctree = env.get_doctree(docname)
    section = next(iter(doctree.findall(nodes.section)), None)
    for child in section.children if section is not None else ():
        if isinstance(child, nodes.paragraph):
            return plain_text(child, env)
    return ""


def translate_gallery_cards(app, doctree, docname):
    """Put the translated title and summary on the gallery's cards.

    Why: sphinx-gallery writes each card of ``auto_examples/index`` as raw HTML
    (the summary as a tooltip, the title in a ``div``), which the catalogs
    cannot reach; the Spanish book would show them in English.  Both are taken
    here from the example's own, translated, page; in every language, since
    sphinx-gallery's own tooltip shows raw TeX and reference labels.
    """
    if docname != "auto_examples/index":
        return
    card = None  # the raw node that opens the card being read
    name = None  # the example page the card links to
    for node in doctree.findall(lambda n: isinstance(n, (nodes.raw, nodes.image))):
        if isinstance(node, nodes.raw) and "sphx-glr-thumbcontainer" in node.astext():
            card, name = node, None
        elif isinstance(node, nodes.image) and card is not None:
            match = THUMB_IMAGE.search(node["uri"])
            name = match and f"auto_examples/{match['name']}"
            if name in app.env.titles:
                summary = _gallery_summary(app.env, name)
                card.children = [nodes.Text(_replace_inner(THUMB_TOOLTIP, card.astext(), summary))]
        elif (
            isinstance(node, nodes.raw)
            and "sphx-glr-thumbnail-title" in node.astext()
            and name in app.env.titles
        ):
            title = app.env.titles[name].astext()
            node.children = [nodes.Text(_replace_inner(THUMB_TITLE, node.astext(), title))]
            card = name = None


def setup(app):
    app.add_config_value("book_per_language", {}, "env", dict)
    app.add_transform(DisplayMathIsNotTranslated)
    # Before the other extensions' config-inited hooks (priority 500), so they see
    # this language's values.
    app.connect("config-inited", per_language_config, priority=100)
    app.connect("doctree-resolved", translate_gallery_cards)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
