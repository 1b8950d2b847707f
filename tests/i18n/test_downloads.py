"""The gallery's downloads in Spanish: every text block translated, the code unchanged.

``docs/_ext/translated_downloads.py`` rewrites the Spanish build's downloads
from each example's catalog; these checks run it on the sources, without a
build (the browser test ``test_gallery_downloads`` checks the built files).
"""

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from translated_downloads import load_catalog, translate_script  # noqa: E402

CATALOGS = ROOT / "locale" / "es" / "LC_MESSAGES" / "auto_examples"
SCRIPTS = sorted((ROOT / "examples").glob("plot_*.py"))


def _program(source):
    """The script without its docstring, comments and layout."""
    module = ast.parse(source)
    return ast.dump(ast.Module(body=module.body[1:], type_ignores=[]))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_spanish_download_is_translated(script):
    catalog_path = CATALOGS / f"{script.stem}.po"
    assert catalog_path.is_file(), f"no catalog for {script.name} (run make update-po)"
    catalog = load_catalog(catalog_path)
    source = script.read_text(encoding="utf-8")
    missing = []
    spanish = translate_script(source, catalog, missing)
    assert not missing, f"{script.name}: text with no translation: {[m[:60] for m in missing]}"
    assert _program(spanish) == _program(source), f"{script.name}: the code changed"
    title = ast.get_docstring(ast.parse(source)).splitlines()[0]
    assert ast.get_docstring(ast.parse(spanish)).splitlines()[0] == catalog[title]


def test_translate_script_keeps_what_has_no_translation():
    # The check itself must be able to fail: a paragraph missing from the catalog
    # is reported and left as it is.
    source = '"""\nTitle\n=====\n\nOne paragraph.\n"""\n\n# %%\n# Another one.\nx = 1  # (1,)\n'
    missing = []
    out = translate_script(source, {"Title": "Título largo", "One paragraph.": "Un párrafo."}, missing)
    assert missing == ["Another one."]
    assert out == '"""\nTítulo largo\n============\n\nUn párrafo.\n"""\n\n# %%\n# Another one.\nx = 1  # (1,)\n'
