"""The site as readers meet it: accessible, light, findable, right where it is hosted.

A local Sphinx extension (``extensions`` in ``conf.py``).  Each hook below fixes
one thing the theme (pydata-sphinx-theme via sphinx-book-theme), myst-nb or
sphinx-gallery gets wrong for this book; the browser tests
(``tests/book/test_browser.py``) check the result in both languages, and
``tools/lighthouse.py`` measures it.

Where the book is hosted comes from ``html_baseurl`` (``conf.py`` takes it from
Read the Docs' ``READTHEDOCS_CANONICAL_URL``).  Read the Docs serves each
language at ``/<lang>/<version>/``; without a base URL the two builds are the
sibling folders ``_build/html/en`` and ``_build/html/es``.
"""

import html
import re
from pathlib import Path
from urllib.parse import urlsplit
from xml.sax.saxutils import escape as xml_escape

from book_languages import OTHER, SOURCE
from book_pages import GENERATED_PAGES
from docutils import nodes
from myst_nb.sphinx_ import HideCodeCellNode
from sphinx.util import logging

logger = logging.getLogger(__name__)

# Text this extension writes into pages, per language (no catalog reaches it).
TEXT = {
    "en": {
        "description": "A book that builds the attention mechanism of Transformers "
        "step by step in PyTorch, with every tensor and figure computed at build time.",
        "toggle_pages": "Show or hide the pages under “{title}”",
        "figure_n": "{alt} (figure {i} of {n})",
        "thumbnail": "Figure of the example: {alt}",
    },
    "es": {
        "description": "Un libro que construye paso a paso en PyTorch el mecanismo de "
        "atención de los Transformers; cada tensor y cada figura se calculan al "
        "construirlo.",
        "toggle_pages": "Mostrar u ocultar las páginas de «{title}»",
        "figure_n": "{alt} (figura {i} de {n})",
        "thumbnail": "Figura del ejemplo: {alt}",
    },
}
# Pages Sphinx writes itself: no twin worth announcing to search engines.
NOT_IN_SITEMAP = GENERATED_PAGES
DESCRIPTION_CHARS = 160
ALT_CHARS = 250


def _lang(app):
    return app.config.language or SOURCE


def _text(app, key, **kwargs):
    return TEXT[_lang(app)][key].format(**kwargs)


# -- where the book is hosted ----------------------------------------------------------


def hosted_layout(app):
    """``(base, lang_index)`` from ``html_baseurl``: where this language's root is served.

    Why: Read the Docs serves ``/en/latest/`` and ``/es/latest/``, while the local
    build has the sibling folders ``en/`` and ``es/``; a link to the other
    language must climb out of the version folder too when hosted.  ``base`` is
    the base URL ending in ``/`` (or ``""`` locally) and ``lang_index`` the
    position of the language among its path segments, counted from the end
    (``-2`` for ``/en/latest/``, ``-1`` for ``/en/``).  A base URL whose path does
    not hold the build's language is a configuration error.
    """
    base = app.config.html_baseurl or ""
    if not base:
        return "", -1
    if not base.endswith("/"):
        base += "/"
    parts = urlsplit(base).path.strip("/").split("/")
    lang = _lang(app)
    for index in (-1, -2):
        if len(parts) >= -index and parts[index] == lang:
            return base, index
    raise ValueError(
        f"html_baseurl {base!r} must end in /{lang}/ or /{lang}/<version>/ (the language of this build)"
    )


def _other_base(app):
    """The other language's root: an absolute URL when hosted, else ``""``."""
    base, index = hosted_layout(app)
    if not base:
        return ""
    parts = urlsplit(base)
    segments = parts.path.strip("/").split("/")
    segments[index] = OTHER[_lang(app)]
    return f"{parts.scheme}://{parts.netloc}/" + "/".join(segments) + "/"


