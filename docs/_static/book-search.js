/* Search result snippets from the article's own text, around the words searched.
 *
 * Sphinx's searchtools.js fetches each result page and takes the text of its
 * [role="main"] element, which in this theme also holds the article header
 * (language and colour switches) and the tables of contents, so snippets began
 * with "ES Español System Settings Light Dark".  Loaded on the search page only
 * (docs/_ext/book_assets.py), after searchtools.js.
 *
 * searchtools.js fetches a page for each result's snippet: a search for
 * "attention" made 62 requests, some pages (api.html) several times.  Each page
 * is fetched once, and only the best-ranked MAX_SNIPPET_PAGES (results are
 * shown best first); the others are listed without a snippet.
 */
(() => {
  const MAX_SNIPPET_PAGES = 8;
  const nativeFetch = window.fetch.bind(window);
  const pages = new Map();
  window.fetch = (resource, options) => {
    const url = new URL(resource instanceof Request ? resource.url : resource, location.href);
    if (url.origin !== location.origin || !url.pathname.endsWith(".html")) {
      return nativeFetch(resource, options);
    }
    // Opened from disk, a page cannot fetch another (CORS): results, without snippets.
    if (location.protocol === "file:") return Promise.resolve(new Response(""));
    const key = url.origin + url.pathname;
    if (!pages.has(key)) {
      if (pages.size >= MAX_SNIPPET_PAGES) return Promise.resolve(new Response(""));
      pages.set(key, nativeFetch(resource, options).then((response) => response.text()));
    }
    return pages.get(key).then((text) => new Response(text));
  };
})();
(() => {
  if (typeof Search === "undefined") return;
  const sphinxHtmlToText = Search.htmlToText;
  const sphinxSummary = Search.makeSearchSummary;

  Search.htmlToText = (htmlString, anchor) => {
    if (!htmlString) return "";  // a page not fetched (opened from disk)
    const doc = new DOMParser().parseFromString(htmlString, "text/html");
    const article = doc.querySelector("article.bd-article");
    if (!article) return sphinxHtmlToText(htmlString, anchor);
    article
      .querySelectorAll(".headerlink, script, style, .toctree-wrapper, .sphx-glr-signature")
      .forEach((el) => el.remove());
    const part = anchor ? article.querySelector(anchor) : null;
    return (part || article).textContent.replace(/\s+/g, " ");
  };

  // The words as typed come first: a stemmed word ("atencion" for "atención")
  // may not appear in the text, and the snippet would then start at the top.
  const typed = (new URLSearchParams(window.location.search).get("q") || "")
    .split(/\s+/)
    .filter((word) => word.length > 1);
  Search.makeSearchSummary = (htmlText, keywords, anchor) =>
    sphinxSummary(htmlText, [...keywords, ...typed], anchor);
})();
