"""Every chapter as a Jupyter notebook in the reader's language, and one archive of all.

myst-nb offers only the MyST source.  After each HTML build this writes ``downloads/notebooks/<chapter>.ipynb``
(outputs from myst-nb's cache, text translated from the page's catalog as plain Markdown), then the archive.
"""

import html
import os
import re
import zipfile
from pathlib import Path, PurePosixPath

import nbformat
from jupyter_cache import get_cache
from markdown_it.renderer import RendererHTML
from myst_nb.core.read import create_nb_reader
from myst_parser.parsers.mdit import create_md_parser
from sphinx.directives.code import LiteralInclude, LiteralIncludeReader
from sphinx.locale import admonitionlabels, get_translation
from sphinx.util import logging

from book_bibliography import citation_text, load_entries
from book_languages import SOURCE, catalog
from book_listings import strip_docstrings
from book_outputs import coalesce_streams
from book_downloads import DOWNLOADS, archive_stem
from book_text import ref_titles, resolve_roles
from translated_downloads import lookup, write_download

_ = get_translation("sphinx")
logger = logging.getLogger(__name__)

PAGES = re.compile(r"^chapters/")
NOTEBOOKS = "downloads/notebooks"
ZIP_TIME = (2026, 1, 1, 0, 0, 0)  # fixed file times: the same notebooks give the same archive

# myst-nb's code-cell tags as JupyterLab's folding (``remove-*`` cells are left out, as on the page).
HIDDEN = {"source_hidden": ("hide-input", "hide-cell", "remove-input"), "outputs_hidden": ("hide-output", "hide-cell")}


def md_parser(md_config):
    return create_md_parser(md_config, RendererHTML)


class Converter:
    """MyST Markdown to plain Jupyter Markdown, translated element by element (``missing``: messages not found).

    ``ref_title(target, role)``: what a ``{ref}`` shows; ``include(argument, options, line)``: ``(code, language)``.
    """

    def __init__(self, parser, catalog, ref_title, include, translate=True):
        self.parser, self.ref_title, self.include = parser, ref_title, include
        self.catalog = catalog if translate else None
        self.missing = []

    def text(self, source):
        """One element's text (a paragraph, a title, a cell): translated, then plain."""
        return self.inline(lookup(self.catalog, source.replace("\n", " ").strip(), self.missing))

    def inline(self, text):
        """MyST's roles as the words the page shows, citations as links."""
        return resolve_roles(text, self.ref_title, cite=self.cite)

    def cite(self, role, content):
        """``{cite:t}`key``` as the page writes it, each work a link to itself (DOI, arXiv, ...)."""
        return citation_text(load_entries(), role, content, link=lambda shown, url: f"[{shown}]({url})")

    def convert(self, source, line_offset=0):
        """A MyST Markdown text as plain Jupyter Markdown."""
        lines = source.split("\n")
        tokens = self.parser.parse(source, {})
        edits = []  # (first line, end line, new lines): ranges that do not overlap
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            if tok.type in ("paragraph_open", "dt_open", "heading_open") and tokens[i + 1].type == "inline":
                (a, b), content = tok.map, tokens[i + 1].content
                heading = "#" * int(tok.tag[1]) + " " if tok.type == "heading_open" else ""
                edits.append((a, b, [_prefix(lines[a], "" if heading else content) + heading + self.text(content)]))
                i += 1
            elif tok.type == "tr_open":
                a = tok.map[0]
                line, pos = lines[a], 0
                while tokens[i + 1].type != "tr_close":
                    i += 1
                    if tokens[i].type == "inline" and tokens[i].content:
                        old = tokens[i].content
                        start = line.index(old, pos)
                        new = self.text(old)
                        line = line[:start] + new + line[start + len(old):]
                        pos = start + len(new)
                edits.append((a, a + 1, [line]))
            elif tok.type in ("fence", "colon_fence") and tok.info.strip().startswith("{"):
                (a, b), indent = tok.map, re.match(r"\s*", lines[tok.map[0]])[0]
                edits.append((a, b, [(indent + x) if x else x for x in self.directive(tok, line_offset + a)]))
            elif tok.type in ("myst_target", "myst_line_comment", "myst_block_break"):
                edits.append((*tok.map, []))
            i += 1
        for a, b, new in sorted(edits, reverse=True):
            lines[a:b] = new
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")

    def directive(self, tok, line):
        """A MyST directive (``{name} argument`` fence) as Markdown lines."""
        name, _sep, argument = tok.info.strip()[1:].partition("}")
        argument = argument.strip()
        options, body = _split_options(tok.content)
        if name == "literalinclude":
            code, language = self.include(argument, options, line)
            caption = ["*" + self.text(options["caption"]) + "*", ""] if options.get("caption") else []
            return caption + ["```" + language, *code.rstrip("\n").split("\n"), "```"]
        if name == "dropdown":
            title, opened = html.escape(self.text(argument)) if argument else "", " open" * ("open" in options)
            return [f"<details{opened}>", f"<summary>{title}</summary>", "", *self.convert(body).split("\n"), "",
                    "</details>"]
        if name == "admonition" or name in admonitionlabels:
            title = self.text(argument) if name == "admonition" else str(admonitionlabels[name])
            if name != "admonition" and argument:  # a note's first line
                body = argument + "\n" + body
            return [f"> **{title}**", ">"] + [("> " + x) if x else ">" for x in self.convert(body).split("\n")]
        logger.warning(f"chapter_notebooks: no plain Markdown for the directive {{{name}}}; its text goes into the "
                       "notebook as it is (add it to Converter.directive)", type="chapter_notebooks")
        return ["```", tok.content.rstrip("\n"), "```"]


