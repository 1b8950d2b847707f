"""What the pages' catalogs cannot translate, in the words of ``locale/<lang>/LC_MESSAGES/sphinx.po``.

Each hook below covers one thing Sphinx's translation does not reach.
"""

import html
import json
import re
from pathlib import Path

import polib
from book_languages import LOCALE, SOURCE
from book_text import plain_text
from docutils import nodes
from sphinx import addnodes
from sphinx.locale import _
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.nodes import traverse_parent

PREFIX = "Documentation.addTranslations("


class BeforeTranslation(SphinxTransform):
    """Display formulas out of the catalogs (a translator could only copy or break them); the index
    entry ``module; attn.functional`` in the reader's language (Sphinx 9 writes it in English)."""

    default_priority = 10  # before Sphinx's Locale transform (20)

    def apply(self, **kwargs):
        for node in self.document.findall(nodes.math_block):
            node["translatable"] = False
        for node in self.document.findall(addnodes.index) if self.config.language != SOURCE else ():
            node["entries"] = [
                (kind, value.replace("module; ", _("module") + "; ", 1) if kind == "pair" else value, *rest)
                for kind, value, *rest in node["entries"]
            ]


THUMB_IMAGE = re.compile(r"sphx_glr_(?P<name>.+)_thumb\.\w+$")
THUMB_TOOLTIP = re.compile(r'(<div class="sphx-glr-thumbcontainer" tooltip=")[^"]*(")')
THUMB_TITLE = re.compile(r'(<div class="sphx-glr-thumbnail-title">).*?(</div>)', re.S)


def _fill(raw, pattern, text):
    """The ``raw`` node's HTML with what lies between ``pattern``'s two groups replaced by ``text``."""
    raw.children = [nodes.Text(pattern.sub(lambda m: m[1] + html.escape(text, quote=True) + m[2], raw.astext()))]


def translate_gallery_cards(app, doctree, docname):
    """Give each gallery card (raw HTML, out of the catalogs' reach) its example page's title, summary
    (sphinx-gallery's tooltip shows raw TeX) and first figure's alt text, in every language."""
    if docname != "auto_examples/index":
        return
    card = name = None  # the raw node that opens the card being read, the example it links to
    for node in doctree.findall(lambda n: isinstance(n, (nodes.raw, nodes.image))):
        if isinstance(node, nodes.raw) and "sphx-glr-thumbcontainer" in node.astext():
            card, name = node, None
        elif isinstance(node, nodes.image) and card is not None:
            match = THUMB_IMAGE.search(node["uri"])
            name = match and f"auto_examples/{match['name']}"
            if name in app.env.titles:
                page = app.env.get_doctree(name)
                summary = next((c for c in next(page.findall(nodes.section)) if isinstance(c, nodes.paragraph)), None)
                _fill(card, THUMB_TOOLTIP, plain_text(summary, app.env) if summary is not None else "")
                figures = (f for f in page.findall(nodes.image) if f"sphx_glr_{match['name']}_" in f.get("uri", ""))
                node["alt"] = next(figures, node).get("alt", "")
        elif isinstance(node, nodes.raw) and "sphx-glr-thumbnail-title" in node.astext() and name in app.env.titles:
            _fill(node, THUMB_TITLE, app.env.titles[name].astext())
            card = name = None


def merge_translations_js(text, po):
    """Sphinx's ``translations.js`` (the search page's strings; its Spanish status line is empty) with ``po``'s."""
    body = text.strip()
    if not (body.startswith(PREFIX) and body.endswith(");")):
        raise ValueError("translations.js: not the Documentation.addTranslations({...}); Sphinx writes")
    data = json.loads(body[len(PREFIX):-2])
    nplurals = len(data["messages"].get("Search finished, found one page matching the search query.", [0, 0]))
    for entry in po.translated_entries():  # (neither fuzzy nor obsolete, every plural form written)
        if entry.msgid_plural:
            forms = [entry.msgstr_plural[i] for i in sorted(entry.msgstr_plural)]
            # As many forms as Sphinx's own plural expression for the language picks from.
            data["messages"][entry.msgid] = (forms + forms[-1:] * nplurals)[:max(nplurals, len(forms))]
        else:
            data["messages"][entry.msgid] = entry.msgstr
    return PREFIX + json.dumps(data, ensure_ascii=False, indent=4, sort_keys=True) + ");\n"


def _translations_js(app, exception):
    js = Path(app.outdir, "_static", "translations.js")
    po = LOCALE / app.config.language / "LC_MESSAGES" / "sphinx.po"
    if exception is None and app.builder.format == "html" and js.is_file() and po.is_file():
        js.write_text(merge_translations_js(js.read_text(encoding="utf-8"), polib.pofile(str(po))), encoding="utf-8")


# Words of a docstring's types that are references to nowhere; a TYPE_NOUN only before "of" ("list of str").
TYPE_WORDS, TYPE_NOUNS, FIELD_NAMES = ("optional", "sequence"), ("list",), ("Type",)
DELIMITER = re.compile(r"^(\s*,?\s*)(or|of)(\s*)$")  # (before, word, after): the " or "/" of " between types
DELIMITER_NODES = (nodes.Text, addnodes.literal_emphasis, nodes.emphasis)


def _set_text(node, text):
    """Every text node under ``node`` (or ``node`` itself) replaced by ``text``."""
    for child in list(node.findall(nodes.Text)):
        child.parent.replace(child, nodes.Text(text))


class TranslateTypeWords(SphinxPostTransform):
    """``torch.Tensor, optional`` -> ``torch.Tensor, opcional`` in a translated API page; "Type" too.
    (The types are references a translated message would lose: the words between them are translated here.)"""

    default_priority = 5  # before the references are resolved (10)
    formats = ("html",)

    def is_available(self):
        return super().is_available() and self.config.language != SOURCE

    def run(self, **kwargs):
        # napoleon's "Attributes" give each attribute a field "Type", which Sphinx never translates.
        for name in list(self.document.findall(nodes.field_name)):
            if name.astext() in FIELD_NAMES and any(traverse_parent(name, addnodes.desc_content)):
                name.children = [nodes.Text(_(name.astext()))]
        for xref in list(self.document.findall(addnodes.pending_xref)):
            if xref.get("refdomain") != "py" or not any(traverse_parent(xref, nodes.field_body)):
                continue
            after = xref.next_node(siblings=True, descend=False, ascend=False)
            m = DELIMITER.match(after.astext()) if isinstance(after, DELIMITER_NODES) else None
            if xref["reftarget"] in TYPE_WORDS or (xref["reftarget"] in TYPE_NOUNS and m and m[2] == "of"):
                _set_text(xref, _(xref["reftarget"]))
            if m is not None:
                _set_text(after, m[1] + _(m[2]) + m[3])  # (a Text node is among its own findall)


def setup(app):
    app.add_transform(BeforeTranslation)
    app.add_post_transform(TranslateTypeWords)
    app.connect("doctree-resolved", translate_gallery_cards)
    app.connect("build-finished", _translations_js)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
