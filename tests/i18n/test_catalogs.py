"""The Spanish catalogs: complete, consistent in their terms, spelled right, wrapped.

The catalogs in ``locale/es/LC_MESSAGES`` translate every message that
``make gettext`` extracts from the English pages (gallery and API reference
included).  ``locale/terminology.csv`` fixes one Spanish term per English term
and lists the renderings the catalogs must not use.
"""

import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from book_languages import TRANSLATION
from book_pages import written_pages
from translation_check import coverage

ROOT = Path(__file__).resolve().parents[2]
PO_DIR = ROOT / "locale" / TRANSLATION / "LC_MESSAGES"
TERMS = ROOT / "locale" / "terminology.csv"
# Code terms and names that are right as they are, one word a line, in any number of files.
WORDLISTS = ROOT / "locale" / TRANSLATION / "wordlist"

CATALOGS = sorted(PO_DIR.rglob("*.po"))
PAGES = written_pages()  # every page the sources write, the gallery's included


def catalog_name(path):
    return path.relative_to(PO_DIR).with_suffix("").as_posix()


def terminology():
    with open(TERMS, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and set(rows[0]) >= {"english", "spanish", "rejected"}, rows[:1]
    return rows


def test_every_page_has_a_catalog():
    names = {catalog_name(p) for p in CATALOGS}
    missing = [p for p in PAGES if p not in names]
    assert not missing, f"pages without a Spanish catalog (run make update-po): {missing}"
    assert "auto_examples/index" in PAGES and "chapters/01_why_attention" in PAGES, PAGES


@pytest.mark.parametrize("po_path", CATALOGS, ids=catalog_name)
def test_catalog_is_complete(po_path):
    rel = po_path.relative_to(PO_DIR).as_posix()
    [(name, done, total, untranslated, fuzzy)] = [row for row in coverage(PO_DIR) if row[0] == rel]
    assert not untranslated, f"{name}: untranslated {[e.msgid[:60] for e in untranslated[:5]]}"
    assert not fuzzy, f"{name}: fuzzy {[e.msgid[:60] for e in fuzzy[:5]]}"
    assert done == total > 0


def test_translation_check_fails_on_a_missing_message(tmp_path):
    # The check itself must be able to fail.
    po = polib.POFile()
    po.metadata = {"Content-Type": "text/plain; charset=UTF-8"}
    po.append(polib.POEntry(msgid="Attention", msgstr="Atención"))
    po.append(polib.POEntry(msgid="Query", msgstr=""))
    po.save(str(tmp_path / "page.po"))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "translation_check.py"), str(tmp_path)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 1 and "untranslated=1" in proc.stdout, proc.stdout


def _entries():
    for path in CATALOGS:
        for e in polib.pofile(str(path)):
            if not e.obsolete and e.msgstr:
                yield catalog_name(path), e


def _prose(text):
    # Inline code, roles' targets and math are not Spanish prose.
    text = re.sub(r"``.*?``|`[^`]*`|\$[^$]*\$", " ", text)
    return text


def _split(cell):
    return [w.strip().lower() for w in (cell or "").split("|") if w.strip()]


def rejected_uses(text, rows):
    """The rejected renderings that ``text`` (a Spanish message) uses, as (bad, chosen) pairs.

    A form quoted in «» is mentioned, not used (the glossary names the other
    name of a term once), and a row's ``allowed`` phrases ("ancho de banda") are
    other words that merely contain a rejected form.
    """
    text = re.sub(r"«[^»]*»", " ", _prose(text).lower())
    found = []
    for row in rows:
        clean = text
        for ok in _split(row.get("allowed")):
            clean = re.sub(rf"(?<!\w){re.escape(ok)}(?!\w)", " ", clean)
        for bad in _split(row["rejected"]):
            if re.search(rf"(?<!\w){re.escape(bad)}(?!\w)", clean):
                found.append((bad, row["spanish"]))
    return found


