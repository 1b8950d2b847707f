"""The package's code as the chapters show it: without its docstrings.

A local Sphinx extension (``extensions`` in ``conf.py``).  A chapter shows the
package's real code with ``literalinclude`` (one source of truth), and both
languages show the same code.  The docstrings of that code are English prose
(PyTorch-style: the formula, the shapes, every argument); on a Spanish page they
would be English sentences between translated paragraphs, and they make a
forward pass longer than a screen.  The API page carries them in full, in both
languages (``locale/es/LC_MESSAGES/api.po``).

Why: this replaces Sphinx's ``literalinclude`` with a subclass that removes, from
a ``.py`` listing, every docstring of the lines it shows (of the module, a class
or a function), after Sphinx's own options (``:pyobject:``, ``:start-at:``, ...)
have chosen the lines.  ``tests/book/test_build.py`` checks that no listing on a
built page has a docstring left.
"""

import ast
import textwrap

from docutils import nodes
from sphinx.directives.code import LiteralInclude


def docstrings(code):
    """``(first, last, alone)`` of every docstring of ``code`` (Python source), by line (1-based).

    ``alone`` says the docstring is its block's only statement.  ``code`` may be
    indented (a method cut out of its class); code that does not parse has none.
    """
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.append((first.lineno, first.end_lineno, len(node.body) == 1))
    return found


def strip_docstrings(code):
    """``code`` without its docstrings.

    A function or class whose body was only its docstring gets ``...``, so that
    what the page shows is still Python.
    """
    lines = code.splitlines(keepends=True)
    for first, last, alone in sorted(docstrings(code), reverse=True):
        line = lines[first - 1]
        indent = line[: len(line) - len(line.lstrip())]
        if alone:
            lines[first - 1 : last] = [indent + "...\n"]
        else:  # and the blank line that separated it from the code
            blank = last < len(lines) and not lines[last].strip()
            lines[first - 1 : last + blank] = []
    return "".join(lines)


class BookLiteralInclude(LiteralInclude):
    """``literalinclude``, with the docstrings of a Python listing removed."""

    def run(self):
        result = super().run()
        if not self.arguments[0].endswith(".py"):
            return result
        for node in result:
            for block in node.findall(nodes.literal_block):
                text = strip_docstrings(block.astext())
                block.children = [nodes.Text(text)]
                block.rawsource = text
        return result


def setup(app):
    app.add_directive("literalinclude", BookLiteralInclude, override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

