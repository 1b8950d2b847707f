"""The book to take away: the PDF (XeLaTeX) and the EPUB of each language.

A local Sphinx extension (``extensions`` in ``conf.py``).  ``make pdf`` and
``make epub`` build them (``README.md``, "PDF and EPUB"); the settings that do
not depend on the language are in ``conf.py``'s "PDF and EPUB" block.  Each
hook below does one thing those settings cannot say.

The files are named ``<title>-<lang>``, the title of the language's edition in
lower case, without accents, words joined by hyphens::

    python docs/_ext/book_print.py "Atención, desde cero" es   # atencion-desde-cero-es

``make pdf`` and ``make epub`` copy them into ``_build/html/<lang>/downloads/``,
where the landing page's "Take the book away" section links them.
"""

import os
import re
import shutil
import sys
import unicodedata
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

sys.path.insert(0, str(Path(__file__).resolve().parent))
from book_languages import SOURCE  # noqa: E402
from book_hosting import DESCRIPTION  # noqa: E402 (the pages' meta description)
from sphinx.locale import get_translation  # noqa: E402

# Where make pdf / make epub put the files, relative to a language's root in the site.
DOWNLOADS = "downloads"
# The archive of the chapters' notebooks that make html writes (docs/_ext/chapter_notebooks.py).
NOTEBOOKS = "attention-notebooks-{lang}.zip"
# Read the Docs serves the formats it builds here, on the book's own domain.
RTD_DOWNLOAD = "/_/downloads/{lang}/{version}/{fmt}/"

# Text this extension writes into pages, per language (no catalog reaches it).
TEXT = {
    "en": {
        "pdf": "The whole book as a PDF, to print or to read offline",
        "epub": "The whole book as an EPUB, for e-readers",
        "notebooks": "Every chapter as a Jupyter notebook, all in one archive (.zip)",
        "missing": "not part of this build: {command} makes it",
    },
    "es": {
        "pdf": "El libro entero en PDF, para imprimirlo o leerlo sin conexión",
        "epub": "El libro entero en EPUB, para lectores de libros electrónicos",
        "notebooks": "Cada capítulo como cuaderno de Jupyter, todos en un archivo (.zip)",
        "missing": "no forma parte de esta compilación: lo genera {command}",
    },
}


def file_stem(title, lang):
    """``"Atención, desde cero", "es"`` -> ``"atencion-desde-cero-es"``: the files' name."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_title.lower())
    return "-".join([*words, lang])


def _lang(config):
    return config.language or SOURCE


# -- configuration ------------------------------------------------------------------------


def print_config(app, config):
    """Name and title the PDF and the EPUB of the language being built.

    Why: ``latex_documents``, ``epub_basename`` and the EPUB's description
    depend on the language's title, which ``book_i18n`` sets when the
    configuration is read (``-D language=es`` comes after ``conf.py``).
    Sphinx's defaults would drop the accents of "Atención" and the hyphens.
    """
    lang = _lang(config)
    stem = file_stem(config.project, lang)
    config.latex_documents = [(config.root_doc, f"{stem}.tex", config.project, config.author, "manual")]
    config.epub_basename = stem
    config.epub_description = get_translation("sphinx")(DESCRIPTION)
    config.epub_identifier = stem
    config.epub_uid = stem.replace("-", "_")
    # imgmath is loaded for the EPUB alone: the web pages keep html_math_renderer (MathML).


def epub_templates(app):
    """Render the EPUB with Sphinx's epub theme alone, without the site's templates.

    Why: ``docs/_templates/layout.html`` and its siblings extend the web theme
    (sphinx-book-theme) and import its macros, which the epub theme does not
    have; ``templates_path`` is one setting for every builder.
    """
    if app.builder.name != "epub":
        return
    # The EPUB packs every file of its folder, and hooks written for the web pages (the
    # builder's format is "html") add files to _static after it was packed (the math font,
    # fonts): a fresh _static, which Sphinx fills again on every build.
    shutil.rmtree(Path(app.outdir, "_static"), ignore_errors=True)
    ours = Path(app.confdir, "docs", "_templates").resolve()
    app.config.templates_path = [p for p in app.config.templates_path if Path(p).resolve() != ours]
    app.builder.templates.init(app.builder, app.builder.theme)


def epub_static_before_packing(app, builder):
    """Write myst-nb's stylesheet before the EPUB is packed, not after.

    Why: myst-nb copies ``mystnb.<hash>.css``, which every page links, when the
    build has finished (``build-finished``), after the EPUB builder packed its
    folder: the EPUB would miss it.
    """
    if builder.name == "epub":
        from myst_nb.sphinx_ext import add_global_html_resources

        Path(builder.outdir, "_static").mkdir(parents=True, exist_ok=True)
        add_global_html_resources(app, None)


def no_contents_caption(app):
    """Keep "Contents" above the PDF's table of contents.

    Why: Sphinx's LaTeX builder names the table of contents after the caption
    of the root's first toctree ("Part I: the attention mechanism"); the
    captions are the book's parts (``book_part`` below), not the contents.
    """
    if app.builder.name == "latex":
        app.builder.get_contentsname = lambda indexfile: ""


# -- the parts of the book ------------------------------------------------------------------


class book_part(nodes.Element):  # noqa: N801 (docutils names nodes in lower case)
    """A part of the book: the caption of one of the root's toctrees."""


