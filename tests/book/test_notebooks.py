"""The book to take away: each chapter as a Jupyter notebook, in the page's language.

``docs/_ext/chapter_notebooks.py`` writes ``<lang>/downloads/notebooks/<chapter>.ipynb``
and ``<lang>/downloads/<notebooks>-<title>-<lang>.zip`` after each build; each chapter
page links its notebook from the article header.  These checks read what ``make
html`` wrote (see ``conftest.py``), and run one downloaded notebook in a kernel of
its own, outside the book.
"""

import copy
import io
import re
import zipfile
from pathlib import PurePosixPath
from urllib.parse import unquote, urljoin, urlsplit

import nbformat
import polib
import pytest
from site_pages import CHAPTERS, EXAMPLE_PAGES, LANGS, ROOT, page_soup, without_emphasis

# The archive is named as the PDF and the EPUB are, after the edition's title.
ARCHIVE = {"en": "notebooks-attention-from-scratch-en", "es": "cuadernos-atencion-desde-cero-es"}
BUTTON = {"en": "Download this chapter as a Jupyter notebook"}
SPHINX_PO = ROOT / "locale" / "es" / "LC_MESSAGES" / "sphinx.po"
BUTTON["es"] = next(e.msgstr for e in polib.pofile(str(SPHINX_PO)) if e.msgid == BUTTON["en"])
# The chapter whose notebook a test runs: small, quick, with a figure.
RUN_CHAPTER = "chapters/01_why_attention"

PARAMS = [pytest.param(lang, chapter, id=f"{lang}/{chapter}") for lang in LANGS for chapter in CHAPTERS]

# MyST's own syntax, which plain Jupyter shows as it is (outside fenced code).
MYST = re.compile(
    r"\{[a-z]+(?::[a-z]+)*\}`"  # a role: {term}`...`, {ref}`...`, {py:func}`...`
    r"|^\([\w.-]+\)=\s*$"  # a target: (ch-05)=
    r"|^\+\+\+\s*$"  # a cell break
    r"|^%\s",  # a comment
    re.M,
)
FENCE = re.compile(r"^\s*(```+|:::+)\s*(\S*)")


def myst_left(text):
    """The pieces of MyST syntax in ``text`` (Markdown cells of a notebook)."""
    found, prose, fence = [], [], None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m[1]
            if m[2].startswith("{"):
                found.append(m[1] + "{")  # a directive: ```{note}
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None:
            prose.append(line)
    return found + [m.group(0).strip() for m in MYST.finditer("\n".join(prose))]


def test_myst_left_finds_myst():
    # The check itself must be able to fail.
    text = "(ch-05)=\n# T\n\nSee {ref}`ch-03` and {py:func}`f`.\n\n```{note}\nx\n```\n+++\n% hidden\n"
    assert myst_left(text) == ["```{", "(ch-05)=", "{ref}`", "{py:func}`", "+++", "%"]
    assert myst_left("# T\n\n```python\n# :math:`{d}`\n```\nSee {x} `y` and $\\text{a}$, `(a)=`.\n\n```python\nx = {1: 2}\n```\n") == []


def notebook_path(site, lang, chapter):
    return site / lang / "downloads" / "notebooks" / f"{PurePosixPath(chapter).name}.ipynb"


def read_notebook(site, lang, chapter):
    path = notebook_path(site, lang, chapter)
    assert path.is_file(), f"{path.relative_to(site)} was not written"
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    return nb


def markdown(nb):
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def code_cells(nb):
    """The page's code cells: all but the one that sets the exercises' language (tag ``setup``)."""
    return [c for c in nb.cells if c.cell_type == "code" and "setup" not in c.metadata.get("tags", [])]


def page_cells(doc):
    """The code cells of a built page: ``(source, outputs)``, outputs as ``("text", str)`` or ``("image",)``.

    An attention explorer is an image: the notebook has its static heatmap (docs/_ext/book_outputs.py).
    """
    cells = []
    for cell in doc.select("div.cell"):
        source = cell.select_one("div.cell_input pre").get_text()
        outputs = []
        for out in cell.select_one(".cell_output").find_all(recursive=False) if cell.select_one(".cell_output") else ():
            if out.name == "img" or out.select_one("img, [data-attention-explorer]") or out.has_attr("data-attention-explorer"):
                outputs.append(("image",))
            elif out.select_one("pre"):
                outputs.append(("text", out.select_one("pre").get_text()))
        cells.append((source, outputs))
    return cells


def notebook_outputs(cell):
    """A notebook code cell's outputs as the page shows them (see ``page_cells``)."""
    shown = []
    for out in cell.outputs:
        if out.output_type == "stream":
            shown.append(("text", "".join(out.text)))
        elif out.output_type in ("execute_result", "display_data"):
            if any(kind.startswith("image/") for kind in out.data):
                shown.append(("image",))
            elif "text/plain" in out.data:
                shown.append(("text", "".join(out.data["text/plain"])))
        elif out.output_type == "error":
            shown.append(("text", "\n".join(out.traceback)))
    return shown


