"""The chapters' notebooks: their text in Spanish, their MyST made plain Markdown.

``docs/_ext/chapter_notebooks.py`` writes each chapter as a notebook after the
build; these checks run its conversion on the sources, without a build (the
built notebooks are checked in ``tests/book/test_notebooks.py``).
"""

import ast
import sys
from pathlib import Path

import pytest
from book_languages import SOURCE, TRANSLATION, catalog

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from chapter_notebooks import Converter, md_parser  # noqa: E402
from myst_nb.core.read import read_myst_markdown_notebook  # noqa: E402
from myst_parser.config.main import MdParserConfig  # noqa: E402

CHAPTERS = sorted((ROOT / "docs" / "chapters").glob("*.md"))


def text_cells(lang, path):
    """``(texts, missing)``: the text cells of the page at ``path`` in ``lang``, without a build.

    Outside Sphinx, references keep their labels and ``literalinclude`` names its
    file: enough to see the translation (the tests check that nothing is missing).
    """
    conf = ast.parse((ROOT / "conf.py").read_text(encoding="utf-8"))
    extensions = next(
        ast.literal_eval(node.value) for node in conf.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "myst_enable_extensions"
    )
    md_config = MdParserConfig(enable_extensions=set(extensions))
    page = Path(path).resolve().relative_to(ROOT / "docs").with_suffix("").as_posix()
    converter = Converter(
        md_parser(md_config), catalog(lang, page), lambda target, role: target,
        lambda argument, options, line: (f"# {argument}", "python"), translate=lang != SOURCE,
    )
    nb = read_myst_markdown_notebook(Path(path).read_text(encoding="utf-8"), config=md_config)
    texts = [converter.convert(cell.source) for cell in nb.cells if cell.cell_type == "markdown"]
    return texts, converter.missing


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_element_of_the_chapter_has_its_translation(chapter):
    # Each paragraph, title, list item, table cell, admonition title: a message of
    # the page's catalog, found and translated.  What is listed here stays English.
    texts, missing = text_cells(TRANSLATION, chapter)
    assert texts, f"{chapter.name}: no text cells"
    assert not missing, f"{chapter.name}: {len(missing)} element(s) with no translation: {[m[:70] for m in missing]}"


def _converter(catalog, translate=True):
    parser = md_parser(MdParserConfig(enable_extensions={"dollarmath", "amsmath", "colon_fence", "deflist"}))
    titles = {"ch-03": "Trainable weights"}
    return Converter(
        parser, catalog, lambda target, role: titles.get(target, "?"),
        lambda argument, options, line: ("class A:\n    pass\n", options.get("language", "")), translate=translate,
    )


MYST = """(ch-05)=
# Causal attention

The attention of {ref}`ch-03` hides the {term}`future <causal mask>`, with
$T \\times T$ {term}`weights`.

* one {ref}`step <ch-03>`
* two

| a | b |
| --- | --- |
| one | `x` |

```{admonition} Exercise 5.1
Do {term}`this`.
```

```{dropdown} Solution
Done.
```

```{literalinclude} ../../attn/layers/causal.py
:pyobject: CausalAttention
:language: python
```

$$
a = b
$$
"""


def test_myst_becomes_plain_markdown():
    out = _converter({}, translate=False).convert(MYST)
    assert out == """# Causal attention

The attention of Trainable weights hides the future, with $T \\times T$ weights.

* one step
* two

| a | b |
| --- | --- |
| one | `x` |

> **Exercise 5.1**
>
> Do this.

<details>
<summary>Solution</summary>

Done.

</details>

```python
class A:
    pass
```

$$
a = b
$$"""


def test_yaml_directive_options_fail_the_build_rather_than_being_misread():
    with pytest.raises(ValueError, match="not YAML"):
        _converter({}, translate=False).convert("```{dropdown} Solution\n---\nopen: true\n---\nDone.\n```\n")


def test_translation_is_element_by_element_and_reports_what_is_missing():
    # The check can fail: an element without a message stays as it is, and is listed.
    catalog = {
        "Causal attention": "Atención causal",
        "The attention of {ref}`ch-03` hides the {term}`future <causal mask>`, with $T \\times T$ "
        "{term}`weights`.": "La atención de {ref}`ch-03` oculta el {term}`futuro <causal mask>`, "
        "con {term}`pesos <weights>` de $T \\times T$.",
        "one {ref}`step <ch-03>`": "un {ref}`paso <ch-03>`",
        "two": "dos",
        "one": "uno",
        "Exercise 5.1": "Ejercicio 5.1",
        "Do {term}`this`.": "Haz {term}`esto <this>`.",
        "Solution": "Solución",
        "Done.": "Hecho.",
    }
    converter = _converter(catalog)
    out = converter.convert(MYST)
    assert out.startswith("# Atención causal\n\nLa atención de Trainable weights oculta el futuro, con pesos de")
    for text in ("* un paso", "* dos", "| uno | `x` |", "> **Ejercicio 5.1**", "> Haz esto.",
                 "<summary>Solución</summary>", "Hecho."):
        assert text in out, text
    assert sorted(converter.missing) == ["`x`", "a", "b"], converter.missing
    assert "| a | b |" in out
