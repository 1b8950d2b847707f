"""Names for the controls a screen reader would announce unnamed or misnamed: the sidebar's expanders,
an icon alone (axe: summary-name), and myst-nb's "Show code cell" toggle, named "Toggle hidden content"
in English (axe: label-content-name-mismatch).
"""

import html

from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput
from sphinx.locale import get_translation

_ = get_translation("sphinx")


def name_toggles(app, pagename, templatename, context, doctree):
    """Each ``<summary>`` of the sidebar's navigation gets a hidden text naming its pages."""
    toctree = context.get("generate_toctree_html")
    if toctree is None or getattr(toctree, "book_named", False):
        return

    def named(*args, **kwargs):
        from bs4 import BeautifulSoup

        toc = toctree(*args, **kwargs)  # HTML, or a BeautifulSoup object
        soup = BeautifulSoup(toc, "html.parser") if isinstance(toc, str) else toc
        for summary in soup.select("li > details > summary"):
            link = summary.parent.find_previous_sibling("a")
            if not summary.get_text(strip=True):
                title = link.get_text(" ", strip=True) if link is not None else ""
                label = _("Show or hide the pages under “{title}”").format(title=title)
                summary.append(soup.new_tag("span", attrs={"class": "visually-hidden"}, string=label))
        return str(soup) if isinstance(toc, str) else soup

    named.book_named = True
    context["generate_toctree_html"] = named


def visit_hide_cell(self, node):
    """myst-nb's toggle without its ``aria-label``: its name is its visible text."""
    self.body.append(f'<details class="admonition hide {" ".join(node["classes"])}">\n<summary>\n')
    for state, prompt in (("collapsed", node["prompt_show"]), ("expanded", node["prompt_hide"])):
        self.body.append(f'<p class="{state} admonition-title">{html.escape(prompt)}</p>\n')
    self.body.append("</summary>\n")


def setup(app):
    app.add_node(HideCodeCellNode, override=True, html=(visit_hide_cell, depart_HideCellInput))
    app.connect("html-page-context", name_toggles, priority=600)  # after the theme defines the function
    return {"parallel_read_safe": True, "parallel_write_safe": True}
