// Downloads that download when the book is opened from disk (docs/_ext/translated_downloads.py).
// From file:// browsers ignore a link's `download` attribute and show a .py or an .ipynb as
// text. Each such download has a twin script, <file>.js, that hands its text to
// bookDownload(): saved from a Blob, which is the page's own, the file downloads.
if (location.protocol === "file:") {
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[download]");
    if (!link || !/\.(py|ipynb)$/.test(link.pathname)) return;
    event.preventDefault();
    window.bookDownload = (text) => {
      const save = document.createElement("a");
      save.href = URL.createObjectURL(new Blob([text], { type: "application/octet-stream" }));
      save.download = decodeURIComponent(link.pathname.split("/").pop());
      save.click();
      setTimeout(() => URL.revokeObjectURL(save.href), 10000);
    };
    const script = document.createElement("script");
    script.src = link.href + ".js";
    script.onload = () => script.remove();
    document.head.append(script);
  });
}
