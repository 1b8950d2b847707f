"""Pieces of a page as plain text, for the places that cannot show markup.

A tooltip or a description shows a formula as text (``6 × 6``), a reference as its title;
a downloaded notebook or script shows a role (``{ref}`ch-02```) as the words the page shows.
"""

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging

logger = logging.getLogger(__name__)

# TeX as characters; a command this list does not know loses its backslash.
TEX_TEXT = [
    (r"\\(text|mathrm|operatorname|mathbf|mathit|textrm)\{([^{}]*)\}", r"\2"),
    (r"\\sqrt\{([^{}]*)\}", r"√\1"), (r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1)/(\2)"),
    (r"\\mathcal\{N\}", "𝒩"),
    (r"\\times", "×"), (r"\\cdot", "·"), (r"\\infty", "∞"), (r"\\l?dots", "…"),
    (r"\\le(?![a-z])", "≤"), (r"\\ge(?![a-z])", "≥"), (r"\\ne(?![a-z])", "≠"), (r"\\to(?![a-z])", "→"),
    (r"\\bmod", "mod"), (r"\^\\top", "ᵀ"), (r"\\top", "ᵀ"), (r"\\sum", "Σ"), (r"\\sqrt", "√"),
    (r"\\alpha", "α"), (r"\\beta", "β"), (r"\\omega", "ω"), (r"\\Omega", "Ω"), (r"\\sigma", "σ"),
    (r"\\[,;:! ]|\\q?quad", " "), (r"\\(left|right)", ""),
    (r"([_^])\{(\w+)\}", r"\1\2"), (r"([_^])\{\(?([^{}]*?)\)?\}", r"\1(\2)"),
    (r"\\([A-Za-z]+)", r"\1"), (r"[{}\\]", ""), (r"  +", " "),
]


def tex_to_text(tex):
    """``6 \\times 6`` -> ``6 × 6``; ``d_\\text{head}`` -> ``d_head``."""
    for pattern, repl in TEX_TEXT:
        tex = re.sub(pattern, repl, tex)
    return tex.strip()


def plain_text(node, env=None):
    """The text of ``node`` as a reader sees it, on one line: formulas as text, references by title."""

    def text(node):
        if isinstance(node, nodes.math):
            return tex_to_text(node.astext())
        if isinstance(node, nodes.Text):
            return str(node)
        if isinstance(node, addnodes.pending_xref) and node.get("reftype") == "ref" and env is not None:
            entry = env.domains.standard_domain.labels.get(node["reftarget"].lower())
            if entry is not None and not node.get("refexplicit"):
                return entry[2]
        return "".join(text(child) for child in node.children)

    return re.sub(r"\s+", " ", text(node)).strip()


ROLE = re.compile(r"(?:\{(?P<myst>[a-z]+(?::[a-z]+)*)\}|:(?P<rst>[a-z]+(?::[a-z]+)*):)`(?P<text>[^`]*)`")
TITLED = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
PY_ROLES = {"func", "class", "meth", "mod", "attr", "obj", "data", "exc", "const", "any"}


def resolve_roles(text, ref_title, code="`", cite=None):
    """MyST's and reST's roles in ``text`` as the words the page shows: ``ref_title(target, role)`` for a
    ``ref`` or ``doc`` without text of its own, ``cite(role, keys)`` for a citation, Python objects as code
    (between ``code`` marks), formulas as ``$…$``, any other role (``term``) as its text."""

    def role(match):
        full, content = match["myst"] or match["rst"], match["text"]
        name = full.split(":")[-1]
        if full.startswith("cite:") and cite is not None:
            return cite(name, content)
        titled = TITLED.match(content)
        if name == "math":
            return f"${content}$"
        if titled:
            return titled["text"] if name not in PY_ROLES else f"{code}{titled['text']}{code}"
        if name in ("ref", "numref", "doc"):
            return ref_title(content, name)
        if name in PY_ROLES:
            return code + (content[1:].rsplit(".", 1)[-1] if content.startswith("~") else content) + code
        return content

    return ROLE.sub(role, text)


def ref_titles(env, base=""):
    """``ref_title`` for :func:`resolve_roles`: the target's title in italics; with ``base`` (the site), a link."""
    labels = env.domains.standard_domain.labels
    base = base.rstrip("/") + "/" if base else ""

    def title(target, role):
        name = target.lstrip("/")
        if role == "doc":
            text = env.titles[name].astext() if name in env.titles else target
        elif (entry := labels.get(target.lower())) is None:
            logger.warning(f"{{{role}}}`{target}`: no such label", type="book_text")
            return target
        elif base:
            return f"[{entry[2]}]({base}{entry[0]}.html#{entry[1]})"  # (docname, label id, title)
        else:
            text = entry[2]
        return "*" + text.replace("*", "\\*") + "*"

    return title
