"""Images that keep the text still and open at full size.

Why: without its size the browser lays the page out again when each image
arrives, moving the text being read (Lighthouse's "cumulative layout shift");
``book.css`` keeps images responsive (``height: auto``).  Images load lazily,
so on a phone the text comes first (Lighthouse's "largest contentful paint").
A figure (a cell's output or a gallery figure, not a thumbnail) links to its
file: on a phone a grid of heatmaps shrinks to the screen, and the file can be
zoomed.  Sizes come from the source PNGs: Sphinx copies images to ``_images``
only after writing the pages.
"""

import re
from pathlib import Path

IMG = re.compile(r"<img\b[^>]*>")
ATTR = re.compile(r'\b(src|width|height)\s*=\s*"([^"]*)"')


def png_size(path):
    """``(width, height)`` of a PNG file from its header, or ``None``."""
    try:
        head = Path(path).read_bytes()[:24]
    except OSError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def sized_images(app, pagename, templatename, context, doctree):
    if not context.get("body"):
        return
    root = "../" * pagename.count("/")
    sources = {f"{app.builder.imagedir}/{dest}": Path(app.srcdir, src) for src, dest in app.builder.images.items()}

    def fix(match):
        tag, end = match[0], "/>" if match[0].endswith("/>") else ">"
        attrs = dict(ATTR.findall(tag))
        src = attrs.get("src", "")
        if not src.startswith(root + app.builder.imagedir + "/"):
            return tag
        name = src[len(root):]
        size = png_size(sources.get(name, Path(app.outdir, name)))
        extra = f' width="{size[0]}" height="{size[1]}"' if size and "width" not in attrs and "height" not in attrs else ""
        if "loading=" not in tag:
            extra += ' loading="lazy" decoding="async"'
        tag = tag[: -len(end)].rstrip() + extra + " " + end
        linked = re.search(r"<a\b[^>]*>\s*$", match.string[max(0, match.start() - 300) : match.start()])
        return tag if "_thumb." in name or linked else f'<a class="book-figure" href="{src}">{tag}</a>'

    context["body"] = IMG.sub(fix, context["body"])


def setup(app):
    app.connect("html-page-context", sized_images)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
