"""The gallery's downloads in the reader's language.

sphinx-gallery offers each example as a ``.py`` script, a ``.ipynb`` notebook
and a ``.zip`` of both, all made from the English source; a Spanish reader
would download English text blocks.  After a translated build, this extension
rewrites those files under ``<outdir>/_downloads/``: each text block (the
docstring, and the comment block that opens each ``# %%`` cell) is replaced,
paragraph by paragraph, by its translation in the example's own catalog
(``locale/<lang>/LC_MESSAGES/auto_examples/<example>.po``, the catalog of the
page the reader is on); code, comments inside code and outputs are unchanged.
The notebook is made from the translated script the way sphinx-gallery makes
the English one.

``python docs/_ext/translated_downloads.py es examples/plot_04_scaling.py``
prints the translated script, and the paragraphs it found no translation for.
"""

import ast
import io
import re
import sys
import tempfile
import textwrap
import zipfile
from pathlib import Path

import polib

WIDTH = 88
UNDERLINE = re.compile(r"^([=\-~^\"'`#*+<>])\1+$")
CELL = re.compile(r"^# ?%%")


def load_catalog(path):
    """``{msgid: msgstr}`` of the translated, checked messages of one catalog."""
    po = polib.pofile(str(path))
    return {e.msgid: e.msgstr for e in po if e.msgstr and not e.obsolete and "fuzzy" not in e.flags}


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
    keep = re.sub(r"`[^`]*`", lambda m: m[0].replace(" ", "\x00"), text)
    filled = textwrap.fill(keep, width=width, break_long_words=False, break_on_hyphens=False)
    return filled.replace("\x00", " ")


def translate_text(text, catalog, width, missing):
    """One text block (reST), translated paragraph by paragraph.

    A paragraph's message is its text on one line, as Sphinx extracts it; a
    section title keeps its underline, resized to the translated title.  What
    has no message (a directive, a formula) stays as it is.
    """
    chunks = []
    for para in re.split(r"\n[ \t]*\n", text.strip("\n")):
        lines = para.split("\n")
        parts = []
        if len(lines) >= 2 and UNDERLINE.match(lines[1].strip()) and lines[0].strip():
            new = lookup(catalog, lines[0].strip(), missing)
            parts.append(new + "\n" + lines[1].strip()[0] * len(new))
            lines = lines[2:]
        if lines:
            source = "\n".join(lines)
            key = source.replace("\n", " ").strip()
            new = lookup(catalog, key, missing)
            parts.append(source if new is key else _fill(new, width))
        chunks.append("\n".join(parts))
    return "\n\n".join(chunks)


def translate_script(source, catalog, missing=None):
    """The gallery script ``source`` with its text blocks translated."""
    missing = [] if missing is None else missing
    lines = source.split("\n")
    module = ast.parse(source)
    first = module.body[0] if module.body else None
    out = []
    start = 0
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        literal = "\n".join(lines[first.lineno - 1:first.end_lineno])
        raw = literal.lstrip()[:1] in "rR"
        text = translate_text(first.value.value, catalog, WIDTH, missing)
        if not raw:
            text = text.replace("\\", "\\\\")
        out.append('"""\n' + text + '\n"""')
        start = first.end_lineno
    i = start
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if CELL.match(line):
            block = []
            while i < len(lines) and lines[i].startswith("#") and not CELL.match(lines[i]):
                block.append(lines[i][2:] if lines[i].startswith("# ") else lines[i][1:])
                i += 1
            if block:
                text = translate_text("\n".join(block), catalog, WIDTH - 2, missing)
                out.extend(("# " + t).rstrip() for t in text.split("\n"))
    return "\n".join(out)


def translated_notebook(script_text, gallery_conf, target_dir):
    """The notebook sphinx-gallery would make of ``script_text`` (JSON text)."""
    from sphinx_gallery.notebook import jupyter_notebook, save_notebook
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp, "example.py")
        script.write_text(script_text, encoding="utf-8")
        _, blocks = split_code_and_text_blocks(script)
        notebook = jupyter_notebook(blocks, gallery_conf, target_dir)
        out = Path(tmp, "example.ipynb")
        save_notebook(notebook, out)
        return out.read_text(encoding="utf-8")


def _rewrite_downloads(app, exception):
    lang = app.config.language or "en"
    if exception is not None or app.builder.format != "html" or lang == "en":
        return
    conf = app.config.sphinx_gallery_conf
    downloads = Path(app.outdir, "_downloads")
    for folder in app.config.locale_dirs:
        base = Path(app.confdir, folder, lang, "LC_MESSAGES")
        for gallery in [conf["gallery_dirs"]] if isinstance(conf["gallery_dirs"], str) else conf["gallery_dirs"]:
            target_dir = Path(app.srcdir, gallery)
            for script in sorted(target_dir.glob("*.py")):
                po = base / gallery / f"{script.stem}.po"
                if not po.is_file():
                    continue
                missing = []
                text = translate_script(script.read_text(encoding="utf-8"), load_catalog(po), missing)
                notebook = translated_notebook(text, conf, target_dir)
                files = {f"{script.stem}.py": text, f"{script.stem}.ipynb": notebook}
                for name, content in files.items():
                    for path in downloads.glob(f"*/{name}"):
                        path.write_text(content, encoding="utf-8")
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


if __name__ == "__main__":
    lang, path = sys.argv[1], Path(sys.argv[2])
    root = Path(__file__).resolve().parents[2]
    missing = []
    catalog = load_catalog(root / "locale" / lang / "LC_MESSAGES" / "auto_examples" / f"{path.stem}.po")
    print(translate_script(path.read_text(encoding="utf-8"), catalog, missing))
    for key in missing:
        print("untranslated:", key[:100], file=sys.stderr)
