/* Attention explorers: the interactive heatmaps of the book's pages.
 *
 * docs/_ext/book_outputs.py writes each one (docs/_templates/attention-explorer.html)
 * with its data inline as JSON, from attn.plot.explore: the tokens, the leading axes
 * (layer, head), one or two views (the weights, the scores), each a flat list of
 * integers (value * 10^digits, null where masked) and the ends of its colour scale,
 * and the colour map's stops.  This script draws the grid of the chosen layer, head
 * and view, and moves a selected cell with the pointer or the keyboard (arrows,
 * Home/End), reading out its query, key and value in the page's language.
 * No library, no request: it works from a page opened from disk.
 */
(() => {
  "use strict";

  const rgb = (hex) => [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));

  // Black or white text, whichever contrasts more with the cell (WCAG 2.1), as
  // attn.plot._text_color writes the numbers of the static heatmaps.
  function ink(colour) {
    const [r, g, b] = colour.map((c) => {
      const s = c / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    const lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    return (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) ? "#000" : "#fff";
  }

  // The colour of t in [0, 1]: linear between the colour map's stops, as matplotlib's.
  function shade(stops, t) {
    const x = Math.min(Math.max(t, 0), 1) * (stops.length - 1);
    const k = Math.min(Math.floor(x), stops.length - 2);
    return stops[k].map((c, n) => Math.round(c + (x - k) * (stops[k + 1][n] - c)));
  }

  function header(text, scope) {
    const th = document.createElement("th");
    th.scope = scope;
    th.append(Object.assign(document.createElement("span"), { textContent: text }));
    return th;
  }

  function explorer(root) {
    const data = JSON.parse(root.querySelector("script[type='application/json']").textContent);
    const grid = root.querySelector(".attn-explorer-grid");
    const readout = root.querySelector(".attn-explorer-readout");
    const [Tq, Tk] = [data.y.length, data.x.length];
    const scale = 10 ** data.digits;
    const stops = data.colors.map(rgb);
    // Numbers in the page's language: 0.37 on English pages, 0,37 on Spanish ones.
    const numbers = (d) => new Intl.NumberFormat(document.documentElement.lang || "en",
      { minimumFractionDigits: d, maximumFractionDigits: d, useGrouping: false });
    const exact = numbers(data.digits);
    const short = numbers(data.cells ?? 2);
    const state = { panel: 0, view: 0, i: 0, j: 0 };

    // The table: keys across (thead), queries down (one th per row), one td per weight.
    const table = document.createElement("table");
    const top = table.createTHead().insertRow();
    const corner = document.createElement("td");
    corner.className = "attn-explorer-corner";
    corner.setAttribute("aria-hidden", "true");
    corner.append(
      Object.assign(document.createElement("span"), { textContent: `${root.dataset.wordKey} →` }),
      Object.assign(document.createElement("span"), { textContent: `${root.dataset.wordQuery} ↓` }),
    );
    top.append(corner);
    const cols = data.x.map((label) => top.appendChild(header(label, "col")));
    const body = table.createTBody();
    const rows = [];
    const cells = data.y.map((label) => {
      const tr = body.insertRow();
      rows.push(tr.appendChild(header(label, "row")));
      return data.x.map(() => tr.insertCell());
    });
    if (data.cells === null) table.classList.add("attn-explorer-small");
    grid.append(table);

    const value = (i, j) => data.views[state.view].values[(state.panel * Tq + i) * Tk + j];

    function select(i, j) {
      state.i = Math.min(Math.max(i, 0), Tq - 1);
      state.j = Math.min(Math.max(j, 0), Tk - 1);
      root.querySelectorAll(".attn-explorer-on").forEach((el) => el.classList.remove("attn-explorer-on"));
      for (const el of [cells[state.i][state.j], rows[state.i], cols[state.j]]) el.classList.add("attn-explorer-on");
      const v = value(state.i, state.j);
      const name = v === null ? "masked" : data.views[state.view].name;
      const say = root.dataset[`say${name[0].toUpperCase()}${name.slice(1)}`];
      readout.textContent = say.replace("{query}", data.y[state.i]).replace("{key}", data.x[state.j])
        .replace("{value}", v === null ? "" : exact.format(v / scale));
    }

    function draw() {
      const view = data.views[state.view];
      const span = view.hi - view.lo || 1;
      cells.forEach((row, i) => row.forEach((td, j) => {
        const v = value(i, j);
        td.classList.toggle("attn-explorer-masked", v === null);
        if (v === null) {
          td.style.backgroundColor = td.style.color = td.textContent = "";
          return;
        }
        const colour = shade(stops, (v / scale - view.lo) / span);
        td.style.backgroundColor = `rgb(${colour.join(",")})`;
        td.style.color = ink(colour);
        td.textContent = data.cells === null ? "" : short.format(v / scale);
      }));
      root.querySelector(".attn-explorer-lo").textContent = short.format(view.lo);
      root.querySelector(".attn-explorer-hi").textContent = short.format(view.hi);
      select(state.i, state.j);
    }

    // The controls: a select per leading axis, radio buttons for the view.
    const selects = [...root.querySelectorAll("select[data-axis]")];
    const radios = [...root.querySelectorAll("input[type=radio]")];
    function choose() {
      state.panel = selects.reduce((p, s, k) => p * data.axes[k].options.length + s.selectedIndex, 0);
      state.view = Math.max(0, radios.findIndex((r) => r.checked));
      draw();
    }
    for (const control of [...selects, ...radios]) control.addEventListener("change", choose);

    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    grid.addEventListener("keydown", (event) => {
      let [i, j] = [state.i, state.j];
      if (event.key in moves) [i, j] = [i + moves[event.key][0], j + moves[event.key][1]];
      else if (event.key === "Home") j = 0;
      else if (event.key === "End") j = Tk - 1;
      else return;
      event.preventDefault();
      select(i, j);
      cells[state.i][state.j].scrollIntoView({ block: "nearest", inline: "nearest" });
    });
    table.addEventListener("pointerover", (event) => {
      const td = event.target.closest("tbody td");
      if (td) select(td.parentElement.sectionRowIndex, td.cellIndex - 1);
    });

    root.querySelector(".attn-explorer-bar").style.backgroundImage =
      `linear-gradient(to right, ${data.colors.join(", ")})`;
    choose();  // the controls' state, which a reload may have kept
  }

  document.querySelectorAll("[data-attention-explorer]").forEach(explorer);
})();