def page_context(app, pagename, templatename, context, doctree):
    """Give the templates the other language's page, and the head its metadata.

    Why: ``_templates/lang-switch.html`` links the same page in the other
    language.  A relative link is right in both layouts as long as it climbs out
    of the version folder when hosted (``../../es/latest/``), which only the
    build knows (from ``html_baseurl``).  The head gets a description, the
    ``hreflang`` twins and a canonical URL for search engines.
    """
    lang = _lang(app)
    other = OTHER[lang]
    base, index = hosted_layout(app)
    up = "../" * pagename.count("/")
    if base:
        version = "/".join(urlsplit(base).path.strip("/").split("/")[index + 1 :] if index < -1 else [])
        other_root = up + "../" * -index + other + "/" + (version + "/" if version else "")
    else:
        other_root = up + "../" + other + "/"
    suffix = context.get("file_suffix", ".html")
    context["book_other_href"] = other_root + pagename + suffix

    # <head>: description, language twins.
    tags = []
    if 'name="description"' not in context.get("metatags", ""):
        description = page_description(app, pagename, doctree)
        tags.append(f'<meta name="description" content="{html.escape(description, quote=True)}" />')
    if base:
        here = base + pagename + suffix
        there = _other_base(app) + pagename + suffix
    else:  # relative: the file itself, and the switcher's target
        here = pagename.rsplit("/", 1)[-1] + suffix
        there = context["book_other_href"]
    for code, href in sorted({lang: here, other: there}.items()):
        tags.append(f'<link rel="alternate" hreflang="{code}" href="{html.escape(href)}" />')
    context["metatags"] = context.get("metatags", "") + "\n    ".join([""] + tags) + "\n"
    if context.get("body"):
        context["body"] = sized_images(app, pagename, context["body"])

    # The sidebar's expanders: a name for each (the theme draws a bare chevron).
    toctree = context.get("generate_toctree_html")
    if toctree is not None and not getattr(toctree, "book_named", False):

        def named_toctree(*args, **kwargs):
            return name_toctree_toggles(app, toctree(*args, **kwargs))


        named_toctree.book_named = True
        context["generate_toctree_html"] = named_toctree


