"""The gallery's downloads in the reader's language, as plain text a reader can read.

Why: sphinx-gallery offers each example as a ``.py`` script, a ``.ipynb``
notebook and a ``.zip`` of both, made from the English source with its reST
roles left as they are (``:ref:`ch-13```, ``:class:`attn.KVCache```), which a
notebook shows as raw markup.  After the build this extension rewrites those
files under ``<outdir>/_downloads/``: in a translation each text block (the
docstring, and the comment block that opens each ``# %%`` cell) is replaced,
paragraph by paragraph, by its translation in the example's catalog
(``locale/<lang>/LC_MESSAGES/auto_examples/<example>.po``); in every language
roles become the words the page shows (``book_text.resolve_roles``, as in the
chapters' notebooks).  Code, its comments and outputs are unchanged; the notebook
is made from the new script the way sphinx-gallery makes its own.
"""

import ast
import io
import json
import re
import tempfile
import textwrap
import zipfile
from pathlib import Path

from book_languages import SOURCE, catalog
from book_text import ref_titles, resolve_roles

WIDTH = 88
UNDERLINE = re.compile(r"^([=\-~^\"'`#*+<>])\1+$")
CELL = re.compile(r"^# ?%%")


def lookup(catalog, key, missing):
    """The translation of the message ``key``; ``key`` itself, listed in ``missing``, if it has none.

    A message is the text of one paragraph, title, list item or table cell, on one
    line, as Sphinx extracts it (``chapter_notebooks.py`` translates the chapters
    with it too).
    """
    new = catalog.get(key)
    if new is None:
        if key:
            missing.append(key)
        return key
    return new


def _fill(text, width):
    """``text`` wrapped, never inside inline markup (`...`), which must stay on one line for the notebook."""
    keep = re.sub(r"``.*?``|`[^`]*`", lambda m: m[0].replace(" ", "\x00"), text)
    filled = textwrap.fill(keep, width=width, break_long_words=False, break_on_hyphens=False)
    return filled.replace("\x00", " ")


def translate_text(text, catalog, width, missing, ref_title):
    """One text block (reST), translated paragraph by paragraph (``catalog`` ``None``: as it is), roles resolved.

    A paragraph's message is its text on one line, as Sphinx extracts it; a
    section title keeps its underline, resized to the translated title.  What
    has no message (a directive, a formula) stays as it is.
    """
    chunks = []
    for para in re.split(r"\n[ \t]*\n", text.strip("\n")):
        lines = para.split("\n")
        parts = []
        if len(lines) >= 2 and UNDERLINE.match(lines[1].strip()) and lines[0].strip():
            new = lines[0].strip() if catalog is None else lookup(catalog, lines[0].strip(), missing)
            new = resolve_roles(new, ref_title, "``")
            parts.append(new + "\n" + lines[1].strip()[0] * len(new))
            lines = lines[2:]
        if lines:
            source = "\n".join(lines)
            key = source.replace("\n", " ").strip()
            new = key if catalog is None else lookup(catalog, key, missing)
            parts.append(resolve_roles(source if new is key else _fill(new, width), ref_title, "``"))
        chunks.append("\n".join(parts))
    return "\n\n".join(chunks)


def translate_script(source, catalog, missing=None, ref_title=lambda target, role: target):
    """The gallery script ``source`` with its text blocks translated (``catalog``) and roles resolved."""
    missing = [] if missing is None else missing
    lines = source.split("\n")
    first = (ast.parse(source).body or [None])[0]
    out = []
    i = 0
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        raw = lines[first.lineno - 1].lstrip()[:1] in "rR"
        text = translate_text(first.value.value, catalog, WIDTH, missing, ref_title)
        out.append('"""\n' + (text if raw else text.replace("\\", "\\\\")) + '\n"""')
        i = first.end_lineno
    while i < len(lines):
        out.append(lines[i])
        i += 1
        if CELL.match(lines[i - 1]):
            block = []
            while i < len(lines) and lines[i].startswith("#") and not CELL.match(lines[i]):
                block.append(lines[i][2:] if lines[i].startswith("# ") else lines[i][1:])
                i += 1
            if block:
                text = translate_text("\n".join(block), catalog, WIDTH - 2, missing, ref_title)
                out.extend(("# " + t).rstrip() for t in text.split("\n"))
    return "\n".join(out)


def write_download(path, text):
    """Write the download ``path``, and its twin ``<name>.js`` for ``_static/book-downloads.js``.

    Why: opened from disk (``file://``), browsers ignore a link's ``download``
    attribute and show a ``.py`` or an ``.ipynb`` as text.  A page may still load
    a script beside it: the twin hands the file's text to the page, which saves it.
    """
    Path(path).write_text(text, encoding="utf-8")
    Path(f"{path}.js").write_text(f"bookDownload({json.dumps(text)});\n", encoding="utf-8")


def translated_notebook(script_text, gallery_conf, target_dir):
    """The notebook sphinx-gallery would make of ``script_text`` (JSON text)."""
    from sphinx_gallery.notebook import jupyter_notebook, save_notebook
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp, "example.py")
        script.write_text(script_text, encoding="utf-8")
        _, blocks = split_code_and_text_blocks(script)
        save_notebook(jupyter_notebook(blocks, gallery_conf, target_dir), Path(tmp, "example.ipynb"))
        return Path(tmp, "example.ipynb").read_text(encoding="utf-8")


def _rewrite_downloads(app, exception):
    if exception is not None or app.builder.name != "html":
        return
    lang, conf = app.config.language, app.config.sphinx_gallery_conf
    for gallery in [conf["gallery_dirs"]] if isinstance(conf["gallery_dirs"], str) else conf["gallery_dirs"]:
        target_dir = Path(app.srcdir, gallery)
        for script in sorted(target_dir.glob("*.py")):
            messages = None if lang == SOURCE else catalog(lang, f"{gallery}/{script.stem}")
            text = translate_script(script.read_text(encoding="utf-8"), messages, [], ref_titles(app.env))
            files = {f"{script.stem}.py": text, f"{script.stem}.ipynb": translated_notebook(text, conf, target_dir)}
            downloads = Path(app.outdir, "_downloads")
            for name, content in files.items():
                for path in downloads.glob(f"*/{name}"):
                    write_download(path, content)
            for path in downloads.glob(f"*/{script.stem}.zip"):
                buffer = io.BytesIO()
                with zipfile.ZipFile(path) as old, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as new:
                    for info in old.infolist():
                        data = files.get(Path(info.filename).name)
                        new.writestr(info, data.encode("utf-8") if data is not None else old.read(info))
                path.write_bytes(buffer.getvalue())


def setup(app):
    app.connect("build-finished", _rewrite_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

