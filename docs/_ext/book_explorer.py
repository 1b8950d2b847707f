"""Attention explorers: the web pages' interactive heatmaps (issue 20).

A local Sphinx extension (``extensions`` in ``conf.py``).  A cell that ends with
``attn.plot.explore(weights, tokens, ...)`` outputs two forms of the same numbers:
the explorer's data under ``attn.plot.EXPLORER_MIME`` and the static heatmap as a
PNG.  myst-nb keeps one form per builder.  Here:

- the HTML builders prefer the explorer's data (``mime_priority_overrides``); the
  PDF, the EPUB and the downloaded notebooks keep the PNG;
- the data becomes an ``attention_explorer`` node, which the HTML writer renders
  with ``docs/_templates/attention-explorer.html``: the controls and the words
  (labels, the sentence read out for a cell) come from the catalogs in the page's
  language (``locale/es/LC_MESSAGES/sphinx.po``), the numbers and tokens inline
  as JSON (a page opened from disk cannot fetch a file);
- ``_static/explorer.js`` and ``explorer.css`` draw it, on those pages only.

myst-nb reads mime renderers from entry points, which only an installed package
can declare; this extension adds its renderer to myst-nb's list of them (a
private cache), on the myst-nb versions checked below.
"""

import json

import myst_nb
import myst_nb.core.render
from attn.plot import EXPLORER_MIME
from docutils import nodes
from sphinx.errors import ExtensionError

# The myst-nb releases whose ``load_mime_renders`` (a cached list) this module was checked against.
MYST_NB_CHECKED = ("1.4.",)
TEMPLATE = "attention-explorer.html"


class attention_explorer(nodes.General, nodes.Element):  # noqa: N801 (docutils names nodes in lower case)
    """One explorer; ``node["data"]`` is its JSON text (``attn.plot.explore``)."""


class ExplorerRenderer:
    """myst-nb's ``MimeRenderPlugin``: the explorer's data becomes an ``attention_explorer``."""

    # (builder, mime type, priority): before every other form (the lowest number wins).
    mime_priority_overrides = [(name, EXPLORER_MIME, 1) for name in ("html", "dirhtml", "singlehtml")]

    @staticmethod
    def handle_mime(renderer, data, inline):
        if data.mime_type != EXPLORER_MIME or inline:
            return None
        # Keys sorted: a page read from the execution cache gets them sorted (nbformat).
        text = json.dumps(data.content, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        return [attention_explorer(data=text)]


def register_renderer(app, config):
    if not myst_nb.__version__.startswith(MYST_NB_CHECKED):
        raise ExtensionError(
            f"book_explorer adds a renderer to myst_nb.core.render.load_mime_renders(), a private "
            f"cache checked on myst-nb {' '.join(MYST_NB_CHECKED)}x, but myst-nb {myst_nb.__version__} "
            "is installed: check that it still returns one list that myst-nb reads, then add the "
            "version to MYST_NB_CHECKED"
        )
    renderers = myst_nb.core.render.load_mime_renders()
    if ExplorerRenderer not in renderers:
        renderers.append(ExplorerRenderer)


def visit_explorer(self, node):
    """The explorer's HTML, from the template, with a page-unique id for its labels."""
    self.book_explorers = getattr(self, "book_explorers", 0) + 1
    data = json.loads(node["data"])
    self.body.append(self.builder.templates.render(TEMPLATE, {
        "uid": f"attention-explorer-{self.book_explorers}",
        "axes": data["axes"],
        "views": [view["name"] for view in data["views"]],
        "masked": any(v is None for view in data["views"] for v in view["values"]),
        "data": node["data"].replace("<", "\\u003c"),  # inside <script>, "</" would end it
    }))
    raise nodes.SkipNode


def skip(self, node):
    raise nodes.SkipNode


def explorer_files(app, pagename, templatename, context, doctree):
    """Load the explorer's script and stylesheet on the pages that have one."""
    if "data-attention-explorer" in (context.get("body") or ""):
        app.add_css_file("explorer.css")
        app.add_js_file("explorer.js", defer="defer")


def setup(app):
    app.connect("config-inited", register_renderer)
    app.connect("html-page-context", explorer_files)
    # Only the HTML builders keep the explorer (myst-nb's SelectMimeType); others skip it.
    app.add_node(attention_explorer, html=(visit_explorer, None), latex=(skip, None),
                 text=(skip, None), man=(skip, None), texinfo=(skip, None))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
