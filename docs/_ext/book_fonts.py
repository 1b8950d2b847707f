"""The theme's icon font, and its stylesheet's rules for icons, cut down to the icons the site draws (and math's font).

Both load before the first paint: the whole solid font is 115 KB, the rules for all 2,000 icons 19 of the CSS's 64 KB
(gzipped). ``book.css`` declares the cut font, ``_static/book-icons.woff2``, under the theme's family name.
"""

import re
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)
ICON_FONT = "book-icons.woff2"  # in _static, named by book.css
FA_SOLID = "vendor/fontawesome/webfonts/fa-solid-900.woff2"
FA_CLASS_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+,?)+)\{--fa:"([^"]+)"\}')
FA_CLASS = re.compile(r"\bfa-([a-z0-9-]+)")
CSS_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6})\s?|(.)", re.S)
PRIVATE_USE = re.compile(r"[\ue000-\uf8ff]|\\[ef][0-9a-fA-F]{3}")


def _css_string(value):
    return "".join(chr(int(code, 16)) if code else char for code, char in CSS_ESCAPE.findall(value))


def icon_characters(static, pages):
    """The Font Awesome characters of the pages', scripts' and theme CSS's icons; that CSS with only their rules."""
    css = (static / "styles" / "pydata-sphinx-theme.css").read_text(encoding="utf-8")
    table = {name: _css_string(rule[2]) for rule in FA_CLASS_RULE.finditer(css) for name in FA_CLASS.findall(rule[1])}
    sources = [*pages, *static.glob("scripts/*.js"), *static.glob("*.js")]
    used = {name for path in sources for name in FA_CLASS.findall(path.read_text(encoding="utf-8", errors="ignore"))}
    chars = {table[name] for name in used if name in table}
    others = [p.read_text(encoding="utf-8") for p in static.glob("styles/*.css") if p.name != "pydata-sphinx-theme.css"]
    for text in [FA_CLASS_RULE.sub("", css), *others]:
        chars |= {_css_string(m) for m in PRIVATE_USE.findall(text)}
    return chars, FA_CLASS_RULE.sub(lambda rule: rule[0] if used & set(FA_CLASS.findall(rule[1])) else "", css)


def write_font_subset(source, chars, out, *, all_layout_features=False):
    """Write ``out``, ``source`` as woff2 with only the glyphs of ``chars`` (and with ``all_layout_features``,
    those a MATH table's sizes and pieces need); return the characters it lacks (``U+XXXX``)."""
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
    static = Path(app.outdir) / "_static"
    if exception is not None or app.builder.format != "html" or not (static / FA_SOLID).is_file():
        return  # (the EPUB's theme draws no icons)
    chars, css = icon_characters(static, Path(app.outdir).rglob("*.html"))
    (static / "styles" / "pydata-sphinx-theme.css").write_text(css, encoding="utf-8")
    missing = write_font_subset(static / FA_SOLID, chars, static / ICON_FONT)
    if missing:  # brand icons (GitHub, GitLab) live in another font, which the book never shows
        logger.info(f"book_fonts: icons not in Font Awesome's solid font, left out: {', '.join(missing)}")


def setup(app):
    app.connect("build-finished", write_icon_font)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
