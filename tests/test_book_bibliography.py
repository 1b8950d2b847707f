"""The bibliography's sources: every citation names an entry, every entry links its work.

No build: ``docs/references.bib`` read with pybtex, the pages' and catalogs' text
searched for ``{cite:...}`` roles.  ``tests/book/test_bibliography.py`` checks the
built page and the citations in both languages.
"""

import re
from pathlib import Path

import polib
import pytest
from book_bibliography import BIBPATH, BookStyle, citation_text, entry_url, load_entries
from book_pages import DOCS, EXAMPLES, ROOT
from chapter_notebooks import Converter

ENTRIES = load_entries()
LOCALE = ROOT / "locale"
# A MyST citation: {cite:t}`key` or {cite:p}`key1,key2` (and the other cite roles).
CITE = re.compile(r"\{cite(?::[a-z]+)?\}`(?P<keys>[^`]*)`")
# The works the book must cite, at least (issue 23): a key each.
REQUIRED = [
    "bahdanau2015", "vaswani2017", "milakov2018", "rabe2021", "dao2022", "shazeer2019",
    "ainslie2023", "su2021", "press2022", "beltagy2020", "child2019", "olsson2022",
    "elhage2021", "xiao2023", "kwon2023", "deepseek2024", "chen2023", "peng2023",
    "raschka2024", "karpathy2022nanogpt", "karpathy2023gpt", "labml2020",
]
DOI = re.compile(r"^10\.\d{4,9}/\S+$")
ARXIV = re.compile(r"^\d{4}\.\d{4,5}$")


def cited_keys(text):
    return [key.strip() for m in CITE.finditer(text) for key in m["keys"].split(",")]


def sources():
    """``(where, text)`` of every page, and every translated message of every catalog."""
    for path in sorted(DOCS.rglob("*.md")):
        if not path.relative_to(DOCS).parts[0].startswith(("_", ".")):
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")
    for path in sorted(LOCALE.rglob("*.po")):
        for entry in polib.pofile(str(path)):
            yield f"{path.relative_to(ROOT).as_posix()}: {entry.msgid[:50]!r}", entry.msgstr


def test_the_required_works_are_in_the_bibliography():
    missing = [key for key in REQUIRED if key not in ENTRIES]
    assert not missing, f"{BIBPATH}: no entry {missing}"


@pytest.mark.parametrize("key", sorted(ENTRIES))
def test_entry_links_its_work(key):
    fields = ENTRIES[key].fields
    assert {"title", "year"} <= set(fields), f"{key}: no title or year"
    assert ENTRIES[key].persons.get("author"), f"{key}: no author"
    assert "$" not in fields["title"], f"{key}: TeX math in the title shows as written on the page: use Unicode"
    assert any(name in fields for name in ("doi", "eprint", "url")), f"{key}: no doi, eprint (arXiv) or url"
    if "doi" in fields:
        assert DOI.match(fields["doi"]), f"{key}: doi {fields['doi']!r} is not a DOI (10.NNNN/...)"
    if "eprint" in fields:
        assert ARXIV.match(fields["eprint"]), f"{key}: eprint {fields['eprint']!r} is not an arXiv identifier"
    if "url" in fields:
        assert fields["url"].startswith("https://"), f"{key}: url {fields['url']!r}"
    assert entry_url(ENTRIES[key]).startswith("https://"), key


def test_every_citation_names_an_entry():
    seen, unknown = set(), []
    for where, text in sources():
        for key in cited_keys(text):
            seen.add(key)
            if key not in ENTRIES:
                unknown.append(f"{where}: {key!r}")
    assert not unknown, f"citations of keys that {BIBPATH.name} does not have: {unknown}"
    assert seen, "no page cites anything"