def _prefix(line, content):
    """What comes before an element's text on its first line (``* ``, ``> ``, indent)."""
    first = content.split("\n", 1)[0]
    at = line.find(first) if first else -1
    return line[:at] if at >= 0 else line[:len(line) - len(line.lstrip(" "))]


def _split_options(content):
    """``({option: value}, body)`` of a directive's content (``:key: value`` lines; YAML ``---`` options fail)."""
    lines = content.split("\n")
    if lines[0].strip() == "---":
        raise ValueError(f"chapter_notebooks: write directive options as :key: value lines, not YAML: {content!r}")
    options = {}
    while lines and (m := re.match(r"^:([\w-]+):\s*(.*)$", lines[0])):
        options[m[1]], lines = m[2].strip(), lines[1:]
    return options, "\n".join(lines).strip("\n")


def build_notebook(executed, converter, intro, number=None, setup=None):
    """The notebook: ``intro`` first, ``setup`` (code, tag ``setup``), then ``executed``'s cells converted."""
    v4 = nbformat.v4
    cells = [v4.new_markdown_cell(intro)] + ([v4.new_code_cell(setup, metadata={"tags": ["setup"]})] if setup else [])
    for cell in executed.cells:
        tags = list(cell.metadata.get("tags", []))
        if cell.cell_type == "markdown":
            text = converter.convert(cell.source)
            if number is not None:  # the chapter's number before its title
                text, n = re.subn(r"^# ", f"# {number}. ", text, count=1, flags=re.M)
                number = None if n else number
            if text.strip():
                cells.append(v4.new_markdown_cell(text))
        elif cell.cell_type == "code" and "remove-cell" not in tags:
            outputs = [] if "remove-output" in tags else coalesce_streams(cell.get("outputs", []))
            metadata = {"tags": tags} if tags else {}
            if hidden := {key: True for key, names in HIDDEN.items() if set(names) & set(tags)}:
                metadata["jupyter"] = hidden
            cells.append(v4.new_code_cell(cell.source, execution_count=cell.get("execution_count"), outputs=outputs,
                                          metadata=metadata))
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i:03d}"
    nb = v4.new_notebook(cells=cells, metadata={"language_info": {"name": "python"}, "kernelspec": {
        "display_name": "Python 3", "language": "python", "name": "python3"}})
    nbformat.validate(nb)
    return nb


def notebook_name(docname):
    return PurePosixPath(docname).name + ".ipynb"  # chapters/05_causal_attention -> 05_causal_attention.ipynb


def _include(app, docname):
    def include(argument, options, line):
        _rel, path = app.env.relfn2path(argument, docname)  # the path as Sphinx reads it
        spec = LiteralInclude.option_spec
        opts = {k: spec[k](v or None) if k in spec else v for k, v in options.items()}
        code, _lines = LiteralIncludeReader(path, opts, app.config).read(location=(docname, line))
        if path.endswith(".py"):  # as the page shows it (book_listings)
            code = strip_docstrings(code)
        return code, opts.get("language") or ("python" if path.endswith(".py") else "")

    return include


