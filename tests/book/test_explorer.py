"""The attention explorers (issue 20) in Chromium, offline, in both languages.

A cell that ends with ``attn.viz.plot.explore(...)`` shows an explorer on the web page
(``docs/_ext/book_outputs.py``, ``_static/explorer.js``).  Its contract, which these
tests check on every explorer of the book:

- it is an element with ``data-attention-explorer``; inside it, one focusable
  element (``tabindex="0"``: the selected cell of the grid, a roving tab stop) takes
  the arrow keys (move the selected cell) and Home/End (first and last key of the
  row), and an ``aria-live`` region reads out the query, the key and the weight with
  at least two decimals, in the page's language (Spanish words and a decimal comma on
  Spanish pages), after a key or a control, not as the pointer passes;
- in Chromium's accessibility tree it is a grid (WAI-ARIA's pattern) named after the
  view it shows, its headers the tokens with their positions as words, every cell
  named by its value, the selected one ``selected`` and the one focused; English
  tokens are marked ``lang="en"`` on Spanish pages;
- without JavaScript it is a table of the first panel's weights, in the colours the
  script gives them; in forced colours the cells keep their colours and the selected
  one is outlined in the system's highlight; in light and dark, the selection is a
  two-tone ring, one tone seen on any cell's colour;
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
from decimal import ROUND_HALF_UP, Decimal
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
# A token's position, written as a subscript (37₀), read out as a word: "37, position 0".
POSITION = {"en": "position", "es": "posición"}
NAME = {"en": ("Attention weights", "Attention scores"), "es": ("Pesos de atención", "Puntuaciones de atención")}
MASKED = {"en": "masked", "es": "enmascarada"}
SUBSCRIPT = "₀₁₂₃₄₅₆₇₈₉"
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


def spoken(label, lang):
    """A label as a screen reader hears it: ``"37₀"`` -> ``"37, position 0"``."""
    m = re.fullmatch(f"(.+?)([{SUBSCRIPT}]+)", label)
    if not m:
        return label
    return f"{m[1]}, {POSITION[lang]} " + "".join(str(SUBSCRIPT.index(c)) for c in m[2])


def _number(value, decimals, lang):
    """As the page writes a number (Intl.NumberFormat): 0.945 -> 0.95 (not "%.2f"'s 0.94), 0,95 in Spanish."""
    exact = Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)
    return str(exact).replace(".", DECIMAL[lang])


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
        self.grid = self.root.locator('[tabindex="0"]')  # the selected cell, the grid's tab stop
        self.live = self.root.locator("[aria-live]")
        self.shown = self.root.locator(".attn-explorer-readout")
        self.x, self.y = facts["data"]["x"], facts["data"]["y"]

    def press(self, *keys):
        self.grid.focus()
        for key in keys:
            self.grid.press(key)
        return self.read()

    def read(self, text=None):
        """``(query, key, value)`` read out; ``value`` a float, or None for a masked cell."""
        text = self.live.inner_text().strip() if text is None else text
        for view in ("weights", "scores"):
            m = _readout_pattern(self.facts["say"][view], self.lang).fullmatch(text)
            if m:
                return m["query"], m["key"], float(m["value"].replace(DECIMAL[self.lang], "."))
        masked = re.escape(self.facts["say"]["masked"]).replace(r"\{query\}", "(.+?)").replace(r"\{key\}", "(.+?)")
        m = re.fullmatch(masked, text)
        assert m, f"read out {text!r}, none of the sentences {self.facts['say']}"
        return m[1], m[2], None

    def go(self, i, j):
        """Select cell (i, j): Ctrl+Home (the first cell), then down i rows, right j keys."""
        self.press("Control+Home", *["ArrowDown"] * i, *["ArrowRight"] * j)
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
            say = lambda label: spoken(label, lang)  # noqa: E731
            # At first the line on screen shows the first cell; the live region is silent.
            assert ex.read(ex.shown.inner_text().strip())[:2] == (data["y"][0], data["x"][0]), f"{where}: first cell"
            assert not ex.live.inner_text().strip(), f"{where}: the live region speaks as the page loads"
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
            assert (q, k) == (say(data["y"][last]), say(data["x"][0])), f"{where}: ({q}, {k}) after moving to ({last}, 0)"
            assert ex.press("End")[1] == say(data["x"][-1]), f"{where}: End"
            assert ex.press("Home")[1] == say(data["x"][0]), f"{where}: Home"
            assert ex.press("ArrowRight")[1] == say(data["x"][min(1, T_k - 1)]), f"{where}: ArrowRight"
            assert ex.press("ArrowUp")[0] == say(data["y"][max(last - 1, 0)]), f"{where}: ArrowUp"
            assert ex.press("Control+End")[:2] == (say(data["y"][-1]), say(data["x"][-1])), f"{where}: Ctrl+End"
            assert ex.press("Control+Home")[:2] == (say(data["y"][0]), say(data["x"][0])), f"{where}: Ctrl+Home"
            # The pointer moves the selection on screen, and the live region stays silent.
            before = ex.live.inner_text()
            ex.root.locator("tbody td").last.hover()
            assert ex.read(ex.shown.inner_text().strip())[:2] == (data["y"][-1], data["x"][-1]), f"{where}: hover"
            assert ex.live.inner_text() == before, f"{where}: the live region speaks as the pointer passes"
            page.mouse.move(0, 0)
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
        assert ex.press("ArrowDown")[0] == spoken(explorers[0]["data"]["y"][1], lang)
        assert rec.settle(page)
        assert not rec.problems, f"{lang}/{name} from disk: " + "; ".join(rec.problems)
        requested = [r.url for r in rec.finished if not r.url.startswith("file:")]
        assert not requested and not ctx.offsite.urls, f"{lang}/{name} from disk requested {requested}"
    finally:
        ctx.close()


