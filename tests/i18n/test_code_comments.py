"""Comments in the code the pages show, and what its cells print, read the same in both languages.

Code is shared by the English and the Spanish book: the code cells of the
chapters, the code blocks of the gallery scripts and the package code the
chapters show with ``literalinclude`` appear untranslated on the Spanish pages.
Their comments must therefore say what they say with shapes
(``# (B, T, d_out) -> (B, h, T, d_head)``), formulas, symbols and identifiers;
the explanations belong to the text around the code, which is translated.

An English sentence is recognised by its small words: a comment with two or
more words from ``FUNCTION_WORDS`` (``the``, ``of``, ``is``, ...) reads as
prose; so does a comment with two English words in a row (``query positions``,
``least squares``), which shapes and formulas never write.  Words inside
backquotes or quotes, and identifiers (``d_head``, ``x.shape``, ``f(x)``), do not
count.  Plain fenced Python blocks of the pages (```` ```python ````) are shown code
too.  No build is needed (not marked ``book``).
"""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"

# Small English words that a formula, a shape or an identifier does not use.
FUNCTION_WORDS = frozenset(
    """
    the of is are to and with for this that these those we it its each from by on not
    one an be as at or so but than into was were has have had which what when where who
    how only every all same other there here then also our you your can will would should
    per just they them their because about before after over under between
    """.split()
)
LIMIT = 2  # this many function words make a comment prose

CELL = re.compile(r"^```(?:\{code-cell\}[^\n]*|python|py|\{code-block\} python)\n(.*?)^```", re.S | re.M)
INCLUDE = re.compile(r"^```\{literalinclude\}\s+(\S+)\n(.*?)^```", re.S | re.M)
OPTION = re.compile(r"^:(\w[\w-]*):\s*(.*)$", re.M)
# Words that are prose: not inside `...`, "..." or '...', not part of an identifier
# or an attribute (d_head, x.shape), not a call (f(x)).
QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"|'[^']*'")
WORD = re.compile(r"(?<![\w.])[A-Za-z]+(?![\w.(])")


def prose_words(comment):
    """The function words of one comment (its text after ``#``), in order."""
    text = QUOTED.sub(" ", comment.lstrip("#"))
    return [w for w in WORD.findall(text) if w.lower() in FUNCTION_WORDS]


def word_pairs(comment):
    """Two lowercase words of three letters or more in a row: ``query positions``.

    Only a space joins them: a comma, a colon or a bracket between two words is
    notation (``[batch, heads]``, ``cat(cached, new)``).
    """
    pairs = []
    tokens = QUOTED.sub(" , ", comment.lstrip("#")).split()
    for a, b in zip(tokens, tokens[1:]):
        first, second = a.lstrip("([").rstrip(), b.rstrip(",.:;)]")
        if re.fullmatch(r"[a-z]{3,}", first) and re.fullmatch(r"[a-z]{3,}", second):
            pairs.append(f"{first} {second}")
    return pairs


def reads_as_prose(text):
    return len(prose_words(text)) >= LIMIT


def comment_reads_as_prose(comment):
    # A comment is checked harder than a printed label (``scores:``, ``masked: -inf``):
    # two English words in a row make it prose.
    return reads_as_prose(comment) or bool(word_pairs(comment))


def docstring_reads_as_prose(text):
    # A docstring in a cell is shown untranslated like a comment, and it is a sentence by
    # nature: one English function word (``of``, ``in``) or two English words in a row
    # make it prose.  The book writes the comment ``# ms = 1e3 * median(thread_time(fn))``.
    words = [w for w in WORD.findall(QUOTED.sub(" ", text)) if w.lower() in FUNCTION_WORDS | {"in"}]
    return bool(words) or any(word_pairs(line) for line in text.splitlines())