def page_description(app, pagename, doctree):
    """The page's first paragraph, cut at a word near 160 characters.

    Why: search engines show a ``<meta name="description">`` under the title;
    without one they pick text themselves (often the header's buttons).  Pages
    without text of their own (index, search) get the book's description.
    """
    text = ""
    if doctree is not None:
        for para in doctree.findall(nodes.paragraph):
            if para.parent is not None and isinstance(para.parent, (nodes.section, nodes.document)):
                text = plain_text(para)
                if len(text) > 40:
                    break
    if len(text) <= 40:
        return _text(app, "description")
    if len(text) > DESCRIPTION_CHARS:
        text = text[: DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return text


def name_toctree_toggles(app, toc):
    """Give each ``<summary>`` of the sidebar's navigation a hidden text naming it.

    Why: pydata-sphinx-theme draws the expander of a page with sub-pages (the
    gallery's) as a ``<summary>`` holding only an icon: a screen reader announces
    an unnamed button (axe: summary-name).  ``toc`` is what the theme's
    ``generate_toctree_html`` returned: HTML, or a BeautifulSoup object.
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(toc, "html.parser") if isinstance(toc, str) else toc
    for summary in soup.select("li > details > summary"):
        if summary.get_text(strip=True):
            continue
        link = summary.parent.find_previous_sibling("a")
        title = link.get_text(" ", strip=True) if link is not None else ""
        label = soup.new_tag("span", attrs={"class": "visually-hidden"})
        label.string = _text(app, "toggle_pages", title=title)
        summary.append(label)
    return str(soup) if isinstance(toc, str) else soup


# -- images: their size, and a link to the full figure -----------------------------------

IMG = re.compile(r"<img\b[^>]*>")
ATTR = re.compile(r'\b(src|width|height|class)\s*=\s*"([^"]*)"')


def png_size(path):
    """``(width, height)`` of a PNG file from its header, or ``None``."""
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except OSError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _image_sources(app):
    """Output name (``_images/x.png``) -> source file, for the images of the build."""
    found = {}
    for src, dest in getattr(app.builder, "images", {}).items():
        found[f"{app.builder.imagedir}/{dest}"] = Path(app.srcdir, src)
    return found


def sized_images(app, pagename, body):
    """Give every ``<img>`` of a page its size and lazy loading; link each figure to its file.

    Why: without its size the browser lays the page out again when each image
    arrives, moving the text being read (Lighthouse's "cumulative layout
    shift"); ``book.css`` keeps them responsive (``height: auto``).  A figure
    (a cell output or a gallery figure, not a thumbnail) opens at full size when
    tapped: on a phone a grid of heatmaps shrinks to the screen's width, and the
    full file can be zoomed.  Sizes are read from the source PNGs, since the
    images are copied to ``_images`` only after the pages are written.  Images
    load lazily (when scrolled near): on a phone the page's text comes first
    (Lighthouse's "largest contentful paint" counted the figures it waited for).
    """
    sources = _image_sources(app)
    root = "../" * pagename.count("/")

    def fix(match):
        tag = match[0]
        attrs = dict(ATTR.findall(tag))
        src = attrs.get("src", "")
        if not src.startswith(root + app.builder.imagedir + "/"):
            return tag
        name = src[len(root):]
        size = png_size(sources.get(name, Path(app.outdir, name)))
        end = "/>" if tag.endswith("/>") else ">"
        if size and "width" not in attrs and "height" not in attrs:
            tag = tag[: -len(end)].rstrip() + f' width="{size[0]}" height="{size[1]}" {end}'
        if "loading=" not in tag:
            tag = tag[: -len(end)].rstrip() + f' loading="lazy" decoding="async" {end}'
        linked = re.search(r"<a\b[^>]*>\s*$", match.string[max(0, match.start() - 300) : match.start()])
        if "_thumb." not in name and not linked:
            tag = f'<a class="book-figure" href="{src}">{tag}</a>'
        return tag

    return IMG.sub(fix, body)


# -- hide-cell toggles ------------------------------------------------------------------


def visit_hide_cell(self, node):
    """myst-nb's "Show code cell" toggle, named by its visible text.

    Why: myst-nb writes ``<summary aria-label="Toggle hidden content">`` around the
    visible "Show code cell source": the spoken name differs from the words on
    the screen (WCAG 2.5.3, axe: label-content-name-mismatch) and stays English
    on the Spanish pages.  Without the attribute the name is the visible text.
    """
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n')
    self.body.append("<summary>\n")
    self.body.append(f'<p class="collapsed admonition-title">{html.escape(node["prompt_show"])}</p>\n')
    self.body.append(f'<p class="expanded admonition-title">{html.escape(node["prompt_hide"])}</p>\n')
    self.body.append("</summary>\n")


def depart_hide_cell(self, node):
    self.body.append("</details>\n")


# -- alt text of figures ----------------------------------------------------------------

TEX_COMMAND = re.compile(r"\\(?:text|mathrm|mathbf|operatorname|textrm)\{([^{}]*)\}")


def plain_text(node):
    """A node's text with its mathematics made readable (``\\sqrt{d_k}`` → ``sqrt(d_k)``)."""
    parts = []
    for child in node.findall(nodes.Text):
        text = str(child)
        if isinstance(child.parent, nodes.math):
            text = detex(text)
        parts.append(text)
    return re.sub(r"\s+", " ", "".join(parts)).strip()


def detex(tex):
    """TeX as plain characters: commands named, braces and backslashes dropped."""
    tex = TEX_COMMAND.sub(r"\1", tex)
    for command, char in (
        (r"\times", "×"), (r"\cdot", "·"), (r"\dots", "…"), (r"\ldots", "…"), (r"\infty", "∞"),
        (r"\top", "ᵀ"), (r"\le", "≤"), (r"\ge", "≥"), (r"\to", "→"), (r"\sum", "Σ"),
        (r"\sqrt", "√"), (r"\,", " "), (r"\;", " "), (r"\quad", " "),
    ):
        tex = tex.replace(command, char)
    tex = re.sub(r"\\([A-Za-z]+)", r"\1", tex)
    return tex.replace("{", "").replace("}", "").replace("\\", "")


def _shorten(text, limit=ALT_CHARS):
    """``text`` cut at a sentence or a word near ``limit`` characters, ending like a sentence."""
    text = re.sub(r"\s*[:;,]$", ".", text.strip())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind(": "))
    if end > limit // 3:
        return cut[: end + 1]
    return cut.rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _text_before(node):
    """The last paragraph before ``node`` in its section (the text that introduces it)."""
    while node.parent is not None and not isinstance(node.parent, (nodes.section, nodes.document)):
        node = node.parent
    parent = node.parent
    if parent is None:
        return ""
    siblings = parent.children[: parent.index(node)]
    for sibling in reversed(siblings):
        paras = [sibling] if isinstance(sibling, nodes.paragraph) else list(sibling.findall(nodes.paragraph))
        paras = [p for p in paras if not _inside_code(p)]
        if paras:
            return plain_text(paras[-1])
    title = next(iter(parent.findall(nodes.title)), None) if isinstance(parent, nodes.section) else None
    return plain_text(title) if title is not None else ""


def _inside_code(node):
    while node is not None:
        if isinstance(node, nodes.container) and node.get("nb_element") == "cell_code_output":
            return True
        node = node.parent
    return False


def _is_path_alt(node):
    """Whether the alt text is no description: none, a file name, or sphinx-gallery's titles."""
    if type(node).__name__ == "imgsgnode":
        return True  # the figure's axis titles (symbols such as "$h_{1}$"), in no language
    alt = node.get("alt", "")
    uri = node.get("uri", "")
    return not alt.strip() or alt == uri or "$" in alt or "\\" in alt or Path(uri).name in alt


def _figure_images(doctree):
    """The figures a page draws: images of cell outputs and of the gallery's scripts."""
    found = []
    for node in doctree.findall(nodes.Element):
        if type(node).__name__ == "imgsgnode" or (
            isinstance(node, nodes.image) and not isinstance(node.parent, nodes.reference)
            and "sphx_glr_" not in node.get("uri", "") + node.get("candidates", {}).get("*", "")
        ):
            found.append(node)
    return found


def figure_alts(doctree):
    """``[(node, alt)]`` for each figure of a page whose alt text is missing or a file name.

    Why: myst-nb gives a cell's figure no alt text (the HTML writer then uses the
    file path) and sphinx-gallery uses the figure's axis titles (raw TeX such as
    ``$h_{1}$``).  A figure's caption describes it best; without one, the
    paragraph that introduces the code drawing it does.  That text has been
    translated by the catalogs already, so the alt text is in the page's
    language.  Several figures after one paragraph are numbered "(figure i of n)".
    """
    groups = {}
    for node in _figure_images(doctree):
        if not _is_path_alt(node):
            continue
        parent = node.parent
        caption = None
        while parent is not None:
            if isinstance(parent, nodes.figure):
                caption = next(iter(parent.findall(nodes.caption)), None)
                break
            parent = parent.parent
        text = plain_text(caption) if caption is not None else _text_before(node)
        groups.setdefault(text, []).append(node)
    result = []
    for text, group in groups.items():
        for i, node in enumerate(group, 1):
            result.append((node, text, i, len(group)))
    return result


def set_figure_alts(app, doctree, docname):
    """Write the alt text of :func:`figure_alts` into the page's figures, and the thumbnails'."""
    for node, text, i, n in figure_alts(doctree):
        alt = _shorten(text) if text else app.env.titles[docname].astext()
        if n > 1:
            alt = _text(app, "figure_n", alt=alt, i=i, n=n)
        node["alt"] = alt
    if docname.endswith("auto_examples/index"):
        _thumbnail_alts(app, doctree)


THUMB_IMAGE = re.compile(r"sphx_glr_(?P<name>.+)_thumb\.\w+$")


def _thumbnail_alts(app, doctree):
    """Each gallery card's image says what its example draws (sphinx-gallery leaves it empty)."""
    for node in doctree.findall(nodes.image):
        match = THUMB_IMAGE.search(node.get("uri", ""))
        if not match:
            continue
        name = f"auto_examples/{match['name']}"
        if name not in app.env.titles:
            continue
        alts = figure_alts(app.env.get_doctree(name))
        text = alts[0][1] if alts else app.env.titles[name].astext()
        node["alt"] = _text(app, "thumbnail", alt=_shorten(text, 160))


# -- scripts that need not block the first paint ---------------------------------------

# Scripts run before the page is shown although nothing they do is needed then
# (they act on DOMContentLoaded or on a click).  documentation_options.js and
# doctools.js stay: inline scripts set DOCUMENTATION_OPTIONS, and the Spanish
# translations.js and the search page's searchtools.js call doctools' functions
# as they load.
DEFERRED_SCRIPTS = (
    "sphinx_highlight.js", "sg-tags.js", "clipboard.min.js", "copybutton.js",
    "sphinx-book-theme.js", "design-tabs.js", "searchtools.js", "language_data.js",
    # Calls Documentation.addTranslations: it must run after doctools.js.
    "translations.js",
)


def defer_scripts(app, pagename, templatename, context, doctree):
    """Load the theme's and extensions' small scripts with ``defer``.

    Why: each script in ``<head>`` without ``defer`` holds the first paint until
    it has arrived and run; on a phone network that is a round trip each
    (Lighthouse's "render-blocking resources").  Deferred scripts still run in
    their order, before ``DOMContentLoaded``, which is when these start work.
    """
    from sphinx.builders.html._assets import _JavaScript

    if pagename == "search":
        # The theme's search page loads searchtools.js, language_data.js and
        # searchindex.js with plain <script> tags, which run before any deferred
        # script: doctools.js (_ready, Documentation) must not be deferred there.
        return
    scripts = []
    for js in context.get("script_files", []):
        name = str(getattr(js, "filename", js) or "")
        if isinstance(js, _JavaScript) and name.rsplit("/", 1)[-1] in DEFERRED_SCRIPTS:
            if "defer" not in js.attributes and "async" not in js.attributes:
                js = _JavaScript(js.filename, priority=js.priority, **js.attributes, defer="defer")
        scripts.append(js)
    context["script_files"] = scripts


# Stylesheets every page links although only some pages use them: the file's name
# prefix, and what a page's body holds when it does.
PAGE_STYLESHEETS = {
    "sg_gallery": ('class="sphx-glr', " sphx-glr-"),  # sphinx-gallery's four: its examples and their index
    "sphinx-design": ('"sd-', " sd-"),  # cards, dropdowns, tabs
    "mystnb.": ('class="cell', "cell_output"),  # executed notebooks' cells
}


def drop_unused_stylesheets(app, pagename, templatename, context, doctree):
    """Link sphinx-gallery's, sphinx-design's and myst-nb's stylesheets only where used.

    Why: every stylesheet in ``<head>`` holds the first paint until it has
    arrived (on a phone network a request each, Lighthouse's "render-blocking
    resources"); extensions add theirs to every page.  A page links one only if
    its body holds the classes it styles (the sidebar and header use none).
    """
    body = context.get("body") or ""
    kept = []
    for css in context.get("css_files", []):
        name = str(getattr(css, "filename", css) or "").rsplit("/", 1)[-1]
        marks = next((m for prefix, m in PAGE_STYLESHEETS.items() if name.startswith(prefix)), None)
        if marks is None or any(mark in body for mark in marks):
            kept.append(css)
    context["css_files"] = kept


# -- icons: Font Awesome cut down to the icons the site draws ----------------------------

ICON_FONT = "book-icons.woff2"  # in _static, named by book.css
FA_SOLID = "vendor/fontawesome/webfonts/fa-solid-900.woff2"
FA_CLASS_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+,?)+)\{--fa:"([^"]+)"\}')
FA_CLASS = re.compile(r"\bfa-([a-z0-9-]+)")
CSS_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6})\s?|(.)", re.S)
PRIVATE_USE = re.compile(r"[\ue000-\uf8ff]|\\[ef][0-9a-fA-F]{3}")