# The theme as its switcher sets it (pydata-sphinx-theme: html[data-theme], html[data-mode]),
# the system's scheme to match; then every transition ends before axe reads a colour.
JS_THEME = """async (theme) => {
  document.documentElement.dataset.theme = theme;
  document.documentElement.dataset.mode = theme;
  await new Promise(requestAnimationFrame);
  await Promise.all(document.getAnimations().map((a) => a.finished));
}"""


@pytest.mark.parametrize("lang, name", PARAMS)
def test_explorer_accessible_and_narrow(server, browser, lang, name):
    # One page load for the four cases (375 and 1366 px, light and dark): the theme is
    # switched in the page, as its switcher does, and the window resized.
    ctx = _new_context(browser, viewport={"width": 1366, "height": 900})
    problems = []
    try:
        page, _, _ = _open(ctx, f"{server}/{lang}/{name}.html")
        _open_details(page)
        backgrounds = set()  # the explorer's text colour in each theme: the switch took effect
        for theme in ("light", "dark"):
            page.emulate_media(color_scheme=theme)
            page.evaluate(JS_THEME, theme)
            backgrounds.add(page.evaluate(
                "() => getComputedStyle(document.querySelector('.attn-explorer')).color"))
            for width in (375, 1366):
                page.set_viewport_size({"width": width, "height": 900})
                page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
                results = AXE.run(page, context="[data-attention-explorer]", options=AXE_OPTIONS).response
                problems += [f"{width} px, {theme}: {v['id']}: {v['help']}; e.g. {v['nodes'][0]['html'][:120]!r}"
                             for v in results["violations"] if v["impact"] in ("serious", "critical")]
                # Each explorer fits the width; a grid wider than the column scrolls inside its frame.
                wide = page.evaluate("""() => Array.from(document.querySelectorAll("[data-attention-explorer]"))
                  .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1
                               || el.scrollWidth > el.clientWidth + 1).map((el) => el.id)""")
                problems += [f"{width} px, {theme}: explorers wider than the page: {wide}"] if wide else []
    finally:
        ctx.close()
    assert len(backgrounds) == 2, f"{lang}/{name}: the explorer looks the same in both themes: {backgrounds}"
    assert not problems, f"{lang}/{name}:\n  " + "\n  ".join(problems)


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


