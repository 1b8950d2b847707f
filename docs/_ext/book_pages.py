"""The book's pages, derived from its sources, for ``conf.py`` and the tests.

Page names are the built pages' paths without suffix (``chapters/01_why_attention``).
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"

GENERATED_PAGES = ("genindex", "search", "py-modindex")  # Sphinx writes them (py-modindex: the API documents modules)
GALLERY = "auto_examples"  # the gallery's pages, generated from examples/


def gallery_scripts():
    """The gallery's example scripts, ``examples/plot_*.py``."""
    return sorted(EXAMPLES.glob("plot_*.py"))


def source_pages():
    """Page names the sources produce, Sphinx's own included, sorted."""
    names = set(GENERATED_PAGES)
    for path in DOCS.rglob("*"):
        rel = path.relative_to(DOCS)
        # _static, _templates and hidden files are no pages; auto_examples is generated from examples/.
        skip = rel.parts[0].startswith("_") or rel.parts[0] == GALLERY or any(p.startswith(".") for p in rel.parts)
        if path.suffix in (".md", ".rst", ".ipynb") and path.is_file() and not skip:
            names.add(rel.with_suffix("").as_posix())
    if (EXAMPLES / "README.rst").is_file() or (EXAMPLES / "README.txt").is_file():
        names.add(f"{GALLERY}/index")
    names.update(f"{GALLERY}/{script.stem}" for script in gallery_scripts())
    return sorted(names)


def written_pages():
    """The pages of :func:`source_pages` that the sources write (Sphinx's own left out)."""
    return [p for p in source_pages() if p not in GENERATED_PAGES]
