"""Check a built PDF or EPUB, then copy it where the site serves it.

``make pdf-<lang>`` and ``make epub-<lang>`` run it after Sphinx (and XeLaTeX)::

    python tools/print_check.py pdf _build/latex/en _build/html-en/downloads _build/html/en/downloads
    python tools/print_check.py epub _build/epub/en _build/html-en/downloads _build/html/en/downloads

XeLaTeX finishes a PDF even when a font has no glyph for a character (it leaves
a hole and logs "Missing character") or when a reference is undefined (it
prints "??"). This script reads the LaTeX log and exits with 1, naming what is
wrong, in either case; otherwise it copies the file into each ``downloads``
folder given: the language's build tree (where the landing page looks for it)
and the site.
"""

import re
import shutil
import sys
from pathlib import Path

MISSING_CHAR = re.compile(r"Missing character: There is no (.+?) in font ([^/!]+)")
UNDEFINED = re.compile(
    r"LaTeX Warning: (?:Reference|Citation|Hyper reference) `([^']+)' on page \S+ undefined"
    r"|LaTeX Warning: There were undefined references"
)


def log_problems(log_text):
    """The problems a XeLaTeX log reports: missing glyphs and undefined references."""
    problems = []
    missing = sorted(set(MISSING_CHAR.findall(log_text)))
    for char, font in missing:
        problems.append(f"missing character {char} in font {font}")
    for match in UNDEFINED.finditer(log_text):
        problems.append(f"undefined reference {match[1]}" if match[1] else match[0])
    return sorted(set(problems))


def the_file(folder, suffix):
    """The one ``*<suffix>`` file Sphinx's build wrote into ``folder``."""
    found = sorted(Path(folder).glob(f"*{suffix}"))
    if len(found) != 1:
        sys.exit(f"print_check: expected one {suffix} file in {folder}, found {[p.name for p in found]}")
    return found[0]


def main(kind, folder, *destinations):
    if kind == "pdf":
        tex = the_file(folder, ".tex")
        pdf = tex.with_suffix(".pdf")
        log = tex.with_suffix(".log")
        if not pdf.is_file() or not log.is_file():
            sys.exit(f"print_check: {pdf} or its log is missing (did latexmk run?)")
        problems = log_problems(log.read_text(encoding="utf-8", errors="replace"))
        if problems:
            sys.exit(f"print_check: {log}:\n  " + "\n  ".join(problems))
        built = pdf
    elif kind == "epub":
        built = the_file(folder, ".epub")
    else:
        sys.exit(f"print_check: kind must be pdf or epub, not {kind!r}")
    for downloads in destinations:
        Path(downloads).mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, Path(downloads) / built.name)
        print(f"{built} -> {Path(downloads) / built.name}")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
