"""The book's files, named after its title without accents (``atencion-desde-cero-es.pdf``;
Sphinx would drop the accented letters), and ``{book-downloads}``, the landing page's list:
a link where the file exists (or Read the Docs serves it), nothing for a file this build did not make.
"""

import os
import re
import unicodedata
from pathlib import Path

from docutils import nodes
from sphinx.locale import get_translation
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import traverse_parent

_ = get_translation("sphinx")
DOWNLOADS = "downloads"  # under a language's root in the site
RTD_DOWNLOAD = "/_/downloads/{lang}/{version}/{fmt}/"  # on the book's own domain


def file_stem(title, lang):
    """``"Atención, desde cero", "es"`` -> ``"atencion-desde-cero-es"``."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return "-".join([*re.findall(r"[a-z0-9]+", ascii_title.lower()), lang])


def archive_stem(title, lang):
    """The notebooks' archive: ``cuadernos-atencion-desde-cero-es`` (``.zip``)."""
    return file_stem(f"{_('notebooks')} {title}", lang)


def download_entries(app):
    """``[(format, href or None, make command)]`` for this language's PDF, EPUB and notebooks."""
    lang, title, env = app.config.language, app.config.project, os.environ.get
    entries = []
    for fmt, name, command in (
        ("pdf", f"{file_stem(title, lang)}.pdf", f"make pdf-{lang}"),
        ("epub", f"{file_stem(title, lang)}.epub", f"make epub-{lang}"),
        ("notebooks", f"{archive_stem(title, lang)}.zip", "make html"),
    ):
        href = f"{DOWNLOADS}/{name}"
        if env("READTHEDOCS") == "True" and fmt != "notebooks":
            version = env("READTHEDOCS_VERSION", "latest")
            href = RTD_DOWNLOAD.format(lang=env("READTHEDOCS_LANGUAGE", lang), version=version, fmt=fmt)
        elif fmt == "notebooks" and "chapter_notebooks" not in app.extensions:
            continue  # no build of this checkout writes it
        elif fmt != "notebooks" and not Path(app.outdir, href).is_file():
            href = None
        entries.append((fmt, href, command))
    return entries


class BookDownloads(SphinxDirective):
    """``{book-downloads}``: the list of :func:`download_entries`."""

    def run(self):
        entries = download_entries(self.env.app)
        self.env.book_downloads = [(fmt, href) for fmt, href, _ in entries]
        text = {
            "pdf": _("The whole book as a PDF, to print or to read offline"),
            "epub": _("The whole book as an EPUB, for e-readers"),
            "notebooks": _("Every chapter as a Jupyter notebook, all in one archive (.zip)"),
        }
        items = nodes.bullet_list(classes=["book-downloads"])
        for fmt, href, _command in entries:  # what this build made: readers need no make targets
            if href:
                items += nodes.list_item("", nodes.paragraph("", "", nodes.reference("", text[fmt], refuri=href, internal=False)))
        return [items]


def downloads_changed(app, env, added, changed, removed):
    """Read the landing page again when a download appeared or went away since it was read."""
    seen = getattr(env, "book_downloads", None)
    if app.builder.name != "html" or seen is None:
        return []
    return [app.config.root_doc] if [(fmt, href) for fmt, href, _ in download_entries(app)] != seen else []


class NoDownloadsInPrint(SphinxPostTransform):
    """The PDF and the EPUB leave out the list's section: inside the book it would offer the book again."""

    default_priority = 150
    builders = ("latex", "epub")

    def run(self, **kwargs):
        for node in list(self.document.findall(nodes.bullet_list)):
            if "book-downloads" in node["classes"]:
                section = next(traverse_parent(node, nodes.section), node)
                section.parent.remove(section)


def setup(app):
    app.add_directive("book-downloads", BookDownloads)
    app.add_post_transform(NoDownloadsInPrint)
    app.connect("env-get-outdated", downloads_changed)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