@pytest.mark.spelling
def test_rejected_uses_finds_the_old_terms():
    # The check itself must be able to fail: each row's rejected forms are found
    # in a sentence, quoted mentions and allowed phrases are not.
    rows = terminology()
    for row in rows:
        for bad in _split(row["rejected"]):
            assert (bad, row["spanish"]) in rejected_uses(f"Aquí usamos {bad}, como antes.", rows), bad
    assert rejected_uses("Cada cabeza de Ancho 16.", rows) == [("ancho", "dimensión")]
    assert rejected_uses("El camino rápido y la atención multi-cabeza.", rows) == [
        ("multi-cabeza", "atención multicabeza"), ("camino rápido", "vía rápida")]
    assert not rejected_uses("También se dice «producto punto»; el ancho de banda limita.", rows)
    assert not rejected_uses("La vía rápida de la atención multicabeza, de dimensión 16.", rows)


@pytest.mark.spelling
def test_terminology_rejected_terms_are_not_used():
    rows = terminology()
    found = [
        f"{name}: {bad!r} (use {good!r}) in {e.msgstr[:80]!r}"
        for name, e in _entries()
        for bad, good in rejected_uses(e.msgstr, rows)
    ]
    assert not found, "\n".join(found[:30])


@pytest.mark.spelling
def test_terminology_chosen_terms_are_used():
    # Each fixed term appears in the Spanish catalogs as soon as its English term
    # appears in the English messages (Part II terms join when their pages do).
    rows = terminology()
    entries = [e for _, e in _entries()]
    english = "\n".join(e.msgid.lower() for e in entries)
    spanish = "\n".join(e.msgstr.lower() for e in entries)
    unused = [
        r["spanish"] for r in rows
        if re.search(rf"(?<!\w){re.escape(r['english'].lower())}s?(?!\w)", english)
        and r["spanish"].lower() not in spanish
    ]
    assert not unused, f"chosen Spanish terms never used: {unused}"
    assert len(rows) - sum(1 for r in rows if r["spanish"].lower() in spanish) < len(rows) // 2


@pytest.mark.spelling
def test_terminology_is_consistent_with_the_glossary():
    glossary = PO_DIR / "glossary.po"
    assert glossary.is_file()
    texts = {e.msgid.strip().lower(): e.msgstr.strip().lower() for e in polib.pofile(str(glossary))}
    wrong = []
    for row in terminology():
        # A glossary term is its own message; its translation starts with the chosen term.
        msgstr = texts.get(row["english"].lower())
        if msgstr is not None and not msgstr.startswith(row["spanish"].lower()):
            wrong.append((row["english"], msgstr, row["spanish"]))
    assert not wrong, wrong


def _spellable(text):
    """The Spanish prose of a message: what a spell checker should read.

    pospell understands reST but not MyST: drop role targets (``{term}`consulta <query>```
    keeps *consulta*; ``{ref}`ch-03``` keeps nothing), inline math and inline code.
    """
    text = re.sub(r"\{[a-z:]+\}`([^`<]*?)\s*<[^`>]*>`", r"\1", text)  # {role}`text <target>` -> text
    text = re.sub(r"\{[a-z:]+\}`[^`]*`", " ", text)  # {role}`target` -> nothing
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", text, flags=re.S)  # math
    return text


@pytest.mark.spelling
def test_spellable_strips_markup_only():
    assert _spellable("la {term}`consulta <query>` y {ref}`ch-03`, con $d_k$") == "la consulta y  , con  "


@pytest.mark.spelling
@pytest.mark.skipif(shutil.which("hunspell") is None, reason="needs Debian's hunspell (see README)")
def test_spelling(tmp_path):
    assert Path("/usr/share/hunspell/es_ES.dic").is_file(), "apt-get install hunspell-es"
    words = sorted({w.strip() for f in WORDLISTS.glob("*.txt") for w in f.read_text(encoding="utf-8").splitlines() if w.strip()})
    personal = tmp_path / "words.txt"
    personal.write_text("\n".join(words) + "\n", encoding="utf-8")
    copies = []
    for path in CATALOGS:
        po = polib.pofile(str(path))
        for e in po:
            e.msgstr = _spellable(e.msgstr)
        copy = tmp_path / "po" / path.relative_to(PO_DIR)
        copy.parent.mkdir(parents=True, exist_ok=True)
        po.save(str(copy))
        copies.append(copy)
    proc = subprocess.run(
        [sys.executable, "-m", "pospell", "-l", "es_ES", "-p", str(personal), *map(str, copies)],
        capture_output=True, text=True, cwd=tmp_path / "po",
    )
    assert proc.returncode == 0, f"misspelled words (fix them, or add code terms to {WORDLISTS}/):\n{proc.stdout[-4000:]}"


