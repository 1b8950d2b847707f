"""The book to take away: the PDF (XeLaTeX) and the EPUB of each language.

``make pdf`` and ``make epub`` build them (``README.md``, "PDF and EPUB"); the
settings that need no code are in ``conf.py`` ("PDF and EPUB", ``per_language``
for the names).  Each hook below does one thing those settings cannot say.
"""

import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.locale import get_translation
from sphinx.transforms.post_transforms import SphinxPostTransform

_ = get_translation("sphinx")


def epub_builder(app):
    """The EPUB with Sphinx's epub theme alone, a fresh ``_static``, its table of contents in the book's language.

    Why: ``docs/_templates`` extend the web theme and import its macros, which the
    epub theme lacks, and ``templates_path`` is one setting for every builder; hooks
    written for the web pages (the EPUB's format is "html") add files to ``_static``
    after the EPUB packed it; Sphinx titles nav.xhtml and content.opf in English.
    """
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
        from myst_nb.sphinx_ext import add_global_html_resources

        Path(builder.outdir, "_static").mkdir(parents=True, exist_ok=True)
        add_global_html_resources(app, None)


def no_contents_caption(app):
    """"Contents" above the PDF's table of contents, not the caption of the first part (LaTeX's default)."""
    if app.builder.name == "latex":
        app.builder.get_contentsname = lambda indexfile: ""


class book_part(nodes.Element):  # noqa: N801 (docutils names nodes in lower case)
    """A part of the book: the caption of one of the root's toctrees."""


def mark_parts(app, doctree):
    """A ``book_part`` before each captioned toctree of the root document.

    Why: the LaTeX builder inlines the toctrees' documents as chapters and drops
    their captions: the PDF would have no Part I, Part II, reference part.
    """
    if app.env.docname != app.config.root_doc:
        return
    from sphinx import addnodes

    for toctree in list(doctree.findall(addnodes.toctree)):
        if toctree.get("caption"):
            wrapper = toctree.parent if isinstance(toctree.parent, nodes.compound) else toctree
            part = book_part(caption=toctree["caption"], appendix=not toctree.get("numbered"))
            wrapper.parent.insert(wrapper.parent.index(wrapper), part)


def visit_part_latex(self, node):
    """``\\part*`` listed in the contents (with its own page's number); the unnumbered part opens the appendices."""
    title = self.encode(node["caption"])
    self.body.append(
        ("\n\\appendix\n" if node["appendix"] else "")
        + f"\n\\cleardoublepage\\phantomsection\\addcontentsline{{toc}}{{part}}{{{title}}}"
        f"\\markboth{{{title}}}{{}}\\part*{{{title}}}\n"
    )
    raise nodes.SkipNode


def skip(self, node):
    raise nodes.SkipNode


class OpenSolutions(SphinxPostTransform):
    """Each folded solution (a sphinx-design dropdown) as a titled block; in the EPUB, folded cells open.

    Why: paper cannot unfold anything, and e-readers render ``<details>``
    unevenly (some hide its content for good).  As an admonition a solution gets
    the frame and title of the exercise it answers.  Runs before sphinx-design's
    and myst-nb's HTML transforms (priority 199).
    """

    default_priority = 150
    builders = ("latex", "epub")

    def run(self, **kwargs):
        for node in list(self.document.findall(lambda n: isinstance(n, nodes.Element) and n.get("design_component") == "dropdown")):
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


# -- the EPUB's mathematics, drawn in one LaTeX run ----------------------------------------------

DVISVGM_PAGE = re.compile(r"processing page (\d+)|depth=(-?[\d.]+)pt|output written to (\S+)")


def epub_math_in_one_run(app, builder):
    """Draw every formula of the EPUB with one LaTeX run and one dvisvgm run.

    Why: ``sphinx.ext.imgmath`` runs LaTeX and dvisvgm once per formula, about
    750 per language (minutes per EPUB).  Before the pages are written, this
    puts every formula, wrapped exactly as imgmath wraps it, on a page of its
    own in one document, and stores each page's SVG (with its depth) under the
    name imgmath gives it; imgmath then finds every image already drawn.  A
    formula LaTeX cannot typeset makes the whole run fail: imgmath then draws
    them one by one and reports the culprit.
    """
    if builder.name != "epub" or getattr(builder, "math_renderer_name", None) != "imgmath":
        return
    import hashlib
    import subprocess
    import tempfile

    from sphinx.ext.imgmath import generate_latex_macro, write_svg_depth
    from sphinx.util.math import wrap_displaymath

    config = app.config
    outdir = Path(builder.outdir, builder.imagedir, "math")
    todo = {}  # image path -> the LaTeX document imgmath would compile
    for docname in sorted(app.env.found_docs):
        for node in app.env.get_doctree(docname).findall(lambda n: isinstance(n, (nodes.math, nodes.math_block))):
            if isinstance(node, nodes.math):
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
    documents = list(todo.values())
    preamble = documents[0][: documents[0].index(begin)]
    if any(not doc.startswith(preamble + begin) for doc in documents):
        return  # not the one template imgmath uses for all: let it draw them itself
    bodies = [doc[doc.index(begin) + len(begin) : doc.rindex(end)] for doc in documents]
    with tempfile.TemporaryDirectory(suffix="-book-math") as tmp:
        Path(tmp, "math.tex").write_text(preamble + begin + "".join(bodies) + end, encoding="utf-8")
        latex_run = subprocess.run(
            [config.imgmath_latex, "--interaction=nonstopmode", *config.imgmath_latex_args, "math.tex"],
            cwd=tmp, capture_output=True,
        )
        if latex_run.returncode != 0:
            return
        svg_run = subprocess.run(
            [config.imgmath_dvisvgm, *config.imgmath_dvisvgm_args, "--page=1-", "-o", "page-%p.svg", "math.dvi"],
            cwd=tmp, capture_output=True, text=True,
        )
        if svg_run.returncode != 0:
            return
        pages, page, depth = {}, None, None
        for match in DVISVGM_PAGE.finditer(svg_run.stderr):
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
    # The EPUB's mathematics as images (imgmath, conf.py): many e-readers draw no MathML.
    # Sphinx looks up `<builder>_math_renderer` before `html_math_renderer`.
    app.add_config_value("epub_math_renderer", None, "env", str)
    app.setup_extension("sphinx.ext.imgmath")
    app.connect("builder-inited", no_contents_caption)
    app.connect("builder-inited", epub_builder)
    app.connect("doctree-read", mark_parts)
    app.connect("write-started", epub_math_in_one_run)
    app.connect("write-started", epub_static_before_packing)
    app.add_node(book_part, html=(skip, None), latex=(visit_part_latex, None), text=(skip, None),
                 man=(skip, None), texinfo=(skip, None))
    app.add_post_transform(OpenSolutions)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
