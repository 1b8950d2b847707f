"""Mathematics written as MathML at build time (``html_math_renderer = "mathml"``): no script typesets a page.

MathJax was most of a phone's work on a page; browsers draw MathML themselves.  ``latex2mathml`` converts
each formula (a failure warns); ``_static/book-math.woff2``, STIX Two Math cut to the characters drawn, is the font.
"""

import html
import re
from pathlib import Path

from book_fonts import write_font_subset
from docutils import nodes
from latex2mathml.converter import convert
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

FONT = "book-math.woff2"  # in _static, named by book.css
# Named spaces that latex2mathml writes but MathML Core does not know (\!, \:, \>).
NAMED_SPACES = {"thinmathspace": "0.1667em", "mediummathspace": "0.2222em", "thickmathspace": "0.2778em"}
NAMED_SPACES |= {"negative" + name: "-" + width for name, width in NAMED_SPACES.items()}
NAMED_SPACE = re.compile(r'width="(%s)"' % "|".join(NAMED_SPACES))
# \operatorname{softmax} comes out as <mo>softmax</mo>, spaced like "+": an identifier, as \sin's (not \bmod, \max_i).
WORD_OPERATOR = re.compile(r"<mo>([A-Za-z]{2,})</mo>")
OPERATOR_WORDS = {"mod", "max", "min", "lim", "sup", "inf", "argmax", "argmin", "det", "gcd"}
# latex2mathml puts \sum_{j}^{T}'s limits beside the sign in a display: \limits, then movablelimits, as TeX.
LIMITS = re.compile(r"(\\(?:sum|prod|max|min|lim|sup|inf))(?![A-Za-z])(?!\s*\\(?:no)?limits)(?=\s*[_^])")
TOKEN_TEXT = re.compile(r">([^<>]+)<")
FUNCTION_THEN_ARGUMENT = re.compile(
    r"(?<!<msub>)(?<!<msup>)(?<!<msubsup>)(?<!<munder>)(?<!<mover>)(?<!<munderover>)"
    r"(<mi>[A-Za-z]{2,}</mi>)(?=<(?:mi|mn|msub|msup|msubsup)>)"
)
PREFIX_MINUS = re.compile(r"(<mo[^>]*>[(\[{,=]</mo>|<mrow>|<mtd[^>]*>)<mo>−</mo>")
# The Spanish decimal comma, 0{,}5, is one <mn> (latex2mathml: three tokens); 1;\ 0{,}1's semicolon, punctuation.
DECIMAL_COMMA = re.compile(r"<mn>(\d+)</mn><mrow><mo>,</mo></mrow><mn>(\d+)</mn>")
CHAR_REF = re.compile(r"&#x([0-9A-Fa-f]+);")
MARKUP = {ord(c) for c in "&<>\"'"}
# latex2mathml copies TeX's escapes in \text{num\_heads}, loses \operatorname{rotate\_half}'s name (UNDERSCORE).
TEXT_ARG = re.compile(r"\\(text|textrm)\{([^{}]*)\}")
TEXT_ESCAPE = re.compile(r"\\([_%&#$])")
NAME_ARG = re.compile(r"\\(?:operatorname|mathrm)\{([A-Za-z0-9]*(?:\\_[A-Za-z0-9]*)+)\}")
UNDERSCORE = "UNDERSCOREINANAME"


class MathError(ValueError):
    """A formula that does not convert to MathML."""


