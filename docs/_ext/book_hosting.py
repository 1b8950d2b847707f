"""The book where it is served: language switcher, ``hreflang`` twins, description, sitemap, robots.txt.

Why: Read the Docs serves each language at ``/<lang>/<version>/`` and tells each
build its address (``READTHEDOCS_CANONICAL_URL``, which ``conf.py`` makes
``html_baseurl``); ``make html`` lays the languages out as the sibling folders
``_build/html/en`` and ``_build/html/es``.  Only the build knows which, so this
extension gives the switcher (``_templates/lang-switch.html``) a relative link
right in both layouts, each page's head its twin in the other language
(absolute URLs when the base URL is known, as search engines want them), and
sphinx-sitemap the URLs of both languages.  The sitemap and robots.txt are
written only where the base URL is known: they hold absolute URLs.
Each page's description (what a search result shows under its title) is its
first paragraph as plain text, formulas read as text; sphinxext-opengraph,
which would show their TeX, writes the Open Graph tags with it.  A page
without text of its own (search, index) gets the book's description.
"""

import html
from pathlib import Path
from urllib.parse import urlsplit

from book_languages import LANGUAGES, OTHER
from book_text import plain_text
from docutils import nodes
from sphinx.errors import ConfigError
from sphinx.locale import get_translation

_ = get_translation("sphinx")
DESCRIPTION = "A book that builds the attention mechanism of Transformers step by step in PyTorch, with every tensor and figure computed at build time."


def _layout(config):
    """``(base, segments, at)``: ``html_baseurl`` ending in ``/``, its path's segments, the language's index.

    ``("", [], None)`` when the build does not know where it is served.
    """
    if not config.html_baseurl:
        return "", [], None
    base = config.html_baseurl.rstrip("/") + "/"
    segments = urlsplit(base).path.strip("/").split("/")
    for at in (len(segments) - 1, len(segments) - 2):
        if at >= 0 and segments[at] == config.language:
            return base, segments, at
    raise ConfigError(
        f"html_baseurl {base!r} must end in /{config.language}/ or /{config.language}/<version>/ "
        "(the language of this build)"
    )


def _root(config, lang):
    """The absolute URL of ``lang``'s root when served (``https://host/es/latest/``)."""
    base, segments, at = _layout(config)
    url = urlsplit(base)
    return f"{url.scheme}://{url.netloc}/" + "".join(s + "/" for s in [*segments[:at], lang, *segments[at + 1:]])


def sitemap_settings(app, config):
    """sphinx-sitemap's and sphinxext-opengraph's URLs, from ``html_baseurl``.

    sphinx-sitemap writes ``<site_url><lang>/<link>`` for a page and its twins in
    ``sitemap_locales``: the version folder goes into its URL scheme.
    """
    base, segments, at = _layout(config)
    if base:
        url = urlsplit(base)
        config.site_url = f"{url.scheme}://{url.netloc}/" + "".join(s + "/" for s in segments[:at])
        config.sitemap_url_scheme = "{lang}" + "".join(s + "/" for s in segments[at + 1:]) + "{link}"
        config.ogp_site_url = base


def page_links(app, pagename, templatename, context, doctree):
    """The switcher's target; in the head, the ``hreflang`` twins and the page's description."""
    if app.builder.name == "epub":  # the other language is no file of the EPUB
        return
    lang = app.config.language
    other = OTHER[lang]
    base, segments, at = _layout(app.config)
    after = segments[at + 1:] if base else []  # the version folder, when served
    page = pagename + context.get("file_suffix", ".html")
    up = "../" * pagename.count("/")
    context["book_other_href"] = up + "../" * (1 + len(after)) + "".join(s + "/" for s in [other, *after]) + page
    context["book_lang"], context["book_other_lang"], context["book_other_lang_name"] = lang, other, LANGUAGES[other]
    if base:
        twins = {code: _root(app.config, code) + page for code in LANGUAGES}
    else:
        twins = {lang: page.rsplit("/", 1)[-1], other: context["book_other_href"]}
    description = html.escape(page_description(app, doctree), quote=True)
    context["meta"] = {**(context.get("meta") or {}), "og:description": description}  # sphinxext-opengraph's
    context["metatags"] = context.get("metatags", "") + "".join(
        f'\n<link rel="alternate" hreflang="{code}" href="{html.escape(href)}" />' for code, href in sorted(twins.items())
    ) + f'\n<meta name="description" content="{description}" />\n'


def page_description(app, doctree, limit=160):
    """The page's first paragraph as plain text (formulas read as text), cut at a word near ``limit``."""
    paragraphs = doctree.findall(nodes.paragraph) if doctree is not None else ()
    texts = (plain_text(p, app.env) for p in paragraphs if isinstance(p.parent, (nodes.section, nodes.document)))
    text = next((t for t in texts if len(t) > 40), None) or _(DESCRIPTION)
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def write_robots(app, exception):
    """``robots.txt`` beside the sitemap, naming it (Read the Docs serves the default version's at the root)."""
    if exception is None and app.builder.name == "html" and _layout(app.config)[0]:
        sitemap = _layout(app.config)[0] + app.config.sitemap_filename
        Path(app.outdir, "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {sitemap}\n", encoding="utf-8")


def setup(app):
    app.connect("config-inited", sitemap_settings)
    app.connect("html-page-context", page_links, priority=400)  # before sphinxext-opengraph's (500)
    app.connect("build-finished", write_robots)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
