"""Alt text for the figures, in the page's language.

Why: myst-nb gives a cell's figure no alt text (the HTML writer then uses the
file's path) and sphinx-gallery uses the figure's axis titles (raw TeX such as
``$h_{1}$``) or nothing for its thumbnails.  A figure's caption describes it
best; without one, the paragraph that introduces the code drawing it does.
That text was translated by the catalogs already, so the alt text is in the
page's language.  Several figures after one paragraph are numbered.
"""

import re
from pathlib import Path

from book_text import ancestors, plain_text
from docutils import nodes
from sphinx.locale import get_translation

_ = get_translation("sphinx")
ALT_CHARS = 250
THUMB_IMAGE = re.compile(r"sphx_glr_(?P<name>.+)_thumb\.\w+$")


def _shorten(text, limit=ALT_CHARS):
    """``text`` cut at a sentence or a word near ``limit`` characters, ending like a sentence."""
    text = re.sub(r"\s*[:;,]$", ".", text.strip())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind(": "))
    return cut[: end + 1] if end > limit // 3 else cut.rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _inside_code(node):
    while node is not None:
        if isinstance(node, nodes.container) and node.get("nb_element") == "cell_code_output":
            return True
        node = node.parent
    return False


def _text_before(node):
    """The last paragraph before ``node`` in its section (the text that introduces it), or its title."""
    while node.parent is not None and not isinstance(node.parent, (nodes.section, nodes.document)):
        node = node.parent
    parent = node.parent
    if parent is None:
        return ""
    for sibling in reversed(parent.children[: parent.index(node)]):
        paras = [sibling] if isinstance(sibling, nodes.paragraph) else list(sibling.findall(nodes.paragraph))
        paras = [p for p in paras if not _inside_code(p)]
        if paras:
            return plain_text(paras[-1])
    title = next(iter(parent.findall(nodes.title)), None) if isinstance(parent, nodes.section) else None
    return plain_text(title) if title is not None else ""


def _needs_alt(node):
    """A figure whose alt text is no description: none, a file name, or sphinx-gallery's axis titles."""
    if type(node).__name__ == "imgsgnode":
        return True
    if not isinstance(node, nodes.image) or isinstance(node.parent, nodes.reference):
        return False
    alt, uri = node.get("alt", ""), node.get("uri", "")
    if "sphx_glr_" in uri + node.get("candidates", {}).get("*", ""):
        return False
    return not alt.strip() or alt == uri or "$" in alt or "\\" in alt or Path(uri).name in alt


def figure_alts(doctree):
    """``[(node, text, i, n)]``: each figure needing an alt text, its text, its rank among the ``n`` it shares it with."""
    groups = {}
    for node in doctree.findall(_needs_alt):
        figure = next((p for p in ancestors(node) if isinstance(p, nodes.figure)), None)
        caption = next(iter(figure.findall(nodes.caption)), None) if figure is not None else None
        groups.setdefault(plain_text(caption) if caption is not None else _text_before(node), []).append(node)
    return [(node, text, i, len(group)) for text, group in groups.items() for i, node in enumerate(group, 1)]



def set_figure_alts(app, doctree, docname):
    """Write the alt text of :func:`figure_alts` into the page's figures, and the gallery thumbnails'."""
    for node, text, i, n in figure_alts(doctree):
        alt = _shorten(text) if text else app.env.titles[docname].astext()
        node["alt"] = _("{alt} (figure {i} of {n})").format(alt=alt, i=i, n=n) if n > 1 else alt
    if docname.endswith("auto_examples/index"):
        for node in doctree.findall(nodes.image):
            match = THUMB_IMAGE.search(node.get("uri", ""))
            name = match and f"auto_examples/{match['name']}"
            if name in app.env.titles:
                alts = figure_alts(app.env.get_doctree(name))
                text = alts[0][1] if alts else app.env.titles[name].astext()
                node["alt"] = _("Figure of the example: {alt}").format(alt=_shorten(text, 160))


def setup(app):
    app.connect("doctree-resolved", set_figure_alts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
