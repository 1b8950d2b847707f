"""The book's TeX → MathML conversion (docs/_ext/book_math.py), without building the book.

The build runs with ``-W``: a formula that does not convert stops it, and
``tests/book/test_build.py`` checks that every formula of the built pages is a
``<math>``.  Here: the constructs the book uses come out as the right MathML
elements, and what latex2mathml would pass through silently is an error.
"""

import re

import pytest
from book_math import MathError, display_tex, to_mathml
from docutils import nodes


def tags(mathml):
    return re.findall(r"<(m[a-z]+)\b", mathml)


@pytest.mark.parametrize(
    "tex, expected",
    [
        (r"\frac{Q K^\top}{\sqrt{d_k}}", ["mfrac", "msup", "msqrt", "msub"]),
        (r"\begin{pmatrix} \cos m\theta & -\sin m\theta \\ \sin m\theta & \cos m\theta \end{pmatrix}",
         ["mtable", "mtr", "mtd"]),
        (r"M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}", ["mtable", "msub"]),
        (r"\operatorname{softmax}_j(x)", ["msub", "mi"]),
        (r"\theta_i = \text{base}^{-2i/d}", ["mtext", "msup"]),
        (r"\sum_{j=1}^{T} \alpha_{ij} v_j", ["munderover", "msub"]),
    ],
)
def test_constructs_become_mathml(tex, expected):
    mathml = to_mathml(tex, display=True)
    assert mathml.startswith("<math") and 'display="block"' in mathml
    found = tags(mathml)
    for tag in expected:
        assert tag in found, f"{tex!r}: no <{tag}> in {mathml}"


def test_function_names_are_identifiers_and_spaces_are_lengths():
    mathml = to_mathml(r"\operatorname{dropout}\!\left(x\right) \bmod V", display=False)
    assert "<mi>dropout</mi>" in mathml  # not <mo>, which MathML spaces like "+"
    assert "<mo>mod</mo>" in mathml
    assert "negativethinmathspace" not in mathml and 'width="-0.1667em"' in mathml


@pytest.mark.parametrize("tex", [r"\foo{x} + 1", r"\underbraced{x}", r"\frac{1}{"])
def test_what_does_not_convert_is_an_error(tex):
    with pytest.raises(MathError):
        to_mathml(tex, display=False)


def test_display_paragraphs_are_aligned_and_line_breaks_split():
    block = nodes.math_block("a = b\n\nc = d \\\\ e", "a = b\n\nc = d \\\\ e", nowrap=False, number=None)
    tex = display_tex(block)
    assert tex.startswith(r"\begin{aligned}") and r"\begin{split}c = d" in tex
    assert "<mtable" in to_mathml(tex, display=True)


def test_names_with_underscores_and_infinity():
    mathml = to_mathml(r"\operatorname{rotate\_half}(x) - \infty + \text{num\_heads}", display=False)
    assert "<mi>rotate_half</mi>" in mathml and "<mtext>num_heads</mtext>" in mathml
    assert "<mi>∞</mi>" in mathml and "<mo />" not in mathml


def test_a_decimal_comma_is_one_number():
    # The Spanish edition writes 0{,}5 (locale/README.md): one <mn>, as 0.5 is, and the
    # semicolon between such numbers is punctuation.
    mathml = to_mathml(r"\theta_i = 1;\ 0{,}1;\ 3{,}35 \cdot 10^{12}", display=False)
    assert "<mn>0,1</mn>" in mathml and "<mn>3,35</mn>" in mathml, mathml
    assert '<mo separator="true">;</mo>' in mathml and "<mi>;</mi>" not in mathml
    assert "<mn>0.5</mn>" in to_mathml("0.5", display=False)  # the English edition's point
