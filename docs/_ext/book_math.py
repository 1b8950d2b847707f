"""Mathematics written as MathML when the book is built: no script typesets a page.

A local Sphinx extension (``extensions`` in ``conf.py``), registered as the HTML
math renderer ``mathml`` (``html_math_renderer``).

Why: MathJax typesetting a chapter's hundred formulas was most of a phone's work
on a page (Lighthouse's mobile performance 35-64 on pages with mathematics, 90
without).  Browsers draw MathML themselves (MathML Core: Chromium 109+, Firefox,
Safari) and expose it to screen readers, so each formula is converted once, here,
by ``latex2mathml`` (pure Python).  A formula it cannot convert stops the build
(a warning, which ``-W`` makes an error) instead of reaching a reader as raw TeX.

Stretchy brackets, radicals and the spacing of fractions and scripts come from a
font's OpenType MATH table, which not every reader's system has: the build
writes ``_static/book-math.woff2``, STIX Two Math (from the ``ziamath`` wheel, SIL
Open Font License) cut down to the characters the book's formulas use, and
``book.css`` draws ``<math>`` with it.
"""

import html
import re
from pathlib import Path

from book_fonts import write_font_subset
from docutils import nodes
from latex2mathml.converter import convert
from sphinx.errors import ExtensionError
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

FONT = "book-math.woff2"  # in _static, named by book.css
MATHML_NS = "http://www.w3.org/1998/Math/MathML"
# Named spaces that latex2mathml writes but MathML Core does not know (\!, \:, \>).
NAMED_SPACES = {
    "negativethinmathspace": "-0.1667em",
    "negativemediummathspace": "-0.2222em",
    "negativethickmathspace": "-0.2778em",
    "thinmathspace": "0.1667em",
    "mediummathspace": "0.2222em",
    "thickmathspace": "0.2778em",
}
NAMED_SPACE = re.compile(r'width="(%s)"' % "|".join(NAMED_SPACES))
# \operatorname{softmax} comes out as <mo>softmax</mo>: an operator, spaced like "+".
# A function name is an identifier, as \sin's <mi>sin</mi>; \bmod and the operators
# with limits (\max_i) stay operators.
WORD_OPERATOR = re.compile(r"<mo>([A-Za-z]{2,})</mo>")
OPERATOR_WORDS = {"mod", "max", "min", "lim", "sup", "inf", "argmax", "argmin", "det", "gcd"}
# latex2mathml puts the limits of \sum_{j}^{T} beside the sign even in a display;
# with \limits they go under and over it (<munderover>), and the browser still moves
# them beside it in a formula within a line (MathML's movablelimits), as TeX does.
LIMITS = re.compile(r"(\\(?:sum|prod|max|min|lim|sup|inf))(?![A-Za-z])(?!\s*\\(?:no)?limits)(?=\s*[_^])")
TOKEN_TEXT = re.compile(r">([^<>]+)<")
FUNCTION_THEN_ARGUMENT = re.compile(
    r"(?<!<msub>)(?<!<msup>)(?<!<msubsup>)(?<!<munder>)(?<!<mover>)(?<!<munderover>)"
    r"(<mi>[A-Za-z]{2,}</mi>)(?=<(?:mi|mn|msub|msup|msubsup)>)"
)
PREFIX_MINUS = re.compile(r"(<mo[^>]*>[(\[{,=]</mo>|<mrow>|<mtd[^>]*>)<mo>−</mo>")
# The decimal comma of the Spanish edition, written 0{,}5 as in TeX (a bare comma is
# punctuation and spaced as such): latex2mathml splits it into three tokens; one
# number is one <mn>, as 0.5 is.  The semicolon that separates such numbers in a list
# (1;\ 0{,}1) is punctuation, not an identifier.
DECIMAL_COMMA = re.compile(r"<mn>(\d+)</mn><mrow><mo>,</mo></mrow><mn>(\d+)</mn>")
CHAR_REF = re.compile(r"&#x([0-9A-Fa-f]+);")
MARKUP = {ord(c) for c in "&<>\"'"}
# Inside \text{...} latex2mathml copies TeX's escapes (\_ in num\_heads) as they are;
# in \operatorname{rotate\_half} it loses the name.  Names with an underscore go
# through as one word (UNDERSCORE), which becomes "_" again in the MathML.
TEXT_ARG = re.compile(r"\\(text|textrm)\{([^{}]*)\}")
TEXT_ESCAPE = re.compile(r"\\([_%&#$])")
NAME_ARG = re.compile(r"\\(?:operatorname|mathrm)\{([A-Za-z0-9]*(?:\\_[A-Za-z0-9]*)+)\}")
UNDERSCORE = "UNDERSCOREINANAME"


class MathError(ValueError):
    """A formula that does not convert to MathML."""


