"""The package's code as the chapters show it: ``literalinclude`` without the docstrings of a ``.py``.

Why: English prose amid a Spanish page's paragraphs, and a forward pass longer than a screen; the API has them.
"""

import ast
import textwrap

from docutils import nodes
from sphinx.directives.code import LiteralInclude


def docstrings(code):
    """``(first, last, alone)``: each docstring's lines in ``code`` (maybe indented); ``alone``: all its block."""
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return []
    return [
        (node.body[0].lineno, node.body[0].end_lineno, len(node.body) == 1)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and ast.get_docstring(node) is not None
    ]


def strip_docstrings(code):
    """``code`` without its docstrings; a body that was only its docstring gets ``...`` (still Python)."""
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
