"""The words around the text, in the reader's language.

Sphinx and the themes leave a few strings of the interface out of their
catalogs, or translate them badly; this extension fills them from
``locale/<lang>/LC_MESSAGES/sphinx.po`` (the ``sphinx`` domain, which Sphinx
already reads for the templates):

- the search page's JavaScript strings (status line, no-results message):
  Sphinx copies its own ``sphinx.js`` catalog to ``_static/translations.js``;
  after the build the entries of our ``sphinx.po`` replace Sphinx's there;
- the field name "Type" of the API reference's attributes, and the words inside
  its parameter and return types
  (``torch.Tensor, optional``, ``list of str``, ``torch.Tensor or None``): the
  types are cross-references built from the English docstring, and a translated
  message would lose them (Sphinx then warns of inconsistent references), so
  the words between the references are translated here, after reading;
- the general index entry of each module, which Sphinx 9 writes as the
  English pair ``module; attn.x`` whatever the language.

The ``aria-label`` of the theme's navigation ("Main", "Page") is translated by
the templates in ``docs/_templates`` (``sbt-sidebar-nav.html``, ``layout.html``);
myst-nb's "Toggle hidden content" label is removed by ``book_a11y.py``.
"""

import json
import re
from pathlib import Path

import polib
from docutils import nodes
from sphinx import addnodes
from sphinx.locale import get_translation
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform

_ = get_translation("sphinx")

PREFIX = "Documentation.addTranslations("


def _our_catalog(app):
    lang = app.config.language or "en"
    for folder in app.config.locale_dirs:
        path = Path(app.confdir, folder, lang, "LC_MESSAGES", "sphinx.po")
        if path.is_file():
            return polib.pofile(str(path))
    return None


def merge_translations_js(text, po):
    """Sphinx's ``translations.js`` with the translated entries of ``po`` put in."""
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
    if exception is not None or app.builder.format != "html" or (app.config.language or "en") == "en":
        return
    js = Path(app.outdir, "_static", "translations.js")
    po = _our_catalog(app)
    if js.is_file() and po is not None:
        js.write_text(merge_translations_js(js.read_text(encoding="utf-8"), po), encoding="utf-8")


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
    """``torch.Tensor, optional`` -> ``torch.Tensor, opcional`` in a translated API page."""

    default_priority = 5  # before the references are resolved (10)
    formats = ("html",)

    def is_available(self):
        return super().is_available() and (self.config.language or "en") != "en"

    def run(self, **kwargs):
        # napoleon's "Attributes" give each attribute a field named "Type", which
        # Sphinx capitalises but never translates.
        for name in list(self.document.findall(nodes.field_name)):
            if name.astext() in FIELD_NAMES and any(isinstance(a, addnodes.desc_content) for a in _ancestors(name)):
                name.children = [nodes.Text(_(name.astext()))]
        for xref in list(self.document.findall(addnodes.pending_xref)):
            if xref.get("refdomain") != "py" or not any(isinstance(a, nodes.field_body) for a in _ancestors(xref)):
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


def _ancestors(node):
    while node.parent is not None:
        node = node.parent
        yield node


class TranslateModuleIndexEntries(SphinxTransform):
    """The index entry ``module; attn.functional`` in the reader's language."""

    default_priority = 500

    def apply(self, **kwargs):
        if (self.config.language or "en") == "en":
            return
        for node in self.document.findall(addnodes.index):
            node["entries"] = [
                (kind, value.replace("module; ", _("module") + "; ", 1) if kind == "pair" else value, *rest)
                for kind, value, *rest in node["entries"]
            ]


def setup(app):
    app.add_post_transform(TranslateTypeWords)
    app.add_transform(TranslateModuleIndexEntries)
    app.connect("build-finished", _translations_js)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
