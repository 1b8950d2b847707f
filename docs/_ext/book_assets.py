"""What a page loads before it is shown: only what it uses, nothing that can wait.

Each stylesheet, and each script in ``<head>`` without ``defer``, holds the first paint for a round trip on a
phone's network (Lighthouse: "render-blocking resources").
"""

# Scripts that act on DOMContentLoaded or on a click, after the two they call (not deferred on the module index, whose
# template calls them inline); inline scripts run in their turn as modules (DOCUMENTATION_OPTIONS.pagename = ...).
DEFERRED_SCRIPTS = (
    "documentation_options.js", "doctools.js", "sphinx_highlight.js", "sg-tags.js", "clipboard.min.js", "copybutton.js",
    "sphinx-book-theme.js", "design-tabs.js", "searchtools.js", "language_data.js", "translations.js",
)
LATER = ({"type": "module"}, {"defer": "defer"})  # an inline script's, a file's
# What the search page never uses: copy button, sphinx-design's tabs, gallery tags, downloads.
SEARCH_UNUSED = ("sg-tags.js", "clipboard.min.js", "copybutton.js", "copybutton.css", "design-tabs.js", "book-downloads.js")
# Stylesheets and scripts only some pages use: the file name's prefix, and what a page's body holds when it does.
PAGE_ASSETS = {
    "sg_gallery": ('class="sphx-glr', " sphx-glr-"), "sg-tags": ('class="sphx-glr',),  # sphinx-gallery's
    "sphinx-design": ('"sd-', " sd-"), "design-tabs": ("sd-tab-set",),  # cards, dropdowns, tabs
    "mystnb.": ('class="cell', "cell_output"),  # executed notebooks' cells
    "copybutton": ('class="highlight',), "clipboard": ('class="highlight',),  # code's copy button
}


def _name(asset):
    return str(getattr(asset, "filename", asset) or "").rsplit("/", 1)[-1]


def _used(asset, body):
    marks = next((m for p, m in PAGE_ASSETS.items() if _name(asset).startswith(p)), None)
    return not marks or any(mark in body for mark in marks)


def lighter_head(app, pagename, templatename, context, doctree):
    """Defer the scripts; link sphinx-gallery's, sphinx-design's, myst-nb's and the copy button's only where used."""
    from sphinx.builders.html._assets import _JavaScript

    body = context.get("body") or ""
    context["css_files"] = [css for css in context.get("css_files", []) if _used(css, body)]
    if pagename == "search":
        # The theme's search page loads searchtools.js with plain <script> tags, which run before any deferred
        # script: nothing is deferred.  book-search.js keeps each snippet to the article's text (not the header).
        app.add_js_file("book-search.js", priority=900, defer="defer")
        context["script_files"] = [js for js in context.get("script_files", []) if _name(js) not in SEARCH_UNUSED]
        context["css_files"] = [css for css in context["css_files"] if _name(css) not in SEARCH_UNUSED]
        return
    names = DEFERRED_SCRIPTS[2:] if context.get("collapse_index") else DEFERRED_SCRIPTS
    context["script_files"] = [
        _JavaScript(js.filename, priority=js.priority, **js.attributes, **LATER[bool(js.filename)])
        if isinstance(js, _JavaScript) and not {"defer", "async", "type"} & set(js.attributes)
        and (_name(js) in names if js.filename else names is DEFERRED_SCRIPTS)
        else js
        for js in context.get("script_files", []) if _used(js, body)
    ]


def setup(app):
    app.connect("html-page-context", lighter_head, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
