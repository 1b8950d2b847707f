"""The linter: ``ruff check`` with the configuration in ``pyproject.toml`` ([tool.ruff])."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The kinds of bug the configuration is there for: a closure that reads a loop variable
# late (bugbear B023) and a loop variable that is never used (B007).
LATE_BINDING = """\
fns = []
for i in range(3):
    fns.append(lambda: i)
for step in range(3):
    print("again")
"""


def ruff(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *args],
        cwd=ROOT, input=stdin, capture_output=True, text=True,
    )


def test_the_code_base_is_clean():
    out = ruff(".")
    assert out.returncode == 0, f"ruff check . found:\n{out.stdout}{out.stderr}"


def test_the_configuration_catches_loop_bugs():
    out = ruff("--stdin-filename", "examples/plot_late_binding.py", "-", stdin=LATE_BINDING)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "B023" in out.stdout and "B007" in out.stdout, out.stdout
