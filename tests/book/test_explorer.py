"""The attention explorers (issue 20) in Chromium, offline, in both languages.

A cell that ends with ``attn.plot.explore(...)`` shows an explorer on the web page
(``docs/_ext/book_outputs.py``, ``_static/explorer.js``).  Its contract, which these
tests check on every explorer of the book:

- it is an element with ``data-attention-explorer``; inside it, one focusable
  element (``tabindex="0"``) takes the arrow keys (move the selected cell) and
  Home/End (first and last key of the row), and an ``aria-live`` region reads out
  the query, the key and the weight with at least two decimals, in the page's
  language (Spanish words and a decimal comma on Spanish pages);
- the layer and head selectors are native ``<select>`` elements with labels;
- focus is visible; it fits 375 px (its grid scrolls inside it); it works from
  ``file://``; nothing is requested outside the site; axe finds no serious
  violation, at 375 and 1366 px, light and dark;
- the numbers read out are the page's printed tensors, and each row of weights sums
  to 1; its script and stylesheet load only on pages with an explorer, and they and
  the explorers' HTML add at most 60 KiB (gzipped) to a page.

The pages with explorers come from the sources (cells that call ``explore(``).
"""

import gzip
import re
from pathlib import Path

import pytest
from playwright import sync_api
from site_pages import CHAPTERS, LANGS, PAGES, ROOT, SiteServer, parse
from test_browser import AXE, AXE_OPTIONS, CHROMIUM, CHROMIUM_ARGS, Recorder, _new_context, _open

EXPLORER_PAGES = [
    c for c in CHAPTERS if re.search(r"^explore\(|\bexplore\(", (ROOT / "docs" / f"{c}.md").read_text(encoding="utf-8"), re.M)
]
PARAMS = [pytest.param(lang, page, id=f"{lang}/{page}") for lang in LANGS for page in EXPLORER_PAGES]
MIN_CHAPTERS = 6
MAX_ADDED_BYTES = 60 * 1024
# The page's language writes numbers with its decimal mark (0.2379, 0,2379).
DECIMAL = {"en": ".", "es": ","}
SAY = {"en": "query", "es": "consulta"}
# Tensors a page prints, which its first explorer shows: (weights, scores) as printed.
PRINTED = {
    "chapters/02_simplified_attention": ("attn_weights:", "attn_scores:"),
    "chapters/05_causal_attention": ("masked_weights:", "masked_scores:"),
}

# What the page's explorers are, as a reader's script could tell.
JS_EXPLORERS = """() => Array.from(document.querySelectorAll("[data-attention-explorer]")).map((root) => {
  const data = JSON.parse(root.querySelector("script[type='application/json']").textContent);
  const tds = Array.from(root.querySelectorAll("tbody td"));
  return {
    data,
    focusable: root.querySelectorAll('[tabindex="0"]').length,
    live: Array.from(root.querySelectorAll("[aria-live]")).map((el) => el.getAttribute("aria-live")),
    cells: tds.length,
    drawn: tds.filter((td) => td.style.backgroundColor || td.classList.contains("attn-explorer-masked")).length,
    selects: Array.from(root.querySelectorAll("select")).map((s) => Array.from(s.labels).map((l) => l.textContent.trim())),
    say: {weights: root.dataset.sayWeights, scores: root.dataset.sayScores, masked: root.dataset.sayMasked},
  };
})"""


def _open_details(page):
    # Explorers of folded solutions: unfolded, as a reader does. sphinx-design fades a
    # dropdown's content in as it opens: wait for that to end, or axe reads the colours
    # half-way (a flaky contrast failure on a dark page).
    page.evaluate("""async () => {
      document.querySelectorAll('details').forEach((d) => { d.open = true; });
      await new Promise(requestAnimationFrame);
      await Promise.all(document.getAnimations().map((a) => a.finished));
    }""")


def _explorers(page):
    _open_details(page)
    return page.evaluate(JS_EXPLORERS)


def _readout_pattern(template, lang):
    """A regex of one read-out sentence: groups query, key and value (>= 2 decimals)."""
    number = r"(?P<value>-?\d+" + re.escape(DECIMAL[lang]) + r"\d{2,})"
    pattern = re.escape(template)
    for name, group in (("query", "(?P<query>.+?)"), ("key", "(?P<key>.+?)"), ("value", number)):
        pattern = pattern.replace(re.escape("{" + name + "}"), group)
    return re.compile(pattern)


