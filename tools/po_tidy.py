"""Tidy the Spanish catalogs: a clean header, and one wrapping (powrap, 79 columns).

Usage: python tools/po_tidy.py [locale/es/LC_MESSAGES | FILE.po ...] [--check]

``sphinx-intl update`` creates catalogs whose header entry is marked fuzzy and
filled with placeholders; a fuzzy header is dropped when Sphinx compiles the
catalog, and with it the charset.  This script fixes the header, drops obsolete
(``#~``) messages, then wraps every catalog the same way so that diffs stay small.
"""

import subprocess
import sys
from pathlib import Path

import polib

HEADER = {
    "Last-Translator": "The attention book authors",
    "Language-Team": "Spanish",
    "Language": "es",
    "Content-Type": "text/plain; charset=UTF-8",
}


def tidy_header(path):
    po = polib.pofile(str(path), wrapwidth=79)
    changed = po.metadata_is_fuzzy or any(po.metadata.get(k) != v for k, v in HEADER.items())
    # Messages the English pages no longer have (`#~`): their old translations
    # stay in git's history, not in the catalog.
    obsolete = po.obsolete_entries()
    for entry in obsolete:
        po.remove(entry)
    changed = changed or bool(obsolete)
    if changed:
        po.metadata_is_fuzzy = False
        po.metadata.update(HEADER)
        po.metadata.pop("PO-Revision-Date", None)
        po.header = "Spanish translation of the attention book."
        po.save(str(path))
    return changed


def main(argv):
    check = "--check" in argv
    args = [a for a in argv[1:] if a != "--check"]
    paths = [Path(a) for a in args] or [Path("locale/es/LC_MESSAGES")]
    files = sorted(f for p in paths for f in (p.rglob("*.po") if p.is_dir() else [p]))
    if not files:
        print(f"no catalogs under {', '.join(map(str, paths))}")
        return 1
    if not check:
        for path in files:
            tidy_header(path)
    cmd = [sys.executable, "-m", "powrap", "--quiet"] + (["--check"] if check else [])
    return subprocess.call(cmd + [str(f) for f in files])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
