"""The PDF (XeLaTeX) and the EPUB of each language (``make pdf``, ``make epub``).

The settings are in ``conf.py``; each hook below does one thing they cannot say.
"""

import hashlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from book_math import formulas
from docutils import nodes
from myst_nb.sphinx_ext import add_global_html_resources
from sphinx import addnodes
from sphinx.ext.imgmath import generate_latex_macro, write_svg_depth
from sphinx.locale import _
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.math import wrap_displaymath
from sphinx.util.texescape import escape


def builder_inited(app):
    """The PDF's contents titled "Contents" (LaTeX's default: the first part's caption); the EPUB with its
    table of contents in the book's language (Sphinx's is English), a fresh ``_static`` (the web pages' hooks
    add files after it is packed), and without ``docs/_templates``, which import the web theme's macros.
    """
    if app.builder.name == "latex":
        app.builder.get_contentsname = lambda indexfile: ""
    if app.builder.name != "epub":
        return
    app.builder.guide_titles = {**app.builder.guide_titles, "toc": _("Table of Contents")}
    shutil.rmtree(Path(app.outdir, "_static"), ignore_errors=True)
    ours = Path(app.confdir, "docs", "_templates").resolve()
    app.config.templates_path = [p for p in app.config.templates_path if Path(p).resolve() != ours]
    app.builder.templates.init(app.builder, app.builder.theme)


def epub_static_before_packing(app, builder):
    """myst-nb's stylesheet, which every page links, written before the EPUB is packed (myst-nb: after)."""
    if builder.name == "epub":
        Path(builder.outdir, "_static").mkdir(parents=True, exist_ok=True)
        add_global_html_resources(app, None)


def mark_parts(app, doctree):
    """In the PDF, a ``\\part*`` (listed in the contents) before each captioned toctree of the root document.

    The LaTeX builder drops the captions.  The unnumbered toctree (the reference part) opens the appendices."""
    if app.builder.name != "latex" or app.env.docname != app.config.root_doc:
        return
    for toctree in list(doctree.findall(addnodes.toctree)):
        if toctree.get("caption"):
            title = escape(toctree["caption"], app.config.latex_engine)  # as LaTeXTranslator.encode
            wrapper = toctree.parent if isinstance(toctree.parent, nodes.compound) else toctree
            latex = ("" if toctree.get("numbered") else "\\appendix\n\n") + (
                f"\\cleardoublepage\\phantomsection\\addcontentsline{{toc}}{{part}}{{{title}}}"
                f"\\markboth{{{title}}}{{}}\\part*{{{title}}}"
            )
            wrapper.parent.insert(wrapper.parent.index(wrapper), nodes.raw("", latex, format="latex"))


class OpenSolutions(SphinxPostTransform):
    """Each folded solution (a sphinx-design dropdown) as a titled admonition; in the EPUB, folded cells open.

    Paper cannot unfold, some e-readers never show a ``<details>``.  Before sphinx-design's and myst-nb's (199)."""

    default_priority = 150
    builders = ("latex", "epub")

    def run(self, **kwargs):
        for node in [n for n in self.document.findall(nodes.Element) if n.get("design_component") == "dropdown"]:
            children = list(node.children)
            title = nodes.title()
            if node.get("has_title") and children:
                heading = children.pop(0)
                title.extend(heading.children)
                node["ids"] = node["ids"] + heading.get("ids", [])
            node.replace_self(nodes.admonition("", title, *children, ids=node["ids"], classes=["solution"]))
        for node in self.document.findall(nodes.container):  # (LaTeX prints hide-cell cells already)
            if self.app.builder.name == "epub" and node.get("nb_element") == "cell_code" and node.get("hide_mode"):
                del node["hide_mode"]


DVISVGM_PAGE = re.compile(r"processing page (\d+)|depth=(-?[\d.]+)pt|output written to (\S+)")


def epub_math_in_one_run(app, builder):
    """Draw every formula of the EPUB with one LaTeX run and one dvisvgm run (imgmath: both per formula, minutes).

    Each formula, wrapped as imgmath does, is a page; each page's SVG and depth are stored under imgmath's name
    for it, so imgmath finds it drawn.  On any failure imgmath draws them one by one and reports the culprit.
    """
    if builder.name != "epub" or getattr(builder, "math_renderer_name", None) != "imgmath":
        return
    config = app.config
    outdir = Path(builder.outdir, builder.imagedir, "math")
    todo = {}  # image path -> the LaTeX document imgmath would compile
    for node, _tex, display in formulas(app.env):
        if not display:
            math = "$" + node.astext() + "$"
        elif node.get("no-wrap", node.get("nowrap", False)):
            math = node.astext()
        else:
            math = wrap_displaymath(node.astext(), None, False)
        latex = generate_latex_macro("svg", math, config, builder.confdir)
        path = outdir / f"{hashlib.sha1(latex.encode(), usedforsecurity=False).hexdigest()}.svg"
        if not path.is_file():
            todo[path] = latex
    if not todo:
        return
    begin, end = r"\begin{document}", r"\end{document}"
    parts = [doc.partition(begin) for doc in todo.values()]  # (preamble, begin, body and end)
    if len({part[0] for part in parts}) != 1:
        return  # not the one template imgmath uses for all: let it draw them itself
    bodies = "".join(part[2].rpartition(end)[0] for part in parts)
    with tempfile.TemporaryDirectory(suffix="-book-math") as tmp:
        Path(tmp, "math.tex").write_text(parts[0][0] + begin + bodies + end, encoding="utf-8")
        for command in (
            [config.imgmath_latex, "--interaction=nonstopmode", *config.imgmath_latex_args, "math.tex"],
            [config.imgmath_dvisvgm, *config.imgmath_dvisvgm_args, "--page=1-", "-o", "page-%p.svg", "math.dvi"],
        ):
            run = subprocess.run(command, cwd=tmp, capture_output=True, text=True, errors="replace")
            if run.returncode != 0:
                return
        pages, page, depth = {}, None, None
        for match in DVISVGM_PAGE.finditer(run.stderr):  # dvisvgm's report of each page
            if match[1]:
                page, depth = int(match[1]), None
            elif match[2]:
                depth = round(float(match[2]) * 100 / 72.27)  # as imgmath: pixels at 100 ppi
            elif match[3] and page is not None:
                pages[page] = (Path(tmp, match[3]), depth)
        if len(pages) != len(todo):
            return
        outdir.mkdir(parents=True, exist_ok=True)
        for number, path in enumerate(todo, start=1):
            svg, depth = pages[number]
            shutil.move(svg, path)
            if depth is not None:
                write_svg_depth(path, depth)


def setup(app):
    # The EPUB's formulas as images (many e-readers draw no MathML): Sphinx reads `<builder>_math_renderer` first.
    app.add_config_value("epub_math_renderer", None, "env", str)
    app.setup_extension("sphinx.ext.imgmath")
    app.connect("builder-inited", builder_inited)
    app.connect("doctree-read", mark_parts)
    app.connect("write-started", epub_math_in_one_run)
    app.connect("write-started", epub_static_before_packing)
    app.add_post_transform(OpenSolutions)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