def title_of(doc):
    """A page's title as the article shows it: its number and its words, without the permalink."""
    h1 = copy.copy(doc.select_one("article h1"))
    for link in h1.select("a.headerlink"):
        link.decompose()
    return " ".join(h1.get_text().split())


def words(markdown_text):
    """Markdown as the words a page shows: no code or emphasis marks, typographic apostrophes."""
    return " ".join(without_emphasis(markdown_text).replace("`", "").replace("'", "’").split())


# -- each chapter's notebook -------------------------------------------------------------


@pytest.mark.parametrize("lang, chapter", PARAMS)
def test_chapter_notebook_is_the_page(site_dir, lang, chapter):
    nb = read_notebook(site_dir, lang, chapter)
    doc = page_soup(site_dir, lang, chapter)
    where = f"{lang}/{chapter}.ipynb"

    # The same code cells as the page, each with the outputs the page shows.
    cells = page_cells(doc)
    code = code_cells(nb)
    assert [c.source.rstrip("\n") for c in code] == [s.rstrip("\n") for s, _ in cells], (
        f"{where}: the code cells are not the page's"
    )
    # (Text compared word by word: myst-nb's highlighter of printed output sometimes
    # adds a line break to what the page shows.)
    for i, (cell, (_, outputs)) in enumerate(zip(code, cells)):
        got = [(o[0], o[1].split()) if o[0] == "text" else o for o in notebook_outputs(cell)]
        want = [(o[0], o[1].split()) if o[0] == "text" else o for o in outputs]
        assert got == want, f"{where}: code cell {i + 1}: outputs {got[:2]} differ from the page's {want[:2]}"
    assert any(c.outputs for c in code), f"{where}: no outputs"

    text = markdown(nb)
    assert not myst_left(text), f"{where}: MyST syntax left: {myst_left(text)[:5]}"
    # The first cell says where the chapter comes from and what it needs.
    intro = nb.cells[0].source
    assert nb.cells[0].cell_type == "markdown" and "`attn`" in intro and "pip install -r requirements.txt" in intro, intro
    # Then the exercises' checks speak the notebook's language (attn.exercises).
    assert nb.cells[1].cell_type == "code" and f'set_language("{lang}")' in nb.cells[1].source, nb.cells[1].source
    # The chapter's title, numbered as on the page, opens the chapter's text.
    heading = re.search(r"^# (.+)$", text, re.M)
    assert heading and words(heading[1]) == title_of(doc), f"{where}: title {heading and heading[1]!r}, page {title_of(doc)!r}"
    # literalinclude: the package's real code, as the page shows it, in the same order.
    listings = [pre.get_text().rstrip("\n") for pre in doc.select("div.highlight-python pre")
                if not pre.find_parent("div", class_="cell")]
    fences = [m[1].rstrip("\n") for m in re.finditer(r"^```python\n(.*?)^```$", text, re.S | re.M)]
    assert fences == listings, f"{where}: {len(fences)} Python blocks, the page shows {len(listings)} listings (or they differ)"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_spanish_notebook_is_translated(site_dir, chapter):
    en, es = (read_notebook(site_dir, lang, chapter) for lang in ("en", "es"))
    assert [c.source for c in code_cells(es)] == [c.source for c in code_cells(en)], f"{chapter}: the code differs"
    assert en.cells[0].source != es.cells[0].source, f"{chapter}: the first cell is the English one"
    english, spanish = markdown(en), markdown(es)
    # What the catalog keeps as it is on purpose (the English example sentence).
    catalog = ROOT / "locale" / "es" / "LC_MESSAGES" / f"{chapter}.po"
    same = {e.msgid for e in polib.pofile(str(catalog)) if e.msgstr == e.msgid}
    # No paragraph, title, list item or quote of the English notebook in the Spanish one
    # (formulas, code and short table cells such as shapes are the same in both).
    left = []
    in_code = in_math = False
    for line in english.split("\n"):
        if line.startswith("```"):
            in_code = not in_code
        elif line.strip() == "$$":
            in_math = not in_math
        words = re.sub(r"`[^`]*`|\$[^$]*\$", " ", line)
        if in_code or in_math or line.startswith(("|", "```")) or len(re.findall(r"[A-Za-z]{3,}", words)) < 4:
            continue
        if line in spanish.split("\n") and re.sub(r"^[>*#\s]+", "", line) not in same:
            left.append(line[:80])
    assert not left, f"es/{chapter}: {len(left)} English line(s) left: {left[:5]}"