@pytest.mark.skipif(shutil.which("msgcat") is None, reason="needs gettext's msgcat (see README)")
def test_catalogs_are_wrapped_consistently():
    proc = subprocess.run(
        [sys.executable, "-m", "powrap", "--check", "--quiet", *map(str, CATALOGS)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, f"run `python tools/po_tidy.py`: {proc.stdout}{proc.stderr}"


# -- cross-references kept -----------------------------------------------------------------

# The roles Sphinx resolves as cross-references ({ref}, :func:, {cite:p}, ...). A translation
# that has more or fewer of them than its message makes Sphinx warn "inconsistent term
# references in translated message", which fails the -W build; found here without a build.
XREF = re.compile(
    r"(?::(?:py:)?(func|class|meth|attr|mod|ref|doc|term|data|exc|obj|numref|cite:[pt]|cite):"
    r"|\{(ref|doc|term|numref|cite:p|cite:t|cite)\})`"
)


def xref_counts(text):
    from collections import Counter

    text = re.sub(r"``.*?``", " ", text, flags=re.S)  # literals show roles, not use them
    return Counter(m[1] or m[2] for m in XREF.finditer(text))


def test_xref_counts_find_a_repeated_reference():
    en = ":func:`speculative_generate` lets ... Both write the tokens of :meth:`TinyLM.generate`. {cite:p}`a`"
    es = ":func:`speculative_generate` deja ... Tanto :func:`speculative_generate` escriben :meth:`TinyLM.generate`."
    assert xref_counts(en) - xref_counts(es) == {"cite:p": 1}
    assert xref_counts(es) - xref_counts(en) == {"func": 1}
    assert xref_counts("roles such as ``{ref}`ch-05` `` and {ref}`ch-05`") == {"ref": 1}


def translated_messages():
    """Every translated, current message of every catalog: ``(catalog name, entry)``."""
    return [(catalog_name(path), e) for path in CATALOGS for e in polib.pofile(str(path)) if e.msgstr and not e.obsolete]


def differing(measure):
    """The messages whose Spanish ``measure``s other than their English, one line each."""
    return [f"{name}: {measure(e.msgid)} -> {measure(e.msgstr)}: {e.msgid[:70]!r}"
            for name, e in translated_messages() if measure(e.msgid) != measure(e.msgstr)]


def test_translations_keep_the_cross_references():
    found = differing(lambda text: dict(xref_counts(text)))
    assert not found, "a translation adds or drops cross-references (Sphinx warns):\n" + "\n".join(found)


PACKAGE_PATH = re.compile(r"(?<![\w/.])attn(?:\.[A-Za-z_]\w*)+")  # attn.models.tiny_lm.TinyLM, not attn/…py


def package_paths(text):
    return set(PACKAGE_PATH.findall(text))


def resolves(path):
    """Whether a dotted name (``attn.viz.plot.heatmap``) is a module, or an attribute of one, of the package."""
    import importlib

    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def test_package_paths_finds_and_resolves():
    text = "`attn.plot.heatmap` and attn.viz.plot.heatmap, `attn/layers/core.py`, attn.TinyLM."
    assert package_paths(text) == {"attn.plot.heatmap", "attn.viz.plot.heatmap", "attn.TinyLM"}
    assert resolves("attn.viz.plot.heatmap") and resolves("attn.TinyLM") and resolves("attn.models.train.fit")
    assert not resolves("attn.plot.heatmap") and not resolves("attn.viz.plot.heatmapp")


def test_translations_name_the_package_paths_of_the_english():
    # The move to folders by role (attn.plot -> attn.viz.plot) rewrote the English; four Spanish
    # messages, wrapped across lines where the English was not, kept the old module path.
    found = differing(lambda text: sorted(package_paths(text)))
    assert not found, "a translation names other package paths than its English:\n" + "\n".join(found)
    stale = sorted({p for _, e in translated_messages() for p in package_paths(e.msgid + " " + e.msgstr)
                    if not resolves(p)})
    assert not stale, f"package paths that name nothing in the package: {stale}"
