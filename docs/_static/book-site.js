// Phones and keyboards (book.css, "Phones" and "Keyboards").  An inline formula wider than its
// paragraph scrolls on its own (class book-wide) and, like the theme's wide code
// and tables, can then be reached with the keyboard.  A display formula is a Tab stop
// (book_math writes tabindex="0", for readers without JavaScript) only while it scrolls.
(() => {
  const mark = () => {
    document.querySelectorAll(".bd-article span.math").forEach((span) => {
      span.classList.remove("book-wide");
      const room = span.parentElement.clientWidth;
      const wide = room > 0 && span.getBoundingClientRect().width > room;
      span.classList.toggle("book-wide", wide);
      if (wide) span.tabIndex = 0;
      else span.removeAttribute("tabindex");
    });
    document.querySelectorAll(".bd-article div.math[role=group]").forEach((div) => {
      if (div.clientWidth === 0) return;  // folded away: judged when it shows
      if (div.scrollWidth > div.clientWidth + 1) div.tabIndex = 0;
      else div.removeAttribute("tabindex");
    });
  };
  let timer;
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(mark, 200);
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mark);
  else mark();
  window.addEventListener("resize", later);
  document.fonts.ready.then(mark);
})();

// The colour-mode menu: opened with Enter, the theme leaves the focus nowhere (on the
// page's body), so the arrows scroll the page instead of moving through the menu.
// The focus goes to the mode in use; Bootstrap's arrows and Escape then work.
document.addEventListener("shown.bs.dropdown", (event) => {
  const menu = event.target.closest(".theme-switch-container")?.querySelector(".dropdown-menu");
  const item = menu?.querySelector(".theme-change-button.active") || menu?.querySelector("button");
  if (item) item.focus();
});

// Print: every closed <details> of the article (solutions, folded code) prints open
// (book.css does it too, where browsers style ::details-content); closed again after.
const printOpened = [];
window.addEventListener("beforeprint", () => {
  document.querySelectorAll(".bd-article details:not([open])").forEach((details) => {
    details.open = true;
    printOpened.push(details);
  });
});
window.addEventListener("afterprint", () => {
  printOpened.splice(0).forEach((details) => { details.open = false; });
});

// Print: a code line too long for the paper wraps 4 characters further in than its own
// first character (book.css), not than the block's edge: a wrapped line indented 8 did
// not read as a dedented statement.  Each line of each block becomes a <span> that knows
// its indentation; on screen the spans change nothing (inline, the newline kept in them).
const printLines = () => {
  document.querySelectorAll(".bd-article pre:not(.book-lines)").forEach((pre) => {
    pre.classList.add("book-lines");
    const lines = [[]];
    pre.childNodes.forEach((node) => {
      node.textContent.split("\n").forEach((text, i) => {
        if (i > 0) lines.push([]);
        if (!text) return;
        const piece = node.nodeType === Node.ELEMENT_NODE ? node.cloneNode(false) : document.createTextNode("");
        piece.textContent = text;
        lines[lines.length - 1].push(piece);
      });
    });
    const out = document.createDocumentFragment();
    lines.forEach((pieces, i) => {
      const line = document.createElement("span");
      line.className = "book-line";
      pieces.forEach((piece) => line.append(piece));
      if (i < lines.length - 1) line.append("\n");
      const indent = line.textContent.match(/^ */)[0].length;
      if (indent) line.style.setProperty("--book-indent", `${indent}ch`);
      out.append(line);
    });
    pre.replaceChildren(out);
  });
};
window.addEventListener("beforeprint", printLines);
matchMedia("print").addEventListener("change", (event) => { if (event.matches) printLines(); });
