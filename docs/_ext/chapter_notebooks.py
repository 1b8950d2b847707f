"""Every chapter as a Jupyter notebook in the reader's language, and one archive of all.

Why: readers run a chapter in their own Jupyter; myst-nb keeps only the English
source and an executed copy in MyST, without outputs when they came from the
cache, and sphinx-gallery offers only the gallery's notebooks.  After each HTML
build this writes ``<outdir>/downloads/notebooks/<chapter>.ipynb``: the code cells
with this build's outputs (myst-nb's cache), the text as plain Jupyter Markdown in
the build's language (each paragraph, title, list item and table cell looked up in
the page's catalog, as Sphinx extracted it; roles as the page's words, citations as
links to the cited works (``book_bibliography.citation_text``), admonitions
as quotes, solutions as ``<details>``, ``literalinclude`` as the code the page
shows), and the archive of those and the gallery's notebooks, named as the PDF is
(``book_downloads``).  Each chapter page gets a button
(``_templates/chapter-notebook.html``).
"""

import html
import io
import re
import zipfile
from pathlib import Path, PurePosixPath

import nbformat
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

# The pages that become notebooks (page names), where they go (under the outdir).
PAGES = re.compile(r"^chapters/")
NOTEBOOKS = "downloads/notebooks"
GALLERY_FOLDER = "gallery"
# Fixed file times in the archive: the same notebooks give the same bytes.
ZIP_TIME = (2026, 1, 1, 0, 0, 0)

# Code-cell tags (myst-nb's) and what they mean in a notebook: removed cells are left
# out, as on the page; hidden parts are folded in JupyterLab (``jupyter`` metadata).
HIDDEN = {
    "hide-input": {"source_hidden": True},
    "hide-output": {"outputs_hidden": True},
    "hide-cell": {"source_hidden": True, "outputs_hidden": True},
    "remove-input": {"source_hidden": True},
}

ADMONITIONS = {
    "note", "important", "tip", "hint", "warning", "caution", "attention", "danger", "error", "seealso",
}