class Explorer:
    """One explorer of an open page, driven by the keyboard as a reader does."""

    def __init__(self, page, index, facts, lang):
        self.page, self.lang, self.facts = page, lang, facts
        self.root = page.locator("[data-attention-explorer]").nth(index)
        self.grid = self.root.locator('[tabindex="0"]')
        self.live = self.root.locator("[aria-live]")
        self.x, self.y = facts["data"]["x"], facts["data"]["y"]

    def press(self, *keys):
        self.grid.focus()
        for key in keys:
            self.grid.press(key)
        return self.read()

    def read(self):
        """``(query, key, value)`` read out; ``value`` a float, or None for a masked cell."""
        text = self.live.inner_text().strip()
        for view in ("weights", "scores"):
            m = _readout_pattern(self.facts["say"][view], self.lang).fullmatch(text)
            if m:
                return m["query"], m["key"], float(m["value"].replace(DECIMAL[self.lang], "."))
        masked = re.escape(self.facts["say"]["masked"]).replace(r"\{query\}", "(.+?)").replace(r"\{key\}", "(.+?)")
        m = re.fullmatch(masked, text)
        assert m, f"read out {text!r}, none of the sentences {self.facts['say']}"
        return m[1], m[2], None

    def go(self, i, j):
        """Select cell (i, j): Home, then up to the top, down i rows, right j keys."""
        self.press("Home", *["ArrowUp"] * len(self.y), *["ArrowDown"] * i, *["ArrowRight"] * j)
        return self.read()


def _printed_matrix(page, label, rows):
    """The first ``rows`` rows of the tensor printed after ``label`` in the page's outputs."""
    text = "\n".join(page.locator(".cell_output pre").all_inner_texts())
    start = text.index(label)
    body = text[start:text.index("])", start)]
    numbers = re.findall(r"-inf|-?\d+\.\d+", body)
    n = len(numbers) // rows
    return [[None if v == "-inf" else float(v) for v in numbers[r * n:(r + 1) * n]] for r in range(rows)]


@pytest.fixture(scope="module")
def site(site_dir):
    return Path(site_dir)


@pytest.fixture(scope="module")
def server(site):
    with SiteServer(site, gzip=True) as srv:  # gzipped, as Read the Docs serves the book
        yield srv.url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


# -- the book has its explorers ---------------------------------------------------------------


def test_enough_chapters_have_explorers(site):
    assert len(EXPLORER_PAGES) >= MIN_CHAPTERS, f"explorers on {EXPLORER_PAGES}, fewer than {MIN_CHAPTERS} chapters"
    for lang in LANGS:
        for name in EXPLORER_PAGES:
            doc = parse(site / lang / f"{name}.html")
            assert doc.select("[data-attention-explorer]"), f"{lang}/{name}: the source calls explore(), no explorer"


@pytest.mark.parametrize("lang", LANGS)
def test_script_and_stylesheet_only_where_used(site, lang):
    for name in PAGES:
        doc = parse(site / lang / f"{name}.html")
        used = bool(doc.select("[data-attention-explorer]"))
        js = [s["src"] for s in doc.select("script[src]") if "explorer.js" in s["src"]]
        css = [c["href"] for c in doc.select("link[rel=stylesheet]") if "explorer.css" in c["href"]]
        assert (len(js), len(css)) == ((1, 1) if used else (0, 0)), f"{lang}/{name}: {js} {css}"
        if used:
            assert doc.select_one("script[src*='explorer.js']").has_attr("defer")


@pytest.mark.parametrize("name", EXPLORER_PAGES)
def test_both_languages_show_the_same_numbers(site, name):
    data = {lang: [s.get_text() for s in parse(site / lang / f"{name}.html").select("[data-attention-explorer] script")]
            for lang in LANGS}
    assert data["en"] and all(d == data["en"] for d in data.values()), f"{name}: the explorers' data differ"


# -- each explorer, in the browser ------------------------------------------------------------------