# -- every reader: screen readers, no JavaScript, forced colours ---------------------------------


def _ax_nodes(cdp, index, role):
    """Nodes of ``role`` in Chromium's accessibility tree, inside explorer ``index``'s table."""
    table = cdp.send("Runtime.evaluate", {
        "expression": f"document.querySelectorAll('[data-attention-explorer] table')[{index}]"})["result"]["objectId"]
    return cdp.send("Accessibility.queryAXTree", {"objectId": table, "role": role})["nodes"]


def _ax_props(node):
    return {p["name"]: p["value"].get("value") for p in node.get("properties", [])}


def _first_panel(data, lang, view=0):
    """The cells' names a screen reader hears, by rows: the values as the cells write them."""
    T_k, scale = len(data["x"]), 10 ** data["digits"]
    values = data["views"][view]["values"][:len(data["y"]) * T_k]
    names = [MASKED[lang] if v is None else _number(v / scale, data["cells"] or 2, lang) for v in values]
    return [names[i:i + T_k] for i in range(0, len(names), T_k)]


@pytest.mark.parametrize("lang, name", PARAMS)
def test_explorer_is_a_grid_for_screen_readers(server, browser, lang, name):
    ctx = _new_context(browser)
    try:
        page, rec, _ = _open(ctx, f"{server}/{lang}/{name}.html")
        explorers = _explorers(page)
        cdp = ctx.new_cdp_session(page)
        cdp.send("Accessibility.enable")
        for index, facts in enumerate(explorers):
            where = f"{lang}/{name} explorer {index + 1}"
            data, ex = facts["data"], Explorer(page, index, facts, lang)
            T_q, T_k = len(data["y"]), len(data["x"])
            (grid,) = _ax_nodes(cdp, index, "grid")
            help_text = ex.root.locator(".attn-explorer-help").inner_text().strip()
            assert grid["name"]["value"] == NAME[lang][0], f"{where}: grid named {grid['name']['value']!r}"
            assert grid.get("description", {}).get("value") == help_text, f"{where}: the grid's description"
            # Headers: the tokens, a position said as a word; the corner names both axes.
            cols = [n["name"]["value"] for n in _ax_nodes(cdp, index, "columnheader")]
            rows = [n["name"]["value"] for n in _ax_nodes(cdp, index, "rowheader")]
            assert cols[1:] == [spoken(x, lang) for x in data["x"]], f"{where}: column headers {cols[:4]}"
            assert rows == [spoken(y, lang) for y in data["y"]], f"{where}: row headers {rows[:4]}"
            assert SAY[lang] in cols[0], f"{where}: corner {cols[0]!r}"
            # Every cell named by its value (or "masked"); one selected, and it is the tab stop.
            cells = _ax_nodes(cdp, index, "gridcell")
            names = [c["name"]["value"] for c in cells]
            assert names == [n for row in _first_panel(data, lang) for n in row], f"{where}: cells {names[:6]}"
            selected = [k for k, c in enumerate(cells) if _ax_props(c).get("selected")]
            assert selected == [0], f"{where}: selected cells {selected}"
            # Walked with the keyboard: focus moves to the next row's cell, selected, named.
            ex.press("ArrowDown")
            focused = [k for k, c in enumerate(_ax_nodes(cdp, index, "gridcell")) if _ax_props(c).get("focused")]
            assert focused == [min(1, T_q - 1) * T_k], f"{where}: focus on cells {focused} after ArrowDown"
            assert _ax_props(_ax_nodes(cdp, index, "gridcell")[focused[0]]).get("selected"), where
            # The name follows the view.
            if len(data["views"]) > 1:
                ex.root.locator("input[type=radio][value='1']").check()
                (grid,) = _ax_nodes(cdp, index, "grid")
                assert grid["name"]["value"] == NAME[lang][1], f"{where}: scores shown, grid {grid['name']['value']!r}"
                names = [c["name"]["value"] for c in _ax_nodes(cdp, index, "gridcell")]
                assert names == [n for row in _first_panel(data, lang, 1) for n in row], f"{where}: scores' cells"
                ex.root.locator("input[type=radio][value='0']").check()
            # English tokens, in the live region and the headers, marked so on a Spanish page.
            words = [x for x in data["x"] + data["y"] if re.search("[A-Za-z]", x)]
            marked = ex.root.evaluate("""(root) => [...root.querySelectorAll('[lang="en"]')]
                .filter((el) => el.closest("th, .attn-explorer-live")).map((el) => el.textContent)""")
            if lang == "en" or not words:
                assert not marked, f"{where}: lang=en on {marked[:3]}"
            else:
                expected = {re.sub(f"[{SUBSCRIPT}]+$", "", w) for w in words}
                assert set(marked) == expected, f"{where}: marked {sorted(set(marked))[:5]}, tokens {sorted(expected)[:5]}"
        assert not rec.problems, f"{lang}/{name}: " + "; ".join(rec.problems)
    finally:
        ctx.close()