def md_parser(md_config):
    """myst-parser's Markdown parser (markdown-it with MyST's syntax) for ``md_config``."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.parsers.mdit import create_md_parser

    return create_md_parser(md_config, RendererHTML)


class Converter:
    """MyST Markdown to plain Jupyter Markdown, translated element by element.

    ``catalog``: ``{msgid: msgstr}`` of the page (``{}`` for the source language);
    ``missing`` collects the messages found in no catalog.  ``ref_title(label)``
    gives the text a ``{ref}`` shows (the target's title); ``include(argument,
    options, line)`` the code a ``literalinclude`` shows.
    """

    def __init__(self, parser, catalog, ref_title, include, translate=True):
        self.parser = parser
        self.catalog = catalog
        self.ref_title = ref_title
        self.include = include
        self.translate = translate
        self.missing = []
        self._bibliography = None

    def text(self, source):
        """One element's text (a paragraph, a title, a cell): translated, then plain."""
        key = source.replace("\n", " ").strip()
        if self.translate and key:
            key = lookup(self.catalog, key, self.missing)
        return self.inline(key)

    def inline(self, text):
        """MyST's roles as the words the page shows (``book_text.resolve_roles``), citations as links."""
        return resolve_roles(text, self.ref_title, cite=self.cite)

    def cite(self, role, content):
        """``{cite:t}`key``` as the page writes it, each work a link to itself (DOI, arXiv, ...)."""
        if self._bibliography is None:
            self._bibliography = load_entries()
        return citation_text(self._bibliography, role, content, link=lambda shown, url: f"[{shown}]({url})")

    def convert(self, source, line_offset=0):
        """A MyST Markdown text as plain Jupyter Markdown."""
        lines = source.split("\n")
        tokens = self.parser.parse(source, {})
        edits = []  # (first line, end line, new lines): ranges that do not overlap
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            if tok.type in ("paragraph_open", "dt_open") and tokens[i + 1].type == "inline":
                a, b = tok.map
                new = self.text(tokens[i + 1].content)
                edits.append((a, b, [_prefix(lines[a], tokens[i + 1].content) + new]))
                i += 2
                continue
            if tok.type == "heading_open":
                a, b = tok.map
                new = self.text(tokens[i + 1].content)
                edits.append((a, b, [_prefix(lines[a], "") + "#" * int(tok.tag[1]) + " " + new]))
                i += 2
                continue
            if tok.type == "tr_open":
                a = tok.map[0]
                line = lines[a]
                pos = 0
                i += 1
                while tokens[i].type != "tr_close":
                    if tokens[i].type == "inline" and tokens[i].content:
                        old = tokens[i].content
                        start = line.index(old, pos)
                        new = self.text(old)
                        line = line[:start] + new + line[start + len(old):]
                        pos = start + len(new)
                    i += 1
                edits.append((a, a + 1, [line]))
                continue
            if tok.type in ("fence", "colon_fence") and tok.info.strip().startswith("{"):
                a, b = tok.map
                indent = re.match(r"\s*", lines[a])[0]
                new = self.directive(tok, line_offset + a)
                edits.append((a, b, [(indent + x) if x else x for x in new]))
            elif tok.type in ("myst_target", "myst_line_comment", "myst_block_break"):
                a, b = tok.map
                edits.append((a, b, []))
            i += 1
        for a, b, new in sorted(edits, reverse=True):
            lines[a:b] = new
        return _tidy("\n".join(lines))

    def directive(self, tok, line):
        """A MyST directive (``{name} argument`` fence) as Markdown lines."""
        name, _sep, argument = tok.info.strip()[1:].partition("}")
        argument = argument.strip()
        options, body = _split_options(tok.content)
        if name == "literalinclude":
            code, language = self.include(argument, options, line)
            out = []
            if options.get("caption"):
                out += ["*" + self.text(options["caption"]) + "*", ""]
            return out + ["```" + language, *code.rstrip("\n").split("\n"), "```"]
        if name in ("code-block", "code", "sourcecode"):
            return ["```" + argument, *body.rstrip("\n").split("\n"), "```"]
        if name == "math":
            return ["$$", *body.strip("\n").split("\n"), "$$"]
        if name == "dropdown":
            title = html.escape(self.text(argument)) if argument else ""
            inner = self.convert(body)
            opened = " open" if "open" in options else ""
            return [f"<details{opened}>", f"<summary>{title}</summary>", "", *inner.split("\n"), "", "</details>"]
        if name == "admonition" or name in ADMONITIONS:
            title = self.text(argument) if name == "admonition" else str(admonitionlabels[name])
            if name in ADMONITIONS and argument:  # a note's first line
                body = argument + "\n" + body
            inner = self.convert(body)
            quoted = [f"> **{title}**", ">"] + [("> " + x) if x else ">" for x in inner.split("\n")]
            return quoted
        if name in ("figure", "image"):
            alt = self.text(options.get("alt", "")) if options.get("alt") else ""
            out = [f"![{alt}]({argument})"]
            caption = self.convert(body).strip()
            return out + (["", f"*{caption}*"] if caption else [])
        logger.warning(
            f"chapter_notebooks: no plain Markdown for the directive {{{name}}}; "
            "its text goes into the notebook as it is (add it to Converter.directive)",
            type="chapter_notebooks",
        )
        return ["```", tok.content.rstrip("\n"), "```"]


def _prefix(line, content):
    """What comes before an element's text on its first line (``* ``, ``> ``, indent)."""
    first = content.split("\n", 1)[0]
    at = line.find(first) if first else -1
    if at < 0:
        at = len(line) - len(line.lstrip(" "))
    prefix = line[:at]
    return re.sub(r"#+\s*$", "", prefix) if not first else prefix


