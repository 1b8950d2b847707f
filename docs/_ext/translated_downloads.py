"""The gallery's downloads in the reader's language, as plain text a reader can read.

sphinx-gallery makes each example's ``.py``, ``.ipynb`` and ``.zip`` from the English source, reST roles raw.
After the build this rewrites them: text blocks translated from the example's catalog, roles as the page shows them.
"""

import ast
import io
import json
import re
import tempfile
import textwrap
import zipfile
from pathlib import Path

from sphinx_gallery.notebook import jupyter_notebook
from sphinx_gallery.py_source_parser import split_code_and_text_blocks

from book_alt import ALT_COMMENT
from book_languages import SOURCE, catalog
from book_text import ref_titles, resolve_roles

WIDTH = 88
UNDERLINE = re.compile(r"^([=\-~^\"'`#*+<>])\1+$")
CELL = re.compile(r"^# ?%%")


def lookup(catalog, key, missing):
    """The translation of ``key`` (on one line, as Sphinx extracts it); ``key`` if ``catalog`` is None or lacks it."""
    if catalog is None or not key:
        return key
    if key not in catalog:
        missing.append(key)
    return catalog.get(key, key)


def translate_text(text, catalog, width, missing, ref_title):
    """One reST text block, translated paragraph by paragraph, roles resolved; titles keep their underline."""
    chunks = []
    for para in re.split(r"\n[ \t]*\n", text.strip("\n")):
        lines = para.split("\n")
        parts = []
        if len(lines) >= 2 and UNDERLINE.match(lines[1].strip()) and lines[0].strip():
            new = resolve_roles(lookup(catalog, lines[0].strip(), missing), ref_title, "``")
            parts.append(new + "\n" + lines[1].strip()[0] * len(new))
            lines = lines[2:]
        if lines:
            source = "\n".join(lines)
            key = source.replace("\n", " ").strip()
            if (new := lookup(catalog, key, missing)) is not key:  # wrapped, inline markup (`...`) on one line
                keep = re.sub(r"``.*?``|`[^`]*`", lambda m: m[0].replace(" ", "\x00"), new)
                source = textwrap.fill(keep, width=width, break_long_words=False, break_on_hyphens=False)
            parts.append(resolve_roles(source.replace("\x00", " "), ref_title, "``"))
        chunks.append("\n".join(parts))
    return "\n\n".join(chunks)


def translate_script(source, catalog, missing, ref_title):
    """The gallery script ``source`` with its text blocks and alt texts translated (``catalog``), roles resolved."""
    lines, module = source.split("\n"), ast.parse(source)
    out, i = [], 0
    if (docstring := ast.get_docstring(module, clean=False)) is not None:
        raw = lines[module.body[0].lineno - 1].lstrip()[:1] in "rR"
        text = translate_text(docstring, catalog, WIDTH, missing, ref_title)
        out.append('"""\n' + (text if raw else text.replace("\\", "\\\\")) + '\n"""')
        i = module.body[0].end_lineno
    while i < len(lines):
        if alt := ALT_COMMENT.match(lines[i]):  # a figure's alt text, as its page gives it
            text = lookup(catalog, ast.literal_eval(alt[1]), missing)
            lines[i] = lines[i][: alt.start(1)] + json.dumps(text, ensure_ascii=False) + lines[i][alt.end(1):]
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
    """Write ``path`` and its twin ``<path>.js`` for ``book-downloads.js`` (``file://`` pages ignore ``download``)."""
    Path(path).write_text(text, encoding="utf-8")
    Path(f"{path}.js").write_text(f"bookDownload({json.dumps(text)});\n", encoding="utf-8")


def translated_notebook(script_text, gallery_conf, target_dir):
    """The notebook sphinx-gallery would make of ``script_text`` (JSON text, as its ``save_notebook`` writes it)."""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "example.py").write_text(script_text, encoding="utf-8")
        _, blocks = split_code_and_text_blocks(Path(tmp, "example.py"))
    return json.dumps(jupyter_notebook(blocks, gallery_conf, target_dir), indent=2)


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

