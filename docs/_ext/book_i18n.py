"""Two languages from one source: what the pages' catalogs cannot translate.

The pages are English; ``-D language=es`` builds the Spanish book from
``locale/es``.  Sphinx translates the text of the pages; each hook below covers
one thing it does not reach, with the words of ``locale/<lang>/LC_MESSAGES/sphinx.po``
(the ``sphinx`` domain, which Sphinx reads for its templates too).  The templates
in ``docs/_templates`` translate the theme's labels ("Main", "Page").
"""

import html
import json
import re
from pathlib import Path

import polib
from book_languages import LOCALE, SOURCE
from book_text import ancestors, plain_text
from docutils import nodes
from sphinx import addnodes
from sphinx.locale import get_translation
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform

_ = get_translation("sphinx")
PREFIX = "Documentation.addTranslations("


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
    """The first paragraph of a gallery page, in the reader's language, as plain text (``book_text``)."""
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


def merge_translations_js(text, po):
    """Sphinx's ``translations.js`` with the translated entries of ``po`` put in.

    Why: the search page's JavaScript takes its strings from ``translations.js``,
    Sphinx's own catalog, whose Spanish status line is empty.
    """
    body = text.strip()
    if not (body.startswith(PREFIX) and body.endswith(");")):
        raise ValueError("translations.js: not the Documentation.addTranslations({...}); Sphinx writes")
    data = json.loads(body[len(PREFIX):-2])
    nplurals = len(data["messages"].get("Search finished, found one page matching the search query.", [0, 0]))
    for entry in po:
        if entry.obsolete or "fuzzy" in entry.flags:
            continue
        if entry.msgid_plural:
            forms = [entry.msgstr_plural[i] for i in sorted(entry.msgstr_plural)]
            if all(forms):
                # As many forms as Sphinx's own plural expression for the language picks from.
                data["messages"][entry.msgid] = (forms + forms[-1:] * nplurals)[:max(nplurals, len(forms))]
        elif entry.msgstr:
            data["messages"][entry.msgid] = entry.msgstr
    return PREFIX + json.dumps(data, ensure_ascii=False, indent=4, sort_keys=True) + ");\n"


def _translations_js(app, exception):
    js = Path(app.outdir, "_static", "translations.js")
    po = LOCALE / app.config.language / "LC_MESSAGES" / "sphinx.po"
    if exception is None and app.builder.format == "html" and js.is_file() and po.is_file():
        js.write_text(merge_translations_js(js.read_text(encoding="utf-8"), polib.pofile(str(po))), encoding="utf-8")


# Words of a docstring type that are not Python names: the references Sphinx makes
# of them lead nowhere, and their text is English.
TYPE_WORDS = ("optional", "sequence")
# "list of str": the name is translated when a word follows it.
TYPE_NOUNS = ("list",)
FIELD_NAMES = ("Type",)
DELIMITER = re.compile(r"^(\s*,?\s*)(or|of)(\s*)$")


def _set_text(node, text):
    for child in list(node.findall(nodes.Text)):
        child.parent.replace(child, nodes.Text(text))


def _delimiter(node):
    """``(before, word, after)`` when ``node`` is the " or "/" of " Sphinx puts between type references."""
    if isinstance(node, (nodes.Text, addnodes.literal_emphasis, nodes.emphasis)):
        return DELIMITER.match(node.astext())
    return None


class TranslateTypeWords(SphinxPostTransform):
    """``torch.Tensor, optional`` -> ``torch.Tensor, opcional`` in a translated API page; "Type" too.

    Why: the types are cross-references built from the English docstring, which a
    translated message would lose (Sphinx warns of inconsistent references): the
    words between the references are translated after reading.
    """

    default_priority = 5  # before the references are resolved (10)
    formats = ("html",)

    def is_available(self):
        return super().is_available() and self.config.language != SOURCE

    def run(self, **kwargs):
        # napoleon's "Attributes" give each attribute a field named "Type", which
        # Sphinx capitalises but never translates.
        for name in list(self.document.findall(nodes.field_name)):
            if name.astext() in FIELD_NAMES and any(isinstance(a, addnodes.desc_content) for a in ancestors(name)):
                name.children = [nodes.Text(_(name.astext()))]
        for xref in list(self.document.findall(addnodes.pending_xref)):
            if xref.get("refdomain") != "py" or not any(isinstance(a, nodes.field_body) for a in ancestors(xref)):
                continue
            after = xref.next_node(siblings=True, descend=False, ascend=False)
            if xref["reftarget"] in TYPE_WORDS:
                _set_text(xref, _(xref["reftarget"]))
            elif xref["reftarget"] in TYPE_NOUNS and (m := _delimiter(after)) and m[2] == "of":
                _set_text(xref, _(xref["reftarget"]))
            if (m := _delimiter(after)) is not None:
                text = m[1] + _(m[2]) + m[3]
                if isinstance(after, nodes.Text):
                    after.parent.replace(after, nodes.Text(text))
                else:
                    _set_text(after, text)



class TranslateModuleIndexEntries(SphinxTransform):
    """The index entry ``module; attn.functional`` in the reader's language (Sphinx 9 writes it in English)."""

    default_priority = 500

    def apply(self, **kwargs):
        if self.config.language == SOURCE:
            return
        for node in self.document.findall(addnodes.index):
            node["entries"] = [
                (kind, value.replace("module; ", _("module") + "; ", 1) if kind == "pair" else value, *rest)
                for kind, value, *rest in node["entries"]
            ]


def setup(app):
    app.add_transform(DisplayMathIsNotTranslated)
    app.add_transform(TranslateModuleIndexEntries)
    app.add_post_transform(TranslateTypeWords)
    app.connect("doctree-resolved", translate_gallery_cards)
    app.connect("build-finished", _translations_js)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