def test_translations_cite_what_the_source_cites():
    # Sphinx warns (and -W fails) when they differ; this says where, without a build.
    wrong = []
    for path in sorted(LOCALE.rglob("*.po")):
        for entry in polib.pofile(str(path)):
            if entry.msgstr and sorted(cited_keys(entry.msgid)) != sorted(cited_keys(entry.msgstr)):
                wrong.append(f"{path.name}: {entry.msgid[:60]!r}")
    assert not wrong, wrong


def test_gallery_scripts_cite_through_their_chapters():
    # A script's .py and .ipynb are read outside Sphinx, where a role would show as written.
    found = [p.name for p in sorted(EXAMPLES.glob("*.py")) if ":cite:" in p.read_text(encoding="utf-8")]
    assert not found, f"{found}: a gallery script links its chapter, which cites"


def test_entries_have_no_english_connecting_words():
    # The same entries serve both languages: names joined by '&', no 'and', 'In', 'pages', 'URL'.
    style = BookStyle()
    for entry in style.format_entries(ENTRIES.values()):
        text = entry.text.render_as("text")
        head = text.split(". ")[0]
        # A title stays as published ("Qwen Technical Report"): look outside it.
        text = text.replace(re.sub(r"[{}]", "", ENTRIES[entry.key].fields["title"]), "TITLE")
        assert " and " not in head, text
        assert not re.search(r"\. In |\bpages\b|URL:|\beditors?\b|Technical Report", text), text


def test_citations_read_as_author_and_year():
    assert citation_text(ENTRIES, "t", "vaswani2017") == "Vaswani et al. (2017)"
    assert citation_text(ENTRIES, "p", "milakov2018") == "(Milakov & Gimelshein, 2018)"
    assert citation_text(ENTRIES, "t", "deepseek2024") == "DeepSeek-AI (2024)"
    # several works: in the bibliography's order, as sphinxcontrib.bibtex writes them
    assert citation_text(ENTRIES, "p", "child2019, beltagy2020") == "(Beltagy et al., 2020; Child et al., 2019)"
    with pytest.raises(ValueError, match="nosuchkey"):
        citation_text(ENTRIES, "p", "nosuchkey")


def test_notebooks_write_citations_as_links():
    converter = Converter(None, {}, lambda target, role: target, None, translate=False)
    text = converter.inline("as {cite:t}`dao2022` show {cite:p}`rabe2021,milakov2018`")
    assert text == (
        "as [Dao et al. (2022)](https://arxiv.org/abs/2205.14135) show "
        "([Milakov & Gimelshein, 2018](https://arxiv.org/abs/1805.02867); "
        "[Rabe & Staats, 2021](https://arxiv.org/abs/2112.05682))"
    ), text


def test_bibliography_file_is_the_configured_one():
    conf = (ROOT / "conf.py").read_text(encoding="utf-8")
    assert f'bibtex_bibfiles = ["{Path(BIBPATH).relative_to(ROOT).as_posix()}"]' in conf


# A work named on a page (a chapter, the landing page, the glossary) is cited where it is first
# named: the first paragraph of the page's prose that names it (headings aside) cites one of
# its keys, or a paragraph before it does.
# Name (a regular expression, case-sensitive) -> the keys that count as its citation.
NAMED = {
    r"\bvLLM\b|PagedAttention|\bKwon\b": ("kwon2023",),
    r"StreamingLLM|attention sinks?|\bXiao\b": ("xiao2023",),
    r"FlashAttention-2": ("dao2023",),
    r"FlashAttention(?!-)": ("dao2022",),
    r"Flash-Decoding": ("dao2023flashdecoding",),
    r"RoFormer|\bSu et al": ("su2021",),
    r"ALiBi|\bPress et al": ("press2022",),
    r"YaRN|\bPeng et al": ("peng2023",),
    r"[Pp]osition interpolation|\bChen et al": ("chen2023",),
    r"Longformer|\bBeltagy\b": ("beltagy2020",),
    r"Sparse Transformer|\bChild et al": ("child2019",),
    r"\bMilakov\b": ("milakov2018",),
    r"\bRabe\b": ("rabe2021",),
    r"\bShazeer\b": ("shazeer2019",),
    r"\bAinslie\b": ("ainslie2023",),
    r"\bBahdanau\b": ("bahdanau2015",),
    r"\bVaswani\b": ("vaswani2017",),
    r"\bOlsson\b": ("olsson2022",),
    r"\bElhage\b": ("elhage2021",),
    r"DeepSeek": ("deepseek2024",),
    r"\bMistral\b": ("jiang2023",),
    r"\bLlama\b": ("touvron2023", "grattafiori2024"),
    r"GPT-2\b": ("radford2019",),
    r"GPT-NeoX": ("black2022",),
    r"\bBLOOM\b": ("bigscience2022",),
    r"\bQwen\b": ("bai2023",),
    r"\bGemma\b": ("gemma2024",),
}
FENCE = re.compile(r"^(`{3,}|:{3,})\s*\{(?P<name>[\w-]+)\}", re.M)


