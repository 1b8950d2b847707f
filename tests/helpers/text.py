"""Text checks shared by the source tests and the built-page tests."""
import re

# English: "the notes", "the course notes", "the slides' seed", "course notebook", ...
ENGLISH = re.compile(
    r"\b(?:the|these|those|its|their|our)\s+(?:course\s+)?(?:notes|slides)\b|\bcourse\s+notebooks?\b"
    r"|\b(?:notes|slides)'|\bthe course\b|\blecture notes\b",
    re.IGNORECASE,
)
# Spanish: «los apuntes», «las diapositivas», «el curso», «del curso».
SPANISH = re.compile(r"\bapuntes\b|\bdiapositivas?\b|\b(?:el|del|al|este|un)\s+curso\b", re.IGNORECASE)
UNSEEN = re.compile(f"{ENGLISH.pattern}|{SPANISH.pattern}", re.IGNORECASE)


def mentions(text):
    """The phrases of ``text`` that point at unseen notes, slides or a course (the book stands alone)."""
    return [m.group(0) for m in UNSEEN.finditer(text)]


# Words a formula of the Spanish edition may show although Spanish prose never uses
# them: function names, the names the papers give (Vaswani et al.'s MultiHead and
# Concat), and names of the package's code (d_head, d_model, d_in, d_out and h_kv name
# its arguments; True and False are Python's).  Anything else must be Spanish: display
# formulas are shared with the English edition, so they use notation only
# (locale/README.md, «Formulas»).  Used on the built pages and on the catalogs.
MATH_NAMES = frozenset(
    """
    softmax exp log ln sin cos tanh max min mod diag Var
    Attention MultiHead Concat PE FFN LN MLP MHA Embedding
    head model in out kv dropout rope rotate_half attn head_dim num_heads base perm
    Mixer atol rtol True False NaN bytes
    """.split()
)

# The words of a formula written in LaTeX: what \text{…}, \mathrm{…}, \textrm{…} and
# \operatorname{…} spell out, inside $…$ or :math:`…`.
_MATH = re.compile(r"\$\$?(.+?)\$\$?|:math:`([^`]*)`", re.S)
_WORDED = re.compile(r"\\(?:text|mathrm|textrm|operatorname|textit|mathit)\{([^{}]*)\}")


def latex_math_words(text):
    """The words (two letters or more) the formulas of ``text`` spell out in text commands."""
    return [
        word
        for m in _MATH.finditer(text)
        for worded in _WORDED.findall(m[1] or m[2])
        for word in re.findall(r"[^\W\d]{2,}", worded.replace("\\_", "_"))
    ]
