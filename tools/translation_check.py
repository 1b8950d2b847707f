"""Fail when any Spanish message is untranslated or fuzzy; print coverage per catalog.

Usage: python tools/translation_check.py [locale/es/LC_MESSAGES]
"""

import re
import sys
from pathlib import Path

import polib


def coverage(po_dir):
    """Return ``[(catalog, translated, total, untranslated, fuzzy)]`` for every ``.po`` under ``po_dir``."""
    rows = []
    for path in sorted(Path(po_dir).rglob("*.po")):
        po = polib.pofile(str(path))
        entries = [e for e in po if not e.obsolete]
        fuzzy = [e for e in entries if e.fuzzy]
        untranslated = [e for e in entries if not e.fuzzy and not e.translated()]
        rows.append((path.relative_to(po_dir).as_posix(), len(entries) - len(fuzzy) - len(untranslated),
                     len(entries), untranslated, fuzzy))
    return rows


def prose_words(po_dir):
    """The words (two letters or more, lower-cased) of the translations under ``po_dir``.

    Code, math, role targets, markup and «quotes» are left out: what remains is the
    language's own prose, the vocabulary a figure label or a formula may borrow.
    """
    words = set()
    for path in Path(po_dir).rglob("*.po"):
        for e in polib.pofile(str(path)):
            text = re.sub(r"\$[^$]*\$|:math:`[^`]*`|``.*?``|`[^`]*`|<[^>]*>|«[^»]*»", " ", e.msgstr, flags=re.S)
            words |= {w.lower() for w in re.findall(r"[^\W\d_]{2,}", text)}
    return words


def main(argv):
    po_dir = Path(argv[1] if len(argv) > 1 else "locale/es/LC_MESSAGES")
    rows = coverage(po_dir)
    if not rows:
        print(f"no catalogs under {po_dir}")
        return 1
    width = max(len(r[0]) for r in rows)
    bad = 0
    for name, done, total, untranslated, fuzzy in rows:
        pct = 100.0 * done / total if total else 100.0
        print(f"{name:<{width}}  {done:5d}/{total:<5d} {pct:6.1f}%  untranslated={len(untranslated)} fuzzy={len(fuzzy)}")
        for e in untranslated[:5] + fuzzy[:5]:
            print(f"    {'fuzzy' if e.fuzzy else 'untranslated'}: {e.msgid[:70]!r}")
        bad += len(untranslated) + len(fuzzy)
    done = sum(r[1] for r in rows)
    total = sum(r[2] for r in rows)
    print(f"{'total':<{width}}  {done:5d}/{total:<5d} {100.0 * done / max(total, 1):6.1f}%")
    if bad:
        print(f"FAILED: {bad} untranslated or fuzzy messages")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