def prose_paragraphs(text):
    """The paragraphs of a MyST page's prose: no code cells, listings, math or inline code."""
    out, lines, skip = [], [], None
    for line in text.splitlines():
        fence = FENCE.match(line)
        if skip:
            if line.strip() == skip:
                skip = None
            continue
        if fence and fence["name"] in ("code-cell", "literalinclude", "code-block", "math"):
            skip = fence.group(1)
            continue
        if not line.strip() or line.startswith(("#", "```", ":::", "---")) or re.fullmatch(r"\(\S+\)=", line):
            if lines:
                out.append(" ".join(lines))
            lines = []
            continue
        lines.append(line)
    if lines:
        out.append(" ".join(lines))
    # Citations are kept as CITE[keys]; other inline code and math go.
    out = [CITE.sub(lambda m: f"CITE[{m['keys']}]", p) for p in out]
    out = [re.sub(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$", " ", p) for p in out]
    return out


def uncited_names(text):
    """The works a page names (in words) before it cites them (in the same paragraph or earlier)."""
    wrong = []
    paragraphs = prose_paragraphs(text)
    for name, keys in NAMED.items():
        for paragraph in paragraphs:
            cited = {key.strip() for m in re.finditer(r"CITE\[([^\]]*)\]", paragraph) for key in m[1].split(",")}
            if set(keys) & cited:
                break
            if named := re.search(name, paragraph):
                wrong.append(f"{named[0]!r} without {' or '.join(keys)}: {paragraph[:100]!r}")
                break
    return wrong


@pytest.mark.parametrize("path", [*sorted((DOCS / "chapters").glob("*.md")), DOCS / "index.md", DOCS / "glossary.md"],
                         ids=lambda p: p.stem)
def test_a_named_work_is_cited_where_first_named(path):
    wrong = uncited_names(path.read_text(encoding="utf-8"))
    assert not wrong, f"{path.name}: {wrong}"


def test_uncited_names_finds_a_name_without_its_citation():
    assert uncited_names("Intro.\n\nvLLM pages the cache {cite:p}`kwon2023`.\n") == []
    assert uncited_names("vLLM pages the cache.\n\nLater {cite:p}`kwon2023`.\n")
    assert uncited_names("A {cite:t}`su2021` page.\n\nLlama rotates.\n")
    assert uncited_names("```{code-cell} ipython3\nx = 'Llama'\n```\n\nThe `Llama` code.\n") == []
    assert uncited_names("## ALiBi\n\nALiBi {cite:p}`press2022` biases.\n") == []
    # A citation that writes the name ("Vaswani et al. (2017)") counts from where it stands.
    assert uncited_names("As {cite:t}`vaswani2017` show.\n\nVaswani et al. also say.\n") == []
    assert uncited_names("Vaswani et al. say.\n\nAs {cite:t}`vaswani2017` show.\n")