@pytest.mark.parametrize("lang, chapter", PARAMS)
def test_download_button_links_the_notebook(site_dir, lang, chapter):
    doc = page_soup(site_dir, lang, chapter)
    buttons = doc.select("a.book-notebook")
    assert len(buttons) == 1, f"{lang}/{chapter}: {len(buttons)} notebook buttons"
    button = buttons[0]
    href = button["href"]
    assert not urlsplit(href).scheme and not href.startswith("/"), f"{lang}/{chapter}: {href!r} is not relative"
    target = (site_dir / lang / unquote(urlsplit(urljoin(f"{chapter}.html", href)).path)).resolve()
    assert target == notebook_path(site_dir, lang, chapter).resolve(), f"{lang}/{chapter}: {href!r} -> {target}"
    assert target.is_file()
    # Its name, read out by screen readers, in the page's language; the visible text is in it.
    name = button.get_text(" ", strip=True)
    assert name.startswith(BUTTON[lang]) and button["title"] == BUTTON[lang], (lang, name, button.get("title"))
    assert "download" in button.attrs


@pytest.mark.parametrize("lang", LANGS)
def test_only_chapters_have_the_button(site_dir, lang):
    for page in ("index", "glossary", EXAMPLE_PAGES[0]):
        assert not page_soup(site_dir, lang, page).select("a.book-notebook"), f"{lang}/{page} has a notebook button"


# -- the archive ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_archive_holds_every_notebook(site_dir, lang):
    path = site_dir / lang / "downloads" / f"{ARCHIVE[lang]}.zip"
    assert path.is_file(), f"{path.relative_to(site_dir)} was not written"
    root = ARCHIVE[lang]
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        chapters = {f"{root}/chapters/{PurePosixPath(c).name}.ipynb" for c in CHAPTERS}
        gallery = {f"{root}/gallery/{PurePosixPath(e).name}.ipynb" for e in EXAMPLE_PAGES}
        files = chapters | gallery | {f"{root}/README.md"}
        assert names == files, f"{lang}: missing {sorted(files - names)}, unexpected {sorted(names - files)}"
        # The archive's README: what it holds and how to get `attn`, as each notebook's first cell says.
        readme = archive.read(f"{root}/README.md").decode("utf-8")
        assert "`attn`" in readme and "pip install -r requirements.txt" in readme and "gallery/" in readme, readme
        for chapter in CHAPTERS:
            data = archive.read(f"{root}/chapters/{PurePosixPath(chapter).name}.ipynb")
            assert data == notebook_path(site_dir, lang, chapter).read_bytes(), f"{lang}: {chapter} differs"
        for example in EXAMPLE_PAGES:
            nb = nbformat.read(io.BytesIO(archive.read(f"{root}/gallery/{PurePosixPath(example).name}.ipynb")), 4)
            nbformat.validate(nb)
            # The gallery's notebook of this language: its title is the page's.
            page_title = title_of(page_soup(site_dir, lang, example))
            assert page_title in words(markdown(nb)), f"{lang}: {example}.ipynb lacks its title {page_title!r}"


# -- every notebook run outside the repository, once for both languages ----------------------


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_downloaded_notebook_runs_outside_the_repository(site_dir, tmp_path, monkeypatch, chapter):
    # As a reader runs it: in a folder of its own, nothing of the repository on the path
    # but the package (``pip install`` gives the same), a fresh kernel, the build's
    # executor (nbclient). A notebook that imports anything else (``bench``) fails here.
    # The Spanish notebook runs; the English one has the same code cells, tags (nbclient
    # reads "raises-exception") and kernel (checked here), so one run stands for both.
    from nbclient import NotebookClient

    nb, en = read_notebook(site_dir, "es", chapter), read_notebook(site_dir, "en", chapter)
    run = [(c.source, c.metadata.get("tags", [])) for c in code_cells(nb)]
    assert run == [(c.source, c.metadata.get("tags", [])) for c in code_cells(en)], f"{chapter}: the code differs"
    assert nb.metadata == en.metadata, f"{chapter}: the notebooks' metadata differ"
    built = [notebook_outputs(c) for c in code_cells(nb)]
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site-packages"))
    # The weights the build trained (chapters 16 and 17; attn/models/train.py): loaded, not
    # trained again, as tests/book/test_gallery_direct.py does; what runs is the same code.
    monkeypatch.setenv("ATTN_WEIGHTS_DIR", str(ROOT / "_build" / "weights"))
    (tmp_path / "site-packages").mkdir()
    (tmp_path / "site-packages" / "attn").symlink_to(ROOT / "attn", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    errors = [o for c in code_cells(nb) for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    if chapter == RUN_CHAPTER:
        # Seeded, so it prints what the book printed.
        assert [notebook_outputs(c) for c in code_cells(nb)] == built
        assert any(("image",) in outputs for outputs in built), "the notebook run draws no figure"
