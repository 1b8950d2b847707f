"""Alt text for the figures: written in English where each figure is drawn, translated by the catalogs.

A chapter's figure: the cell's ``mystnb: {image: {alt: ...}}``; a gallery figure: a comment
``# sphinx_gallery_alt = "..."`` per figure in its block, which :func:`gallery_scraper` gives it as a
plain ``image`` (Sphinx does not translate sphinx-gallery's ``image-sg``).  A figure without one warns.
"""

import ast
import re

from docutils import nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)
ALT_COMMENT = re.compile(r"^[ \t]*#\s*sphinx_gallery_alt\s*=\s*(.+?)[ \t]*$", re.MULTILINE)
TEX = re.compile(r"[$\\]|mathcal|\bapprox\b")


def gallery_scraper(block, block_vars, gallery_conf, **kwargs):
    """sphinx-gallery's matplotlib scraper, each figure given the alt text its block declares."""
    from sphinx_gallery.scrapers import matplotlib_scraper

    rst = matplotlib_scraper(block, block_vars, gallery_conf, **kwargs)
    alts = [ast.literal_eval(value) for value in ALT_COMMENT.findall(block.content)]
    figures = rst.count(".. image-sg::")
    if figures != len(alts):
        raise ValueError(
            f"{block_vars.get('src_file', 'a gallery script')}, block at line {block.lineno}: "
            f"{figures} figure(s) but {len(alts)} '# sphinx_gallery_alt = \"...\"' comment(s): one per figure, in order"
        )
    alts = iter(alts)
    rst = re.sub(r"(?m)^([ \t]*):alt:.*$", lambda m: f"{m[1]}:alt: {next(alts)}", rst)
    rst = re.sub(r"(?m)^[ \t]*:srcset:.*\n", "", rst)  # a plain image: no srcset
    return rst.replace(".. image-sg::", ".. image::")


def check_alts(app, doctree, docname):
    """Warn on a figure without alt text (the gallery's thumbnails get theirs from book_i18n)."""
    for node in doctree.findall(nodes.image):
        alt = node.get("alt", "").strip()
        if not alt or TEX.search(alt):
            logger.warning(
                "figure %s: %s (book_alt: write what the figure shows where it is drawn, no TeX)",
                node.get("uri"), f"alt text {alt!r}" if alt else "no alt text",
                location=node,
            )


def setup(app):
    app.connect("doctree-resolved", check_alts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