def _split_options(content):
    """``({option: value}, body)`` of a directive's content (``:key: value`` lines or ``---`` YAML)."""
    lines = content.split("\n")
    options = {}
    if lines and lines[0].strip() == "---":
        import yaml

        end = lines.index("---", 1)
        options = {k: ("" if v is None else str(v)) for k, v in (yaml.safe_load("\n".join(lines[1:end])) or {}).items()}
        lines = lines[end + 1:]
    else:
        while lines and (m := re.match(r"^:([\w-]+):\s*(.*)$", lines[0])):
            options[m[1]] = m[2].strip()
            lines = lines[1:]
    return options, "\n".join(lines).strip("\n")


def _tidy(text):
    """At most one blank line in a row, none at the ends."""
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


# -- the notebook ------------------------------------------------------------------


def read_page(path, md_config, nb_config):
    """The page at ``path`` as myst-nb reads it (a notebook, no outputs)."""
    from myst_nb.core.read import create_nb_reader

    text = Path(path).read_text(encoding="utf-8")
    reader = create_nb_reader(str(path), md_config, nb_config, text)
    if reader is None:
        return None
    return reader.read(text)


def with_outputs(notebook, cache_path):
    """``notebook`` with the outputs of its last run, from myst-nb's execution cache.

    ``None`` if the cache has no run of this code (``nb_execution_mode`` not ``cache``).
    """
    from jupyter_cache import get_cache

    try:
        _pk, merged = get_cache(cache_path).merge_match_into_notebook(notebook)
    except KeyError:
        return None
    return merged


def build_notebook(executed, converter, intro, number=None):
    """The downloadable notebook: ``intro`` first, text cells converted, code cells as run.

    ``executed`` is the page as myst-nb read it, with its outputs.
    """
    v4 = nbformat.v4
    cells = [v4.new_markdown_cell(intro)]
    first_title = True
    for cell in executed.cells:
        if cell.cell_type == "markdown":
            text = converter.convert(cell.source)
            if number is not None and first_title:
                text, n = re.subn(r"^# ", f"# {number}. ", text, count=1, flags=re.M)
                first_title = not n
            if text.strip():
                cells.append(v4.new_markdown_cell(text))
        elif cell.cell_type == "code":
            tags = list(cell.metadata.get("tags", []))
            if "remove-cell" in tags:
                continue
            new = v4.new_code_cell(cell.source, execution_count=cell.get("execution_count"))
            new.outputs = [] if "remove-output" in tags else [
                nbformat.from_dict(o) for o in coalesce_streams(cell.get("outputs", []))
            ]
            if tags:
                new.metadata["tags"] = tags
            hidden = {}
            for tag in tags:
                hidden.update(HIDDEN.get(tag, {}))
            if hidden:
                new.metadata["jupyter"] = hidden
            cells.append(new)
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i:03d}"
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return nb


def intro_text(title, book, url):
    """The first cell: where the chapter comes from, and what it needs to run."""
    lines = [_(
        "This notebook is the chapter “{title}” of the book *{book}*, with the outputs "
        "printed when the book was built."
    ).format(title=title, book=book)]
    if url:
        lines += ["", _("The chapter online: {url}").format(url=f"<{url}>")]
    return "\n".join(lines + ["", _(
        "It needs the book's package `attn`, with PyTorch and matplotlib. Clone the "
        "book's repository and, in its folder, run `pip install -r requirements.txt`: "
        "it installs them, `attn` in editable mode (`pip install -e .`). Then open "
        "this notebook in Jupyter and run its cells in order."
    )])


# -- Sphinx -----------------------------------------------------------------------


def notebook_name(docname):
    """The notebook's file name for a page: ``chapters/05_causal_attention`` -> ``05_causal_attention.ipynb``."""
    return PurePosixPath(docname).name + ".ipynb"


