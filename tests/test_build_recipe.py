"""One build recipe: Read the Docs runs the Makefile's targets, as ``make html`` does on a laptop.

Each build job of ``.readthedocs.yaml`` (html, pdf, epub) is ``make <format>-$READTHEDOCS_LANGUAGE``
and calls Sphinx only through it; ``make -n`` (a dry run: nothing is built) shows that each of
these targets runs the chapters' notebooks (``tools/execute_notebooks.py``) before Sphinx, with the
builder and language of the job. Its install job is the README's set-up. No build needed.
"""
import subprocess
from pathlib import Path

import pytest
import yaml

from book_languages import LANGUAGES

ROOT = Path(__file__).resolve().parent.parent
JOBS = yaml.safe_load((ROOT / ".readthedocs.yaml").read_text(encoding="utf-8"))["build"]["jobs"]
BUILDERS = {"html": "html", "pdf": "latex", "epub": "epub"}


def dry_run(target):
    """The commands ``make -n target`` prints (a recursive ``$(MAKE)`` line may fail: its folder is not built)."""
    run = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=60)
    return run.stdout.splitlines()


def test_read_the_docs_builds_every_format_with_the_makefile():
    assert set(JOBS["build"]) == set(BUILDERS), JOBS["build"]
    for fmt, commands in JOBS["build"].items():
        assert commands[0] == f"make {fmt}-$READTHEDOCS_LANGUAGE", (fmt, commands)
        assert not any("sphinx" in command for command in commands), (fmt, commands)
    html = JOBS["build"]["html"]
    assert any("_build/html-$READTHEDOCS_LANGUAGE/" in c and "$READTHEDOCS_OUTPUT/html" in c for c in html), html


@pytest.mark.parametrize("fmt", sorted(BUILDERS))
@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_target_runs_the_notebooks_then_sphinx(fmt, lang):
    lines = dry_run(f"{fmt}-{lang}")
    runner = [i for i, line in enumerate(lines) if "tools/execute_notebooks.py" in line]
    sphinx = [i for i, line in enumerate(lines) if "-m sphinx" in line]
    assert runner and sphinx and runner[0] < sphinx[0], lines
    command = lines[sphinx[0]].split()
    assert f"-b {BUILDERS[fmt]}" in " ".join(command) and f"language={lang}" in command, command
    assert "-W" in command and "--keep-going" in command, command


def test_read_the_docs_installs_as_the_readme_says():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = JOBS["install"]
    assert install[-1] == "python -m pip install -r requirements.txt", install
    for command in install:
        assert command.removeprefix("python -m ") in readme, command