def _css_string(value):
    return "".join(chr(int(code, 16)) if code else char for code, char in CSS_ESCAPE.findall(value))


def icon_characters(static, pages):
    """The Font Awesome characters the site can draw.

    Those of the ``fa-*`` classes found in the pages and the theme's scripts
    (through the theme stylesheet's ``.fa-sun{--fa:"\\f185"}`` table), and those
    the theme's stylesheets name themselves (``--pst-icon-*``, ``content``).
    """
    css = (static / "styles" / "pydata-sphinx-theme.css").read_text(encoding="utf-8")
    table = {}
    for rule in FA_CLASS_RULE.finditer(css):
        for name in FA_CLASS.findall(rule[1]):
            table[name] = _css_string(rule[2])
    used = set()
    for path in [*pages, *static.glob("scripts/*.js"), *static.glob("*.js")]:
        used |= set(FA_CLASS.findall(path.read_text(encoding="utf-8", errors="ignore")))
    chars = {table[name] for name in used if name in table}
    for other in [FA_CLASS_RULE.sub("", css), *(p.read_text(encoding="utf-8") for p in static.glob("styles/*.css")
                                                if p.name != "pydata-sphinx-theme.css")]:
        chars |= {_css_string(m) for m in PRIVATE_USE.findall(other)}
    return chars


