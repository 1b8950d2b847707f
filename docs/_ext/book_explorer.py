"""Attention explorers: the web pages' interactive heatmaps (issue 20).

``attn.plot.explore(...)`` outputs the explorer's data and a PNG: the HTML builders draw the data, the
others keep the PNG.  myst-nb reads renderers from installed packages' entry points: this adds one to its list.
"""

import json

import myst_nb.core.render
from attn.plot import EXPLORER_MIME
from book_outputs import require_myst_nb
from docutils import nodes


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
    require_myst_nb("book_explorer", "myst_nb.core.render.load_mime_renders() (one cached list)")
    renderers = myst_nb.core.render.load_mime_renders()
    if ExplorerRenderer not in renderers:
        renderers.append(ExplorerRenderer)


def visit_explorer(self, node):
    """The explorer's HTML, from the template, with a page-unique id for its labels."""
    self.book_explorers = getattr(self, "book_explorers", 0) + 1
    data = json.loads(node["data"])
    self.body.append(self.builder.templates.render("attention-explorer.html", {
        "uid": f"attention-explorer-{self.book_explorers}",
        "axes": data["axes"],
        "views": [view["name"] for view in data["views"]],
        "masked": any(v is None for view in data["views"] for v in view["values"]),
        "data": node["data"].replace("<", "\\u003c"),  # inside <script>, "</" would end it
    }))
    raise nodes.SkipNode


def explorer_files(app, pagename, templatename, context, doctree):
    """Load the explorer's script and stylesheet on the pages that have one."""
    if "data-attention-explorer" in (context.get("body") or ""):
        app.add_css_file("explorer.css")
        app.add_js_file("explorer.js", defer="defer")


def setup(app):
    app.connect("config-inited", register_renderer)
    app.connect("html-page-context", explorer_files)
    # Only the HTML builders get the node (mime_priority_overrides): another builder has no visitor for it.
    app.add_node(attention_explorer, html=(visit_explorer, None))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