@pytest.mark.parametrize("lang, name", PARAMS)
def test_explorer_contract(server, browser, lang, name):
    ctx = _new_context(browser)
    try:
        page, rec, _ = _open(ctx, f"{server}/{lang}/{name}.html")
        explorers = _explorers(page)
        assert explorers, f"{lang}/{name}: no explorer"
        for index, facts in enumerate(explorers):
            where = f"{lang}/{name} explorer {index + 1}"
            data = facts["data"]
            T_q, T_k = len(data["y"]), len(data["x"])
            assert facts["focusable"] == 1, f"{where}: {facts['focusable']} elements with tabindex=0"
            assert facts["live"] == ["polite"], f"{where}: live regions {facts['live']}"
            assert facts["cells"] == T_q * T_k and facts["drawn"] == facts["cells"], f"{where}: grid not drawn"
            assert all(labels and all(labels) for labels in facts["selects"]), f"{where}: a select without a label"
            if data["axes"]:
                assert len(facts["selects"]) == len(data["axes"]), f"{where}: {facts['selects']}"
            ex = Explorer(page, index, facts, lang)
            assert ex.read()[0] == data["y"][0], f"{where}: the first cell is not read out at first"
            # Focus is visible, reached with the keyboard (back a step with Shift+Tab, then Tab).
            ex.grid.focus()
            ex.grid.press("Shift+Tab")
            page.keyboard.press("Tab")
            assert ex.grid.evaluate("(el) => el === document.activeElement"), f"{where}: Tab does not reach the grid"
            outline = ex.grid.evaluate(
                "(el) => [el.matches(':focus-visible'), getComputedStyle(el).outlineStyle, getComputedStyle(el).outlineWidth]")
            assert outline[0] and outline[1] != "none" and float(outline[2][:-2]) >= 2, f"{where}: focus {outline}"
            # The keyboard moves the selection: rows with arrows, Home/End along the row.
            last = T_q - 1
            q, k, _ = ex.go(last, 0)
            assert (q, k) == (data["y"][last], data["x"][0]), f"{where}: ({q}, {k}) after moving to ({last}, 0)"
            assert ex.press("End")[1] == data["x"][-1], f"{where}: End"
            assert ex.press("Home")[1] == data["x"][0], f"{where}: Home"
            assert ex.press("ArrowRight")[1] == data["x"][min(1, T_k - 1)], f"{where}: ArrowRight"
            assert ex.press("ArrowUp")[0] == data["y"][max(last - 1, 0)], f"{where}: ArrowUp"
            # Each row of weights read out (masked: 0) sums to 1; its values are the data's.
            scale = 10 ** data["digits"]
            values = data["views"][0]["values"]
            for i in sorted({0, last}):
                row = [ex.go(i, 0)[2]] + [ex.press("ArrowRight")[2] for _ in range(T_k - 1)]
                assert row == [None if v is None else v / scale for v in values[i * T_k:(i + 1) * T_k]], where
                total = sum(v or 0.0 for v in row)
                assert abs(total - 1) <= T_k * 0.5 / scale + 1e-9, f"{where}: row {i} sums to {total}"
            # Another head or layer, and the scores, are read out from their own numbers.
            if facts["selects"]:
                select = ex.root.locator("select").last
                options = data["axes"][-1]["options"]
                select.select_option(index=len(options) - 1)
                _, _, got = ex.go(last, 0)
                flat = (len(options) - 1) * T_q * T_k + last * T_k  # first panel of the other axes
                assert got == values[flat] / scale, f"{where}: after choosing {options[-1]}"
                select.select_option(index=0)
            if len(data["views"]) > 1:
                ex.root.locator("input[type=radio][value='1']").check()
                q, k, got = ex.go(last, 0)
                score = data["views"][1]["values"][last * T_k]
                assert got == (None if score is None else score / scale), f"{where}: the score read out"
                ex.root.locator("input[type=radio][value='0']").check()
            text = ex.live.inner_text()
            assert text.startswith(SAY[lang]), f"{where}: read out {text!r}, not in {lang}"
        assert not rec.problems, f"{lang}/{name}: " + "; ".join(rec.problems)
        assert not ctx.offsite.urls, f"{lang}/{name}: requests leaving the site: {ctx.offsite.urls}"
    finally:
        ctx.close()


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", sorted(PRINTED))
def test_read_out_weights_are_the_printed_tensors(server, browser, lang, name):
    ctx = _new_context(browser)
    try:
        page, _, _ = _open(ctx, f"{server}/{lang}/{name}.html")
        facts = _explorers(page)[0]
        ex = Explorer(page, 0, facts, lang)
        T_q, T_k = len(facts["data"]["y"]), len(facts["data"]["x"])
        for view, label in enumerate(PRINTED[name]):
            printed = _printed_matrix(page, label, T_q)
            ex.root.locator(f"input[type=radio][value='{view}']").check()
            shown = []
            for i in range(T_q):
                shown.append([ex.go(i, 0)[2]] + [ex.press("ArrowRight")[2] for _ in range(T_k - 1)])
            if view == 0:  # a masked weight is printed as 0 (its score as -inf)
                shown = [[0.0 if v is None else v for v in row] for row in shown]
            assert shown == printed, f"{lang}/{name}: read out {shown}, printed {label} {printed}"
    finally:
        ctx.close()