def write_font_subset(source, chars, out, *, all_layout_features=False):
    """Write ``out``, a woff2 font: ``source`` with only the glyphs of the characters ``chars``.

    Used for the icon font here and for the math font (``book_math``);
    ``all_layout_features`` keeps what the glyphs need beyond their characters (the
    MATH table's bigger sizes and pieces).  Returns the characters ``source`` lacks,
    as ``U+XXXX``.
    """
    from fontTools import subset

    options = subset.Options()
    if all_layout_features:
        options.layout_features = ["*"]
    options.flavor = "woff2"  # fontTools compresses it with brotli (a requirement)
    font = subset.load_font(str(source), options)
    missing = sorted(f"U+{ord(c):04X}" for c in chars if ord(c) not in font.getBestCmap())
    subsetter = subset.Subsetter(options)
    subsetter.populate(text="".join(sorted(chars)))
    subsetter.subset(font)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    subset.save_font(font, str(out), options)
    return missing


def write_icon_font(app, exception):
    """Write ``_static/book-icons.woff2``: the theme's Font Awesome with only the icons used.

    Why: the theme draws about twenty icons (search, sidebar and colour-mode
    buttons, arrows) with Font Awesome's whole solid font, 115 KB that a phone
    fetches, with the stylesheets, before the first paint of every page.  The same
    font cut to the icons the site uses is a few KB; ``book.css`` declares it under
    the theme's family name after the theme's stylesheet, so browsers use it and
    never fetch the whole font.  The browser tests check that the icons draw.
    """
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    if not (static / FA_SOLID).is_file():  # another theme (the EPUB builder's): no icons
        return
    chars = icon_characters(static, Path(app.outdir).rglob("*.html"))
    missing = write_font_subset(static / FA_SOLID, chars, static / ICON_FONT)
    if missing:  # brand icons (GitHub, GitLab) live in another font, which the book never shows
        logger.info(f"book_site: icons not in Font Awesome's solid font, left out: {', '.join(missing)}")