JS_CELL_COLOURS = """() => Array.from(document.querySelectorAll("[data-attention-explorer] table")).map((t) =>
  Array.from(t.querySelectorAll("tbody td")).map((td) => getComputedStyle(td).backgroundColor))"""


@pytest.mark.parametrize("lang, name", PARAMS)
def test_explorer_without_javascript(server, browser, lang, name):
    # Reader modes, blocked scripts, an early print: the weights as a table, in the colours the script draws.
    drawn = _new_context(browser)
    bare = _new_context(browser, java_script_enabled=False)
    try:
        page, _, _ = _open(drawn, f"{server}/{lang}/{name}.html")
        _open_details(page)
        colours = page.evaluate(JS_CELL_COLOURS)
        datas = [e["data"] for e in page.evaluate(JS_EXPLORERS)]
        page, rec, _ = _open(bare, f"{server}/{lang}/{name}.html")
        page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
        assert page.evaluate(JS_CELL_COLOURS) == colours, f"{lang}/{name}: other colours than the script's"
        rec.problems = [p for p in rec.problems if not p.endswith("(csp)")]  # the scripts, not run
        for index, data in enumerate(datas):
            where = f"{lang}/{name} explorer {index + 1}"
            root = page.locator("[data-attention-explorer]").nth(index)
            texts = [t.strip() for t in root.locator("tbody td").all_text_contents()]
            panel = _first_panel(data, lang)
            assert texts == [n for row in panel for n in row], f"{where}: cells {texts[:6]}"
            assert root.locator("tbody th").all_text_contents() == data["y"], f"{where}: row labels"
            assert not root.locator("[role=grid]").count(), f"{where}: a grid no key moves"
            assert root.locator(".attn-explorer-help").is_hidden(), f"{where}: help for a grid that is not there"
            controls = root.locator("select, input")
            assert all(c.is_disabled() for c in controls.all()), f"{where}: controls that do nothing"
            assert root.locator(".attn-explorer-grid table").is_visible(), where
        assert not rec.problems, f"{lang}/{name}: " + "; ".join(rec.problems)
    finally:
        drawn.close()
        bare.close()


def _rgb(css):
    return [int(c) for c in re.findall(r"\d+", css)[:3]]


def _contrast(a, b):
    def lum(rgb):
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (x / 255 for x in rgb))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


