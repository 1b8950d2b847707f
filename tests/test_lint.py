"""The linter: ``ruff check`` with the configuration in ``pyproject.toml`` ([tool.ruff])."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ruff(*args):
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *args],
        cwd=ROOT, capture_output=True, text=True,
    )


def test_the_code_base_is_clean():
    out = ruff(".")
    assert out.returncode == 0, f"ruff check . found:\n{out.stdout}{out.stderr}"

