"""The gallery's downloads: every text block in the reader's language, no markup left, the code unchanged.

``docs/_ext/translated_downloads.py`` rewrites the downloads of each build from
each example's catalog; these checks run it on the sources, without a build
(``test_build.py`` and the browser test ``test_gallery_downloads`` check the built files).
"""

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from book_alt import ALT_COMMENT  # noqa: E402
from book_languages import catalog  # noqa: E402
from book_text import ROLE  # noqa: E402
from translated_downloads import translate_script  # noqa: E402

CATALOGS = ROOT / "locale" / "es" / "LC_MESSAGES" / "auto_examples"
SCRIPTS = sorted((ROOT / "examples").glob("plot_*.py"))


def _program(source):
    """The script without its docstring, comments and layout."""
    module = ast.parse(source)
    return ast.dump(ast.Module(body=module.body[1:], type_ignores=[]))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_spanish_download_is_translated(script):
    assert (CATALOGS / f"{script.stem}.po").is_file(), f"no catalog for {script.name} (run make update-po)"
    messages = catalog("es", f"auto_examples/{script.stem}")
    source = script.read_text(encoding="utf-8")
    missing = []
    spanish = translate_script(source, messages, missing, lambda target, role: "*Title*")
    assert not missing, f"{script.name}: text with no translation: {[m[:60] for m in missing]}"
    assert _program(spanish) == _program(source), f"{script.name}: the code changed"
    title = ast.get_docstring(ast.parse(source)).splitlines()[0]
    assert ast.get_docstring(ast.parse(spanish)).splitlines()[0] == messages[title]
    assert not ROLE.search(spanish), f"{script.name}: a role left: {ROLE.search(spanish)[0]}"
    alts = [ast.literal_eval(v) for v in ALT_COMMENT.findall(source)]
    assert [ast.literal_eval(v) for v in ALT_COMMENT.findall(spanish)] == [messages[a] for a in alts]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_english_download_has_no_markup(script):
    # The source language's text stays as written, its roles become the page's words.
    source = script.read_text(encoding="utf-8")
    english = translate_script(source, None, [], lambda target, role: f"*{target}*")
    assert _program(english) == _program(source), f"{script.name}: the code changed"
    assert not ROLE.search(english), f"{script.name}: a role left: {ROLE.search(english)[0]}"
    assert ast.get_docstring(ast.parse(english)).splitlines()[0] == ast.get_docstring(ast.parse(source)).splitlines()[0]


def test_translate_script_keeps_what_has_no_translation():
    # The check itself must be able to fail: a paragraph missing from the catalog
    # is reported and left as it is.
    source = ('"""\nTitle\n=====\n\nOne paragraph.\n"""\n\n# %%\n# Another one, :ref:`ch-02`.\nx = 1  # (1,)\n'
              '# sphinx_gallery_alt = "A \\"plot\\""\n# sphinx_gallery_alt = "Bars"\n')
    missing = []
    out = translate_script(source, {"Title": "Título largo", "One paragraph.": "Un :class:`attn.A`.",
                                    'A "plot"': 'Un «gráfico» \\ "x"'}, missing, lambda target, role: f"*T {target}*")
    assert missing == ["Another one, :ref:`ch-02`.", "Bars"]
    assert out == ('"""\nTítulo largo\n============\n\nUn ``attn.A``.\n"""\n\n# %%\n# Another one, *T ch-02*.\nx = 1  # (1,)\n'
                   '# sphinx_gallery_alt = "Un «gráfico» \\\\ \\"x\\""\n# sphinx_gallery_alt = "Bars"\n')
