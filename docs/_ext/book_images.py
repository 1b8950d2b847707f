"""Images that keep the text still, load lazily (the first screen's first) and open at full size.

Without its size an image arriving moves the text being read (Lighthouse: "cumulative layout shift").  A figure
links to its file, which a phone can zoom.  Sizes come from the sources: ``_images`` is copied after the pages.
An image after less than a phone's screen of text (600 characters: the landing page's heatmap, the gallery's first
thumbnail) is the largest thing of the first screen: fetched at once, first (Lighthouse: "largest contentful paint").
"""

import re
from pathlib import Path

from sphinx.util.images import get_image_size

IMG = re.compile(r"<img\b[^>]*>")
ATTR = re.compile(r'\b(src|width|height)\s*=\s*"([^"]*)"')
TEXT = re.compile(r"<[^>]*>|\s")  # what a page's HTML holds besides its text


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
        size = get_image_size(sources.get(name, Path(app.outdir, name)))
        sized = size and "width" not in attrs and "height" not in attrs
        extra = f' width="{size[0]}" height="{size[1]}"' if sized else ""
        if "loading=" not in tag:
            first = match.start() == IMG.search(match.string).start() and len(TEXT.sub("", match.string[: match.start()])) < 600
            extra += ' loading="eager" fetchpriority="high"' if first else ' loading="lazy" decoding="async"'
        tag = tag[: -len(end)].rstrip() + extra + " " + end
        linked = re.search(r"<a\b[^>]*>\s*$", match.string[max(0, match.start() - 300) : match.start()])
        return tag if "_thumb." in name or linked else f'<a class="book-figure" href="{src}">{tag}</a>'

    context["body"] = IMG.sub(fix, context["body"])


def setup(app):
    app.connect("html-page-context", sized_images)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
