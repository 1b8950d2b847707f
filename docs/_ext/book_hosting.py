"""The book where it is served: language switcher, ``hreflang`` twins, description, sitemap URLs, robots.txt.

Read the Docs serves each language at ``/<lang>/<version>/`` (``html_baseurl``), ``make html`` in sibling
folders ``_build/html/<lang>``: only the build knows which, so it writes these links.
"""

import html
import re
from pathlib import Path

from book_languages import LANGUAGES, OTHER
from book_text import plain_text
from docutils import nodes
from sphinx.errors import ConfigError
from sphinx.locale import _

DESCRIPTION = "A book that builds the attention mechanism of Transformers step by step in PyTorch, with every tensor and figure computed at build time."


def _layout(config):
    """``(site, after)``: ``html_baseurl`` before the language's folder and after it (``latest/``), or ``("", "")``."""
    if not config.html_baseurl:
        return "", ""
    # https://host/<site folders>/<lang>/[<version>/]: the last folder, or the one before it.
    url = re.fullmatch(rf"(\w+://[^/]+/(?:.*/)?){config.language}/([^/]+/)?", config.html_baseurl.rstrip("/") + "/")
    if url:
        return url[1], url[2] or ""
    raise ConfigError(f"html_baseurl {config.html_baseurl!r} must end in /{config.language}/ or "
                      f"/{config.language}/<version>/ (the language of this build)")


def sitemap_settings(app, config):
    """sphinx-sitemap's and sphinxext-opengraph's URLs (sphinx-sitemap writes ``<site_url><scheme>``)."""
    site, after = _layout(config)
    if site:
        config.site_url, config.sitemap_url_scheme = site, "{lang}" + after + "{link}"
        config.ogp_site_url = f"{site}{config.language}/{after}"


def page_links(app, pagename, templatename, context, doctree):
    """The switcher's target; in the head, the ``hreflang`` twins and the page's description."""
    if app.builder.name == "epub":  # the other language is no file of the EPUB
        return
    lang, other = app.config.language, OTHER[app.config.language]
    site, after = _layout(app.config)
    page = pagename + context.get("file_suffix", ".html")
    up = "../" * (pagename.count("/") + 1 + after.count("/"))
    context["book_other_href"] = f"{up}{other}/{after}{page}"
    context["book_lang"], context["book_other_lang"], context["book_other_lang_name"] = lang, other, LANGUAGES[other]
    if site:  # absolute, as search engines want them
        twins = {code: f"{site}{code}/{after}{page}" for code in LANGUAGES}
    else:
        twins = {lang: page.rsplit("/", 1)[-1], other: context["book_other_href"]}
    description = html.escape(page_description(app, doctree), quote=True)
    context["meta"] = {**(context.get("meta") or {}), "og:description": description}  # sphinxext-opengraph's
    context["metatags"] = context.get("metatags", "") + "".join(
        f'\n<link rel="alternate" hreflang="{code}" href="{html.escape(href)}" />' for code, href in sorted(twins.items())
    ) + f'\n<meta name="description" content="{description}" />\n'


def page_description(app, doctree, limit=160):
    """The page's first paragraph as plain text (sphinxext-opengraph's would show TeX), cut near ``limit``."""
    paragraphs = doctree.findall(nodes.paragraph) if doctree is not None else ()
    texts = (plain_text(p, app.env) for p in paragraphs if isinstance(p.parent, (nodes.section, nodes.document)))
    text = next((t for t in texts if len(t) > 40), None) or _(DESCRIPTION)
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def write_robots(app, exception):
    """``robots.txt`` naming the sitemap, only where the base URL is known (Read the Docs serves it at the root)."""
    site, after = _layout(app.config)
    if exception is None and app.builder.name == "html" and site:
        sitemap = f"{site}{app.config.language}/{after}{app.config.sitemap_filename}"
        Path(app.outdir, "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {sitemap}\n", encoding="utf-8")


def setup(app):
    app.connect("config-inited", sitemap_settings)
    app.connect("html-page-context", page_links, priority=400)  # before sphinxext-opengraph's (500)
    app.connect("build-finished", write_robots)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