def to_mathml(tex, display):
    """The MathML of one formula: ``<math display="block|inline">…</math>``.

    Raises :class:`MathError` when ``latex2mathml`` fails, or when it leaves a TeX
    command in the result (it copies commands it does not know, ``\\foo``, as text).
    """
    tex = TEXT_ARG.sub(lambda m: "\\" + m[1] + "{" + TEXT_ESCAPE.sub(r"\1", m[2]) + "}", tex)
    tex = NAME_ARG.sub(lambda m: r"\operatorname{" + m[1].replace(r"\_", UNDERSCORE) + "}", tex)
    tex = LIMITS.sub(r"\1\\limits", tex)
    try:
        mathml = convert(tex, display="block" if display else "inline")
    except Exception as err:  # latex2mathml raises several of its own exception types
        raise MathError(f"latex2mathml cannot convert {tex!r}: {type(err).__name__}: {err}") from err
    # Smaller pages: HTML puts <math> in MathML's namespace itself, and characters
    # need no numeric references (except those that would read as markup).
    mathml = mathml.replace(f' xmlns="{MATHML_NS}"', "", 1)
    mathml = CHAR_REF.sub(lambda m: m[0] if int(m[1], 16) in MARKUP else chr(int(m[1], 16)), mathml)
    mathml = NAMED_SPACE.sub(lambda m: f'width="{NAMED_SPACES[m[1]]}"', mathml)
    # Limits move beside an operator within a line (\max_i), as in TeX.
    mathml = re.sub(r"<(munder|munderover)><mo>", r'<\1><mo movablelimits="true">', mathml)
    # Binary operators latex2mathml writes as identifiers inside scripts (d_in \times h).
    mathml = re.sub(r"<mi>([×·⋅±∓⊙∘])</mi>", r"<mo>\1</mo>", mathml)
    mathml = WORD_OPERATOR.sub(lambda m: m[0] if m[1] in OPERATOR_WORDS else f"<mi>{m[1]}</mi>", mathml)
    mathml = mathml.replace(UNDERSCORE, "_").replace("<mo>∞</mo>", "<mi>∞</mi>")
    mathml = DECIMAL_COMMA.sub(r"<mn>\1,\2</mn>", mathml).replace("<mi>;</mi>", '<mo separator="true">;</mo>')
    # A minus sign that opens a group or follows a relation is a sign, not a subtraction.
    mathml = PREFIX_MINUS.sub(r'\1<mo form="prefix">−</mo>', mathml)
    # TeX's thin space between a function name and what it applies to (\cos p\theta),
    # unless the name is the base of a script (\operatorname{softmax}_j).
    mathml = FUNCTION_THEN_ARGUMENT.sub(r'\1<mspace width="0.1667em"/>', mathml)
    leftover = [t for t in TOKEN_TEXT.findall(mathml) if "\\" in html.unescape(t)]
    if leftover:
        raise MathError(f"latex2mathml does not know {', '.join(leftover)} in {tex!r}")
    return mathml


def display_tex(node):
    """The TeX of a display formula as Sphinx's MathJax renderer would wrap it.

    Paragraphs of a ``math`` directive are equations aligned one under another;
    one with ``\\\\`` is split over lines.
    """
    if node.get("no-wrap", node.get("nowrap", False)):
        return node.astext()
    parts = [part for part in node.astext().split("\n\n") if part.strip()]
    parts = [rf"\begin{{split}}{part}\end{{split}}" if r"\\" in part else part for part in parts]
    if len(parts) > 1:
        return r"\begin{aligned}" + r"\\".join(parts) + r"\end{aligned}"
    return parts[0] if parts else ""


def _convert(self, node, tex, display):
    try:
        mathml = to_mathml(tex, display)
        if self.builder.name.startswith("epub"):  # XHTML: <math> needs its namespace
            mathml = mathml.replace("<math ", f'<math xmlns="{MATHML_NS}" ', 1)
        return mathml
    except MathError as err:
        logger.warning(str(err), location=node)
        return f"<code>{html.escape(tex)}</code>"


def visit_math(self, node):
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(_convert(self, node, node.astext(), display=False))
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_displaymath(self, node):
    # A formula wider than a phone scrolls sideways (book.css): tabindex lets a keyboard
    # reach and scroll it (browsers that do not focus scrolling boxes by themselves), and
    # a focusable box needs a role and a name (axe: scrollable-region-focusable).
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


# -- the math font -----------------------------------------------------------------------


def stix_two_math():
    """STIX Two Math's file in the ``ziamath`` wheel (a pinned requirement)."""
    import ziamath

    path = Path(ziamath.__file__).parent / "fonts" / "STIXTwoMath-Regular.ttf"
    if not path.is_file():
        raise ExtensionError(f"STIX Two Math not found at {path}: check the ziamath version in requirements.txt")
    return path


def book_characters(app):
    """Every character the MathML of the book's formulas draws, over all pages."""
    chars = set()
    for docname in sorted(app.env.found_docs):
        doctree = app.env.get_doctree(docname)
        for node in doctree.findall(lambda n: isinstance(n, (nodes.math, nodes.math_block))):
            display = isinstance(node, nodes.math_block)
            try:
                mathml = to_mathml(display_tex(node) if display else node.astext(), display)
            except MathError:
                continue  # already reported where the page was written
            for text in TOKEN_TEXT.findall(mathml):
                chars |= set(html.unescape(text))
    return chars


def write_math_font(app, exception):
    """Write ``_static/book-math.woff2``: the math font, only the glyphs the book needs.

    Why: the whole font is 1.5 MB; cut down (with its MATH table's bigger sizes
    and pieces of the characters kept) it is a few tens of KB.  Browsers fetch
    it only on pages that draw a ``<math>``.
    """
    if exception is not None or app.builder.format != "html" or app.builder.name.startswith("epub"):
        return  # (the EPUB draws its formulas as images: conf.py's epub_math_renderer)
    # Glyphs MathML draws without a character in the markup: the radical of <msqrt>.
    chars = book_characters(app) | set(" 0123456789√")
    write_font_subset(stix_two_math(), chars, Path(app.outdir) / "_static" / FONT, all_layout_features=True)


def setup(app):
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_displaymath, None))
    app.connect("build-finished", write_math_font)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
