/* Attention explorers: the interactive heatmaps of the book's pages.
 *
 * docs/_ext/book_outputs.py writes each one (docs/_templates/attention-explorer.html)
 * with its data inline as JSON, from attn.viz.plot.explore: the tokens, the leading axes
 * (layer, head), one or two views (the weights, the scores), each a flat list of
 * integers (value * 10^digits, null where masked) and the ends of its colour scale,
 * and the colour map's stops; and with a plain table of the first panel, which readers
 * without JavaScript see.  This script puts in its place an ARIA grid of the chosen
 * layer, head and view (WAI-ARIA's grid pattern: one cell in the Tab order, the
 * arrows, Home/End, Ctrl+Home/Ctrl+End, PageUp/PageDown move it), which a screen
 * reader announces cell by cell: its row and column headers (a position spoken as a
 * word, "37, position 0", where the label writes 37₀), and its value.  The live region
 * reads out the query, the key and the value after a key or a control, never as the
 * pointer passes; the line on screen follows the pointer too.
 * No library, no request: it works from a page opened from disk.
 */
(() => {
  "use strict";

  const rgb = (hex) => [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));

  // Black or white text, whichever contrasts more with the cell (WCAG 2.1), as
  // attn.viz.plot._text_color writes the numbers of the static heatmaps.
  function ink(colour) {
    const [r, g, b] = colour.map((c) => {
      const s = c / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    const lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    return (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) ? "#000" : "#fff";
  }

  // The colour of t in [0, 1]: linear between the colour map's stops, as matplotlib's
  // (and attn.viz.plot._explorer_cells, which colours the table written at build time).
  function shade(stops, t) {
    const x = Math.min(Math.max(t, 0), 1) * (stops.length - 1);
    const k = Math.min(Math.floor(x), stops.length - 2);
    return stops[k].map((c, n) => Math.round(c + (x - k) * (stops[k + 1][n] - c)));
  }

  const el = (tag, props, ...children) => {
    const node = Object.assign(document.createElement(tag), props);
    node.append(...children);
    return node;
  };
  const hidden = (...children) => el("span", { className: "visually-hidden" }, ...children);

  function explorer(root) {
    const data = JSON.parse(root.querySelector("script[type='application/json']").textContent);
    const words = root.dataset;
    const grid = root.querySelector(".attn-explorer-grid");
    const readout = root.querySelector(".attn-explorer-readout");
    const live = root.querySelector(".attn-explorer-live");
    const [Tq, Tk] = [data.y.length, data.x.length];
    const scale = 10 ** data.digits;
    const stops = data.colors.map(rgb);
    const pageLang = document.documentElement.lang || "en";
    // Numbers in the page's language: 0.37 on English pages, 0,37 on Spanish ones.
    const numbers = (d) => new Intl.NumberFormat(pageLang,
      { minimumFractionDigits: d, maximumFractionDigits: d, useGrouping: false });
    const exact = numbers(data.digits);
    const short = numbers(data.cells ?? 2);
    const state = { panel: 0, view: 0, i: 0, j: 0 };

    // A label as shown (37₀), and as spoken: "37, position 0".  The tokens are the
    // code's, in English: marked so on a page in another language, where they are words.
    const token = (text) => (/[A-Za-z]/.test(text) && !pageLang.startsWith("en")
      ? el("span", { lang: "en", textContent: text }) : text);
    function spoken(label) {
      const m = label.match(/^(.*?)([₀-₉]+)$/u);
      if (!m || !m[1]) return [token(label)];
      const digits = [...m[2]].map((c) => c.charCodeAt(0) - 0x2080).join("");
      return [token(m[1]), `, ${words.wordPosition} ${digits}`];
    }
    const shown = (label) => el("span", { className: "attn-explorer-label", textContent: label });
    function header(label, scope) {
      const said = spoken(label);
      const th = el("th", { scope }, shown(label));
      if (said.length > 1) {  // a position: its subscript hidden from screen readers, a word said
        th.firstChild.setAttribute("aria-hidden", "true");
        th.append(hidden(...said));
      } else if (typeof said[0] !== "string") th.firstChild.lang = "en";
      return th;
    }

    // The grid: keys across (thead), queries down (one th per row), one gridcell per weight.
    const table = el("table");
    table.setAttribute("role", "grid");
    table.setAttribute("aria-readonly", "true");
    table.setAttribute("aria-describedby", root.querySelector(".attn-explorer-help").id);
    if (data.cells === null) table.classList.add("attn-explorer-small");
    const top = table.createTHead().insertRow();
    top.append(root.querySelector(".attn-explorer-corner"));
    const cols = data.x.map((label) => top.appendChild(header(label, "col")));
    const body = table.createTBody();
    const rows = [];
    const cells = data.y.map((label) => {
      const tr = body.insertRow();
      rows.push(tr.appendChild(header(label, "row")));
      return data.x.map(() => {
        const td = tr.insertCell();
        td.setAttribute("role", "gridcell");
        td.setAttribute("aria-selected", "false");
        td.tabIndex = -1;
        return td;
      });
    });
    grid.replaceChildren(table);
    for (const name of ["tabindex", "role", "aria-label"]) grid.removeAttribute(name);

    const value = (i, j) => data.views[state.view].values[(state.panel * Tq + i) * Tk + j];

    // The sentence of a cell, from the page's words: {query}, {key} and {value} filled,
    // the labels as shown (on screen) or as spoken (the live region).
    function sentence(i, j, label) {
      const v = value(i, j);
      const name = v === null ? "masked" : data.views[state.view].name;
      const say = words[`say${name[0].toUpperCase()}${name.slice(1)}`];
      const parts = { query: label(data.y[i]), key: label(data.x[j]), value: [v === null ? "" : exact.format(v / scale)] };
      return say.split(/(\{query\}|\{key\}|\{value\})/).flatMap((piece) => parts[piece.slice(1, -1)] ?? [piece]);
    }

    // how: "key" (a key or a click: the focus follows, the live region speaks),
    // "control" (a select or the view: it speaks), "pointer" or "draw" (silent).
    function select(i, j, how) {
      const before = cells[state.i][state.j];
      state.i = Math.min(Math.max(i, 0), Tq - 1);
      state.j = Math.min(Math.max(j, 0), Tk - 1);
      const cell = cells[state.i][state.j];
      root.querySelectorAll(".attn-explorer-on").forEach((on) => on.classList.remove("attn-explorer-on"));
      for (const on of [cell, rows[state.i], cols[state.j]]) on.classList.add("attn-explorer-on");
      before.setAttribute("aria-selected", "false");
      before.tabIndex = -1;
      cell.setAttribute("aria-selected", "true");
      cell.tabIndex = 0;
      readout.replaceChildren(...sentence(state.i, state.j, (label) => [label]));
      if (how === "key" || how === "control") live.replaceChildren(...sentence(state.i, state.j, spoken));
      if (how === "key") {
        cell.focus({ preventScroll: true });
        cell.scrollIntoView({ block: "nearest", inline: "nearest" });
      }
    }

    function draw(how) {
      const view = data.views[state.view];
      const span = view.hi - view.lo || 1;
      cells.forEach((row, i) => row.forEach((td, j) => {
        const v = value(i, j);
        td.classList.toggle("attn-explorer-masked", v === null);
        if (v === null) {
          td.style.backgroundColor = td.style.color = "";
          td.replaceChildren(hidden(words.wordMasked));
          return;
        }
        const colour = shade(stops, (v / scale - view.lo) / span);
        td.style.backgroundColor = `rgb(${colour.join(",")})`;
        td.style.color = ink(colour);
        // Every cell is named by its value: written in it, or for screen readers alone.
        td.replaceChildren(data.cells === null ? hidden(short.format(v / scale)) : short.format(v / scale));
      }));
      table.setAttribute("aria-label", view.name === "scores" ? words.nameScores : words.nameWeights);
      root.querySelector(".attn-explorer-lo").textContent = short.format(view.lo);
      root.querySelector(".attn-explorer-hi").textContent = short.format(view.hi);
      select(state.i, state.j, how);
    }

    // The controls: a select per leading axis, radio buttons for the view.
    const selects = [...root.querySelectorAll("select[data-axis]")];
    const radios = [...root.querySelectorAll("input[type=radio]")];
    function choose(how) {
      state.panel = selects.reduce((p, s, k) => p * data.axes[k].options.length + s.selectedIndex, 0);
      state.view = Math.max(0, radios.findIndex((r) => r.checked));
      draw(how);
    }
    for (const control of [...selects, ...radios]) {
      control.disabled = false;
      control.addEventListener("change", () => choose("control"));
    }

    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const page = Math.max(1, Math.min(5, Tq - 1));
    table.addEventListener("keydown", (event) => {
      if (!event.target.closest("td")) return;
      let [i, j] = [state.i, state.j];
      const ctrl = event.ctrlKey || event.metaKey;
      if (event.key in moves) [i, j] = [i + moves[event.key][0], j + moves[event.key][1]];
      else if (event.key === "Home") [i, j] = [ctrl ? 0 : i, 0];
      else if (event.key === "End") [i, j] = [ctrl ? Tq - 1 : i, Tk - 1];
      else if (event.key === "PageUp") i -= page;
      else if (event.key === "PageDown") i += page;
      else return;
      event.preventDefault();
      select(i, j, "key");
    });
    const at = (event) => {
      const td = event.target.closest("tbody td");
      return td && [td.parentElement.sectionRowIndex, td.cellIndex - 1];
    };
    // The pointer's moves only: a key that scrolls the page under a still pointer moves nothing.
    let pointer = "";
    table.addEventListener("pointermove", (event) => {
      const where = `${event.screenX},${event.screenY}`;
      const cell = at(event);
      if (where === pointer || !cell || (cell[0] === state.i && cell[1] === state.j)) return;
      pointer = where;
      select(...cell, "pointer");
    });
    table.addEventListener("click", (event) => at(event) && select(...at(event), "key"));

    choose("draw");  // the controls' state, which a reload may have kept
  }

  document.querySelectorAll("[data-attention-explorer]").forEach(explorer);
})();