def comments(code, first_line=1):
    """``(line, comment)`` for every ``#`` comment of Python source ``code``.

    Falls back to a plain scan of the lines when ``code`` does not tokenize
    (an IPython magic, a cell cut in the middle).
    """
    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.COMMENT:
                found.append((first_line + tok.start[0] - 1, tok.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        found = []
        for i, line in enumerate(code.split("\n")):
            m = re.search(r"(?:^|\s)(#.*)$", line)
            if m:
                found.append((first_line + i, m.group(1)))
    return found


def _line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def cell_code(body):
    """The code of a ``code-cell`` body, without its ``:key: value`` options or ``---`` block."""
    lines = body.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        start = end + 1
    else:
        while start < len(lines) and OPTION.match(lines[start]):
            start += 1
    return start, "\n".join(lines[start:])


def page_cells(docs=DOCS, root=ROOT):
    """``(where, first line, code)`` of every code cell of the pages (``docs/**/*.md``)."""
    for path in sorted(docs.rglob("*.md")):
        rel = path.relative_to(root)
        if any(part.startswith(("_", ".")) or part == "auto_examples" for part in rel.parts[1:]):
            continue
        text = path.read_text(encoding="utf-8")
        for m in CELL.finditer(text):
            skip, code = cell_code(m.group(1))
            yield str(rel), _line_of(text, m.start(1)) + skip, code


def gallery_code_blocks(examples=EXAMPLES, root=ROOT):
    """``(where, first line, code)`` of the code blocks of the gallery scripts.

    The text blocks (the docstring, the comment block that opens a ``# %%`` cell) are
    translated; the code blocks are not.
    """
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    for path in sorted(examples.glob("*.py")):
        _, blocks = split_code_and_text_blocks(str(path))
        for block in blocks:
            if block.type == "code":
                yield str(path.relative_to(root)), block.lineno, block.content


def _find_object(tree, dotted):
    """The ``ast`` node of ``Class.method`` / ``function`` at the top of ``tree``."""
    node = tree
    for name in dotted.split("."):
        node = next(
            n for n in node.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name
        )
    return node


def shown_ranges(docs=DOCS, root=ROOT):
    """``(page, source file, first line, last line)`` of every ``literalinclude`` of the pages.

    ``:pyobject:`` shows one object (decorators included), ``:lines:`` a range;
    without either, the whole file.
    """
    for path in sorted(docs.rglob("*.md")) + sorted(docs.rglob("*.rst")):
        rel = path.relative_to(root)
        if "auto_examples" in rel.parts:
            continue
        text = path.read_text(encoding="utf-8")
        for m in INCLUDE.finditer(text):
            source = (path.parent / m.group(1)).resolve()
            options = dict(OPTION.findall(m.group(2)))
            lines = source.read_text(encoding="utf-8").split("\n")
            if "pyobject" in options:
                node = _find_object(ast.parse("\n".join(lines)), options["pyobject"])
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                yield rel, source, *_cut(lines, first, node.end_lineno, options)
            elif "lines" in options:
                for part in options["lines"].split(","):
                    a, dash, b = part.strip().partition("-")
                    yield rel, source, int(a or 1), (int(b or len(lines)) if dash else int(a))
            else:
                yield rel, source, 1, len(lines)


def _cut(lines, first, last, options):
    """``(first, last)`` narrowed by ``:start-at:``, ``:start-after:``, ``:end-at:``, ``:end-before:``."""
    shown = range(first, last + 1)
    for key, shift in (("start-at", 0), ("start-after", 1)):
        if key in options:
            first = next(n for n in shown if options[key] in lines[n - 1]) + shift
    for key, shift in (("end-at", 0), ("end-before", -1)):
        if key in options:
            last = next(n for n in range(first, last + 1) if options[key] in lines[n - 1]) + shift
    return first, last


def included_code(docs=DOCS, root=ROOT):
    """``(where, first line, code)`` of every range of the package's sources that a page shows."""
    for page, source, first, last in shown_ranges(docs, root):
        lines = source.read_text(encoding="utf-8").split("\n")[first - 1:last]
        indent = len(lines[0]) - len(lines[0].lstrip())
        code = "\n".join(line[indent:] for line in lines)
        yield f"{source.relative_to(root)} (shown in {page})", first, code


def shown_comments(docs=DOCS, examples=EXAMPLES, root=ROOT):
    """``(where, comment)`` of every comment a reader meets in shown code."""
    for found in (page_cells(docs, root), gallery_code_blocks(examples, root), included_code(docs, root)):
        for where, first, code in found:
            for line, comment in comments(code, first):
                path, _, shown = where.partition(" ")
                yield f"{path}:{line} {shown}".rstrip(), comment


def printed_texts(code, first_line=1):
    """``(line, text)`` for every ``print`` call of ``code``: its string constants, joined.

    A label such as ``"torch.equal:"`` or ``f"{h_kv=}: bytes/token = {n}"`` is fine; a
    sentence printed under a code cell is English prose on the Spanish page.
    """
    found = []
    for node, name in calls(code):
        parts = strings(node) if name == "print" and isinstance(node.func, ast.Name) else []
        if parts:
            found.append((first_line + node.lineno - 1, " ".join(parts)))
    return found


def calls(code):
    """``(node, name)`` of every call in ``code`` (``name``: the function or method called); none if it does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node, node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)


def strings(node):
    """The string constants inside ``node``, in the order ``ast.walk`` meets them."""
    return [s.value for s in ast.walk(node) if isinstance(s, ast.Constant) and isinstance(s.value, str)]


def printed_in_cells(docs=DOCS, examples=EXAMPLES, root=ROOT):
    """``(where, text)`` of every ``print`` of the pages' cells and the gallery's code blocks."""
    for found in (page_cells(docs, root), gallery_code_blocks(examples, root)):
        for where, first, code in found:
            for line, text in printed_texts(code, first):
                yield f"{where}:{line}", text


def cell_docstrings(docs=DOCS, examples=EXAMPLES, root=ROOT):
    """``(where, text)`` of every docstring written in the pages' cells and the gallery's code blocks.

    (The package code the chapters show comes without its docstrings:
    ``docs/_ext/book_listings.py``.)
    """
    for found in (page_cells(docs, root), gallery_code_blocks(examples, root)):
        for where, first, code in found:
            try:
                tree = ast.parse(code)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    doc = ast.get_docstring(node, clean=False)
                    if doc is not None:
                        yield f"{where}:{first + node.body[0].lineno - 1}", doc


def test_the_sources_have_shown_code():
    # Guards the parsers: an empty scan would pass the test below without checking anything.
    assert sum(1 for _ in page_cells()) > 100
    assert sum(1 for _ in gallery_code_blocks()) > 30
    assert sum(1 for _ in shown_ranges()) > 20
    assert sum(1 for _ in shown_comments()) > 200


@pytest.mark.parametrize(
    "found, minimum, what, is_prose",
    [
        (lambda: shown_comments(), 200, "comments shown on the pages read as English prose", comment_reads_as_prose),
        (lambda: printed_in_cells(), 101, "cells print English sentences", reads_as_prose),
        (lambda: cell_docstrings(), 0, "docstrings in the cells read as English prose", docstring_reads_as_prose),
    ],
    ids=["comments", "printed", "docstrings"],  # at least this many of each: the parsers see their input
)
def test_no_english_prose_in_shown_code(found, minimum, what, is_prose):
    texts = list(found())
    assert len(texts) >= minimum, f"only {len(texts)} found: a parser lost its input"
    prose = [f"{where}: {text!r}" for where, text in texts if is_prose(text)]
    assert not prose, (
        f"{what} (the Spanish pages show them untranslated): say it with shapes, formulas, "
        "symbols and numbers, and move the explanation into the page's text:\n" + "\n".join(prose)
    )


def test_a_docstring_in_a_cell_is_found(tmp_path):
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text(
        '```{code-cell} ipython3\ndef f(w):\n    """Keys after the query get zero weight."""\n'
        "    return w\n```\n",
        encoding="utf-8",
    )
    (tmp_path / "examples").mkdir()
    found = list(cell_docstrings(tmp_path / "docs", tmp_path / "examples", tmp_path))
    assert found == [("docs/page.md:3", "Keys after the query get zero weight.")], found
    assert reads_as_prose(found[0][1])
    # Chapter 18 and plot_18 had this one (one function word only, so not prose as a comment).
    assert docstring_reads_as_prose("Median thread CPU time of fn(), in milliseconds.")
    assert docstring_reads_as_prose("Return the scaled scores")
    assert not docstring_reads_as_prose("ms = 1e3 * median(thread_time(fn))")


def test_a_printed_sentence_is_found():
    code = 'print("scores:", s)\nprint(f"tokens sent through the model: {n} without the cache")\n'
    assert [text for _, text in printed_texts(code) if reads_as_prose(text)] == [
        "tokens sent through the model:   without the cache"
    ]


@pytest.mark.parametrize(
    "comment",
    [
        "# the dot product is the sum of the element-wise products",
        "# keys and values of the new token, appended to the cache",
        "# one row per query: each row sums to 1",
        "# KeyError: no key equals the query, nothing comes back",
        "# (T_q, 1) query positions",
        "# a in  y = c · T^a  (least squares: log2 y ~ a · log2 T)",
    ],
)
def test_prose_is_recognised(comment):
    # Comments this book used to have (before they became formulas): the check must fail on them.
    assert comment_reads_as_prose(comment), (prose_words(comment), word_pairs(comment))


@pytest.mark.parametrize(
    "comment",
    [
        "# (B, T, d_out) -> (B, h, T, d_head)",
        "# sum_j a_ij = 1",
        "# q . x_1 = sum_i q_i x_1i",
        "# 2 * L * h_kv * d_head * T * b",
        "# (B, h, T, T): `is`, 'the', \"of\"",
        "# mask[P:P+T, :P+T], P = 4, T = 2",
        "# y = c · T^a  ->  a = cov(log2 T, log2 y) / var(log2 T)",
        "# Linear -> causal MHA (pos) -> Linear",
        "# q head i -> kv head i // group_size",
        "# (B, T, h, d_head), contiguous",
    ],
)
def test_symbols_are_not_prose(comment):
    assert not comment_reads_as_prose(comment), (prose_words(comment), word_pairs(comment))


def small_tree(root, page_cells, script_blocks):
    """``root/docs/chapters/page.md`` (a title, then ``page_cells``) and the gallery script
    ``root/examples/plot_x.py`` (a docstring, then ``script_blocks``); returns ``(docs, examples)``."""
    page = root / "docs" / "chapters" / "page.md"
    page.parent.mkdir(parents=True)
    page.write_text("# Page\n\n" + page_cells, encoding="utf-8")
    (root / "examples").mkdir()
    script = '"""\nTitle\n=====\n\nSummary.\n"""\n\n' + script_blocks
    (root / "examples" / "plot_x.py").write_text(script, encoding="utf-8")
    return root / "docs", root / "examples"


def test_a_prose_comment_in_a_page_cell_is_found(tmp_path):
    # End to end on a small tree: a page cell, a gallery script, an included function.
    docs, examples = small_tree(
        tmp_path,
        "```{code-cell} ipython3\n:tags: [hide-cell]\n\n"
        "x = 1  # (1,)\ny = x + 1  # add one to each of the inputs\n```\n\n"
        "```{literalinclude} ../../pkg.py\n:pyobject: f\n:language: python\n```\n",
        "# %%\n# The text block is in the catalogs,\n# so it is translated.\nx = 2  # x is the number of the heads\n",
    )
    (tmp_path / "pkg.py").write_text(
        "def g():\n    return 0  # this is not shown on the page\n\n\n"
        "def f(x):\n    return x @ x.T  # the scores of all the pairs\n",
        encoding="utf-8",
    )
    found = [(w, c) for w, c in shown_comments(docs, examples, tmp_path) if comment_reads_as_prose(c)]
    assert found == [
        ("docs/chapters/page.md:7", "# add one to each of the inputs"),
        ("examples/plot_x.py:11", "# x is the number of the heads"),
        ("pkg.py:6 (shown in docs/chapters/page.md)", "# the scores of all the pairs"),
    ], found


# -- what the figures and the printed labels say ---------------------------------------

# Words a printed label may write without being a name of its block: units (``ms/token``,
# ``bytes/token``), dtypes and the notation of formulas (``max |a - b|``, ``-inf``,
# ``head_1`` as in $\mathrm{head}_i$).
LABEL_WORDS = frozenset(
    """
    byte bytes token float16 float32 float64 bfloat16 int8 int64 inf nan sqrt exp log max min head
    """.split()
)
# Short English words a label must not write either (``vs MHA``): the function words
# under three letters, and ``vs``.
SHORT_WORDS = frozenset(w for w in FUNCTION_WORDS if len(w) < 3) | {"vs"}


def label_words(text, names):
    """The English words of a printed label: lowercase words that are neither names nor notation.

    A word counts if it has three letters or more (``slope``, ``theta``) or is a short
    function word (``vs``, ``of``); it passes if it is one of ``names`` (the names of
    the code that prints it: ``{loss=:.3f}``, ``ms(read)``, ``attn.layers.rope``) or in
    ``LABEL_WORDS``.  An identifier that is no name passes if each of its words does
    (``ms_decode``); capitalised words are names and acronyms (``RoPE``, ``MHA``, ``Var``).
    """
    allowed = names | LABEL_WORDS
    found = []
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        if word in allowed or re.search(r"[A-Z]", word):
            continue
        found += [w for w in re.findall(r"[a-z]+", word) if (len(w) >= 3 or w in SHORT_WORDS) and w not in allowed]
    return found


def english_printed_words(docs=DOCS, examples=EXAMPLES, root=ROOT):
    """``where: text [words]`` of every printed label with English words in it.

    A label is a name, a symbol, a unit or a formula (``a=2.11``, ``alibi_slopes(8):``,
    ``ms(read) / ms(ops)``); an English word (``slope``, ``theta:``, ``vs MHA``) is shown
    untranslated on the Spanish page.  Column headers made of the code's own names
    (``h_kv loss``) are names.
    """
    return [
        f"{where}: {text!r} {words}"
        for where, text, names in printed_with_names(docs, examples, root)
        if (words := label_words(text, names))
    ]


def test_printed_labels_are_not_english_words():
    found = english_printed_words()
    assert not found, "printed labels with English words (write names, symbols, formulas):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "code, words",
    [
        ('print(f"{p:9} {unit:>3}  slope {a:.2f}")', ["slope"]),
        ('print("theta:", t)', ["theta"]),
        ('print(f"{h_kv:>4} {n:>12,d} vs MHA")', ["vs"]),
        ('print(f"{p:9} {unit:>3}  a={a:.2f}")', []),
        ('print(f"{loss=:.3f}")', []),
        ('print(f"{t_read:.3f} ms(read)")', []),
        ('import attn\nprint("attn.layers.rope:", attn.layers.rope)', []),
        ('print(f"{n / 2**20:.1f} MiB, {b} bytes/token, {t} ms/token, float32, max |{x} - {y}| = -inf")', []),
    ],
)
def test_label_words(code, words):
    assert [w for _, text in printed_texts(code) for w in label_words(text, code_names(code))] == words


def test_a_printed_english_word_in_a_page_cell_is_found(tmp_path):
    # End to end on a small tree, with labels chapters 12 to 15 printed until they became
    # names and expressions: words are found in a page cell and in a gallery block; a
    # header of the cell's own names and an expression label are not.
    docs, examples = small_tree(
        tmp_path,
        "```{code-cell} ipython3\nfor loss, accuracy in [(1.0, 0.5)]:\n"
        "    print(f\"{'loss':>6s} {'accuracy':>8s}\")\n"
        "    print(f\"spread along diagonals, RoPE: {loss:.1e}\")\n"
        "    print(f\"{loss=:.3f} {accuracy=:.3f}\")\n```\n",
        '# %%\n# Text.\nspread = 0.0\nprint(f"theta: {spread:.1e}")\nprint(f"{spread=:.1e}")\n',
    )
    found = english_printed_words(docs, examples, tmp_path)
    assert found == [
        "docs/chapters/page.md:6: 'spread along diagonals, RoPE:  .1e' ['spread', 'along', 'diagonals']",
        "examples/plot_x.py:11: 'theta:  .1e' ['theta']",
    ], found


def code_names(code):
    """The names a block of code uses: variables, arguments, keywords, attributes, functions, classes, modules."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.keyword) and node.arg:
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.update([*node.name.split("."), node.asname or ""])
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update(node.module.split("."))
    return {part for name in names for part in [name, *name.split("_")] if part}


def printed_with_names(docs=DOCS, examples=EXAMPLES, root=ROOT):
    """``(where, text, names)``: every ``print`` of the cells and gallery blocks, with its block's code names."""
    for found in (page_cells(docs, root), gallery_code_blocks(examples, root)):
        for where, first, code in found:
            names = code_names(code)
            for line, text in printed_texts(code, first):
                yield f"{where}:{line}", text, names


def test_a_printed_phrase_is_found():
    code = 'print(f"alignment accuracy: {a:.3f}")\nprint(f"alignment_accuracy = {a:.3f}")\n'
    assert [word_pairs(text) for _, text in printed_texts(code)] == [["alignment accuracy"], []]


# Calls and keywords whose strings a figure draws.
LABEL_CALLS = {"set_xlabel", "set_ylabel", "set_zlabel", "set_title", "suptitle", "xlabel", "ylabel", "title",
               "bar", "barh"}
LABEL_KEYWORDS = {"xlabel", "ylabel", "zlabel", "title", "label"}


def figure_labels(code, first_line=1):
    """``(line, text)`` of every string a figure of ``code`` draws: axis labels, titles, legends, bar names."""
    found = []
    for node, name in calls(code):
        values = [node.args[0]] if name in LABEL_CALLS and node.args else []
        values += [kw.value for kw in node.keywords if kw.arg in LABEL_KEYWORDS]
        found += [(first_line + node.lineno - 1, text) for value in values for text in strings(value)]
    return found


def spanish_words():
    """The words of the Spanish catalogs' prose (outside code, math, role targets and «quotes»)."""
    from book_languages import TRANSLATION
    from translation_check import prose_words

    return prose_words(ROOT / "locale" / TRANSLATION / "LC_MESSAGES")


def english_label_words(text, spanish):
    """Words of a figure label that are neither Spanish nor notation.

    Math (``$P$``), TeX commands, identifiers (``use_cache=False``, ``KVCache()``,
    ``SelfAttentionV1``) and units or acronyms in capitals (``MSE``, ``KiB``) are neutral.
    """
    text = re.sub(r"\$[^$]*\$?|\\[A-Za-z]+|\{[^}]*\}|\S*[_=.()\[\]\d]\S*", " ", text)
    return [
        w for w in re.findall(r"[A-Za-z]{3,}", text)
        if w.lower() not in spanish and not re.search(r"[A-Z]", w[1:])
    ]


def test_english_label_words_are_found():
    spanish = {"token", "posición"}
    assert english_label_words("ms per update", spanish) == ["per", "update"]
    assert english_label_words("position P", spanish) == ["position"]
    assert not english_label_words("$P$ ms / token KiB MSE use_cache=False KVCache() $\\alpha^\\top", spanish)


def test_figure_labels_are_neutral():
    # Figures are shared by both editions: their labels are notation, code and units
    # (locale/README.md, «Code, printed output and figures»).
    spanish = spanish_words()
    found = [
        f"{where}:{line}: {text!r} {words}"
        for found_in in (page_cells(), gallery_code_blocks())
        for where, first, code in found_in
        for line, text in figure_labels(code, first)
        if (words := [w for w in english_label_words(text, spanish) if w not in code_names(code)])
    ]
    assert not found, "figure labels in English (write notation: $P$, ms / token):\n" + "\n".join(found)


# -- what a page shows fits on one screen --------------------------------------------------

SCREEN = 45  # lines: what a page shows of a cell or a listed function or class fits on one screen


def shown_lengths(docs=DOCS, root=ROOT):
    """``{(page, first line shown): lines}`` of every listing and code cell of the pages.

    A Python listing is measured as the page shows it: without its docstrings
    (``docs/_ext/book_listings.py``; the API page has them).
    """
    from book_listings import strip_docstrings

    lengths = {}
    for page, source, first, last in shown_ranges(docs, root):
        lines = source.read_text(encoding="utf-8").split("\n")[first - 1:last]
        code = "\n".join(lines)
        if source.suffix == ".py":
            code = strip_docstrings(code)
        key = (str(page), lines[0].strip())
        lengths[key] = max(lengths.get(key, 0), len(code.strip("\n").split("\n")))
    for where, _, code in page_cells(docs, root):
        lines = code.strip("\n").split("\n")
        lengths[(where, lines[0].strip())] = max(lengths.get((where, lines[0].strip()), 0), len(lines))
    return lengths


def longer_than_a_screen(docs=DOCS, root=ROOT):
    """``{(page, first line shown): lines}`` of the listings and cells over ``SCREEN`` lines."""
    return {key: n for key, n in shown_lengths(docs, root).items() if n > SCREEN}


def test_shown_lengths_measures_a_listing(tmp_path):
    (tmp_path / "pkg.py").write_text(
        "@decorated\ndef f():\n" + "    x = 1\n" * 50
        + "class C:\n    \"\"\"Doc.\n\n    More.\n    \"\"\"\n\n    def g(self):\n        \"\"\"Doc.\"\"\"\n        return 1\n"
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(
        "```{literalinclude} ../pkg.py\n:pyobject: f\n```\n\n```{literalinclude} ../pkg.py\n:pyobject: C\n```\n\n"
        "```{code-cell} ipython3\nx = 1\ny = 2\n```\n"
    )
    # the class is shown as "class C:", "    def g(self):", "        return 1": its docstrings are not
    assert shown_lengths(tmp_path / "docs", tmp_path) == {
        ("docs/page.md", "@decorated"): 52, ("docs/page.md", "class C:"): 3, ("docs/page.md", "x = 1"): 2,
    }


def test_a_listing_longer_than_a_screen_is_found(tmp_path):
    (tmp_path / "pkg.py").write_text(
        "def long():\n" + "    x = 1\n" * SCREEN
        + "def documented():\n    \"\"\"Doc.\n" + "    More.\n" * SCREEN + "    \"\"\"\n" + "    x = 1\n" * (SCREEN - 1)
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(
        "```{literalinclude} ../pkg.py\n:pyobject: long\n```\n\n"
        "```{literalinclude} ../pkg.py\n:pyobject: documented\n```\n\n"
        "```{code-cell} ipython3\n" + "x = 1\n" * (SCREEN + 1) + "```\n"
    )
    assert longer_than_a_screen(tmp_path / "docs", tmp_path) == {
        ("docs/page.md", "def long():"): SCREEN + 1, ("docs/page.md", "x = 1"): SCREEN + 1,
    }


def test_what_a_page_shows_fits_on_one_screen():
    long = longer_than_a_screen()
    assert not long, f"more than {SCREEN} lines on one screen (split the cell, or shorten the listing): {long}"


# -- printed names the Spanish text ties to its words ---------------------------------------

def printed_alternatives(code):
    """The lowercase words a block shows as data: legend labels (``label="fresh"``) and the
    strings of a list or tuple it prints by (``paths = ["explicit", "fused", "tiled"]``).

    They are not names a reader sees assigned in the code, so the Spanish text must say
    which of its words each one is: «**explícita** (`explicit` en la salida impresa)».  (A
    variable printed with its value, ``weights:``, is named by the code above it: not
    checked; locale/README.md, «Code, printed output and figures».)
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    words = set()
    prints = any(name == "print" for _, name in calls(code))
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "label":
            words |= {s for s in strings(node.value) if re.fullmatch(r"[a-z]{3,}", s)}
        if prints and isinstance(node, (ast.List, ast.Tuple)):
            items = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            plain = [s for s in items if re.fullmatch(r"[a-z]{3,}", s)]
            if len(items) == len(node.elts) and len(plain) >= 2:
                words |= set(plain)
    return words - LABEL_WORDS


def code_in_catalog(po_path):
    """The identifiers written in code font (```x``` or ````x````) in the messages of one catalog."""
    import polib

    found = set()
    for e in polib.pofile(str(po_path)):
        for m in re.finditer(r"``(.*?)``|`([^`]*)`", e.msgstr):
            found |= set(re.findall(r"[A-Za-z_]\w*", m[1] or m[2] or ""))
    return found


def untied_printed_names(docs=DOCS, examples=EXAMPLES, root=ROOT, po_dir=None):
    """``where: [words]`` of the printed alternatives that the page's Spanish catalog never writes in code font."""
    from book_languages import TRANSLATION

    po_dir = po_dir or root / "locale" / TRANSLATION / "LC_MESSAGES"
    found, spans = [], {}
    for blocks, folder in ((page_cells(docs, root), "chapters"), (gallery_code_blocks(examples, root), "auto_examples")):
        for where, first, code in blocks:
            po = po_dir / folder / (Path(where.split(":")[0]).stem + ".po")
            if not po.is_file():
                continue
            if po not in spans:
                spans[po] = code_in_catalog(po)
            missing = sorted(printed_alternatives(code) - spans[po])
            if missing:
                found.append(f"{where}:{first}: {missing}")
    return found


def test_printed_alternatives_are_found(tmp_path):
    assert printed_alternatives(
        'paths = ["explicit", "fused", "tiled"]\nfor p in paths:\n    print(f"{p} ms")\n'
        'ax.plot(a, label="fresh")\nax.plot(b, label="$\\\\ln V$")\n'
    ) == {"explicit", "fused", "tiled", "fresh"}
    assert not printed_alternatives('colors = ["tab:gray", "tab:blue"]\nprint(max(a, b))\nprint(["ms", "MiB"])\n')
    # End to end: chapter 12 named the paths «explícita», «fusionada», «por bloques» only.
    docs, examples = small_tree(tmp_path, '```{code-cell} ipython3\nfor p in ["explicit", "fused"]:\n    print(p)\n```\n',
                                "# %%\n# Text.\nax.plot(a, label='repeat')\n")
    po_dir = tmp_path / "po"
    for folder, name, text in (("chapters", "page", "**explícita** (`explicit` en la salida impresa), **fusionada**"),
                               ("auto_examples", "plot_x", "la pérdida en los tokens repetidos")):
        (po_dir / folder).mkdir(parents=True)
        (po_dir / folder / f"{name}.po").write_text(
            f'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "x"\nmsgstr "{text}"\n',
            encoding="utf-8")
    assert untied_printed_names(docs, examples, tmp_path, po_dir) == [
        "docs/chapters/page.md:4: ['fused']", "examples/plot_x.py:10: ['repeat']"]


def test_printed_names_are_tied_to_the_spanish_text():
    found = untied_printed_names()
    assert not found, ("names a cell prints or a legend draws that the Spanish text never writes in code font "
                       "(«**fusionada** (`fused`)»):\n" + "\n".join(found))