# -- search -------------------------------------------------------------------------------


def search_page_script(app, pagename, templatename, context, doctree):
    """Load ``book-search.js`` on the search page only.

    Why: Sphinx's search takes each result's snippet from the page's
    ``[role="main"]`` element, which in this theme also holds the article header
    (language and colour switches) and the tables of contents; the script keeps
    the article's own text (see the script).
    """
    if pagename == "search":
        app.add_js_file("book-search.js", priority=900, defer="defer")


# -- sitemap --------------------------------------------------------------------------------


def write_sitemap(app, exception):
    """``sitemap.xml`` in each language's root, with each page's twin in the other language.

    Why: search engines find every page and both languages of it.  Written only
    when ``html_baseurl`` says where the book lives (a sitemap holds absolute
    URLs); Read the Docs gives it through ``READTHEDOCS_CANONICAL_URL``.
    """
    if exception is not None or app.builder.format != "html":
        return
    base, _ = hosted_layout(app)
    if not base:
        return
    other = _other_base(app)
    lang = _lang(app)
    suffix = app.builder.out_suffix
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:xhtml="http://www.w3.org/1999/xhtml">',
    ]
    for docname in sorted(app.env.found_docs):
        if docname in NOT_IN_SITEMAP:
            continue
        mine, theirs = base + docname + suffix, other + docname + suffix
        pair = {lang: mine, OTHER[lang]: theirs}
        lines.append(f"  <url><loc>{xml_escape(mine)}</loc>")
        for code in sorted(pair):
            lines.append(
                f'    <xhtml:link rel="alternate" hreflang="{code}" href="{xml_escape(pair[code])}"/>'
            )
        lines.append("  </url>")
    lines.append("</urlset>")
    (Path(app.outdir) / "sitemap.xml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    robots = f"User-agent: *\nAllow: /\nSitemap: {base}sitemap.xml\n"
    (Path(app.outdir) / "robots.txt").write_text(robots, encoding="utf-8")


def setup(app):
    app.add_node(HideCodeCellNode, override=True, html=(visit_hide_cell, depart_hide_cell))
    app.connect("html-page-context", page_context, priority=600)
    app.connect("html-page-context", search_page_script)
    app.connect("html-page-context", defer_scripts, priority=900)
    app.connect("html-page-context", drop_unused_stylesheets, priority=900)
    app.connect("doctree-resolved", set_figure_alts)
    app.connect("build-finished", write_sitemap)
    app.connect("build-finished", write_icon_font)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