def mark_parts(app, doctree):
    """Put a ``book_part`` node before each captioned toctree of the root document.

    Why: the LaTeX builder inlines the toctrees' documents as chapters and drops
    their captions, so the PDF would not show Part I, Part II and the reference
    part.  Runs after the catalogs translated the captions.
    """
    if app.env.docname != app.config.root_doc:
        return
    from sphinx import addnodes

    for toctree in list(doctree.findall(addnodes.toctree)):
        caption = toctree.get("caption")
        if not caption:
            continue
        wrapper = toctree.parent if isinstance(toctree.parent, nodes.compound) else toctree
        part = book_part(caption=caption, appendix=not toctree.get("numbered"))
        wrapper.parent.insert(wrapper.parent.index(wrapper), part)


def visit_part_latex(self, node):
    """``\\part*`` with the caption, listed in the contents; an unnumbered toctree
    (the reference pages) opens the appendices."""
    title = self.encode(node["caption"])
    if node["appendix"]:
        self.body.append("\n\\appendix\n")
    # Listed with the number of the part's own page (the one \\cleardoublepage opens).
    self.body.append(
        f"\n\\cleardoublepage\\phantomsection\\addcontentsline{{toc}}{{part}}{{{title}}}"
        f"\\markboth{{{title}}}{{}}\\part*{{{title}}}\n"
    )
    raise nodes.SkipNode


def skip(self, node):
    raise nodes.SkipNode


# -- solutions and the downloads section in print -----------------------------------------------


