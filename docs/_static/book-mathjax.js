/* Typeset a page's formulas a few at a time, from the top, instead of all at once.
 *
 * MathJax typesets a whole page in one task by default: on a phone a chapter with a
 * hundred formulas holds the page for seconds, unable to respond to a tap
 * (Lighthouse's "total blocking time").  In groups of a few, the browser can paint
 * and respond between them; the formulas at the top come first.
 * MathJax.startup.promise still settles once every formula is typeset.
 * Loaded before MathJax, on pages with mathematics only (docs/_ext/book_site.py).
 */
(() => {
  const GROUP = 6;
  const config = (window.MathJax = window.MathJax || {});

  function typesetInGroups() {
    const elements = Array.from(document.querySelectorAll(".math"));
    let start = 0;
    return new Promise((resolve, reject) => {
      const step = () => {
        if (start >= elements.length) return resolve();
        const group = elements.slice(start, (start += GROUP));
        MathJax.typesetPromise(group).then(() => setTimeout(step, 0), reject);
      };
      step();
    });
  }

  config.startup = Object.assign(config.startup || {}, {
    typeset: false,
    pageReady: () => MathJax.startup.defaultPageReady().then(typesetInGroups),
  });
})();
