"""Cell outputs on the pages: printed text exactly as the code printed it, attention explorers drawn.

myst-nb's ``coalesce_streams`` (``nb_merge_streams``) ends every chunk with a line break, and a kernel
may send one ``print`` in several chunks: this joins each stream's chunks as they came first.
``attn.viz.plot.explore(...)`` outputs the explorer's data and a PNG: the HTML builders draw the data (issue
20), the others keep the PNG.  myst-nb reads renderers from installed packages' entry points: this adds one.
"""

import json

import myst_nb
import myst_nb.core.render
from attn.viz.plot import EXPLORER_MIME, _explorer_cells, _explorer_number
from babel.numbers import get_decimal_symbol
from docutils import nodes
from myst_nb.core.utils import coalesce_streams as myst_nb_coalesce_streams
from sphinx.errors import ExtensionError

MYST_NB_CHECKED = ("1.4.",)  # the myst-nb releases the private names patched here were checked on


def require_myst_nb(private_name):
    """Stop the build on a myst-nb release that this file's use of ``private_name`` was not checked on."""
    if not myst_nb.__version__.startswith(MYST_NB_CHECKED):
        raise ExtensionError(
            f"book_outputs relies on {private_name}, a private name checked on myst-nb "
            f"{' '.join(MYST_NB_CHECKED)}x, but myst-nb {myst_nb.__version__} is installed: check that "
            "myst-nb still uses it so, then add the version to book_outputs.MYST_NB_CHECKED"
        )


def coalesce_streams(outputs):
    """``outputs`` with the chunks of each stream (stdout, stderr) joined as they came, in one output."""
    joined, streams = [], {}
    for output in outputs or []:
        if output["output_type"] != "stream":
            joined.append(output)
        elif output["name"] in streams:
            streams[output["name"]]["text"] += output["text"]
        else:
            output = output.copy()
            streams[output["name"]] = output
            joined.append(output)
    return myst_nb_coalesce_streams(joined)


class attention_explorer(nodes.General, nodes.Element):  # noqa: N801 (docutils names nodes in lower case)
    """One explorer; ``node["data"]`` is its JSON text (``attn.viz.plot.explore``)."""


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


def patch_myst_nb(app, config):
    require_myst_nb("myst_nb.core.render.coalesce_streams and load_mime_renders() (one cached list)")
    myst_nb.core.render.coalesce_streams = coalesce_streams
    renderers = myst_nb.core.render.load_mime_renders()
    if ExplorerRenderer not in renderers:
        renderers.append(ExplorerRenderer)


def visit_explorer(self, node):
    """The explorer's HTML, from the template: its first panel as a table, with a page-unique id for its labels."""
    self.book_explorers = getattr(self, "book_explorers", 0) + 1
    data = json.loads(node["data"])
    self.body.append(self.builder.templates.render("attention-explorer.html", {
        "uid": f"attention-explorer-{self.book_explorers}",
        "explorer": data,
        "rows": _explorer_cells(data), "number": _explorer_number,
        "decimal": get_decimal_symbol(self.builder.config.language or "en"),
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
    app.connect("config-inited", patch_myst_nb)
    app.connect("html-page-context", explorer_files)
    # Only the HTML builders get the node (mime_priority_overrides): another builder has no visitor for it.
    app.add_node(attention_explorer, html=(visit_explorer, None))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
