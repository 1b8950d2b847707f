"""A gallery script run directly prints what its page shows.

Each ``examples/plot_*.py`` runs as a reader runs it, ``python examples/plot_NN_....py``, from an
empty temporary folder with ``MPLBACKEND=Agg`` (``plt.show()`` draws nothing), and what it prints
equals the text outputs of its page, as sphinx-gallery stored them in
``docs/auto_examples/<script>.rst`` (the ``sphx-glr-script-out`` blocks, in order; blank lines
aside). ``ATTN_WEIGHTS_DIR`` is the build's, ``_build/weights``, so the scripts of chapters 16
and 17 load the weights the build saved instead of training again (a minute or two each): this
checks what the scripts print. The script of chapter 9 trains here as a reader's does; its
training runs on one thread whatever the number of cores (``attn.models.train.one_thread``), which is
what gives it the page's losses. A timing (a line with a time unit: ``ms``, ``s``) differs from
run to run: its numbers are compared as ``#``, the script's own ``assert`` lines check its claims.
"""
import os
import re
import subprocess
import sys

import pytest
from site_pages import ROOT

SCRIPTS = sorted((ROOT / "examples").glob("plot_*.py"))
GALLERY = ROOT / "docs" / "auto_examples"
TIMING = re.compile(r"\d (?:ms|s)\b|\bms/")  # 2.10 ms, 1.23 s, 0.036 ms/token


def masked(line):
    """``line`` with its numbers as ``#`` if it is a timing, else as it is."""
    return re.sub(r"\d+(?:\.\d+)?", "#", line) if TIMING.search(line) else line


def page_outputs(rst):
    """The lines of the text outputs of a sphinx-gallery page (its ``.rst``), blank lines left out."""
    lines = []
    for block in re.finditer(r"^\.\. rst-class:: sphx-glr-script-out\n\n \.\. code-block:: none\n\n((?:    .*\n|\n)*)",
                             rst, re.M):
        lines += [line[4:].rstrip() for line in block[1].split("\n") if line.strip()]
    return lines


def test_masked_hides_the_numbers_of_a_timing_only():
    assert masked("T = 128: 0.036 ms/token, T = 1: 2.310 ms/token") == "T = #: # ms/token, T = #: # ms/token"
    assert masked("sum: use_cache=False 1.23 s") == "sum: use_cache=False # s"
    assert masked("losses[-1]=1.66e-02") == "losses[-1]=1.66e-02"


def test_page_outputs_reads_a_block():
    rst = ".. rst-class:: sphx-glr-script-out\n\n .. code-block:: none\n\n    a=1\n\n    b = 2\n\n\nText\n    c\n"
    assert page_outputs(rst) == ["a=1", "b = 2"]


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_a_script_run_directly_prints_what_its_page_shows(site_dir, tmp_path, script):
    want = page_outputs((GALLERY / f"{script.stem}.rst").read_text(encoding="utf-8"))
    assert want, f"{script.stem}: its page shows no output"
    env = {**os.environ, "MPLBACKEND": "Agg", "ATTN_WEIGHTS_DIR": str(ROOT / "_build" / "weights"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    got = [line.rstrip() for line in run.stdout.split("\n") if line.strip()]
    assert list(map(masked, got)) == list(map(masked, want)), f"{script.stem}: printed\n" + "\n".join(got) + "\nthe page shows\n" + "\n".join(want)
