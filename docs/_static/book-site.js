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