def to_mathml(tex, display):
    """The MathML of one formula; :class:`MathError` if latex2mathml fails or leaves a TeX command in it."""
    tex = TEXT_ARG.sub(lambda m: "\\" + m[1] + "{" + TEXT_ESCAPE.sub(r"\1", m[2]) + "}", tex)
    tex = NAME_ARG.sub(lambda m: r"\operatorname{" + m[1].replace(r"\_", UNDERSCORE) + "}", tex)
    tex = LIMITS.sub(r"\1\\limits", tex)
    try:
        mathml = convert(tex, display="block" if display else "inline")
    except Exception as err:  # latex2mathml raises several of its own exception types
        raise MathError(f"latex2mathml cannot convert {tex!r}: {type(err).__name__}: {err}") from err
    # Smaller pages: HTML gives <math> its namespace; characters need no references but markup's.
    mathml = mathml.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "", 1)
    mathml = CHAR_REF.sub(lambda m: m[0] if int(m[1], 16) in MARKUP else chr(int(m[1], 16)), mathml)
    mathml = NAMED_SPACE.sub(lambda m: f'width="{NAMED_SPACES[m[1]]}"', mathml)
    mathml = re.sub(r"<(munder|munderover)><mo>", r'<\1><mo movablelimits="true">', mathml)
    # Binary operators latex2mathml writes as identifiers inside scripts (d_in \times h).
    mathml = re.sub(r"<mi>([×·⋅±∓⊙∘])</mi>", r"<mo>\1</mo>", mathml)
    mathml = WORD_OPERATOR.sub(lambda m: m[0] if m[1] in OPERATOR_WORDS else f"<mi>{m[1]}</mi>", mathml)
    mathml = mathml.replace(UNDERSCORE, "_").replace("<mo>∞</mo>", "<mi>∞</mi>")
    mathml = DECIMAL_COMMA.sub(r"<mn>\1,\2</mn>", mathml).replace("<mi>;</mi>", '<mo separator="true">;</mo>')
    # A minus sign that opens a group or follows a relation is a sign, not a subtraction.
    mathml = PREFIX_MINUS.sub(r'\1<mo form="prefix">−</mo>', mathml)
    # TeX's thin space after a function name (\cos p\theta), unless it bears a script (\max_j).
    mathml = FUNCTION_THEN_ARGUMENT.sub(r'\1<mspace width="0.1667em"/>', mathml)
    leftover = [t for t in TOKEN_TEXT.findall(mathml) if "\\" in html.unescape(t)]
    if leftover:
        raise MathError(f"latex2mathml does not know {', '.join(leftover)} in {tex!r}")
    return mathml


def display_tex(node):
    """A display formula's TeX as Sphinx's MathJax renderer wraps it: paragraphs aligned, ``\\\\`` split."""
    if node.get("no-wrap", node.get("nowrap", False)):
        return node.astext()
    parts = [rf"\begin{{split}}{p}\end{{split}}" if r"\\" in p else p for p in node.astext().split("\n\n") if p.strip()]
    return r"\begin{aligned}" + r"\\".join(parts) + r"\end{aligned}" if len(parts) > 1 else "".join(parts)


def formulas(env):
    """``(node, tex, display)`` of every formula of the book (``tex`` as :func:`to_mathml` takes it)."""
    for docname in sorted(env.found_docs):
        for node in env.get_doctree(docname).findall(lambda n: isinstance(n, (nodes.math, nodes.math_block))):
            display = isinstance(node, nodes.math_block)
            yield node, display_tex(node) if display else node.astext(), display


def _convert(self, node, tex, display):
    try:
        return to_mathml(tex, display)
    except MathError as err:
        logger.warning(str(err), location=node)
        return f"<code>{html.escape(tex)}</code>"


def visit_math(self, node):
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(_convert(self, node, node.astext(), display=False))
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_displaymath(self, node):
    # A wide formula scrolls sideways (book.css): a keyboard scrolls it with tabindex, named (axe).
    self.body.append(self.starttag(
        node, "div", CLASS="math notranslate nohighlight", tabindex="0", role="group",
        **{"aria-label": _("Equation")},
    ))
    if node["number"]:
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    self.body.append(_convert(self, node, display_tex(node), display=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def write_math_font(app, exception):
    """``_static/book-math.woff2``: STIX Two Math (1.5 MB) cut to the glyphs the book's MathML draws."""
    if exception is not None or app.builder.format != "html" or app.builder.name.startswith("epub"):
        return  # (the EPUB draws its formulas as images: conf.py's epub_math_renderer)
    import ziamath  # a pinned requirement, for its copy of the font

    chars = set(" 0123456789√")  # drawn without a character in the markup: the radical of <msqrt>
    for _node, tex, display in formulas(app.env):
        try:
            chars.update(*map(html.unescape, TOKEN_TEXT.findall(to_mathml(tex, display))))
        except MathError:
            continue  # already reported where the page was written
    font = Path(ziamath.__file__).parent / "fonts" / "STIXTwoMath-Regular.ttf"
    write_font_subset(font, chars, Path(app.outdir) / "_static" / FONT, all_layout_features=True)


def setup(app):
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_displaymath, None))
    app.connect("build-finished", write_math_font)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