@pytest.mark.parametrize("lang, name", PARAMS)
def test_explorer_from_disk(site, browser, lang, name):
    ctx = _new_context(browser)
    try:
        page = ctx.new_page()
        rec = Recorder(page)
        page.goto((site / lang / f"{name}.html").resolve().as_uri(), wait_until="load")
        explorers = _explorers(page)
        assert explorers and all(e["drawn"] == e["cells"] > 0 for e in explorers), f"{lang}/{name}: not drawn"
        ex = Explorer(page, 0, explorers[0], lang)
        assert ex.press("ArrowDown")[0] == explorers[0]["data"]["y"][1]
        assert rec.settle(page)
        assert not rec.problems, f"{lang}/{name} from disk: " + "; ".join(rec.problems)
        requested = [r.url for r in rec.finished if not r.url.startswith("file:")]
        assert not requested and not ctx.offsite.urls, f"{lang}/{name} from disk requested {requested}"
    finally:
        ctx.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("width", [375, 1366])
@pytest.mark.parametrize("lang, name", PARAMS)
def test_explorer_accessible_and_narrow(server, browser, lang, name, width, theme):
    ctx = _new_context(browser, viewport={"width": width, "height": 900}, color_scheme=theme)
    ctx.add_init_script(f"localStorage.setItem('mode', '{theme}'); localStorage.setItem('theme', '{theme}');")
    try:
        page, _, _ = _open(ctx, f"{server}/{lang}/{name}.html")
        _open_details(page)
        results = AXE.run(page, context="[data-attention-explorer]", options=AXE_OPTIONS).response
        serious = [f"{v['id']}: {v['help']}; e.g. {v['nodes'][0]['html'][:120]!r}"
                   for v in results["violations"] if v["impact"] in ("serious", "critical")]
        assert not serious, f"{lang}/{name} at {width} px, {theme}: " + "; ".join(serious)
        # Each explorer fits the width; a grid wider than the column scrolls inside its frame.
        wide = page.evaluate("""() => Array.from(document.querySelectorAll("[data-attention-explorer]"))
          .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1
                       || el.scrollWidth > el.clientWidth + 1).map((el) => el.id)""")
        assert not wide, f"{lang}/{name} at {width} px: explorers wider than the page: {wide}"
    finally:
        ctx.close()


@pytest.mark.parametrize("lang, name", PARAMS)
def test_explorers_add_at_most_60_kib(site, server, browser, lang, name):
    ctx = _new_context(browser)
    try:
        page, rec, _ = _open(ctx, f"{server}/{lang}/{name}.html", no_cache=True)
        assert rec.settle(page)
        files = sum(
            max(r.sizes()["responseBodySize"], 0) + max(r.sizes()["responseHeadersSize"], 0)
            for r in rec.finished if re.search(r"/explorer\.(js|css)\b", r.url)
        )
    finally:
        ctx.close()
    assert files > 0, f"{lang}/{name}: explorer.js and explorer.css were not downloaded"
    html = "".join(str(el) for el in parse(site / lang / f"{name}.html").select("[data-attention-explorer]"))
    added = files + len(gzip.compress(html.encode("utf-8"), compresslevel=6))
    assert added <= MAX_ADDED_BYTES, f"{lang}/{name}: the explorers add {added / 1024:.1f} KiB (gzipped)"
