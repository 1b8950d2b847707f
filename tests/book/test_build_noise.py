"""No build noise on a page: nothing the build prints on stderr reaches a page, whatever the machine.

On a fresh machine matplotlib builds its font cache on first import and says so on stderr
("Matplotlib is building the font cache"); run in a kernel, that line lands in the page whose
notebook imported matplotlib first. ``tools/execute_notebooks.py`` (which ``make html`` and Read
the Docs run before Sphinx) builds the cache before it starts a kernel. Here it runs a small
notebook that imports matplotlib and draws, in a process of its own with ``MPLCONFIGDIR`` an
empty folder (a machine where matplotlib never ran), and the notebook's outputs, read back from
the cache it wrote, hold no stderr. Then no built page shows a stderr output.
"""
import os

from tests.helpers.notebooks import myst_page, outputs, run_pages

DRAWING = "import matplotlib.pyplot as plt\n\nfig, ax = plt.subplots()\nax.plot([0, 1], [1, 0])\nprint(\"drawn\")"


def test_a_notebook_run_with_an_empty_matplotlib_cache_shows_no_stderr(tmp_path):
    page, cache, mpl = tmp_path / "page.md", tmp_path / "cache", tmp_path / "mpl"
    page.write_text(myst_page("Matplotlib", DRAWING), encoding="utf-8")
    mpl.mkdir()
    env = {**os.environ, "MPLCONFIGDIR": str(mpl), "MPLBACKEND": "Agg"}
    run = run_pages(cache, [page], env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert list(mpl.glob("fontlist-*.json")), "matplotlib's font cache was not built in MPLCONFIGDIR: the case is not tested"
    outs = outputs(cache, page)
    assert any(out.get("name") == "stdout" and "drawn" in out.get("text", "") for out in outs), outs
    assert not [out for out in outs if out.get("name") == "stderr"], outs


def test_no_page_shows_stderr(site_dir):
    noisy = [str(p.relative_to(site_dir)) for p in sorted(site_dir.rglob("*.html"))
             if "output stderr" in (text := p.read_text(encoding="utf-8")) or "building the font cache" in text]
    assert not noisy, noisy