def _include(app, docname):
    from sphinx.directives.code import LiteralInclude, LiteralIncludeReader

    def include(argument, options, line):
        # Paths as Sphinx reads them: from the source folder if absolute, else the page's folder.
        _rel, path = app.env.relfn2path(argument, docname)
        spec = LiteralInclude.option_spec
        opts = {k: spec[k](v or None) if k in spec else v for k, v in options.items()}
        code, _lines = LiteralIncludeReader(path, opts, app.config).read(location=(docname, line))
        if path.endswith(".py"):  # as the page shows it (book_listings: the API page has the docstrings)
            code = strip_docstrings(code)
        language = opts.get("language") or ("python" if path.endswith(".py") else "")
        return code, language

    return include


def chapter_notebook(app, docname, translate=True):
    """``(notebook, missing)`` of one chapter page, in the build's language."""
    env = app.env
    page = read_page(env.doc2path(docname), env.myst_config, env.mystnb_config)
    executed = with_outputs(page, app.config.nb_execution_cache_path)
    if executed is None:
        logger.warning(
            f"chapter_notebooks: {docname}: no executed copy in the notebook cache "
            f"{app.config.nb_execution_cache_path} (nb_execution_mode is {app.config.nb_execution_mode!r}, "
            "'cache' is needed): its notebook has no outputs",
            type="chapter_notebooks",
        )
        executed = page
    lang = app.config.language
    converter = Converter(
        md_parser(env.myst_config),
        catalog(lang, docname),
        ref_titles(env, app.config.html_baseurl),
        _include(app, docname),
        translate=translate and lang != SOURCE,
    )
    title = env.titles[docname].astext()
    url = f"{app.config.html_baseurl.rstrip('/')}/{docname}.html" if app.config.html_baseurl else ""
    numbers = env.toc_secnumbers.get(docname, {}).get("")
    number = ".".join(map(str, numbers)) if numbers else None
    nb = build_notebook(executed, converter, intro_text(title, app.config.html_title, url), number)
    return nb, converter.missing


def chapter_pages(app):
    return sorted(d for d in app.env.found_docs if PAGES.match(d))


def write_notebooks(app, exception):
    """Each chapter's notebook, then the archive (after ``translated_downloads``: the gallery's go in)."""
    if exception is not None or app.builder.name != "html":  # not epub, whose format is html too
        return
    out = Path(app.outdir, NOTEBOOKS)
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for docname in chapter_pages(app):
        nb, missing = chapter_notebook(app, docname)
        for key in missing:
            logger.info(f"chapter_notebooks: {docname}: no translation: {key[:80]}")
        name = notebook_name(docname)
        text = nbformat.writes(nb) + "\n"
        write_download(out / name, text)
        files[f"chapters/{name}"] = text.encode("utf-8")
    for path in sorted(Path(app.outdir, "_downloads").glob("*/*.ipynb")):
        files[f"{GALLERY_FOLDER}/{path.name}"] = path.read_bytes()
    root = archive_stem(app.config.project, app.config.language)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(files.items()):
            info = zipfile.ZipInfo(f"{root}/{name}", date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    Path(app.outdir, DOWNLOADS, f"{root}.zip").write_bytes(buffer.getvalue())


def button_context(app, pagename, templatename, context, doctree):
    """Give ``_templates/chapter-notebook.html`` the chapter's notebook, relative to the page.

    Why: the theme's download button offers the ``.md`` source and printing,
    not a notebook; a relative link reads offline and wherever the site is hosted.
    """
    if app.builder.name == "html" and PAGES.match(pagename) and pagename in app.env.found_docs:
        up = "../" * pagename.count("/")
        context["book_notebook_href"] = f"{up}{NOTEBOOKS}/{notebook_name(pagename)}"
        context["book_notebook_label"] = _("Download this chapter as a Jupyter notebook")


def setup(app):
    app.connect("html-page-context", button_context)
    # after translated_downloads (500), whose Spanish gallery notebooks go into the archive
    app.connect("build-finished", write_notebooks, priority=800)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}