def chapter_notebook(app, docname):
    """``(notebook, missing)`` of one chapter page, in the build's language."""
    env, config = app.env, app.config
    path = env.doc2path(docname)
    text = Path(path).read_text(encoding="utf-8")
    page = create_nb_reader(str(path), env.myst_config, env.mystnb_config, text).read(text)
    try:
        _pk, page = get_cache(config.nb_execution_cache_path).merge_match_into_notebook(page)
    except KeyError:
        logger.warning(f"chapter_notebooks: {docname}: not in the notebook cache {config.nb_execution_cache_path} "
                       f"(nb_execution_mode {config.nb_execution_mode!r}, 'cache' needed): its notebook has no outputs",
                       type="chapter_notebooks")
    converter = Converter(
        md_parser(env.myst_config), catalog(config.language, docname), ref_titles(env, config.html_baseurl),
        _include(app, docname), translate=config.language != SOURCE,
    )
    intro = [_(
        "This notebook is the chapter “{title}” of the book *{book}*, with the outputs "
        "printed when the book was built."
    ).format(title=env.titles[docname].astext(), book=config.html_title)]
    if config.html_baseurl:
        intro += ["", _("The chapter online: {url}").format(url=f"<{config.html_baseurl.rstrip('/')}/{docname}.html>")]
    intro += ["", setup_text(), "", _("Then open this notebook in Jupyter and run its cells in order.")]
    numbers = env.toc_secnumbers.get(docname, {}).get("")
    number = ".".join(map(str, numbers)) if numbers else None
    lang_cell = f'import attn.exercises\n\nattn.exercises.set_language("{config.language}")  # check(...)'
    return build_notebook(page, converter, "\n".join(intro), number, lang_cell), converter.missing


def setup_text():
    """What a notebook needs and where it comes from (Read the Docs names the repository it builds)."""
    url = os.environ.get("READTHEDOCS_GIT_CLONE_URL")
    where = _("the book's repository, {url}").format(url=f"<{url}>") if url else _("the book's sources, the repository this book was built from")
    return _("It needs the book's package `attn`, with PyTorch and matplotlib, which come with {where}: in its "
             "folder, run `pip install -r requirements.txt` in a virtual environment (its `README.md` shows how), "
             "which installs them and `attn`.").format(where=where)


def write_notebooks(app, exception):
    """Each chapter's notebook, then the archive (after ``translated_downloads``: the gallery's go in)."""
    if exception is not None or app.builder.name != "html":  # not epub, whose format is html too
        return
    out = Path(app.outdir, NOTEBOOKS)
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for docname in sorted(d for d in app.env.found_docs if PAGES.match(d)):
        nb, missing = chapter_notebook(app, docname)
        for key in missing:
            logger.info(f"chapter_notebooks: {docname}: no translation: {key[:80]}")
        text = nbformat.writes(nb) + "\n"
        write_download(out / notebook_name(docname), text)
        files[f"chapters/{notebook_name(docname)}"] = text.encode("utf-8")
    for path in sorted(Path(app.outdir, "_downloads").glob("*/*.ipynb")):
        files[f"gallery/{path.name}"] = path.read_bytes()
    files["README.md"] = "\n\n".join([f"# {app.config.html_title}", _(
        "The chapters' notebooks (`chapters/`) and the gallery's (`gallery/`), with the outputs printed when the "
        "book was built. The gallery's notebooks of chapters 9, 16 and 17 train their model first: a minute or two."
    ), setup_text(), _("Then open a notebook in Jupyter and run its cells in order.")]).encode("utf-8") + b"\n"
    root = archive_stem(app.config.project, app.config.language)
    with zipfile.ZipFile(Path(app.outdir, DOWNLOADS, f"{root}.zip"), "w") as archive:
        for name, data in sorted(files.items()):
            info = zipfile.ZipInfo(f"{root}/{name}", date_time=ZIP_TIME)
            info.external_attr = 0o644 << 16
            archive.writestr(info, data, zipfile.ZIP_DEFLATED)


def button_context(app, pagename, templatename, context, doctree):
    """The chapter's notebook, relative to the page, for ``_templates/chapter-notebook.html``."""
    if app.builder.name == "html" and PAGES.match(pagename) and pagename in app.env.found_docs:
        context["book_notebook_href"] = "../" * pagename.count("/") + f"{NOTEBOOKS}/{notebook_name(pagename)}"


def setup(app):
    app.connect("html-page-context", button_context)
    app.connect("build-finished", write_notebooks, priority=800)  # after translated_downloads (500): its notebooks
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