class OpenSolutions(SphinxPostTransform):
    """Print each folded solution (a sphinx-design dropdown) as a titled block.

    Why: paper cannot unfold anything, and e-readers render ``<details>``
    unevenly (some hide its content for good).  sphinx-design prints a dropdown
    in LaTeX as a loose heading; as an admonition it gets the same frame and
    title as the exercise it answers.  Runs before sphinx-design's own HTML
    transform (priority 199), for the PDF and the EPUB only.
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
            block = nodes.admonition("", title, *children, ids=node["ids"], classes=["solution"])
            node.replace_self(block)


class ShowHiddenCells(SphinxPostTransform):
    """Print the code cells the web pages fold (``hide-cell``) open in the EPUB.

    Why: they hold the code that checks a solution; myst-nb folds them in a
    ``<details>`` (its ``HideInputCells``, priority 199, reads ``hide_mode``)
    that e-readers render unevenly.  Its LaTeX output already prints them.
    """

    default_priority = 150
    builders = ("epub",)

    def run(self, **kwargs):
        for node in self.document.findall(nodes.container):
            if node.get("nb_element") == "cell_code" and node.get("hide_mode"):
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


class downloads_list(nodes.Element):  # noqa: N801
    """Marks the "Take the book away" section (its list is HTML only)."""


class BookDownloads(SphinxDirective):
    """``{book-downloads}``: links to the PDF, the EPUB and the notebooks' archive.

    Why: the files exist only once ``make pdf``, ``make epub`` (or Read the
    Docs) built them, and a link must never lead nowhere.  Locally, a file that
    is not in ``<outdir>/downloads/`` is named without a link, with the command
    that makes it; on Read the Docs the links go where it serves the formats it
    builds (``.readthedocs.yaml``: ``formats``).  ``make html`` writes the
    notebooks' archive itself when ``chapter_notebooks`` is loaded.
    """

    has_content = False
    option_spec = {"class": directives.class_option}

    def run(self):
        entries = download_entries(self.env.app)
        self.env.book_downloads = [(fmt, href) for fmt, href, _ in entries]
        text = TEXT[_lang(self.config)]
        items = nodes.bullet_list()
        for fmt, href, command in entries:
            para = nodes.paragraph()
            if href:
                para += nodes.reference("", text[fmt], refuri=href, internal=False)
            else:
                para += nodes.Text(text[fmt] + " (")
                before, after = text["missing"].split("{command}")
                para += [nodes.Text(before), nodes.literal(command, command), nodes.Text(after + ")")]
            items += nodes.list_item("", para)
        return [downloads_list("", items, classes=["book-downloads"])]


def download_entries(app):
    """``[(format, href or None, make command)]`` for this language's PDF, EPUB and notebooks."""
    lang = _lang(app.config)
    stem = file_stem(app.config.project, lang)
    hosted = os.environ.get("READTHEDOCS") == "True"
    entries = []
    for fmt, name, command in (
        ("pdf", f"{stem}.pdf", f"make pdf-{lang}"),
        ("epub", f"{stem}.epub", f"make epub-{lang}"),
        ("notebooks", NOTEBOOKS.format(lang=lang), "make html"),
    ):
        local = f"{DOWNLOADS}/{name}"
        if hosted and fmt != "notebooks":
            href = RTD_DOWNLOAD.format(
                lang=os.environ.get("READTHEDOCS_LANGUAGE", lang),
                version=os.environ.get("READTHEDOCS_VERSION", "latest"),
                fmt=fmt,
            )
        elif Path(app.outdir, local).is_file():
            href = local
        elif fmt == "notebooks":
            if "chapter_notebooks" not in app.extensions:
                continue  # no build of this checkout writes it
            href = local  # written at the end of this very build
        else:
            href = None
        entries.append((fmt, href, command))
    return entries


def downloads_changed(app, env, added, changed, removed):
    """Read the landing page again when a download appeared or went away since it was read."""
    if app.builder.format != "html" or app.builder.name == "epub":
        return []
    seen = getattr(env, "book_downloads", None)
    if seen is None:
        return []
    now = [(fmt, href) for fmt, href, _ in download_entries(app)]
    return [app.config.root_doc] if now != seen else []


def visit_downloads(self, node):
    pass


def depart_downloads(self, node):
    pass


class NoDownloadsInPrint(SphinxPostTransform):
    """Drop the "Take the book away" section from the PDF and the EPUB.

    Why: it links files next to the web pages; inside the book itself it would
    only offer the book again.
    """

    default_priority = 150
    builders = ("latex", "epub")

    def run(self, **kwargs):
        for node in list(self.document.findall(downloads_list)):
            section = node.parent
            while section is not None and not isinstance(section, nodes.section):
                section = section.parent
            (section or node).parent.remove(section or node)


def setup(app):
    # The EPUB's mathematics as images (imgmath, conf.py): many e-readers draw no MathML.
    # Sphinx looks up `<builder>_math_renderer` before `html_math_renderer`.
    app.add_config_value("epub_math_renderer", None, "env", str)
    app.setup_extension("sphinx.ext.imgmath")
    app.connect("config-inited", print_config)  # after book_i18n's (priority 100)
    app.connect("builder-inited", no_contents_caption)
    app.connect("builder-inited", epub_templates)
    app.connect("doctree-read", mark_parts)
    app.connect("env-get-outdated", downloads_changed)
    app.connect("write-started", epub_math_in_one_run)
    app.connect("write-started", epub_static_before_packing)
    app.add_node(
        book_part,
        html=(skip, None),
        latex=(visit_part_latex, None),
        text=(skip, None),
        man=(skip, None),
        texinfo=(skip, None),
    )
    app.add_node(
        downloads_list,
        html=(visit_downloads, depart_downloads),
        latex=(skip, None),
        text=(visit_downloads, depart_downloads),
        man=(visit_downloads, depart_downloads),
        texinfo=(visit_downloads, depart_downloads),
    )
    app.add_directive("book-downloads", BookDownloads)
    app.add_post_transform(OpenSolutions)
    app.add_post_transform(ShowHiddenCells)
    app.add_post_transform(NoDownloadsInPrint)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    print(file_stem(sys.argv[1], sys.argv[2]))
