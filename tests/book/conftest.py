"""The built book, shared by the build checks and the browser tests.

``site_dir`` runs ``make html`` once per test session (both languages,
``-W --keep-going``: any warning fails it) and returns ``_build/html``.
Sphinx builds incrementally, so a second session with unchanged sources only
checks that nothing is stale.  Set ``BOOK_SKIP_BUILD=1`` to test an existing
``_build/html`` without rebuilding (for quick local iteration only).

Every test here is marked ``book`` and those of ``test_browser.py`` and
``test_explorer.py`` also ``browser`` (markers in ``pytest.ini``): ``make test-fast``
leaves them out.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from site_pages import LANGS, ROOT, SITE

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.book)
            if item.path.name in ("test_browser.py", "test_explorer.py"):
                item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def site_dir():
    if os.environ.get("BOOK_SKIP_BUILD") != "1":
        proc = subprocess.run(
            ["make", "html", f"PYTHON={sys.executable}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            pytest.fail(
                "make html failed (exit {}):\n{}\n{}".format(
                    proc.returncode, proc.stdout[-6000:], proc.stderr[-6000:]
                ),
                pytrace=False,
            )
    for lang in LANGS:
        if not (SITE / lang / "index.html").is_file():
            pytest.fail(f"{SITE / lang / 'index.html'} was not built", pytrace=False)
    return SITE