JS_RING = """(td) => {
  const style = getComputedStyle(td);
  return {cell: style.backgroundColor, outer: style.outlineColor, width: style.outlineWidth,
          inner: style.boxShadow, focus: td === document.activeElement};
}"""


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("lang, name", [p for p in PARAMS if p.values[0] == LANGS[0]])
def test_selection_ring_shows_on_every_cell_colour(server, browser, lang, name, theme):
    # A two-tone ring (its tones at least 3:1 apart), one tone at least 3:1 against the
    # selected cell's colour (WCAG 1.4.11), on the lightest and the darkest cell.
    ctx = _new_context(browser, color_scheme=theme)
    ctx.add_init_script(f"localStorage.setItem('mode', '{theme}'); localStorage.setItem('theme', '{theme}');")
    try:
        page, _, _ = _open(ctx, f"{server}/{lang}/{name}.html")
        for index, facts in enumerate(_explorers(page)):
            ex = Explorer(page, index, facts, lang)
            T_k = len(facts["data"]["x"])
            colours = [_rgb(c) for c in page.evaluate(JS_CELL_COLOURS)[index]]
            masked = ex.root.evaluate("(root) => [...root.querySelectorAll('tbody td')].map((td) => "
                                      "td.classList.contains('attn-explorer-masked'))")
            shown = [k for k, c in enumerate(colours) if not masked[k]]
            for k in {min(shown, key=lambda k: sum(colours[k])), max(shown, key=lambda k: sum(colours[k]))}:
                ex.go(k // T_k, k % T_k)
                # Focused (the keyboard's), then not (the pointer's, or the focus elsewhere).
                for focus in (True, False):
                    if not focus:
                        ex.grid.evaluate("(td) => td.blur()")
                    ring = ex.grid.evaluate(JS_RING)
                    where = f"{lang}/{name} explorer {index + 1}, {theme}, cell {k}, focus {focus}"
                    assert ring["focus"] == focus and float(ring["width"][:-2]) >= 2, f"{where}: {ring}"
                    outer, inner, cell = _rgb(ring["outer"]), _rgb(ring["inner"]), _rgb(ring["cell"])
                    assert "inset" in ring["inner"] and _contrast(outer, inner) >= 3, f"{where}: one tone {ring}"
                    assert max(_contrast(outer, cell), _contrast(inner, cell)) >= 3, f"{where}: ring unseen {ring}"
    finally:
        ctx.close()


@pytest.mark.parametrize("lang, name", PARAMS)
def test_explorer_in_forced_colours(server, browser, lang, name):
    # Windows' contrast themes: the heatmap keeps its colours, the selection is the system's Highlight.
    ctx = _new_context(browser, forced_colors="active")
    try:
        page, _, _ = _open(ctx, f"{server}/{lang}/{name}.html")
        explorers = _explorers(page)
        highlight = page.evaluate("""() => {
          const probe = document.body.appendChild(document.createElement("i"));
          probe.style.cssText = "color: Highlight; forced-color-adjust: none";
          const colour = getComputedStyle(probe).color;
          probe.remove();
          return colour;
        }""")
        for index, facts in enumerate(explorers):
            where = f"{lang}/{name} explorer {index + 1}"
            root = page.locator("[data-attention-explorer]").nth(index)
            kept = root.evaluate("""(root) => [...root.querySelectorAll("tbody td:not(.attn-explorer-masked)")]
              .every((td) => getComputedStyle(td).backgroundColor === td.style.backgroundColor)""")
            assert kept, f"{where}: forced colours repaint the cells"
            bar = root.locator(".attn-explorer-bar").evaluate("(el) => getComputedStyle(el).backgroundImage")
            assert "gradient" in bar, f"{where}: the colour bar is gone ({bar})"
            hatch = root.locator("td.attn-explorer-masked, .attn-explorer-swatch").evaluate_all(
                "(els) => els.map((el) => getComputedStyle(el).backgroundImage)")
            assert all("gradient" in h for h in hatch), f"{where}: the masked cells' hatching is gone"
            ex = Explorer(page, index, facts, lang)
            ex.press("ArrowRight")
            ring = ex.grid.evaluate(JS_RING)
            assert ring["outer"] == highlight and float(ring["width"][:-2]) >= 2, f"{where}: {ring}, Highlight {highlight}"
    finally:
        ctx.close()
